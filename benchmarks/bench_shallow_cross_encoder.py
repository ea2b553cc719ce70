"""Benchmark: how much faster is a cross-encoder on the first layers of MiniLM (``train-content --encoder-layers``)?

The default ``preservation`` model's cross-encoder runs one pass of all 6 MiniLM layers per pair. This times, in
one run and on the same pairs, that cross-encoder and copies of it cut to its first 3 and 2 layers (the shipped
adapters of those layers, so the arithmetic is exactly what a shallow cross-encoder of that depth runs; the scores
of the cut copies are not meaningful and are not reported), next to ``sentence_cosine``. Median pairs per second
over ``--repeat`` runs on ``--pairs`` distinct yelp-dualrl (source, output) pairs, the workload of
``benchmarks/bench_preservation.py``, and each depth's ratio to the full cross-encoder and to ``sentence_cosine``.
Each model is loaded and warmed up before timing; the sentence-embedding cache is emptied before each
``sentence_cosine`` run (the cross-encoder keeps no cache).

    .venv/bin/python benchmarks/bench_shallow_cross_encoder.py [--pairs 400] [--repeat 3] [--threads 2]
        [--backend onnx|torch]
"""
from __future__ import annotations

import argparse
import os
import statistics
import time


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", type=int, default=400)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--backend", default="auto", help="what runs the cross-encoders: onnx, torch or auto")
    args = ap.parse_args(argv)
    os.environ["STYLEVAL_THREADS"] = str(args.threads)

    from bench_preservation import batch_of, pairs
    from styleval.content import load_preservation_model
    from styleval.content.cross_encoder import CrossEncoder
    from styleval.metrics.registry import create
    from styleval.models.pool import embedding_cache

    src, out = pairs(args.pairs)
    warm_src, warm_out = pairs(40, skip=args.pairs)
    full = load_preservation_model(backend=args.backend).cross
    assert full is not None  # noqa: S101  (the default model has one)
    crosses: dict[str, CrossEncoder] = {"6 layers (shipped)": full}
    for depth in (3, 2):
        kept = {name: ab for name, ab in full.adapters.items()
                if any(f".layer.{i}." in name for i in range(depth))}
        crosses[f"{depth} layers"] = CrossEncoder(full.encoder, kept, full.scaling, full.head_w, full.head_b,
                                                  backend=args.backend, layers=depth)
    cosine = create("sentence_cosine", against="source")
    for cross in crosses.values():
        cross.score(warm_src, warm_out)
    cosine.score(batch_of(warm_src, warm_out))
    times: dict[str, list[float]] = {name: [] for name in (*crosses, "sentence_cosine")}
    for _ in range(args.repeat):
        for name, cross in crosses.items():
            t = time.perf_counter()
            cross.score(src, out)
            times[name].append(time.perf_counter() - t)
        embedding_cache().clear()
        t = time.perf_counter()
        cosine.score(batch_of(src, out))
        times["sentence_cosine"].append(time.perf_counter() - t)
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"{len(out)} distinct pairs, backend {full.backend}, {args.threads} threads, median of {args.repeat} runs")
    for name, seconds in med.items():
        line = f"  {name:20s} {seconds:7.2f} s {len(out) / seconds:8.1f} pairs/s"
        if name != "sentence_cosine":
            line += (f"   {med['6 layers (shipped)'] / seconds:.2f}x the full cross-encoder, "
                     f"{med['sentence_cosine'] / seconds:.2f}x sentence_cosine")
        print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
