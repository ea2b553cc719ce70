"""Benchmark: a transformers style classifier of RoBERTa-base size through styleval against a plain transformers loop.

The classifier has RoBERTa-base's shape (12 layers, 768 hidden, 12 heads, 3072 intermediate) with random weights
and a byte-level BPE tokenizer trained on the texts (``tests/tiny_classifiers.py``), built in a temporary folder;
nothing is downloaded. The texts are distinct outputs of Lai et al. 2022's systems (``../shared/data/lai2022``),
so lengths are those of real transfer outputs.

* ``styleval``: ``styleval.score(records, ["style_probability:model=DIR;case=sensitive"], bootstrap=0)``, the whole
  user path (the model loaded and hashed once beforehand, as a later run finds it, since the load is not what is
  compared): texts in batches of similar length, longest first (``batch_size=32``);
* ``plain``: the loop a user writes with transformers (the model loaded beforehand too): batches of 32 texts in the
  given order, padded to the longest, truncated at the model's length, ``softmax(logits)[:, 1]``.

Both run in this process with the same torch threads, on the GPU when torch sees one. The per-text probabilities
must agree within ``--tolerance`` (float32 arithmetic on different paddings); the figure is the ratio of texts per
second, styleval over plain (each the median of ``--repeat`` runs, the two sides alternating). Run:
    .venv/bin/python benchmarks/bench_hf_classifier.py [--texts 128] [--repeat 3] [--layers 12]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))  # the model builder the tests use

BATCH = 32


def lai_outputs(n: int) -> list[str]:
    """The first ``n`` distinct outputs of Lai 2022's systems."""
    from styleval.datasets import lai2022

    texts = list(dict.fromkeys(r.output for r in lai2022.records(None) if r.output.strip()))
    if len(texts) < n:
        raise SystemExit(f"only {len(texts)} distinct outputs in lai2022; ask for fewer --texts")
    return texts[:n]


def plain_model(folder: Path) -> tuple[object, object]:
    """(tokenizer, model) loaded by transformers, once, outside the timing (as styleval's pool holds its copy)."""
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    model = AutoModelForSequenceClassification.from_pretrained(folder).eval()
    return AutoTokenizer.from_pretrained(folder), model.to("cuda" if torch.cuda.is_available() else "cpu")


def plain_loop(tok, model, texts: list[str], max_length: int) -> np.ndarray:
    """P(label 1) of each text, as a plain transformers loop computes it."""
    import torch

    device = next(model.parameters()).device
    out = []
    with torch.inference_mode():
        for start in range(0, len(texts), BATCH):
            x = tok(texts[start:start + BATCH], padding=True, truncation=True, max_length=max_length,
                    return_tensors="pt").to(device)
            out.append(torch.softmax(model(**x).logits.float(), dim=-1)[:, 1].cpu().numpy())
    return np.concatenate(out).astype(np.float64)


def through_styleval(folder: Path, texts: list[str]) -> np.ndarray:
    import styleval
    from styleval.records import Direction, Record

    records = [Record(id=str(i), source="x", output=t, system="s", direction=Direction("informal", "formal"))
               for i, t in enumerate(texts)]
    res = styleval.score(records, [f"style_probability:model={folder};case=sensitive;batch_size={BATCH}"],
                         bootstrap=0)
    return np.asarray(res.results[0].segment_scores, dtype=np.float64)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--texts", type=int, default=128, help="distinct texts scored (default 128)")
    ap.add_argument("--repeat", type=int, default=3,
                    help="runs of each side, alternating; the median counts (default 3)")
    ap.add_argument("--layers", type=int, default=12, help="encoder layers (default 12, RoBERTa-base)")
    ap.add_argument("--max-length", type=int, default=512, help="the model's maximum length in tokens")
    ap.add_argument("--tolerance", type=float, default=1e-5, help="largest difference of a probability allowed")
    args = ap.parse_args()

    import torch

    from styleval.models.classifier import load_classifier
    from styleval.models.pool import configure_torch
    from styleval.models.spec import model_spec
    from tiny_classifiers import build_classifier

    configure_torch()
    texts = lai_outputs(args.texts)
    with tempfile.TemporaryDirectory(prefix="bench-hf-") as tmp:
        folder = build_classifier(Path(tmp) / "roberta-base-random", "roberta", max_length=args.max_length,
                                  hidden=768, layers=args.layers, heads=12, intermediate=3072, vocab_size=8000,
                                  corpus=texts, initializer_range=0.02)
        clf = load_classifier(model_spec(str(folder)))  # loaded and hashed once, as a later run finds it
        tok, model = plain_model(folder)
        lengths = clf.token_counts(texts)
        times: dict[str, list[float]] = {"styleval": [], "plain": []}
        results: dict[str, np.ndarray] = {}
        for _ in range(args.repeat):
            for name, run in (("plain", lambda: plain_loop(tok, model, texts, clf.max_length)),
                              ("styleval", lambda: through_styleval(folder, texts))):
                t = time.perf_counter()
                results[name] = run()
                times[name].append(time.perf_counter() - t)
    diff = float(np.max(np.abs(results["styleval"] - results["plain"])))
    rate = {k: len(texts) / statistics.median(v) for k, v in times.items()}
    device = "cuda" if torch.cuda.is_available() else f"cpu, {torch.get_num_threads()} threads"
    print(f"RoBERTa-base-sized classifier ({args.layers} layers, random weights), {len(texts)} distinct Lai 2022 "
          f"outputs, {int(lengths.min())}-{int(lengths.max())} tokens (mean {lengths.mean():.1f}), batch {BATCH}, "
          f"{device}")
    for name in ("plain", "styleval"):
        print(f"  {name:9s} {statistics.median(times[name]):7.2f} s  {rate[name]:7.1f} texts/s")
    print(f"  largest difference of P(target): {diff:.2e} (tolerance {args.tolerance:g})")
    print(f"  ratio styleval / plain: {rate['styleval'] / rate['plain']:.2f}")
    if diff > args.tolerance:
        raise SystemExit(f"outputs differ by {diff:.2e} > {args.tolerance:g}")


if __name__ == "__main__":
    main()
