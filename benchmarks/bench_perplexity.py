"""Benchmark: perplexity of 2,000 Yelp sentences, styleval's batched scorer vs a plain per-sentence transformers loop.

Both use the same SmolLM2-135M (converted once from GGUF and cached), the same token convention (BOS prefix, NLL
of every sentence token) and the same thread count. The direct loop is what a user writes: one sentence at a
time, full logits, log-softmax. The script checks that both give the same numbers (relative difference
< 1e-4 per sentence), prints sentences per second, peak resident memory of each phase (measured as the growth of
the process's peak RSS) and the speed ratio (target >= 2).

Run: .venv/bin/python benchmarks/bench_perplexity.py [--n 2000] [--threads 2]
"""
from __future__ import annotations

import argparse
import os
import resource
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import numpy as np

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "yelp-shen" / "data" / "yelp"


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def direct(lm, texts: list[str]) -> np.ndarray:
    import torch

    tok, model = lm.tokenizer, lm.model
    out = np.zeros(len(texts))
    with torch.inference_mode():
        for i, text in enumerate(texts):
            ids = torch.tensor([[tok.bos_token_id] + tok(text, add_special_tokens=False)["input_ids"]])
            logits = model(ids).logits[0, :-1].float()
            lp = torch.log_softmax(logits, dim=-1).gather(1, ids[0, 1:, None])[:, 0]
            out[i] = float(torch.exp(-lp.double().mean()))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--threads", type=int, default=0, help="torch threads (default: usable cores)")
    args = ap.parse_args()
    if args.threads:
        os.environ["STYLEVAL_THREADS"] = str(args.threads)
    texts: list[str] = []
    for name in ("sentiment.test.0", "sentiment.test.1", "sentiment.dev.0", "sentiment.dev.1"):
        texts += (DATA / name).read_text(encoding="utf-8").splitlines()
    texts = [t for t in texts if t.strip()][: args.n]

    from styleval.lm.causal import token_nll
    from styleval.models.causal_lm import load_causal_lm

    t = time.perf_counter()
    lm = load_causal_lm()
    load_s = time.perf_counter() - t
    import torch

    print(f"model loaded in {load_s:.2f}s; {len(texts)} sentences; torch threads {torch.get_num_threads()}")
    base = peak_rss_mb()
    t = time.perf_counter()
    ours = token_nll(lm, texts).perplexity()
    ours_s = time.perf_counter() - t
    ours_mem = peak_rss_mb() - base
    base = peak_rss_mb()
    t = time.perf_counter()
    theirs = direct(lm, texts)
    theirs_s = time.perf_counter() - t
    theirs_mem = peak_rss_mb() - base
    rel = np.max(np.abs(ours - theirs) / theirs)
    print(f"styleval : {len(texts) / ours_s:8.1f} sentences/s ({ours_s:.1f}s), peak RSS growth {ours_mem:.0f} MB")
    print(f"direct   : {len(texts) / theirs_s:8.1f} sentences/s ({theirs_s:.1f}s), peak RSS growth "
          f"{theirs_mem:.0f} MB (measured after styleval: growth beyond styleval's peak)")
    print(f"ratio    : {theirs_s / ours_s:.2f}x   max relative difference {rel:.2e}   "
          f"corpus-mean ppl {np.mean(ours):.3f} vs {np.mean(theirs):.3f}")
    if rel > 1e-4:
        print("MISMATCH", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
