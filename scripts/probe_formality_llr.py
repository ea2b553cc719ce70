"""Probe (issue #14): is a generative formality score better than the shipped classifier on GYAFC sentences?

Score = log P(text | SmolLM2 + formal LoRA) - log P(text | SmolLM2 + informal LoRA), summed over tokens (with the
end token) and per token; AUC formal vs informal on fr.80.ref1-3 (the classifier's selection sample) and on the
160 sentences of fr.80 that no fit used (fr.80.ref0 + fr.input.80), cased and lower-cased Treebank-tokenized.
Lai's human figures are not read. The adapters are the PT16 ones of scripts/fluency_figures.py (--lora-steps 100).

    .venv/bin/python scripts/probe_formality_llr.py [--lora /tmp/styleval-fluency]
"""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np


def labelled(folder: Path, files: list[str]) -> tuple[list[str], np.ndarray]:
    """Texts and labels (1 formal) of :func:`styleval.datasets.lai2022.xformal` (``folder``: its data root)."""
    from styleval.datasets import lai2022

    sample = lai2022.xformal(folder, files)
    return sample.texts, np.asarray([int(label == "formal") for label in sample.labels])


def llr(texts: list[str], lora: Path) -> tuple[np.ndarray, np.ndarray]:
    from styleval.metrics.fluency._lm import scored_texts

    total, count = {}, None
    for style in ("formal", "informal"):
        res, _ = scored_texts(str(lora / f"lora-{style}"), texts)
        total[style] = np.array([lp.sum() + (e if np.isfinite(e) else 0.0)
                                 for lp, e in zip(res.logprobs, res.end_logprob)])
        count = np.array([len(lp) + 1 for lp in res.logprobs])
    diff = total["formal"] - total["informal"]
    return diff, diff / count


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lora", default="/tmp/styleval-fluency")
    ap.add_argument("--data", default=None)
    args = ap.parse_args()
    from nltk.tokenize import TreebankWordTokenizer
    from sklearn.metrics import roc_auc_score

    from styleval.datasets import default_root

    folder = Path(args.data or default_root())
    tb = TreebankWordTokenizer()
    sets = {"selection fr.80.ref1-3": labelled(folder, ["fr.80.ref1", "fr.80.ref2", "fr.80.ref3"]),
            "unused fr.80.ref0 + fr.input.80": labelled(folder, ["fr.80.ref0", "fr.input.80"])}
    for name, (texts, y) in sets.items():
        for casing, shown in (("cased", texts), ("lower-cased tokenized",
                                                 [" ".join(tb.tokenize(t.lower())) for t in texts])):
            summed, per_token = llr(shown, Path(args.lora))
            print(f"{name}, {casing}: AUC summed {roc_auc_score(y, summed):.3f}, "
                  f"per token {roc_auc_score(y, per_token):.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
