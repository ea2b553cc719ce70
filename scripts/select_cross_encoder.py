"""Choose the adapter recipes of the shipped preservation models on training data only, by cross-fitting.

    .venv/bin/python scripts/select_cross_encoder.py --cache DIR [--variants base,swap,...] [--json out.json]
        [--keep DIR [--combine]] [--device cuda] [--extra FILE] [--soup]

Training on a GPU machine without spaCy: write the pairs here (``--write-pairs FILE``, with ``--all-rewrites``
for every training rewrite instead of the shipped subsample) and the feature head's half-B scores (``--keep``),
then run there with ``--pairs FILE --head DIR/head.npy --encoder DIR --device cuda``.

The training pairs of the shipped model (styleval.content.corpus.training_pairs) are split by their source text
into two halves (a hash of the source decides, so every pair of one input falls in the same half). Each recipe's
cross-encoder and the feature head (penalty C = 0.1, the shipped choice) are trained on half A and scored on half
B. Recipes named ``bi...`` train a bi-encoder (styleval.content.bi_encoder) instead of a cross-encoder, those named
``late...`` a late-interaction encoder (styleval.content.late_encoder). Nothing
held out for docs/results.md is read: not SGDD-TST, not the odd Lai/Mir rows, not the style-shift test.

Development figures on half B:
* ``lai``, ``mir``: Spearman with the human content ratings of the even Lai 2022 / Mir 2019 inputs in half B;
* ``style``: share of (style rewrite, automatic meaning change) pairs of the same input where the rewrite scores
  higher (ties half), the training-side analogue of the held-out style-shift test;
* ``dev``: the mean of the three, the figure the recipe and the averaging weight are chosen by.
Each recipe is reported averaged with the feature head at weights 0.25, 0.5, 0.75 and alone (``w=1``).
``--extra FILE``: more training pairs (e.g. ``--write-pairs`` with ``--all-rewrites``); those whose source text
falls in half A are added to half A, the rest are dropped, so half B stays the same development set.
``--soup``: with the cross-encoder seeds 13, 14 and 15 kept in ``--keep`` (variants ``base``, ``seed14``,
``seed15``, or their ``x-`` forms, trained in this run or an earlier one), also report their averaged weights
(one model: the three adapter deltas concatenated into one rank-48 adapter at a third of the weight each, heads
averaged) and their averaged scores.
``--entity-merge``: with ``--keep``, also Babakov et al.'s entity merge ``M·(1−p) + NE·p`` (styleval's own entity
score and entity-token share, as ``:ne``) of the feature head and of every kept ``cross-NAME.npy``, alone and at
weight .5 with the head, against the plain score.
``--final DIR``: instead, train each named variant on all pairs (and all of ``--extra``) and save its weights there.
``--cache``: the pair-feature cache of scripts/train_preservation.py (same keys), so features are not re-encoded.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np
from scipy.stats import spearmanr

from styleval.content import corpus
from styleval.content.bi_encoder import BiEncoder, train_bi_encoder
from styleval.content.cross_encoder import CrossEncoder, train_cross_encoder
from styleval.content.data import PairData, read_pairs, write_pairs
from styleval.content.late_encoder import LateEncoder, train_late_encoder
from styleval.content.features import FEATURE_SIGNS, PairFeaturizer
from styleval.content.model import PreservationModel
from styleval.content.train import _cached_features, default_style_words, fit_logistic, held_back_split
from styleval.models import catalog as cat
from styleval.signature import library_version

WEIGHTS = (0.0, 0.25, 0.5, 0.75, 1.0)


def swapped(data: PairData) -> PairData:
    """The pairs in both orders: meaning preservation is close to symmetric, so the order is no evidence."""
    flip = PairData(list(data.outputs), list(data.sources), list(data.scores), list(data.groups),
                    list(data.weights), data.origin)
    return PairData.concat([data, flip], data.origin + " (both orders)")


# name -> (training-data transform, keyword arguments of train_cross_encoder)
VARIANTS: dict[str, tuple[Callable[[PairData], PairData], dict[str, Any]]] = {
    "base": (lambda d: d, {"epochs": 2}),
    "swap": (swapped, {"epochs": 1}),  # both orders, one epoch: the same number of steps as base
    "epochs4": (lambda d: d, {"epochs": 4}),
    "lr1e-3": (lambda d: d, {"epochs": 2, "lr": 1e-3}),
    "rank32": (lambda d: d, {"epochs": 2, "rank": 32}),
    "bi": (lambda d: d, {"epochs": 2}),  # a LoRA bi-encoder (content.bi_encoder) instead of a cross-encoder
    "bi-bysource": (lambda d: d, {"epochs": 2, "by_source": True}),  # batches of whole source groups
    # ... plus a pairwise term: a source's style rewrite above its automatic meaning change
    "bi-rank": (lambda d: d, {"epochs": 2, "rank_weight": 1.0}),
    # the bi recipe with other seeds (adapter initialisation and batch order): how far noise alone moves ``dev``
    "bi-seed14": (lambda d: d, {"epochs": 2, "seed": 14}),
    "bi-seed15": (lambda d: d, {"epochs": 2, "seed": 15}),
    "seed14": (lambda d: d, {"epochs": 2, "seed": 14}),
    "seed15": (lambda d: d, {"epochs": 2, "seed": 15}),
    "rank64": (lambda d: d, {"epochs": 2, "rank": 64, "alpha": 128.0}),
    "epochs4-lr2e-4": (lambda d: d, {"epochs": 4, "lr": 2e-4}),
    "epochs4-lr2e-4-seed14": (lambda d: d, {"epochs": 4, "lr": 2e-4, "seed": 14}),
    "epochs4-lr2e-4-seed15": (lambda d: d, {"epochs": 4, "lr": 2e-4, "seed": 15}),
    # the first 3 (2) of MiniLM's 6 layers: about 1.9x (2.8x) the pairs per second of the full cross-encoder
    "layers3": (lambda d: d, {"epochs": 2, "layers": 3}),
    "layers2": (lambda d: d, {"epochs": 2, "layers": 2}),
    "bi-layers3": (lambda d: d, {"epochs": 2, "layers": 3}),
    # late interaction (content.late_encoder): token vectors matched across the two texts, one pass per text
    "late": (lambda d: d, {"epochs": 2}),
    "late-layers3": (lambda d: d, {"epochs": 2, "layers": 3}),
    "late-seed14": (lambda d: d, {"epochs": 2, "seed": 14}),
}


def scorer_kind(name: str) -> str:
    """What the recipe ``name`` trains (an ``x-`` prefix, which marks a run with --extra, is ignored): ``"bi"`` for
    ``bi...`` recipes, ``"late"`` for ``late...``, else ``"cross"``."""
    recipe = name.removeprefix("x-")
    return "bi" if recipe.startswith("bi") else "late" if recipe.startswith("late") else "cross"


#: Each scorer kind's class and trainer.
SCORERS: dict[str, tuple[type[Any], Callable[..., tuple[Any, dict[str, Any]]]]] = {
    "bi": (BiEncoder, train_bi_encoder), "late": (LateEncoder, train_late_encoder),
    "cross": (CrossEncoder, train_cross_encoder)}


def train_variant(name: str, data: PairData, args: argparse.Namespace) -> tuple[Any, dict[str, Any]]:
    """Train the recipe ``name`` on ``data`` with the trainer of its :func:`scorer_kind`."""
    transform, kwargs = VARIANTS[name.removeprefix("x-")]
    return SCORERS[scorer_kind(name)][1](transform(data), encoder=args.encoder, device=args.device, **kwargs)


def in_half_a(text: str) -> bool:
    return hashlib.sha256(text.encode("utf-8")).digest()[0] % 2 == 0


def halves(data: PairData) -> tuple[list[int], list[int]]:
    a: list[int] = []
    b: list[int] = []
    for i, s in enumerate(data.sources):
        (a if in_half_a(s) else b).append(i)
    return a, b


def soup(models: list[CrossEncoder]) -> CrossEncoder:
    """One cross-encoder whose merged weights are the mean of the models' merged weights: each layer's adapters
    stacked (A rows, B columns scaled by 1/n), so ``B @ A`` is the mean of the deltas; heads averaged."""
    n, first = len(models), models[0]
    if any(m.scaling != first.scaling for m in models):
        raise ValueError("souped models must share the adapter scaling")
    adapters = {name: (np.concatenate([m.adapters[name][0] for m in models], axis=0),
                       np.concatenate([m.adapters[name][1] / n for m in models], axis=1))
                for name in first.adapters}
    return CrossEncoder(first.encoder, adapters, first.scaling, np.mean([m.head_w for m in models], axis=0),
                        float(np.mean([m.head_b for m in models])), max_length=first.max_length,
                        backend=first.backend)


def all_features(data: PairData, cache: str | None) -> np.ndarray:
    """Pair features of every training pair, read from (or written to) the training script's cache split."""
    featurizer = PairFeaturizer(style_words=default_style_words())
    selection, fit = held_back_split(len(data), 13)
    x = np.zeros((len(data), len(FEATURE_SIGNS)))
    x[fit] = _cached_features(featurizer, data.subset(fit), cache, "fit", None)
    x[selection] = _cached_features(featurizer, data.subset(selection), cache, "selection", None)
    return x


