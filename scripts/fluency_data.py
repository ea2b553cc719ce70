"""Public human-written sentences for the fluency models (unigram counts, acceptability classifier).

Read from ../shared/data (never bundled). Registers: PT16 sentences (news, blogs, e-mail, answers; tokenized, mixed
case), Yelp reviews from Shen et al.'s *dev* split (lower-cased, tokenized), ParaDetox neutral rewrites (crowd
written, raw) and ParaDetox toxic originals (social media, raw). Sentences that appear in the evaluation sets
(yelp-dualrl's test inputs and human references, Mir et al.'s test inputs) are left out. Splits are fixed by a
seeded shuffle: ``train`` (classifier fitting), ``select`` (model and threshold selection), ``test`` (reported only);
PT16's selection sentences come from its ``tune`` file, the others from disjoint slices.
"""
from __future__ import annotations

import csv
import random
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
SIZES = {"pt16": (350, 100, 100), "yelp": (350, 100, 100), "paradetox-neutral": (250, 75, 75),
         "paradetox-toxic": (150, 50, 50)}  # train, select, test


def _evaluation_texts() -> set[str]:
    out: set[str] = set()
    yelp = DATA / "yelp-dualrl" / "outputs" / "yelp"
    for f in list(yelp.glob("Human*/test.*.tsf")) + list((DATA / "yelp-dualrl" / "data" / "yelp").glob("test.*")) \
            + list((DATA / "mir2019" / "data").glob("sentiment.test.*")):
        for line in f.read_text(encoding="utf-8", errors="replace").splitlines():  # one Human file has a Latin-1 byte
            out.update(p.strip() for p in line.split("\t") if p.strip())
    return out


def _pt16(name: str) -> list[str]:
    with open(DATA / "pt16" / f"{name}.csv", encoding="utf-8") as fh:
        return [r["sentence"].strip() for r in csv.DictReader(fh) if (r.get("sentence") or "").strip()]


def _yelp_dev() -> list[str]:
    out = []
    for f in ("sentiment.dev.0", "sentiment.dev.1"):
        out += [line.strip() for line in (DATA / "yelp-shen" / "data" / "yelp" / f).read_text(encoding="utf-8")
                .splitlines() if line.strip()]
    return out


def _paradetox() -> tuple[list[str], list[str]]:
    neutral, toxic = [], []
    with open(DATA / "paradetox" / "paradetox" / "paradetox.tsv", encoding="utf-8") as fh:
        for row in csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE):
            toxic.append((row.get("toxic") or "").strip())
            neutral.append((row.get("neutral1") or "").strip())
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
