"""Benchmark: segments per second of the LLM judges, local backend and llama.cpp server, on Lai 2022 outputs.

* local: ``llm_judge`` (one aspect: one prompt per segment, probability-weighted, one forward pass) and ``logprop``
  (three prompts per segment) on SmolLM2-135M-Instruct in this process, ``--threads`` torch threads, the model
  loaded before the clock starts, no model-output store;
* server: the same metrics against llama-cpp-python's server serving the same model's GGUF (Q4_1) with
  ``--threads`` threads, under each ``--concurrency`` limit, request cache off (every request sent); LogProp on the
  first ``--server-logprop-n`` segments only (llama-cpp-python computes echoed log-probabilities in Python, ~2 s a
  request).

Each figure is the best of ``--repeat`` runs. The segments are the first ``--n`` outputs of Lai et al.'s systems
(inputs 0.. and 40.., both directions), the same for every contender.

Run: .venv/bin/python benchmarks/bench_judges.py [--n 48] [--threads 2] [--concurrency 1 4] [--repeat 2]
     [--server-logprop-n 8]
"""
from __future__ import annotations

import argparse
import json
import os
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def batch_of(n: int):
    from styleval.datasets import read_lai2022
    from styleval.metrics.base import Batch

    records = [r for r in read_lai2022(None) if r.system != "ref"]
    by_input = sorted(records, key=lambda r: (int(r.id) % 40, int(r.id) // 40, r.system))[:n]
    batch = Batch.from_records(by_input)
    batch.ids = [f"{r.system}/{r.id}" for r in by_input]
    return batch


def timed(metric, batch, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        metric.compute(batch)
        best = min(best, time.perf_counter() - t)
    return len(batch) / best


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=48)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--concurrency", type=int, nargs="+", default=[1, 4])
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--server-logprop-n", type=int, default=8)
    ap.add_argument("--skip-server", action="store_true")
    args = ap.parse_args()
    os.environ["STYLEVAL_THREADS"] = str(args.threads)
    from styleval.judges.local import load_local
    from styleval.metrics import registry

    batch = batch_of(args.n)
    load_local()  # loaded (and converted from the GGUF once) before any clock starts
    specs = {"llm_judge content": ("llm_judge", {"aspect": "content"}), "logprop": ("logprop", {})}
    out: dict[str, object] = {"segments": len(batch), "threads": args.threads}
    for label, (name, params) in specs.items():
        out[f"local {label}"] = round(timed(registry.create(name, **params), batch, args.repeat), 2)
        print(json.dumps({label: out[f"local {label}"]}), flush=True)
    if not args.skip_server:
        from styleval.judges.llamacpp import LlamaCppServer, smollm2_gguf

        with LlamaCppServer(smollm2_gguf(), threads=args.threads) as srv:
            for concurrency in args.concurrency:
                for label, (name, params) in specs.items():
                    extra = {"chat_template": "smollm2-135m"} if name == "logprop" else {}
                    metric = registry.create(name, base_url=srv.base_url, model=srv.alias, request_cache="none",
                                             concurrency=concurrency, **params, **extra)
                    key = f"server {label}, concurrency {concurrency}"
                    part = batch_of(args.server_logprop_n) if name == "logprop" else batch
                    out[key] = round(timed(metric, part, args.repeat), 2)
                    print(json.dumps({key: out[key]}), flush=True)
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
