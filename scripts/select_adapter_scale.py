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
meaning changes against style rewrites) and ``dev2`` = mean of lai, mir and shift; also ``shift`` by the origin of
the items and ``shift_human`` (yelp-dualrl and ParaDetox items weighted equally, no rule-made PT16 rewrites: on
those every scorer agrees, so ``shift`` overstates the held-out test; docs/results.md). Each scale is also shown with
the output-space blend ``(1 - a) * score + a * clip(cosine)`` at a = .2-.4 for comparison.

Nothing held out for docs/results.md is read (no SGDD-TST, no odd Lai/Mir rows, no style-shift test item).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from select_cosine_blend import (clip, dev2_figures, dev_arguments, development_split, emit, item_origins, stderr_log,
                                 three_ways)
from select_cross_encoder import SCORERS, scorer_kind
from styleval.content.features import PairFeaturizer
from styleval.content.train import default_style_words
from styleval.models import catalog as cat

SCALES = (0.0, 0.25, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
COSINE_WEIGHTS = (0.0, 0.2, 0.3, 0.4)


def main(argv: list[str] | None = None) -> int:
    ap = dev_arguments(__doc__)
    ap.add_argument("--only", default="", help="comma-separated model names to study (default: every bi/late one)")
    ap.add_argument("--scales", default=",".join(f"{t:g}" for t in SCALES), help="comma-separated scales t")
    ap.add_argument("--with-cross", default="", metavar="NAME:W",
                    help="also average each rescaled scorer (weight 1 - W) with the cross-encoder KEEP/model-NAME.npz "
                    "(weight W, unscaled), the form of preservation-minilm-bi-cross (layers3:0.25)")
    args = ap.parse_args(argv)
    log = stderr_log()

    data, _, ib, x, items = development_split(args.data, args.cache)
    dev = data.subset(ib)
    src = [s for s, _, _ in items]
    featurizer = PairFeaturizer(style_words=default_style_words())
    cosine = (x[ib][:, 0], featurizer.sentence_cosines(src, [r for _, r, _ in items]),
              featurizer.sentence_cosines(src, [c for _, _, c in items]))  # the cosine feature, without the parse
    log(f"half B: {len(dev)} pairs, {len(items)} style-shift items")

    origins = item_origins(items, args.data)
    log("style-shift items by origin: " + str({o: int(np.sum(origins == o)) for o in sorted(set(origins))}))

    def figures(parts: tuple[np.ndarray, ...]) -> dict[str, float]:
        return dev2_figures(parts, dev, origins)

    results: dict[str, Any] = {"items": len(items), "cosine alone": figures(tuple(clip(c) for c in cosine))}
    partner: tuple[np.ndarray, ...] | None = None
    if args.with_cross:
        cname, cweight = args.with_cross.split(":")
        w_cross = float(cweight)
        cross = SCORERS["cross"][0].load(Path(args.keep) / f"model-{cname}.npz", cat.DEFAULT_ENCODER, backend="torch")
        partner = three_ways(cross.score, dev, items)
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
            parts = three_ways(m.score, dev, items)
            row = {f"a={a:g}": figures(tuple((1 - a) * p + a * clip(c) for p, c in zip(parts, cosine)))
                   for a in COSINE_WEIGHTS}
            if partner is not None:
                row[f"with {args.with_cross}"] = figures(tuple((1 - w_cross) * p + w_cross * q
                                                               for p, q in zip(parts, partner)))
            results[name][f"t={t:g}"] = row
            log(f"{name} t={t:g}: " + "; ".join(f"{k} {v}" for k, v in row.items()))
    return emit(results, args.json)


if __name__ == "__main__":
    raise SystemExit(main())
