#!/usr/bin/env python
"""Compute a BERTScore rescaling baseline the way bert_score's baselines were made.

bert_score (``get_rescale_baseline/get_rescale_baseline.py``) takes up to 1M lines of a monolingual corpus,
keeps lines of fewer than 32 space-separated tokens, pairs them at random without replacement (two disjoint
halves), scores every pair with ``BERTScorer(all_layers=True)`` (no idf) and writes, for every layer
0..L (0 = the embedding layer), the mean P, R and F as ``LAYER,P,R,F``. Random pairs share almost nothing,
so the mean is the score of unrelated text; rescaling maps it to 0.

This script does the same with a local model folder and a local corpus (by default the sentences of
../shared/data/yelp-shen, which are not shipped; only the resulting numbers are), e.g.::

    python studies/shipped_models/make_bertscore_baseline.py --model minilm --pairs 20000 \\
        --out src/styleval/models/baselines/minilm_L6.tsv

It uses the ``bert-score`` package itself (offline: the model is a local folder).
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

DEFAULT_CORPUS = [
    "../shared/data/yelp-shen/data/yelp/sentiment.test.0",
    "../shared/data/yelp-shen/data/yelp/sentiment.test.1",
    "../shared/data/yelp-shen/data/yelp/sentiment.dev.0",
    "../shared/data/yelp-shen/data/yelp/sentiment.dev.1",
]


def read_lines(paths: list[str], limit: int = 1_000_000) -> list[str]:
    lines: list[str] = []
    for p in paths:
        with open(p, encoding="utf-8") as fh:
            for line in fh:
                if len(lines) >= limit:
                    return lines
                line = line.strip()
                n = len(line.split(" "))
                if line and 0 < n < 32:  # as bert_score: fewer than 32 space-separated tokens
                    lines.append(line)
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="minilm", help="catalog name or local model folder")
    ap.add_argument("--corpus", nargs="+", default=DEFAULT_CORPUS, help="text files, one sentence a line")
    ap.add_argument("--pairs", type=int, default=20000, help="random pairs to score (bert_score: up to 500k)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--out", required=True)
    args = ap.parse_args(argv)

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import numpy as np
    import pandas as pd
    import torch
    from bert_score import BERTScorer

    from styleval.models.encoder import transformers_dir
    from styleval.models.pool import configure_torch
    from styleval.models.spec import model_spec

    configure_torch()
    spec = model_spec(args.model)
    model_dir = str(transformers_dir(spec))
    import json

    n_layers = json.loads((Path(model_dir) / "config.json").read_text())["num_hidden_layers"]

    lines = read_lines(args.corpus)
    rng = np.random.default_rng(args.seed)
    n = min(args.pairs, len(lines) // 2)
    picks = rng.choice(len(lines), size=(2, n), replace=False)
    hyp = [lines[i] for i in picks[0]]
    cand = [lines[i] for i in picks[1]]
    print(f"{len(lines)} usable lines; scoring {n} random pairs with {model_dir}", file=sys.stderr)

    scorer = BERTScorer(model_type=model_dir, num_layers=n_layers, all_layers=True, device="cpu")
    means = None
    count = 0
    t0 = time.time()
    with torch.no_grad():
        for start in range(0, n, 1000):
            bh, bc = hyp[start:start + 1000], cand[start:start + 1000]
            scores = torch.stack(scorer.score(bh, bc, batch_size=args.batch_size), dim=0)  # (3, L+1, B)
            m = scores.mean(dim=-1)
            means = m if means is None else means * count / (count + len(bh)) + m * len(bh) / (count + len(bh))
            count += len(bh)
            print(f"  {count}/{n} pairs, {time.time() - t0:.0f} s", file=sys.stderr)
    table = pd.DataFrame(means.numpy().transpose(), columns=["P", "R", "F"])
    table.index.name = "LAYER"
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    table.to_csv(args.out)
    print(table.to_string(), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
