"""The public training data and held-out tests of the shipped preservation model, read from ``../shared/data``.

Nothing here is bundled: every function reads the data where it lies. SGDD-TST is never read here (it is the
test set of the shipped model). Splits (fixed, by input, so that no held-out input is seen in training):

* Lai et al. 2022 (GYAFC): even input rows train, odd rows held out (40 inputs each, 20 per direction);
* Mir et al. 2019 (Yelp): even input rows train, odd rows held out (122 inputs each);
* yelp-dualrl human rewrites: lines 1-250 of ``test.0`` and ``test.1`` train, lines 251-500 held out;
* ParaDetox: rows shuffled with seed 13, the first 80% train, the last 20% held out;
* PT16 (``train.csv`` only): sentences rewritten by styleval's rule-based formality transfer, training only.

Training groups: ``human-lai`` (content ratings / 100), ``human-mir`` ((rating - 1) / 4), ``style-rewrites``
(human or rule-based style rewrites, score 1), ``changed`` (a style rewrite or its source with one automatic
meaning change, score :data:`CHANGED_SCORE`), ``unrelated`` (two unrelated texts of the corpus, score 0).
"""
from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import numpy as np

from ..datasets import lai2022, mir2019, paradetox, pt16, yelp_dualrl
from ..datasets.paths import default_root
from ..errors import InputError
from ..preservation.data import PairData
from .negatives import DonorPool, corrupt

CHANGED_SCORE = 0.15
STYLE_SHIFT_OPERATIONS = ("entity", "number", "noun", "verb", "delete", "insert")
SEED = 13


def _root(root: str | Path | None) -> Path:
    base = Path(root) if root is not None else default_root()
    if not base.is_dir():
        raise InputError("shared data folder not found", base)
    return base


def _is_train(index: int) -> bool:
    return index % 2 == 0


def lai_pairs(root: str | Path | None = None, *, held_out: bool = False) -> PairData:
    """(source, output, mean content rating / 100) of Lai 2022's 9 systems (the reference included)."""
    recs = [r for r in lai2022.records(_root(root)) if _is_train(int(r.id)) != held_out]
    scores = [(r.meta["human_1"] + r.meta["human_2"]) / 200.0 for r in recs]
    return PairData([r.source for r in recs], [r.output for r in recs], scores, ["human-lai"] * len(recs),
                    origin=f"lai2022 content.src ({'odd' if held_out else 'even'} inputs)")


def mir_pairs(root: str | Path | None = None, *, held_out: bool = False) -> PairData:
    """(source, output, (mean content rating - 1) / 4) of Mir 2019's 12 settings."""
    base = _root(root)
    rating = {(h["system"], h["segment"]): float(h["score"]) for h in mir2019.judgments(base).human
              if h["aspect"] == "content_preservation"}
    recs = [r for r in mir2019.records(base) if _is_train(int(r.id)) != held_out and (r.system, r.id) in rating]
    scores = [(rating[(r.system, r.id)] - 1.0) / 4.0 for r in recs]
    return PairData([r.source for r in recs], [r.output for r in recs], scores, ["human-mir"] * len(recs),
                    origin=f"mir2019 content ({'odd' if held_out else 'even'} inputs)")


def yelp_rewrites(root: str | Path | None = None, *, held_out: bool = False) -> list[tuple[str, str, str]]:
    """(source, human rewrite, origin) of the yelp-dualrl test set, Human0-3."""
    recs = yelp_dualrl.records(_root(root), systems=["Human0", "Human1", "Human2", "Human3"])
    out = []
    for r in recs:
        line = int(r.id.split("/")[1])
        if (line > 250) == held_out and r.output.strip():
            out.append((r.source, r.output, f"yelp-dualrl {r.system}"))
    return out


def paradetox_rewrites(root: str | Path | None = None, *, held_out: bool = False) -> list[tuple[str, str, str]]:
    """(toxic, first neutral rewrite, origin) of ParaDetox: :func:`styleval.datasets.paradetox.first_rewrites`
    (shuffled with seed 13, 80% train, 20% held out)."""
    return [(toxic, rewrite, "paradetox")
            for toxic, rewrite in paradetox.first_rewrites(_root(root), held_out=held_out, seed=SEED)]


def pt16_rewrites(root: str | Path | None = None) -> list[tuple[str, str, str]]:
    """(sentence, rule-based formality rewrite, origin) of PT16's training sentences, where the rules change it."""
    from .transfer.rules import to_formal, to_informal

    data = pt16.labelled(_root(root), "train")
    out = []
    for text, label in zip(data.texts, data.labels):
        new = to_formal(text) if label < 0 else to_informal(text)
        if new.strip() and new.strip() != text.strip():
            out.append((text, new, "pt16 rules"))
    return out


def lai_references(root: str | Path | None = None, *, held_out: bool = False) -> list[tuple[str, str, str]]:
    return [(r.source, r.references[0], "lai2022 reference") for r in lai2022.records(_root(root))
            if r.system == "ref" and _is_train(int(r.id)) != held_out and r.references]


