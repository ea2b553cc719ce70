"""How much the word-vector metrics' default lower-casing moves their scores on cased text (issue #42, part 5).

``embedding_average``, ``vector_extrema``, ``greedy_matching`` and ``wmd`` lower-case the tokens by default;
nlg-eval (whose formulas the first three follow) and gensim's ``wmdistance`` look words up as written, which with the
lower-case GloVe vocabulary sends every capitalised word to the unknown-word rule. This scores the 720 cased outputs
of Lai et al. 2022 (80 GYAFC inputs x 8 systems + the human reference, ``content.src`` view) with both settings,
against the source and against the reference, and prints per metric: segments scored by both, segments whose score
differs, and the corpus difference (lowercase=true minus false) per system and pooled.

    .venv/bin/python studies/embedding_case/case_effect.py [--data ../shared/data] [--json out.json]
"""
from __future__ import annotations

import argparse
import json

import numpy as np

import styleval
from styleval.datasets import lai2022

METRICS = ("embedding_average", "vector_extrema", "greedy_matching", "wmd")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=None, help="the shared data folder (default: ../shared/data)")
    parser.add_argument("--json", help="write the figures here")
    args = parser.parse_args()
    records = lai2022.records(args.data, "content.src")
    specs = [f"{m}:lowercase={flag}" for m in METRICS for flag in ("true", "false")]
    result = styleval.score(records, specs, against=["source", "references"], bootstrap=0)
    systems = result.systems
    figures = {}
    for metric in METRICS:
        for against in ("src", "ref"):
            lower = [result.get(f"{metric}[lowercase=true]/{against}", s) for s in systems]
            cased = [result.get(f"{metric}[lowercase=false]/{against}", s) for s in systems]
            a = np.concatenate([r.segment_scores for r in lower])
            b = np.concatenate([r.segment_scores for r in cased])
            both = ~np.isnan(a) & ~np.isnan(b)
            differ = both & ~np.isclose(a, b, rtol=0, atol=1e-9)
            deltas = [lo.corpus_score - ca.corpus_score for lo, ca in zip(lower, cased)]
            figures[f"{metric}/{against}"] = {
                "segments": int(a.size), "scored_by_both": int(both.sum()), "differ": int(differ.sum()),
                "nan_lowercase": int(np.isnan(a).sum()), "nan_cased": int(np.isnan(b).sum()),
                "corpus_delta_min": float(min(deltas)), "corpus_delta_max": float(max(deltas)),
                "pooled_delta": float(np.nanmean(a) - np.nanmean(b)),
                "per_system": {s: float(d) for s, d in zip(systems, deltas)}}
    print(f"{'metric':28} {'both':>5} {'differ':>6}  corpus delta (true - false), per system min..max; pooled")
    for name, f in figures.items():
        print(f"{name:28} {f['scored_by_both']:5d} {f['differ']:6d}  "
              f"{f['corpus_delta_min']:+.4f}..{f['corpus_delta_max']:+.4f}; {f['pooled_delta']:+.4f}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(figures, fh, indent=1)


if __name__ == "__main__":
    main()