def head_scores(x_fit: np.ndarray, fit: PairData, x_dev: np.ndarray) -> np.ndarray:
    mean, scale = x_fit.mean(0), x_fit.std(0)
    scale = np.where(scale > 1e-9, scale, 1.0)
    coef, b = fit_logistic((x_fit - mean) / scale, np.asarray(fit.scores), fit.group_weights(), 0.1, FEATURE_SIGNS)
    ceiling = 1.0 / (1.0 + np.exp(-(((PreservationModel.identity_features() - mean) / scale) @ coef + b)))
    return (1.0 / (1.0 + np.exp(-(((x_dev - mean) / scale) @ coef + b)))) / ceiling


def dev_figures(pred: np.ndarray, dev: PairData) -> dict[str, float]:
    groups, y = np.asarray(dev.groups), np.asarray(dev.scores)
    out = {}
    for name, group in (("lai", "human-lai"), ("mir", "human-mir")):
        m = groups == group
        out[name] = float(spearmanr(pred[m], y[m])[0])
    by: dict[str, dict[str, list[int]]] = {}
    for i, (s, g) in enumerate(zip(dev.sources, dev.groups)):
        by.setdefault(s, {}).setdefault(g, []).append(i)
    pairs = np.asarray([(i, j) for m in by.values() for i in m.get("style-rewrites", [])
                        for j in m.get("changed", [])])
    out["style"] = corpus.agreement(pred[pairs[:, 0]], pred[pairs[:, 1]])
    out["dev"] = float(np.mean([out["lai"], out["mir"], out["style"]]))
    return {k: round(v, 4) for k, v in out.items()}


