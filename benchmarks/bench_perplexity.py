"""Benchmark: perplexity of 2,000 Yelp sentences, styleval's batched scorer vs a plain per-sentence transformers loop.

Both use the same SmolLM2-135M folder (converted once from GGUF and cached), the same token convention (BOS
prefix, NLL of every sentence token) and the same thread count. The plain loop is what a user writes with
transformers: ``AutoTokenizer``/``AutoModelForCausalLM`` on the folder, one sentence at a time, full logits,
log-softmax. styleval is ``load_causal_lm()`` (its native loader) and ``token_nll``.

Each contender runs in its own child process, so each has its own peak resident memory
(``getrusage(RUSAGE_SELF).ru_maxrss`` read in the child: after loading, and at the end). The parent checks that
both give the same perplexities (relative difference < 1e-4 per sentence) and prints sentences per second, peak
RSS and the speed ratio (target >= 2).

Run: .venv/bin/python benchmarks/bench_perplexity.py [--n 2000] [--threads 2]
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import numpy as np

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def peak_rss_mb() -> float:
    """Peak resident memory of this process so far (Linux reports kilobytes)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def load_texts(n: int) -> list[str]:
    from styleval.datasets import yelp_shen

    return [t for split in ("test", "dev") for k in (0, 1) for t in yelp_shen.sentences(DATA, split, k)][:n]


def plain_loop(folder: str, texts: list[str]) -> tuple[np.ndarray, float]:
    """Load with transformers and score one sentence at a time; perplexities and load seconds."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    t = time.perf_counter()
    tok = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32).eval()
    load_s = time.perf_counter() - t
    out = np.zeros(len(texts))
    with torch.inference_mode():
        for i, text in enumerate(texts):
            ids = torch.tensor([[tok.bos_token_id] + tok(text, add_special_tokens=False)["input_ids"]])
            logits = model(ids).logits[0, :-1].float()
            lp = torch.log_softmax(logits, dim=-1).gather(1, ids[0, 1:, None])[:, 0]
            out[i] = float(torch.exp(-lp.double().mean()))
    return out, load_s


def child(kind: str, n: int, out_file: str) -> int:
    """One contender: load, score, save perplexities, print a JSON line of timings and peak RSS."""
    import torch

    from styleval.models.pool import configure_torch

    configure_torch()  # the same thread count (STYLEVAL_THREADS) for both contenders
    texts = load_texts(n)
    if kind == "styleval":
        from styleval.lm.causal import token_nll
        from styleval.lm.loading import load_causal_lm

        t = time.perf_counter()
        lm = load_causal_lm()
        load_s = time.perf_counter() - t
        rss_loaded = peak_rss_mb()
        t = time.perf_counter()
        ppl = token_nll(lm, texts).perplexity()
        score_s = time.perf_counter() - t
    else:
        from styleval.lm.loading import ensure_converted, resolve_causal_lm

        folder = str(ensure_converted(resolve_causal_lm()))
        t = time.perf_counter()
        ppl, load_s = plain_loop(folder, texts)
        score_s = time.perf_counter() - t - load_s
        rss_loaded = float("nan")  # load and scoring share one function: only the final peak is measured
    np.save(out_file, ppl)
    print(json.dumps({"kind": kind, "n": len(texts), "load_s": load_s, "score_s": score_s,
                      "threads": torch.get_num_threads(), "peak_rss_loaded_mb": rss_loaded,
                      "peak_rss_mb": peak_rss_mb()}))
    return 0


def run(kind: str, args: argparse.Namespace, out_file: str) -> dict:
    env = dict(os.environ)
    if args.threads:
        env["STYLEVAL_THREADS"] = str(args.threads)
    res = subprocess.run([sys.executable, __file__, "--child", kind, "--n", str(args.n), "--out", out_file],
                         capture_output=True, text=True, env=env)
    if res.returncode != 0:
        raise RuntimeError(f"{kind} failed:\n{res.stderr[-3000:]}")
    return json.loads(res.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--threads", type=int, default=0, help="torch threads (default: usable cores)")
    ap.add_argument("--child", choices=("styleval", "plain"), help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        return child(args.child, args.n, args.out)

    with tempfile.TemporaryDirectory() as tmp:
        res, ppl = {}, {}
        for kind in ("styleval", "plain"):
            res[kind] = run(kind, args, os.path.join(tmp, f"{kind}.npy"))
            ppl[kind] = np.load(os.path.join(tmp, f"{kind}.npy"))
    ours, theirs = res["styleval"], res["plain"]
    n = ours["n"]
    rel = float(np.max(np.abs(ppl["styleval"] - ppl["plain"]) / ppl["plain"]))
    print(f"{n} sentences; torch threads {ours['threads']} (both); each contender in its own process")
    print(f"styleval : {n / ours['score_s']:8.1f} sentences/s ({ours['score_s']:.1f}s), load {ours['load_s']:.2f}s, "
          f"peak RSS {ours['peak_rss_mb']:.0f} MB (after load {ours['peak_rss_loaded_mb']:.0f} MB)")
    print(f"plain    : {n / theirs['score_s']:8.1f} sentences/s ({theirs['score_s']:.1f}s), load "
          f"{theirs['load_s']:.2f}s, peak RSS {theirs['peak_rss_mb']:.0f} MB")
    print(f"ratio    : {theirs['score_s'] / ours['score_s']:.2f}x   max relative difference {rel:.2e}   "
          f"mean segment ppl {np.mean(ppl['styleval']):.3f} vs {np.mean(ppl['plain']):.3f}")
    if rel > 1e-4:
        print("MISMATCH", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
