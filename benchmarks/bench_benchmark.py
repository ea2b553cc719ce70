"""Benchmark: `styleval benchmark` of one cheap metric (BLEU) on every built-in set, against the same figures made
by hand with `styleval.score` and `styleval.meta.run` (the peer), and the same benchmark again from its cache.

Three timings, each the median of --repeat runs in this process:
* ``benchmark``: ``benchmark(["bleu"], all sets, ci=N, n_permutations=P)`` with an empty cache: scoring BLEU on
  lai2022 (640 outputs), mir2019 (2,928) and sgdd-tst (10,287), every task with the stored scores, intervals and
  the pairwise tests behind the clusters;
* ``peer``: what a user writes without it: per set ``styleval.score`` then one ``meta.run`` per task over the same
  metrics with the same intervals (``significance="permutation"`` against the best metric only: fewer tests than
  the clusters need);
* ``cached``: the benchmark again on the warm cache (no scoring).
The figures of benchmark and peer must agree. Run:
    .venv/bin/python benchmarks/bench_benchmark.py [--repeat 1] [--ci 100] [--permutations 100]
"""
from __future__ import annotations

import argparse
import statistics
import tempfile
import time

import pandas as pd

import styleval
from styleval.benchmark import benchmark
from styleval.benchmark.sets import BUILTIN
from styleval.meta import run as meta_run
from styleval.meta.evaluate import MetaRunOptions


def peer(ci: int, permutations: int) -> dict[tuple[str, str], float]:
    figures = {}
    for make in BUILTIN.values():
        bench_set = make(None)
        result = styleval.score(bench_set.records(), ["bleu"], bootstrap=0)
        frame = result.to_dataframe("segment")
        scored = pd.DataFrame({"system": frame["system"], "segment": frame["id"], "metric": frame["metric"],
                               "score": frame["score"]})
        table = pd.concat([scored, bench_set.stored], ignore_index=True)
        kinds = {**{m: "content" for m in scored["metric"].unique()}, **bench_set.stored_kinds}
        for bt in bench_set.tasks:
            names = [m for m in dict.fromkeys(table["metric"]) if kinds.get(m) == bt.kind]
            if not names:
                continue
            res = meta_run(bt.task, bench_set.judgments, table, metrics=names,
                           lower_is_better=bench_set.lower_is_better,
                           options=MetaRunOptions(unmatched="report", ci=ci,
                                                  significance="permutation" if permutations else "none",
                                                  n_permutations=max(permutations, 1)))
            for m in names:
                figures[(bt.name, m)] = res.statistic(m)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--ci", type=int, default=100)
    parser.add_argument("--permutations", type=int, default=100)
    args = parser.parse_args()
    times: dict[str, list[float]] = {"benchmark": [], "peer": [], "cached": []}
    for _ in range(args.repeat):
        with tempfile.TemporaryDirectory() as cache:
            t = time.perf_counter()
            result = benchmark(["bleu"], cache_dir=cache, ci=args.ci, n_permutations=args.permutations)
            times["benchmark"].append(time.perf_counter() - t)
            t = time.perf_counter()
            benchmark(["bleu"], cache_dir=cache, ci=args.ci, n_permutations=args.permutations)
            times["cached"].append(time.perf_counter() - t)
        t = time.perf_counter()
        figures = peer(args.ci, args.permutations)
        times["peer"].append(time.perf_counter() - t)
    ours = {(t.task.name, r.metric): r.statistic for t in result.tasks for r in t.rows}
    worst = max(abs(ours[k] - v) for k, v in figures.items())
    assert worst < 1e-9, f"benchmark and peer disagree by {worst}"
    med = {k: statistics.median(v) for k, v in times.items()}
    n_rows = sum(len(t.rows) for t in result.tasks)
    print(f"{len(result.tasks)} tasks, {n_rows} (task, metric) figures; ci={args.ci}, "
          f"permutations={args.permutations}; median of {args.repeat}")
    for key, value in med.items():
        print(f"{key:9s} {value:8.1f} s")
    print(f"benchmark / peer: {med['benchmark'] / med['peer']:.2f}; cached / benchmark: "
          f"{med['cached'] / med['benchmark']:.2f}")


if __name__ == "__main__":
    main()