def combinations(keep: Path, dev: PairData, x_dev: np.ndarray) -> dict[str, Any]:
    """With ``base`` and ``bi`` scores kept: averages of all three parts and of the two encoders alone, and stacking
    (a logistic head over the pair features and the cross-encoder's logit) fitted on one quarter of the inputs and
    scored on the other, both ways, against the fixed equal-weight average on the same quarters."""
    head, cross, bi = (np.load(keep / f) for f in ("head.npy", "cross-base.npy", "cross-bi.npy"))
    out: dict[str, Any] = {}
    # the last two leave the feature head (and spaCy) out: a parse-free model of both adapted encoders
    for wh, wc, wb in ((1 / 3, 1 / 3, 1 / 3), (0.25, 0.5, 0.25), (0.25, 0.25, 0.5), (0.5, 0.25, 0.25),
                       (0.0, 0.5, 0.5), (0.0, 0.25, 0.75)):
        out[f"head {wh:.2f} + cross {wc:.2f} + bi {wb:.2f}"] = dev_figures(wh * head + wc * cross + wb * bi, dev)
    quarter = np.asarray([hashlib.sha256(t.encode("utf-8")).digest()[1] % 2 == 0 for t in dev.sources])
    logit = np.log(np.clip(cross, 1e-6, 1 - 1e-6) / np.clip(1 - cross, 1e-6, 1))
    x = np.column_stack([x_dev, logit])
    stacked = np.zeros(len(dev))
    for part in (quarter, ~quarter):
        fit = dev.subset(np.flatnonzero(part).tolist())
        mean, scale = x[part].mean(0), x[part].std(0)
        scale = np.where(scale > 1e-9, scale, 1.0)
        coef, b = fit_logistic((x[part] - mean) / scale, np.asarray(fit.scores), fit.group_weights(), 0.01,
                               [*FEATURE_SIGNS, 1])
        stacked[~part] = 1.0 / (1.0 + np.exp(-(((x[~part] - mean) / scale) @ coef + b)))
    for name, pred in (("stacked (C 0.01)", stacked), ("equal-weight average", 0.5 * head + 0.5 * cross)):
        per = [dev_figures(pred[q], dev.subset(np.flatnonzero(q).tolist()))["dev"] for q in (quarter, ~quarter)]
        out[name] = {"dev, mean of the two quarters": round(float(np.mean(per)), 4)}
    return out


