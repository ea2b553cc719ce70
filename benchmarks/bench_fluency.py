"""Benchmark: throughput of the fluency metrics in one run: ``perplexity`` (the peer), ``slor`` and
``acceptability`` on the same Yelp sentences.

Each metric is scored from a fresh process per repeat (so no metric profits from another's cached LM pass, and
the LM load is included the same way for each: model pool empty, converted SmolLM2 folder on disk), with the same
thread count; the parent prints the median sentences per second of each and its ratio to perplexity's, measured
in the same run.

Run: .venv/bin/python benchmarks/bench_fluency.py [--n 200] [--repeat 3] [--threads 1]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
METRICS = ("perplexity", "slor", "acceptability")

CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
from styleval.metrics import registry
from styleval.metrics.base import Batch
texts = json.loads(sys.stdin.read())
metric = registry.create(sys.argv[1])
batch = Batch(ids=[str(i) for i in range(len(texts))], outputs=texts, sources=[""] * len(texts),
              references=[[] for _ in texts], directions=[None] * len(texts))
t1 = time.perf_counter()
res = metric.score(batch)
t2 = time.perf_counter()
print(json.dumps({"total_s": t2 - t0, "score_s": t2 - t1, "corpus": res.corpus_score}))
"""


def load_texts(n: int) -> list[str]:
    from styleval.datasets import yelp_shen

    texts: list[str] = []
    for k in (0, 1):
        texts += yelp_shen.sentences(DATA, "dev", k)[-n:]  # the tail: not in any training split
    return [t for t in texts if t.strip()][:n]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    texts = load_texts(args.n)
    env = {**os.environ, "STYLEVAL_THREADS": str(args.threads), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    times: dict[str, list[float]] = {m: [] for m in METRICS}
    corpus: dict[str, float] = {}
    for _ in range(args.repeat):
        for m in METRICS:  # interleaved, so a change in machine load hits every metric alike
            out = subprocess.run([sys.executable, "-c", CHILD, m], input=json.dumps(texts), capture_output=True,
                                 text=True, env=env, check=True)
            rec = json.loads(out.stdout.strip().splitlines()[-1])
            times[m].append(rec["score_s"])
            corpus[m] = rec["corpus"]
    peer = statistics.median(times["perplexity"])
    print(f"{len(texts)} Yelp sentences, {args.threads} thread(s), median of {args.repeat} fresh processes")
    for m in METRICS:
        med = statistics.median(times[m])
        print(f"{m:14s} {len(texts) / med:7.1f} sentences/s  ({med:.1f} s; {peer / med:.2f}x perplexity's speed; "
              f"corpus score {corpus[m]:.3f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
