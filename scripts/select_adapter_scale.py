"""Choose, on training data only, how far a one-pass scorer's adapters should move MiniLM: a weight-space blend.

    .venv/bin/python scripts/select_adapter_scale.py --cache DIR --keep KEEP [--scales .5,.7,1] [--json out.json]

A LoRA-tuned encoder's weights are ``W + s * B @ A``. Scaling ``s`` by ``t`` in 0-1 moves the weights on the line
from plain MiniLM (``t = 0``: the bi-encoder then ranks pairs exactly as plain cosine does) to the tuned encoder
(``t = 1``). Averaging fine-tuned and pre-trained *weights* this way (Wortsman et al. 2022, "Robust fine-tuning
of zero-shot models") often keeps what tuning taught and what the pre-trained model knew better than averaging
their *scores*, and it costs one encoder pass instead of two: the averaged score of a tuned bi-encoder and plain
cosine (scripts/select_cosine_blend.py) runs MiniLM twice per text.

Development data as in scripts/select_cosine_blend.py: models trained on half A of the training pairs
(``KEEP/model-NAME.npz`` of scripts/select_cross_encoder.py, bi- or late-interaction encoders), figures on half B:
``lai``, ``mir`` (Spearman with half B's human content ratings), ``style`` and ``shift`` (agreement on automatic
meaning changes against style rewrites) and ``dev2`` = mean of lai, mir and shift. Each scale is also shown with
the output-space blend ``(1 - a) * score + a * clip(cosine)`` at a = .2-.4 for comparison.

Nothing held out for docs/results.md is read (no SGDD-TST, no odd Lai/Mir rows, no style-shift test item).
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from select_cosine_blend import clip, shift_items
from select_cross_encoder import SCORERS, all_features, dev_figures, halves, scorer_kind
from styleval.content import corpus
from styleval.content.features import PairFeaturizer
from styleval.content.train import default_style_words
from styleval.models import catalog as cat

SCALES = (0.0, 0.25, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
COSINE_WEIGHTS = (0.0, 0.2, 0.3, 0.4)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=None, help="the shared data folder (default ../shared/data)")
    ap.add_argument("--cache", default=None, help="pair-feature cache folder of scripts/train_preservation.py")
    ap.add_argument("--keep", required=True, help="model-NAME.npz files of select_cross_encoder.py --keep")
    ap.add_argument("--only", default="", help="comma-separated model names to study (default: every bi/late one)")
    ap.add_argument("--scales", default=",".join(f"{t:g}" for t in SCALES), help="comma-separated scales t")
    ap.add_argument("--with-cross", default="", metavar="NAME:W",
                    help="also average each rescaled scorer (weight 1 - W) with the cross-encoder KEEP/model-NAME.npz "
                    "(weight W, unscaled), the form of preservation-minilm-bi-cross (layers3:0.25)")
    ap.add_argument("--json", default=None, help="write every figure here")
    args = ap.parse_args(argv)
    t0 = time.time()

    def log(msg: str) -> None:
        print(f"[{time.time() - t0:6.0f}s] {msg}", file=sys.stderr, flush=True)

    data = corpus.training_pairs(args.data)
    _, ib = halves(data)
    dev = data.subset(ib)
    x = all_features(data, args.cache)
    items = shift_items(dev)
    src = [s for s, _, _ in items]
    featurizer = PairFeaturizer(style_words=default_style_words())
    cosine = (x[ib][:, 0], featurizer.features(src, [r for _, r, _ in items])[:, 0],
              featurizer.features(src, [c for _, _, c in items])[:, 0])
    log(f"half B: {len(dev)} pairs, {len(items)} style-shift items")

    def figures(parts: tuple[np.ndarray, ...]) -> dict[str, float]:
        out = dev_figures(parts[0], dev)
        out["shift"] = round(corpus.agreement(parts[1], parts[2]), 4)
        out["dev2"] = round(float(np.mean([out["lai"], out["mir"], out["shift"]])), 4)
        return out

    results: dict[str, Any] = {"items": len(items), "cosine alone": figures(tuple(clip(c) for c in cosine))}
    partner: tuple[np.ndarray, ...] | None = None
    if args.with_cross:
        cname, cweight = args.with_cross.split(":")
        w_cross = float(cweight)
        cross = SCORERS["cross"][0].load(Path(args.keep) / f"model-{cname}.npz", cat.DEFAULT_ENCODER, backend="torch")
        partner = (cross.score(dev.sources, dev.outputs), cross.score(src, [r for _, r, _ in items]),
                   cross.score(src, [c for _, _, c in items]))
        results[f"{cname} alone"] = figures(partner)
        log(f"scored {cname}: {results[f'{cname} alone']}")
    only = {n for n in args.only.split(",") if n}
    for path in sorted(Path(args.keep).glob("model-*.npz")):
        name = path.stem.removeprefix("model-")
        kind = scorer_kind(name)
        if kind not in ("bi", "late") or (only and name not in only):
            continue
        model = SCORERS[kind][0].load(path, cat.DEFAULT_ENCODER, backend="torch")
        results[name] = {}
        for t in (float(v) for v in args.scales.split(",")):
            m = model.rescaled(t)
            parts = (m.score(dev.sources, dev.outputs), m.score(src, [r for _, r, _ in items]),
                     m.score(src, [c for _, _, c in items]))
            row = {f"a={a:g}": figures(tuple((1 - a) * p + a * clip(c) for p, c in zip(parts, cosine)))
                   for a in COSINE_WEIGHTS}
            if partner is not None:
                row[f"with {args.with_cross}"] = figures(tuple((1 - w_cross) * p + w_cross * q
                                                               for p, q in zip(parts, partner)))
            results[name][f"t={t:g}"] = row
            log(f"{name} t={t:g}: " + "; ".join(f"{k} {v}" for k, v in row.items()))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1), encoding="utf-8")
    print(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