def training_pairs(root: str | Path | None = None, *, n_yelp: int = 600, n_paradetox: int = 1000,
                   n_pt16: int = 500, n_unrelated: int = 600, seed: int = SEED,
                   progress: Any = None) -> PairData:
    """All training groups of the shipped model (see the module docstring)."""
    from ..nlp import parse_many

    rng = random.Random(seed)
    base = _root(root)
    rewrites: list[tuple[str, str, str]] = []
    for part, n in ((yelp_rewrites(base), n_yelp), (paradetox_rewrites(base), n_paradetox),
                    (pt16_rewrites(base), n_pt16), (lai_references(base), 10 ** 9)):
        rng.shuffle(part)
        rewrites += part[:n]
    texts = list(dict.fromkeys(t for s, r, _ in rewrites for t in (s, r)))
    parsed = dict(zip(texts, parse_many(texts)))
    pool = DonorPool.build(list(parsed.values()))
    style = PairData([s for s, _, _ in rewrites], [r for _, r, _ in rewrites], [1.0] * len(rewrites),
                     ["style-rewrites"] * len(rewrites))
    changed = PairData([], [], [], [], [])
    for s, r, _ in rewrites:
        for target in (s, r):
            got = corrupt(parsed[target], pool, rng)
            if got is not None:
                changed.sources.append(s)
                changed.outputs.append(got[1])
                changed.scores.append(CHANGED_SCORE)
                changed.groups.append("changed")
                changed.weights.append(1.0)
    unrelated = PairData([], [], [], [], [])
    for _ in range(n_unrelated):
        a, b = rng.sample(texts, 2)
        unrelated.sources.append(a)
        unrelated.outputs.append(b)
        unrelated.scores.append(0.0)
        unrelated.groups.append("unrelated")
        unrelated.weights.append(1.0)
    return PairData.concat([lai_pairs(base), mir_pairs(base), style, changed, unrelated],
                           origin="../shared/data: lai2022 + mir2019 (even inputs), yelp-dualrl human rewrites "
                                  "(lines 1-250), ParaDetox (80%), PT16 train (rule-based rewrites), automatic "
                                  "meaning changes, unrelated pairs")


def all_rewrite_pairs(root: str | Path | None = None, *, progress: Any = None) -> PairData:
    """The groups of :func:`training_pairs` with every training rewrite (yelp-dualrl, ParaDetox, PT16, Lai
    references) instead of the shipped subsample, their automatic meaning changes, and 3,000 unrelated pairs."""
    return training_pairs(root, n_yelp=10 ** 9, n_paradetox=10 ** 9, n_pt16=10 ** 9, n_unrelated=3000,
                          progress=progress)


def encoder_training_pairs(root: str | Path | None = None, shipped: PairData | None = None) -> PairData:
    """What the encoders of the shipped models (version 3 of preservation-minilm, version 2 of -bi) train on:
    :func:`training_pairs` (``shipped``, when already built) followed by :func:`all_rewrite_pairs`. The human-rated
    pairs and the subsampled rewrites thus appear twice (every group keeps the same total weight); this is the
    recipe chosen by cross-fitting (scripts/select_cross_encoder.py with ``--extra``)."""
    first = shipped if shipped is not None else training_pairs(root)
    return PairData.concat([first, all_rewrite_pairs(root)],
                           origin="the shipped training pairs followed by the same groups with every training "
                                  "rewrite (../shared/data: lai2022 + mir2019 even inputs, yelp-dualrl lines 1-250, "
                                  "ParaDetox 80%, PT16 train, their automatic meaning changes, unrelated pairs)")


def style_shift_test(root: str | Path | None = None, *, n_per_source: int = 400, seed: int = SEED + 1
                     ) -> list[dict[str, str]]:
    """Held-out pairwise test: for each held-out input, its human style rewrite (style only) and an automatic
    rewrite of the input that keeps its style but changes its content (one of :data:`STYLE_SHIFT_OPERATIONS`,
    with replacements drawn from held-out texts only). A metric agrees when it scores the style rewrite higher.
    Items: ``source``, ``style_rewrite``, ``content_change``, ``operation``, ``origin``."""
    from ..nlp import parse_many

    rng = random.Random(seed)
    base = _root(root)
    items: list[dict[str, str]] = []
    groups = [yelp_rewrites(base, held_out=True), paradetox_rewrites(base, held_out=True),
              lai_references(base, held_out=True)]
    chosen: list[tuple[str, str, str]] = []
    for part in groups:
        part = [p for p in part if p[0].strip() != p[1].strip()]
        # one rewrite per input
        seen: set[str] = set()
        unique = []
        for p in part:
            if p[0] not in seen:
                seen.add(p[0])
                unique.append(p)
        rng.shuffle(unique)
        chosen += unique[:n_per_source]
    sources = list(dict.fromkeys(s for s, _, _ in chosen))
    parsed = dict(zip(sources, parse_many(sources)))
    pool = DonorPool.build(list(parsed.values()))
    for s, r, origin in chosen:
        got = corrupt(parsed[s], pool, rng, STYLE_SHIFT_OPERATIONS)
        if got is not None:
            items.append({"source": s, "style_rewrite": r, "content_change": got[1], "operation": got[0],
                          "origin": origin.split(" ")[0]})
    return items


def agreement(style_scores: np.ndarray, change_scores: np.ndarray) -> float:
    """Share of items where the style rewrite scores higher (ties count half)."""
    a, b = np.asarray(style_scores, dtype=float), np.asarray(change_scores, dtype=float)
    return float(np.mean((a > b) + 0.5 * (a == b)))
