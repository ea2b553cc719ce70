"""Benchmark: throughput of the learned ``preservation`` metric next to MiniLM ``sentence_cosine``, same run.

Pairs: yelp-dualrl sources with the outputs of the first systems (distinct (source, output) pairs, ``--pairs`` of
them, default 1,000), scored against the source with ``metric.score(batch)`` through the registry, as
``styleval score`` does. Before each timed run every cache is emptied (styleval's embedding cache, the spaCy parse
cache, the preservation model's text cache), so each run encodes and parses every text; models are loaded and
warmed up on other texts before timing. Reported: the median over ``--repeat`` runs of pairs per second, and
the ratio preservation / sentence_cosine, for preservation's encoder run by torch and (when the ``fast`` extra is
installed) by ONNX Runtime. ``preservation`` = spaCy parse (tagger, parser, NER) + one MiniLM forward pass per
distinct text + pair features (+ one cross-encoder pass per pair for the default model); the parse share is
printed too. ``preservation-minilm-fast`` is the same without the cross-encoder pass.

Two workloads, both timed for every metric in the same run:

* ``distinct``: every pair has its own source (about two distinct texts per pair), the worst case for a metric
  that encodes and parses each distinct text once;
* ``shared``: what ``styleval evaluate`` scores, ``--systems`` systems' outputs for the same sources (the first
  ``--pairs / --systems`` yelp-dualrl inputs, each with every chosen system's output), so a source is encoded and
  parsed once for all systems.

Threads: ``--threads`` torch threads for both (default 2; on a 2-core machine that other processes keep busy,
1 thread can be faster).

    .venv/bin/python benchmarks/bench_preservation.py [--pairs 1000] [--repeat 3] [--threads 2] [--systems 8]
"""
from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2] / "shared" / "data"


def pairs(n: int, skip: int = 0) -> tuple[list[str], list[str]]:
    from styleval.datasets import read_yelp_dualrl

    seen: dict[tuple[str, str], None] = {}
    for r in read_yelp_dualrl(ROOT, include_humans_as_systems=False):
        if r.output.strip():
            seen.setdefault((r.source, r.output), None)
        if len(seen) >= n + skip:
            break
    chosen = list(seen)[skip:skip + n]
    return [s for s, _ in chosen], [o for _, o in chosen]


def shared_pairs(n: int, systems: int) -> tuple[list[str], list[str]]:
    """``n`` pairs: the first ``n // systems`` inputs, each with the outputs of the first ``systems`` systems."""
    from collections import defaultdict

    from styleval.datasets import read_yelp_dualrl

    by_input: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for r in read_yelp_dualrl(ROOT, include_humans_as_systems=False):
        if r.output.strip() and len(by_input[r.id]) < systems:
            by_input[r.id].append((r.source, r.output))
    chosen = [p for group in list(by_input.values())[:max(1, n // systems)] for p in group]
    return [s for s, _ in chosen], [o for _, o in chosen]


def batch_of(sources, outputs):
    """A metric batch of (source, output) pairs with no references, as ``styleval score`` builds it."""
    from styleval.metrics.base import Batch

    return Batch([str(i) for i in range(len(outputs))], list(outputs), list(sources), [[] for _ in outputs],
                 [None] * len(outputs))


def clear_caches(metric) -> None:
    from styleval.models.pool import embedding_cache
    from styleval.nlp.parse import clear_cache

    embedding_cache().clear()
    clear_cache()
    model = getattr(metric, "_model", None)
    if model is not None:
        model.featurizer._reps.clear()  # the cross-encoder keeps no per-pair cache


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--systems", type=int, default=8, help="systems sharing each source in the shared workload")
    args = ap.parse_args()
    os.environ["STYLEVAL_THREADS"] = str(args.threads)
    from styleval.metrics.registry import create
    from styleval.nlp import parse_many

    workloads = {"distinct": pairs(args.pairs, skip=0), "shared": shared_pairs(args.pairs, args.systems)}
    warm_src, warm_out = pairs(50, skip=args.pairs)

    batch = batch_of
    from styleval.models.onnx_encoder import onnx_available

    metrics = {"sentence_cosine": create("sentence_cosine", against="source"),
               "preservation": create("preservation", against="source", backend="torch"),
               # the feature head alone (no cross-encoder pass)
               "preservation-fast": create("preservation", against="source", backend="torch",
                                           model="preservation-minilm-fast")}
    if onnx_available():  # the default backend when the 'fast' extra is installed
        metrics["preservation[onnx]"] = create("preservation", against="source", backend="onnx")
        metrics["preservation-fast[onnx]"] = create("preservation", against="source", backend="onnx",
                                                    model="preservation-minilm-fast")
    for m in metrics.values():
        m.score(batch(warm_src, warm_out))  # load models
    import torch

    print(f"torch threads {torch.get_num_threads()}, median of {args.repeat} runs")
    for workload, (src, out) in workloads.items():
        n = len(out)
        times: dict[str, list[float]] = {k: [] for k in (*metrics, "spacy parse")}
        for _ in range(args.repeat):
            for name, m in metrics.items():
                clear_caches(m)
                t = time.perf_counter()
                m.score(batch(src, out))
                times[name].append(time.perf_counter() - t)
            clear_caches(metrics["preservation"])
            t = time.perf_counter()
            parse_many([*src, *out])
            times["spacy parse"].append(time.perf_counter() - t)
        print(f"{workload}: {n} pairs, {len(set(src)) + len(set(out))} distinct texts")
        med = {k: statistics.median(v) for k, v in times.items()}
        for name in times:
            print(f"  {name:20s} {med[name]:8.2f} s   {n / med[name]:8.1f} pairs/s")
        for name in metrics:
            if name.startswith("preservation"):
                print(f"  {name} / sentence_cosine throughput: {med['sentence_cosine'] / med[name]:.2f}x; "
                      f"spaCy parse share of its time: {med['spacy parse'] / med[name]:.0%}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
