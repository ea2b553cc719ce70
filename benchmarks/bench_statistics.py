"""Intervals and paired tests of the `evaluate` defaults (1,000 resamples, paired bootstrap between all pairs), with
each system's resample scores shared across its interval and tests (``ResampleMemo``, the driver's way) against
computing them for every interval and every test (the way before), on the same statistics in one run.

yelp-dualrl's first ``--systems`` systems x ``--inputs`` inputs, lexical metrics (their statistics come fast, so
only the resampling is timed). Prints the median seconds of each way over ``--repeat`` runs, their ratio, and
checks that both give the same intervals and p-values.

Run: .venv/bin/python benchmarks/bench_statistics.py --systems 10 --inputs 200 --repeat 3
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

from styleval.datasets import read_yelp_dualrl
from styleval.engine.options import StatisticsOptions
from styleval.engine.resampling import add_interval, comparison_pairs, paired_comparison, resample_memo
from styleval.metrics import registry
from styleval.scoring import score_records

DATA = Path(os.environ.get("STYLEVAL_SHARED_DATA") or Path(__file__).resolve().parents[2] / "shared" / "data")


def finalize(results, metrics, options: StatisticsOptions, shared: bool) -> list[tuple]:
    """Every interval and pairwise p-value, as the driver computes them (shared) or one call at a time."""
    out: list[tuple] = []
    per_metric = len(results) // len(metrics)  # the driver's order: each metric's systems together
    for k, metric in enumerate(metrics):
        mine = results[k * per_metric:(k + 1) * per_metric]
        memo = resample_memo(metric) if shared else None
        for r in mine:
            add_interval(r, metric, options, memo)
            out.append((metric.name, r.system, r.ci))
        by_system = {r.system: r for r in mine}
        for system, baseline in comparison_pairs(list(by_system), None):
            agg, st = (memo.aggregate, memo.sum_then) if memo else (metric.aggregate, metric.sum_aggregate())
            c = paired_comparison(metric.name, system, by_system[system].stats, baseline, by_system[baseline].stats,
                                  agg, st, options, memo)
            out.append((metric.name, system, baseline, c.p_value, c.delta))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--systems", type=int, default=10)
    parser.add_argument("--inputs", type=int, default=200)
    parser.add_argument("--metrics", default="bleu,chrf,ter,meteor")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    records = read_yelp_dualrl(DATA / "yelp-dualrl")
    systems = list(dict.fromkeys(r.system for r in records))[:args.systems]
    subset = [r for s in systems for r in [x for x in records if x.system == s][:args.inputs]]
    metrics = [registry.create(m) for m in args.metrics.split(",")]
    results = score_records(subset, metrics, options=StatisticsOptions(bootstrap=0)).results
    options = StatisticsOptions(significance="paired-bootstrap")
    times: dict[bool, list[float]] = {True: [], False: []}
    figures: dict[bool, list[tuple]] = {}
    for _ in range(args.repeat):
        for shared in (False, True):
            t0 = time.perf_counter()
            figures[shared] = finalize(results, metrics, options, shared)
            times[shared].append(time.perf_counter() - t0)
    if figures[True] != figures[False]:
        print("the shared and unshared figures differ", file=sys.stderr)
        return 1
    before, after = statistics.median(times[False]), statistics.median(times[True])
    print(f"{len(systems)} systems x {args.inputs} inputs, {len(metrics)} metrics ({args.metrics}), "
          f"{options.bootstrap} resamples, all {len(systems) * (len(systems) - 1) // 2} pairs; median of "
          f"{args.repeat}: one at a time {before:.2f} s, shared {after:.2f} s, {before / after:.2f}x; "
          f"figures identical")
    return 0


if __name__ == "__main__":
    sys.exit(main())
