"""Public human-written sentences for the fluency models (unigram counts, acceptability classifier).

Read from ../shared/data (never bundled). Registers: PT16 sentences (news, blogs, e-mail, answers; tokenized, mixed
case), Yelp reviews from Shen et al.'s *dev* split (lower-cased, tokenized), ParaDetox neutral rewrites (crowd
written, raw) and ParaDetox toxic originals (social media, raw). Sentences that appear in the evaluation sets
(yelp-dualrl's test inputs and human references, Mir et al.'s test inputs) are left out. Splits are fixed by a
seeded shuffle: ``train`` (classifier fitting), ``select`` (model and threshold selection), ``test`` (reported only);
PT16's selection sentences come from its ``tune`` file, the others from disjoint slices.
"""
from __future__ import annotations

import random
from pathlib import Path

from styleval.datasets import mir2019, paradetox, pt16, yelp_dualrl, yelp_shen

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT.parent / "shared" / "data"
SIZES = {"pt16": (350, 100, 100), "yelp": (350, 100, 100), "paradetox-neutral": (250, 75, 75),
         "paradetox-toxic": (150, 50, 50)}  # train, select, test


def _evaluation_texts() -> set[str]:
    humans = yelp_dualrl.records(DATA, systems=["Human0", "Human1", "Human2", "Human3"])
    texts = [t for r in humans for t in (r.source, r.output)] + [r.source for r in mir2019.records(DATA)]
    return {t.strip() for t in texts if t.strip()}


def _pt16(name: str) -> list[str]:
    return [t.strip() for t in pt16.labelled(DATA, name).texts]


def _yelp_dev() -> list[str]:
    return [t.strip() for k in (0, 1) for t in yelp_shen.sentences(DATA, "dev", k)]


def _paradetox() -> tuple[list[str], list[str]]:
    _, rows = paradetox.rows(DATA)
    toxic = [r.toxic.strip() for r in rows]
    neutral = [r.rewrites[0].strip() if r.rewrites else "" for r in rows]
    return [t for t in neutral if t], [t for t in toxic if t]


def corpora() -> dict[str, list[str]]:
    """Every sentence of each register (evaluation sentences removed), deduplicated, in file order."""
    skip = _evaluation_texts()
    neutral, toxic = _paradetox()
    raw = {"pt16": _pt16("train"), "pt16-tune": _pt16("tune"), "yelp": _yelp_dev(),
           "paradetox-neutral": neutral, "paradetox-toxic": toxic}
    return {k: [t for t in dict.fromkeys(v) if t not in skip and 3 <= len(t.split()) <= 40] for k, v in raw.items()}


def splits(seed: int = 13) -> dict[str, dict[str, list[str]]]:
    """``{split: {register: sentences}}`` for split in train/select/test."""
    data = corpora()
    out: dict[str, dict[str, list[str]]] = {"train": {}, "select": {}, "test": {}}
    for reg, (n_tr, n_sel, n_te) in SIZES.items():
        texts = list(data[reg])
        random.Random(f"{seed}:{reg}").shuffle(texts)
        out["train"][reg] = texts[:n_tr]
        if reg == "pt16":
            tune = list(data["pt16-tune"])
            random.Random(f"{seed}:pt16-tune").shuffle(tune)
            out["select"][reg] = tune[:n_sel]
            out["test"][reg] = texts[n_tr:n_tr + n_te]
        else:
            out["select"][reg] = texts[n_tr:n_tr + n_sel]
            out["test"][reg] = texts[n_tr + n_sel:n_tr + n_sel + n_te]
    return out
