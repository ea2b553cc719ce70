#!/usr/bin/env python
"""Rao & Tetreault's rule-based baseline on the lai2022 inputs, evaluated next to the eight published systems.

    .venv/bin/python scripts/lai2022_rule_baseline.py [--fast] [--html report.html]

The rule system rewrites each of the 80 inputs in its own direction (rows 0-39 informal->formal, 40-79
formal->informal); every system, "ref" excluded, is then scored with `styleval evaluate`, per direction, and
the rank of the rule system on each metric is printed.
"""
from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"


def main() -> int:
    from styleval.evaluation import evaluate
    from styleval.datasets import read_lai2022
    from styleval.report.html import write_report
    from styleval.training.transfer import to_formal, to_informal

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--fast", action="store_true")
    parser.add_argument("--html", help="write the HTML report of the informal->formal half here")
    args = parser.parse_args()

    records = [r for r in read_lai2022(DATA) if r.system != "ref"]
    first = [r for r in records if r.system == records[0].system]
    rules = [replace(r, system="rules", meta={},
                     output=(to_formal if r.direction.target_style == "formal" else to_informal)(r.source))
             for r in first]
    records += rules
    for direction in ("informal->formal", "formal->informal"):
        subset = [r for r in records if str(r.direction) == direction]
        ev = evaluate(subset, fast=args.fast, bootstrap=1000, significance="none")
        table = ev.result.corpus_table()
        print(f"\n== {direction}: {len(table)} systems")
        for metric in table.columns:
            higher = ev.result.get(metric, "rules").higher_is_better
            ranked = table[metric].sort_values(ascending=not higher)
            rank = list(ranked.index).index("rules") + 1
            print(f"{metric:16s} rules {table.loc['rules', metric]:9.4g}  rank {rank}/{len(ranked)}  "
                  f"(best {ranked.index[0]} {ranked.iloc[0]:.4g})")
        for name in ("hm", "j"):
            values = {s: ev.overall_score(s, name) for s in table.index}
            order = sorted(values, key=values.get, reverse=True)
            print(f"{name:16s} rules {values['rules']:9.4g}  rank {order.index('rules') + 1}/{len(order)}  "
                  f"(best {order[0]} {values[order[0]]:.4g})")
        if args.html and direction == "informal->formal":
            write_report(ev, html=args.html)
    return 0


if __name__ == "__main__":
    sys.exit(main())
