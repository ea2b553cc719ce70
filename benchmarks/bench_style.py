#!/usr/bin/env python
"""Scoring throughput of each shipped style model, next to the cost floor of its encoder.

    .venv/bin/python benchmarks/bench_style.py [--n 2000] [--repeat 3] [--threads 2] [--only NAME ...]

Texts: the first N outputs of the yelp-dualrl systems (real system outputs, 5-30 words). Each measurement runs in
its own process (nothing cached between runs, model loading not timed): styleval's ``StyleModel.decision`` over
all N texts. For models with an encoder block the peer is the encoder alone — a plain transformers forward pass
with mean pooling over the same texts, length-sorted batches of 64 — the floor any scorer built on that encoder
pays; the ratio floor/styleval says how close styleval gets to it (1.0 = no overhead). TF-IDF-only models have no
encoder, so no floor is printed for them. Medians over ``--repeat`` runs.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
sys.path.insert(0, str(ROOT / "src"))


def load_texts(n: int) -> list[str]:
    from styleval.datasets import read_yelp_dualrl

    records = read_yelp_dualrl(DATA, include_humans_as_systems=False)
    return [r.output for r in records][:n]


def child(role: str, name: str, n: int) -> dict:
    texts = load_texts(n)
    if role == "styleval":
        from styleval.style_models import load_style_model

        model = load_style_model(name)
        model.decision(texts[:32])  # loads the encoder (and merges adapters): not timed
        t0 = time.perf_counter()
        model.decision(texts)
        return {"seconds": time.perf_counter() - t0}
    import torch
    from transformers import AutoModel, AutoTokenizer

    from styleval.models.encoder import transformers_dir
    from styleval.models.pool import configure_torch
    from styleval.models.spec import model_spec

    configure_torch()
    folder = transformers_dir(model_spec("minilm"))
    tok = AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
    enc = AutoModel.from_pretrained(str(folder), local_files_only=True).eval()
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]), reverse=True)
    t0 = time.perf_counter()
    with torch.inference_mode():
        for start in range(0, len(order), 64):
            batch = [texts[i] for i in order[start:start + 64]]
            x = tok(batch, padding=True, truncation=True, max_length=128, return_tensors="pt")
            h = enc(**x).last_hidden_state
            m = x["attention_mask"].unsqueeze(-1).to(h.dtype)
            (h * m).sum(1) / m.sum(1)
    return {"seconds": time.perf_counter() - t0}


def spawn(role: str, name: str, n: int, threads: int) -> float:
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", TOKENIZERS_PARALLELISM="false",
               STYLEVAL_THREADS=str(threads), OMP_NUM_THREADS=str(threads), MKL_NUM_THREADS=str(threads))
    env.pop("STYLEVAL_CACHE", None)
    out = subprocess.run([sys.executable, __file__, "--child", role, "--model", name, "--n", str(n)], env=env,
                         check=True, capture_output=True, text=True).stdout
    return float(json.loads(out.strip().splitlines()[-1])["seconds"])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--only", nargs="+", default=None, metavar="NAME", help="these shipped models only")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--model", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.model, args.n)))
        return 0
    from styleval.style_models import load_style_model, shipped_models

    print(f"{args.n} yelp-dualrl outputs, {args.threads} threads, median of {args.repeat} runs (each its own process)")
    floor: float | None = None
    for name in args.only or shipped_models():
        kinds = [b["kind"] for b in load_style_model(name).card["parameters"]["features"]]
        ours = statistics.median(spawn("styleval", name, args.n, args.threads) for _ in range(args.repeat))
        line = f"{name:32s} {'+'.join(kinds):24s} {args.n / ours:9,.0f} texts/s ({ours:.2f} s)"
        if any(k in ("embedding", "adapted-encoder") for k in kinds):
            if floor is None:
                floor = statistics.median(spawn("encoder", name, args.n, args.threads) for _ in range(args.repeat))
            line += f"   encoder floor {args.n / floor:,.0f} texts/s, floor/styleval {floor / ours:.2f}"
        print(line, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
