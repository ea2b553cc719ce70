#!/usr/bin/env python
"""Figures for the style-strength report (slow: spaCy and sentence embeddings over the Lai/Mir outputs).

    STYLEVAL_CACHE=/tmp/stylecache .venv/bin/python scripts/style_figures.py [--out figures.json]

1. held-out quality of each shipped style model (read from the model cards);
2. Lai et al. 2022: per-input Kendall tau-like and system-level Pearson of our formality scorers against human
   style scores (conventions of docs/meta-conventions.md), both directions and per direction, next to the
   paper's XFORMAL classifier recomputed from the stored scores;
3. Mir et al. 2019: Pearson of our direction-corrected EMD (shipped Yelp classifier) with human style intensity,
   each model's settings pooled, next to the stored TextCNN EMD;
4. Mir et al. 2019: sentence BLEU unmasked / style-masked / style-removed (Mir's lexicon) against human content.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from styleval.meta import datasets as md  # noqa: E402
from styleval.meta.evaluate import MetaTask, run  # noqa: E402
from styleval.records import Direction  # noqa: E402
from styleval.style import load_style_model, shipped_models  # noqa: E402
from styleval.style.distance import direction_corrected_emd  # noqa: E402
from styleval.style.fscore import fscores  # noqa: E402

LAI_KENDALL = dict(aspect="style", level="segment", method="kendall_tau_like", average_by="item", aggregate="mean",
                   undefined="skip", human_ties="skip", metric_ties="discordant", exclude=("ref",), human="mean")
LAI_PEARSON = dict(aspect="style", level="system", method="pearson", exclude=("ref",), human="mean")


def model_cards() -> dict:
    return {name: load_style_model(name).card.get("held_out", {}).get("scores") for name in shipped_models()}


def lai_figures(data: Path) -> dict:
    ds = md.load_lai2022(data, source="json")
    txt = md.load_lai2022(data, source="txt")
    outputs = ds.extra["outputs"]  # (system, segment) -> text
    keys = sorted(outputs)
    texts = [outputs[k] for k in keys]
    directions = [Direction.parse(md._lai_direction(int(seg))) for _, seg in keys]
    target_formal = np.array([d.target_style == "formal" for d in directions])
    sign = np.where(target_formal, 1.0, -1.0)
    reg = load_style_model("formality-regressor-pt16")
    clf = load_style_model("formality-classifier-pt16")
    p_formal = clf.predict_proba(texts)[:, clf.style_index("formal")]
    scores = {"ours:regressor-pt16": sign * reg.regress(texts),
              "ours:classifier-pt16": np.where(target_formal, p_formal, 1 - p_formal),
              "ours:fscore": np.where(target_formal, 1, -1) * (fscores(texts) - 50.0)}
    rows = [(s, seg, m, float(v), str(d)) for m, vals in scores.items()
            for (s, seg), v, d in zip(keys, vals, directions)]
    table = pd.DataFrame(rows, columns=["system", "segment", "metric", "score", "direction"])
    stored = txt.metrics[txt.metrics["metric"].isin(["style:cls-xformal-target", "style:cls-pt16-target",
                                                     "style:reg-pt16"])].copy()
    # the stored R-PT16 score is the raw formality score: orient it as ours
    flip = (stored["metric"] == "style:reg-pt16") & (stored["direction"] == "formal->informal")
    stored.loc[flip, "score"] = -stored.loc[flip, "score"]
    table = pd.concat([table, stored[table.columns]], ignore_index=True)
    out = {}
    for direction in ("both", "informal->formal", "formal->informal"):
        for label, spec in (("kendall", LAI_KENDALL), ("system_pearson", LAI_PEARSON)):
            res = run(MetaTask(direction=direction, **spec), ds.judgments, table)
            out[f"{label} [{direction}]"] = {m: round(res.statistic(m), 3) for m in res.metrics}
    return out


def mir_figures(data: Path) -> dict:
    from styleval.metrics import registry
    from styleval.metrics.base import Batch
    from styleval.metrics.style import StyleMask, StyleRemove
    from styleval.readers import read_mir2019

    ds = md.load_mir2019(data)
    records = read_mir2019(data)
    clf = load_style_model("sentiment-classifier-yelp")
    lexicon = str(data / "mir2019" / "style_lexicon" / "style_words_and_weights.json")
    rows = []
    by_system: dict[str, list] = {}
    for r in records:
        by_system.setdefault(r.system, []).append(r)
    for system, recs in by_system.items():
        src = clf.predict_proba([r.source for r in recs])
        out = clf.predict_proba([r.output for r in recs])
        target = [clf.style_index(r.direction.target_style) for r in recs]
        emd = direction_corrected_emd(src, out, target)
        rows += [(system, r.id, "emd:ours-yelp", float(v), str(r.direction)) for r, v in zip(recs, emd)]
        rows += [(system, r.id, "target:ours-yelp", float(o[t]), str(r.direction))
                 for r, o, t in zip(recs, out, target)]
        batch = Batch.from_records(recs)
        for label, metric in (("unmasked:sentBLEU", registry.create("bleu", against="source")),
                              ("style_masked:sentBLEU", StyleMask(inner=registry.create("bleu", against="source"),
                                                                  lexicon=lexicon)),
                              ("style_removed:sentBLEU", StyleRemove(inner=registry.create("bleu", against="source"),
                                                                     lexicon=lexicon))):
            res = metric.score(batch)
            rows += [(system, i, label, float(v), str(r.direction)) for i, v, r in zip(res.ids, res.segment_scores, recs)]
    ours = pd.DataFrame(rows, columns=["system", "segment", "metric", "score", "direction"])
    table = pd.concat([ours, ds.metrics[ds.metrics["metric"].isin(["emd:textcnn", "target:textcnn", "unmasked:BLEU",
                                                                   "style_masked:BLEU", "style_removed:BLEU"])]],
                      ignore_index=True)
    out = {}
    for model, systems in ds.extra["models"].items():
        common = dict(level="segment", method="pearson", average_by="none", orientation="signed",
                      systems=tuple(systems), human="mean")
        sti = run(MetaTask(aspect="style_transfer_intensity", **common), ds.judgments, table,
                  metrics=["emd:ours-yelp", "target:ours-yelp", "emd:textcnn", "target:textcnn"])
        cp = run(MetaTask(aspect="content_preservation", **common), ds.judgments, table,
                 metrics=["unmasked:sentBLEU", "style_masked:sentBLEU", "style_removed:sentBLEU", "unmasked:BLEU",
                          "style_masked:BLEU", "style_removed:BLEU"])
        out[model] = {"style_intensity": {m: round(sti.statistic(m), 3) for m in sti.metrics},
                      "content": {m: round(cp.statistic(m), 3) for m in cp.metrics}}
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data"))
    ap.add_argument("--out", default=None)
    ap.add_argument("--only", choices=["cards", "lai", "mir"], nargs="*")
    args = ap.parse_args()
    data = Path(args.data)
    parts = args.only or ["cards", "lai", "mir"]
    figures = {}
    for part, fn in (("cards", lambda: model_cards()), ("lai", lambda: lai_figures(data)),
                     ("mir", lambda: mir_figures(data))):
        if part in parts:
            figures[part] = fn()
            print(json.dumps({part: figures[part]}, indent=1), flush=True)
    if args.out:
        Path(args.out).write_text(json.dumps(figures, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
