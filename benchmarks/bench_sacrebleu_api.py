"""Benchmark: BLEU and TER segment statistics through sacrebleu's private stages (what styleval's metrics do) vs its
public ``sentence_score`` (the only public per-segment route; chrF has none, its score object keeps no statistics).

Every yelp-dualrl system output (1,000 inputs each) against the four human references, the systems one after the
other as ``score`` runs them. Both routes must give identical rows; the script prints the median time of each over
--repeat runs and their ratio. Run: .venv/bin/python benchmarks/bench_sacrebleu_api.py [--repeat 3] [--systems N]
"""
from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import numpy as np

from styleval.datasets import read_yelp_dualrl
from styleval.metrics.registry import create
from styleval.records import group_by_system

ROOT = Path(__file__).resolve().parents[2] / "shared" / "data" / "yelp-dualrl"


def public_rows(name: str, groups) -> list[np.ndarray]:
    """Statistics rows from the public sentence scores: BLEU's lengths and n-gram counts, TER's edits."""
    from sacrebleu.metrics.bleu import BLEU
    from sacrebleu.metrics.ter import TER

    scorer = BLEU() if name == "bleu" else TER()
    out = []
    for recs in groups.values():
        rows = []
        for r in recs:
            s = scorer.sentence_score(r.output, r.references)
            rows.append([s.sys_len, s.ref_len, *s.counts, *s.totals] if name == "bleu" else [s.num_edits,
                                                                                               s.ref_length])
        out.append(np.asarray(rows, dtype=float))
    return out


def private_rows(name: str, groups) -> list[np.ndarray]:
    metric = create(name)  # one instance: the references' preprocessing is cached across systems
    return [metric.pair_stats([r.output for r in recs], [r.references for r in recs]) for recs in groups.values()]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--systems", type=int, default=0, help="first N systems only (0: all)")
    args = ap.parse_args()
    records = [r for r in read_yelp_dualrl(ROOT) if len(r.references) == 4]
    groups = group_by_system(records)
    if args.systems:
        groups = dict(list(groups.items())[: args.systems])
    n = sum(len(v) for v in groups.values())
    print(f"{len(groups)} systems, {n:,} segments, 4 references each")
    for name in ("bleu", "ter"):
        times: dict[str, list[float]] = {"private": [], "public": []}
        results = {}
        for _ in range(args.repeat):
            for route, fn in (("private", private_rows), ("public", public_rows)):
                t0 = time.perf_counter()
                results[route] = fn(name, groups)
                times[route].append(time.perf_counter() - t0)
        same = all(np.array_equal(a, b) for a, b in zip(results["private"], results["public"]))
        med = {k: statistics.median(v) for k, v in times.items()}
        print(f"{name}: private stages {med['private']:.2f} s, public sentence_score {med['public']:.2f} s, "
              f"public/private {med['public'] / med['private']:.2f}x, identical rows: {same}")


if __name__ == "__main__":
    main()
