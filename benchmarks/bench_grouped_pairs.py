"""Benchmark: Lai et al. (2022)'s per-input Kendall tau-like under resampling, scalar path against the vectorised one.

On the lai2022 content task of ``styleval benchmark`` (8 systems x 80 inputs, one of them all human ties; COMET
against BLEU as stored with the set), each timing the median of ``--repeat`` runs in this process:

* ``one call``: the statistic once (``segment_level``, what every resample used to cost);
* ``bootstrap``: ``bootstrap_correlation_ci`` with ``--resamples`` resamples of inputs, given the task's statistic
  as a plain function (one ``segment_level`` call per resample: the scalar path) and as the
  :class:`~styleval.stats.SegmentStatistic` meta and the benchmark pass (``styleval.stats.grouped``);
* ``permutation``: ``permutation_test_correlation_difference`` (COMET vs BLEU, unit=cell) the same two ways.

The figures of both paths must agree (to 1e-12; they are equal bit for bit). Run:
    .venv/bin/python benchmarks/bench_grouped_pairs.py [--repeat 3] [--resamples 200]
"""
from __future__ import annotations

import argparse
import statistics
import time
from typing import Any, Callable

import numpy as np

from styleval.benchmark.sets import lai2022_set
from styleval.meta import run as meta_run
from styleval.meta.evaluate import MetaRunOptions, paired_matrices, statistic_function
from styleval.stats import bootstrap_correlation_ci, permutation_test_correlation_difference


def lai_content_matrices() -> tuple[Any, np.ndarray, np.ndarray, np.ndarray]:
    bench_set = lai2022_set(None)
    task = next(bt.task for bt in bench_set.tasks if bt.kind == "content" and bt.task.level == "segment"
                and bt.task.direction == "both")
    metrics = ["src:comet", "src:bleu"]
    res = meta_run(task, bench_set.judgments, bench_set.stored, metrics=metrics,
                   lower_is_better=bench_set.lower_is_better, options=MetaRunOptions(unmatched="report"))
    a, b, h = paired_matrices(task, res.oriented[metrics[0]], res.oriented[metrics[1]])
    return task, a, b, h


def timed(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    times, out = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--resamples", type=int, default=200)
    args = parser.parse_args()
    task, a, b, h = lai_content_matrices()
    vectorised = statistic_function(task)

    def scalar(m: np.ndarray, x: np.ndarray) -> Any:  # not a SegmentStatistic: called once per resample
        return vectorised(m, x)

    n = args.resamples
    one, _ = timed(lambda: scalar(a, h), max(args.repeat, 5))
    rows = {}
    for label, run in {
        "bootstrap": lambda fn: bootstrap_correlation_ci(a, h, fn, n_resamples=n, seed=0, nan_policy="omit"),
        "permutation": lambda fn: permutation_test_correlation_difference(a, b, h, fn, n_resamples=n, seed=0),
    }.items():
        t_old, old = timed(lambda run=run: run(scalar), args.repeat)
        t_new, new = timed(lambda run=run: run(vectorised), args.repeat)
        got = (new.low, new.high) if label == "bootstrap" else (new.pvalue, new.delta)
        want = (old.low, old.high) if label == "bootstrap" else (old.pvalue, old.delta)
        assert np.allclose(got, want, rtol=0, atol=1e-12), f"{label}: {got} != {want}"
        rows[label] = (t_old, t_new, got)
    print(f"lai2022 content per-input Kendall tau-like, {a.shape[0]} systems x {a.shape[1]} inputs; "
          f"{n} resamples; median of {args.repeat}")
    print(f"one call (scalar)      {one * 1000:8.1f} ms")
    for label, (t_old, t_new, got) in rows.items():
        print(f"{label:11s} scalar {t_old:8.2f} s   vectorised {t_new:8.3f} s   speed-up {t_old / t_new:6.0f}x   "
              f"figures {got[0]:.6f}, {got[1]:.6f} (equal)")


if __name__ == "__main__":
    main()
