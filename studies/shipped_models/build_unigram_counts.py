"""Build the shipped unigram model for SLOR: SmolLM2 token counts over public human-written sentences.

Corpus ("mixed-public"): every sentence that studies/shipped_models/fluency_data.py reads (PT16 train, Yelp
reviews of Shen et al.'s dev split capped at 20,000, ParaDetox neutral rewrites and toxic originals; evaluation
sentences removed), each counted twice: as released and after detok+truecase normalisation, so the counts cover
both forms that SLOR's ``normalize=`` option scores. Only token counts are stored, no text.

    .venv/bin/python studies/shipped_models/build_unigram_counts.py
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import fluency_data  # noqa: E402


def main() -> int:
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    from styleval.textnorm.readable import normalize_all
    from styleval.acceptability.unigram import DATA_DIR, DEFAULT_UNIGRAM, build_unigram
    from styleval.lm.loading import load_causal_lm

    data = fluency_data.corpora()
    data["yelp"] = data["yelp"][:20000]
    data.pop("pt16-tune")
    texts = [t for v in data.values() for t in v]
    sizes = ", ".join(f"{k} {len(v):,}" for k, v in data.items())
    lm = load_causal_lm()
    # "built by scripts/...": the shipped file's words, kept so that a rebuild reproduces it byte for byte (the
    # script has since moved to studies/shipped_models/)
    model = build_unigram(texts + normalize_all(texts), lm.tokenizer, name=DEFAULT_UNIGRAM,
                          corpus=f"mixed-public: {sizes} sentences (PT16 train, Yelp dev (Shen et al.), ParaDetox "
                                 "neutral rewrites and toxic originals), each as released and after detok+truecase; "
                                 "add-1 smoothing; built by scripts/build_unigram_counts.py")
    path = model.save(DATA_DIR / f"{DEFAULT_UNIGRAM}.npz")
    print(f"{path}: {model.meta['n_tokens']:,} tokens from {model.meta['n_texts']:,} texts; {model.meta['corpus']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