def entity_merges(keep: Path, dev: PairData, head: np.ndarray) -> dict[str, Any]:
    """Dev figures, plain and entity-merged, of the head and of each kept encoder's scores (alone and with the head
    at .5); the merge has no free parameter, p is each pair's share of entity tokens."""
    from styleval.entities import entity_score, entity_share, extract_entities

    ents = extract_entities([*dev.sources, *dev.outputs])
    n = len(dev)
    ne = np.asarray([entity_score(ents[i], ents[n + i]) for i in range(n)])
    p = np.asarray([entity_share(ents[i], ents[n + i]) for i in range(n)])
    scored = {"head": head}
    for path in sorted(keep.glob("cross-*.npy")):
        part = np.load(path)
        if len(part) == n:
            scored[path.stem] = part
            scored[path.stem + " + head (.5)"] = 0.5 * part + 0.5 * head
    out: dict[str, Any] = {"pairs with entities (p > 0)": round(float((p > 0).mean()), 4)}
    for name, pred in scored.items():
        out[name] = {"plain": dev_figures(pred, dev), "entity-merged": dev_figures(pred * (1 - p) + ne * p, dev)}
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=None, help="the shared data folder (default ../shared/data)")
    ap.add_argument("--cache", default=None, help="pair-feature cache folder of scripts/train_preservation.py")
    ap.add_argument("--variants", default=",".join(VARIANTS), help=f"comma-separated, from {', '.join(VARIANTS)}")
    ap.add_argument("--json", default=None, help="write every figure here")
    ap.add_argument("--keep", default=None, help="folder to keep half B's scores in (head.npy, cross-NAME.npy)")
    ap.add_argument("--combine", action="store_true", help="then, from the kept base and bi scores: three-part "
                    "averages and cross-fitted stacking")
    ap.add_argument("--device", default="cpu", help="where the encoders train: cpu, cuda[:N] or auto")
    ap.add_argument("--encoder", default=cat.DEFAULT_ENCODER, help="encoder (catalog name or local folder)")
    ap.add_argument("--pairs", default=None, help="training pairs from this file (written by --write-pairs) "
                    "instead of building them")
    ap.add_argument("--write-pairs", default=None, help="build the training pairs, write them here and stop")
    ap.add_argument("--all-rewrites", action="store_true", help="with --write-pairs: every training rewrite "
                    "(yelp-dualrl, ParaDetox, PT16, Lai references) with its meaning changes, not the subsample")
    ap.add_argument("--extra", default=None, help="more training pairs; those of half-A sources join half A")
    ap.add_argument("--head", default=None, help="half-B feature-head scores (head.npy of --keep) instead of "
                    "computing pair features")
    ap.add_argument("--soup", action="store_true", help="also the seed soup and seed average (see above); "
                    "--variants '' for these alone")
    ap.add_argument("--final", default=None, help="train the variants on all pairs and save their weights here")
    ap.add_argument("--entity-merge", action="store_true", help="also the entity-merged dev figures of the head "
                    "and of every kept score (needs --keep)")
    args = ap.parse_args(argv)
    names = [v.strip() for v in args.variants.split(",") if v.strip()]
    unknown = [v for v in names if v.removeprefix("x-") not in VARIANTS]
    if unknown:
        ap.error(f"unknown variants {unknown}; known: {list(VARIANTS)}")
    t0 = time.time()

    def log(msg: str) -> None:
        print(f"[{time.time() - t0:6.0f}s] {msg}", file=sys.stderr, flush=True)

    if args.write_pairs:
        built = corpus.all_rewrite_pairs(args.data) if args.all_rewrites else corpus.training_pairs(args.data)
        write_pairs(built, args.write_pairs)
        log(f"wrote {len(built)} pairs {built.group_counts()} to {args.write_pairs}")
        return 0
    data = read_pairs(args.pairs) if args.pairs else corpus.training_pairs(args.data)
    extra = read_pairs(args.extra) if args.extra else None
    if args.final:
        out = Path(args.final)
        out.mkdir(parents=True, exist_ok=True)
        every = PairData.concat([data, extra], "all pairs + extra") if extra is not None else data
        for name in names:
            model, summary = train_variant(name, every, args)
            model.save(out / f"{name}.npz")
            versions = {f"{lib}_version": library_version(lib) for lib in ("torch", "transformers")}
            (out / f"{name}.json").write_text(json.dumps({"pairs": len(every), "data_hash": every.data_hash(),
                                                          **summary, **versions}, indent=1), encoding="utf-8")
            log(f"final {name}: {len(every)} pairs, {summary}")
        return 0
    ia, ib = halves(data)
    fit, dev = data.subset(ia), data.subset(ib)
    if extra is not None:
        plus = extra.subset([i for i, s in enumerate(extra.sources) if in_half_a(s)])
        fit = PairData.concat([fit, plus], fit.origin + " + extra (half A)")
    log(f"half A {fit.group_counts()}; half B {dev.group_counts()}")
    if args.head:
        head = np.load(args.head)
        if len(head) != len(dev):
            ap.error(f"{args.head} holds {len(head)} scores, half B has {len(dev)} pairs")
    else:
        x = all_features(data, args.cache)
        head = head_scores(x[ia], fit, x[ib])
    results: dict[str, Any] = {"split": {"A": len(fit), "B": len(ib)}, "head": dev_figures(head, dev)}
    log(f"feature head alone: {results['head']}")
    for name in names:
        started = time.time()
        # an ``x-`` name keeps a run with --extra apart from the plain recipe in --keep
        model, summary = train_variant(name, fit, args)
        cross = model.score(dev.sources, dev.outputs)
        if args.keep:
            Path(args.keep).mkdir(parents=True, exist_ok=True)
            np.save(Path(args.keep) / "head.npy", head)
            np.save(Path(args.keep) / f"cross-{name}.npy", cross)
            model.save(Path(args.keep) / f"model-{name}.npz")
        row: dict[str, Any] = {f"w={w:g}": dev_figures((1 - w) * head + w * cross, dev) for w in WEIGHTS[1:]}
        row["seconds"] = round(time.time() - started)
        row["loss_last_10"] = summary["loss_last_10"]
        results[name] = row
        log(f"{name}: " + "; ".join(f"{k} {v}" for k, v in row.items()))
        if args.json:
            with open(args.json, "w", encoding="utf-8") as fh:
                json.dump(results, fh, indent=1)
    if args.soup:
        if not args.keep:
            ap.error("--soup needs --keep")
        for prefix in ("", "x-"):
            paths = [Path(args.keep) / f"model-{prefix}{n}.npz" for n in ("base", "seed14", "seed15")]
            if not all(p.is_file() for p in paths):
                continue
            models = [CrossEncoder.load(p, args.encoder, backend="torch") for p in paths]
            souped = soup(models).score(dev.sources, dev.outputs)
            average = np.mean([m.score(dev.sources, dev.outputs) for m in models], axis=0)
            for label, pred in (("soup", souped), ("seed-average", average)):
                results[prefix + label] = {f"w={w:g}": dev_figures((1 - w) * head + w * pred, dev)
                                           for w in WEIGHTS[1:]}
                log(f"{prefix + label}: {results[prefix + label]}")
            np.save(Path(args.keep) / f"cross-{prefix}soup.npy", souped)
    if args.combine:
        if not args.keep:
            ap.error("--combine needs --keep")
        results["combinations"] = combinations(Path(args.keep), dev, x[ib])
        log(f"combinations: {results['combinations']}")
        if args.json:
            with open(args.json, "w", encoding="utf-8") as fh:
                json.dump(results, fh, indent=1)
    if args.entity_merge:
        if not args.keep:
            ap.error("--entity-merge needs --keep")
        results["entity merge"] = entity_merges(Path(args.keep), dev, head)
        for name, row in results["entity merge"].items():
            log(f"entity merge, {name}: {row}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(results, fh, indent=1)
    print(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
