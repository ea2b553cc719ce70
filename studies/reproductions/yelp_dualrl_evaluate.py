#!/usr/bin/env python
"""`styleval evaluate` on the yelp-dualrl outputs (both directions, four human references): overall scores with
their joint-bootstrap intervals, for docs/results.md.

    .venv/bin/python studies/reproductions/yelp_dualrl_evaluate.py [--systems DualRL UnsuperMT_Zhang ...]
        [--html report.html]

Each system's 1,000 outputs (500 negative->positive, 500 positive->negative) are scored with the full battery; the
sentiment classifier shipped with styleval is chosen for both directions.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "src"))

from styleval.evaluation import evaluate  # noqa: E402
from styleval.datasets import read_yelp_dualrl  # noqa: E402

DEFAULT_SYSTEMS = ["DualRL", "UnsuperMT_Zhang", "DeleteOnly_Li", "CrossAlignment_Shen"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data"))
    ap.add_argument("--systems", nargs="*", default=DEFAULT_SYSTEMS)
    ap.add_argument("--bootstrap", type=int, default=1000)
    ap.add_argument("--html", help="also write the HTML report here")
    ap.add_argument("--fast", action="store_true", help="lexical metrics and the style classifier only")
    args = ap.parse_args()
    records = read_yelp_dualrl(args.data, systems=args.systems, include_humans_as_systems=False)
    t0 = time.perf_counter()
    ev = evaluate(records, bootstrap=args.bootstrap, fast=args.fast)
    elapsed = time.perf_counter() - t0
    print(f"{len(records)} records, {len(args.systems)} systems, evaluate {elapsed:.1f} s")
    print(f"style model: {ev.settings['style_model']}")
    for row in ev.overall.itertuples():
        print(f"{row.system:22s} {row.score:3s} {row.value:.3f} [{row.ci_low:.3f}, {row.ci_high:.3f}]")
    threshold = ev.settings.get("fluency_threshold")
    fluency = ev.roles.get("fluency")
    if fluency is not None and threshold is not None:  # J's fluency factor: the share of outputs that pass
        for system in ev.systems:
            r = ev.result.get(fluency, system)
            seg = np.asarray(r.segment_scores, dtype=float)
            passed = seg >= threshold if r.higher_is_better else seg <= threshold
            print(f"{system:22s} {fluency} {r.corpus_score:.3f}, median {np.nanmedian(seg):.3f}, "
                  f"share {'>=' if r.higher_is_better else '<='} {threshold:g}: {np.mean(passed):.3f}")
    if args.html:
        from styleval.report.html import write_report

        write_report(ev, html=args.html)
        print(f"wrote {args.html}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
