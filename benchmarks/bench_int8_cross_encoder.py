"""Benchmark: would int8 weights make the default ``preservation`` model's cross-encoder fast enough?

The cross-encoder of ``preservation-minilm`` runs one MiniLM pass per pair over both texts together (the rest of
the default model encodes and parses each distinct text once). This measures, in one run, its ONNX export in
float32 (what styleval ships) against the same export with int8 weights (ONNX Runtime dynamic quantization, per
output channel, made here in a temporary folder; nothing is written to styleval's cache):

* speed: median pairs per second over ``--repeat`` runs on ``--pairs`` distinct yelp-dualrl (source, output) pairs,
  the workload of ``benchmarks/bench_preservation.py``, and the ratio int8 / float32;
* drift: the largest absolute score difference and the correlation between the two, and Spearman with SGDD-TST's
  crowd scores on its first ``--sgdd`` pairs for each (a quality check, not a tuning set: nothing is chosen here).

    .venv/bin/python benchmarks/bench_int8_cross_encoder.py [--pairs 1000] [--repeat 3] [--sgdd 1500]
"""
from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2] / "shared" / "data"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--sgdd", type=int, default=1500, help="SGDD-TST pairs for the quality check (0: skip)")
    ap.add_argument("--data", default=str(ROOT))
    args = ap.parse_args(argv)

    from onnxruntime.quantization import QuantType, quantize_dynamic
    from scipy.stats import spearmanr

    from bench_preservation import pairs
    from styleval.content import load_preservation_model
    from styleval.content.pretrained import DEFAULT_MODEL
    from styleval.models.onnx_encoder import OnnxEncoder

    model = load_preservation_model(DEFAULT_MODEL, backend="onnx")
    cross = model.cross
    if cross is None:
        raise SystemExit(f"{DEFAULT_MODEL} has no cross-encoder")
    cross.score(["warm up the export"], ["warm the export up"])
    tok, fp32 = cross._load()
    source = Path(fp32.session._model_path)  # the float32 export styleval made and uses
    with tempfile.TemporaryDirectory() as tmp:
        target = Path(tmp) / "model.int8.onnx"
        quantize_dynamic(str(source), str(target), weight_type=QuantType.QInt8, per_channel=True)
        int8 = OnnxEncoder(target)
        runners = {"float32": (tok, fp32), "int8": (tok, int8)}

        def score(kind: str, src: list[str], out: list[str]) -> np.ndarray:
            cross._runner = runners[kind]
            return np.asarray(cross.score(src, out))

        src, out = pairs(args.pairs)
        for kind in runners:  # warm both sessions up on other texts
            score(kind, src[:16][::-1], out[:16])
        rates: dict[str, list[float]] = {k: [] for k in runners}
        for _ in range(args.repeat):
            for kind in runners:  # interleaved, so both see the same machine load
                t0 = time.perf_counter()
                score(kind, src, out)
                rates[kind].append(len(src) / (time.perf_counter() - t0))
        med = {k: statistics.median(v) for k, v in rates.items()}
        print(f"cross-encoder of {DEFAULT_MODEL}, {len(src)} distinct pairs, median of {args.repeat}:")
        for kind, rate in med.items():
            print(f"  {kind:8s} {rate:7.1f} pairs/s   (runs: {', '.join(f'{r:.1f}' for r in rates[kind])})")
        print(f"  ratio int8 / float32: {med['int8'] / med['float32']:.2f}")

        if args.sgdd:
            from styleval.meta.datasets import load_sgdd_tst

            frame = load_sgdd_tst(args.data).extra["frame"].iloc[:args.sgdd]
            s_src = frame["text1"].astype(str).tolist()
            s_out = frame["text2"].fillna("").astype(str).tolist()
            human = frame["human"].astype(float).to_numpy()
            a, b = score("float32", s_src, s_out), score("int8", s_src, s_out)
            print(f"SGDD-TST first {len(frame)} pairs, cross-encoder alone: Spearman float32 "
                  f"{spearmanr(a, human)[0]:.4f}, int8 {spearmanr(b, human)[0]:.4f}; "
                  f"max |diff| {np.abs(a - b).max():.3f}, mean |diff| {np.abs(a - b).mean():.4f}, "
                  f"correlation {np.corrcoef(a, b)[0, 1]:.4f}")
        cross._runner = runners["float32"]
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
