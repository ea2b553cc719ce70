"""Benchmark: the whole lexical battery on every yelp-dualrl system, styleval vs the libraries called directly.

Every system output (11 systems + 4 human rewrites, 1,000 inputs each) is scored against its source and
against the four human references (three for a human system, whose own rewrite is left out) with BLEU,
chrF, chrF++, TER, ROUGE-1/2/L, METEOR, PINC and Levenshtein, at segment and corpus level.

The "direct" way is what a user writes with the libraries: per system, sentence by sentence,
sacrebleu.sentence_*, rouge_score's scorer, nltk's meteor_score, rapidfuzz, plus sacrebleu's corpus
functions. Both must give identical numbers; the script prints both times (median of --repeat runs) and the
ratio. Run: .venv/bin/python benchmarks/bench_lexical.py [--repeat 3] [--systems N]
"""
from __future__ import annotations

import argparse
import logging
import statistics
import sys
import time
from pathlib import Path

import numpy as np

import styleval
from styleval.metrics.content.pinc import pinc
from styleval.datasets import read_yelp_dualrl
from styleval.records import group_by_system
from styleval.resources.wordnet import ensure_wordnet

ROOT = Path(__file__).resolve().parents[2] / "shared" / "data" / "yelp-dualrl"
METRICS = ["bleu", "chrf", "chrf++", "ter", "rouge1", "rouge2", "rougeL", "meteor", "pinc", "levenshtein"]


def direct(groups) -> dict[tuple[str, str], list[float]]:
    """The libraries called as a user would: one sentence at a time, per system."""
    import sacrebleu
    from nltk.translate.meteor_score import meteor_score
    from rapidfuzz.distance import Levenshtein
    from rouge_score import rouge_scorer

    scorer = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"], use_stemmer=False)
    out: dict[tuple[str, str], list[float]] = {}
    for system, recs in groups.items():
        for side in ("src", "ref"):
            comps = [[r.source] if side == "src" else r.references for r in recs]
            hyps = [r.output for r in recs]
            rows = {m: [] for m in METRICS}
            for hyp, refs in zip(hyps, comps):
                rows["bleu"].append(sacrebleu.sentence_bleu(hyp, refs).score)
                rows["chrf"].append(sacrebleu.sentence_chrf(hyp, refs).score)
                rows["chrf++"].append(sacrebleu.sentence_chrf(hyp, refs, word_order=2).score)
                rows["ter"].append(sacrebleu.sentence_ter(hyp, refs).score)
                multi = scorer.score_multi(refs, hyp)
                for name in ("rouge1", "rouge2", "rougeL"):
                    rows[name].append(multi[name].fmeasure)
                rows["meteor"].append(meteor_score([r.split() for r in refs], hyp.split()))
                rows["levenshtein"].append(min(Levenshtein.distance(hyp, r) for r in refs))
                if side == "src":
                    rows["pinc"].append(pinc(refs[0].lower().split(), hyp.lower().split()))
            nref = max(len(c) for c in comps)
            ref_streams = [[c[k] if k < len(c) else None for c in comps] for k in range(nref)]
            rows["bleu_corpus"] = [sacrebleu.corpus_bleu(hyps, ref_streams).score]
            rows["chrf_corpus"] = [sacrebleu.corpus_chrf(hyps, ref_streams).score]
            for m, values in rows.items():
                if values:
                    out[(system, f"{m}/{side}")] = values
    return out


def clear_process_caches() -> None:
    """Empty styleval's per-process memos (TER pairs, chrF n-grams) so that no timed run reuses an earlier one's
    work; sacrebleu's own tokenizer caches serve both paths alike and stay."""
    from styleval.metrics.content import chrf, ter

    ter._memo.clear()
    chrf._char_ngrams.cache_clear()
    chrf._word_ngrams.cache_clear()


def via_styleval(records):
    clear_process_caches()
    return styleval.score(records, METRICS, bootstrap=0)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--systems", type=int, default=0, help="only the first N systems (0: all)")
    args = parser.parse_args()
    if not ROOT.is_dir():
        print(f"data not found: {ROOT}", file=sys.stderr)
        return 1
    logging.getLogger("sacrebleu").setLevel(logging.ERROR)  # its "forgot to detokenize" notes, from both paths
    ensure_wordnet()
    records = read_yelp_dualrl(ROOT)
    groups = group_by_system(records)
    if args.systems:
        keep = list(groups)[: args.systems]
        groups = {k: groups[k] for k in keep}
        records = [r for k in keep for r in groups[k]]
    n_pairs = sum(len(v) for v in groups.values())
    # warm both paths (WordNet loading, imports) before timing
    warm = {k: v[:20] for k, v in list(groups.items())[:1]}
    direct(warm)
    via_styleval([r for v in warm.values() for r in v])

    t_direct, t_ours = [], []
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        ref = direct(groups)
        t_direct.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        ours = via_styleval(records)
        t_ours.append(time.perf_counter() - t0)

    # identical numbers
    worst = 0.0
    for (system, key), values in ref.items():
        metric, side = key.split("/")
        if metric.endswith("_corpus"):
            got = [ours.get(f"{metric[:-7]}/{side}", system).corpus_score]
        else:
            got = ours.get(f"{metric}/{side}", system).segment_scores
        worst = max(worst, float(np.max(np.abs(np.asarray(got) - np.asarray(values)))))
    # where styleval's time goes: each metric alone over every system, both sides
    per_metric = {}
    for name in METRICS:
        clear_process_caches()
        t0 = time.perf_counter()
        styleval.score(records, [name], bootstrap=0)
        per_metric[name] = time.perf_counter() - t0
    md, mo = statistics.median(t_direct), statistics.median(t_ours)
    print(f"systems: {len(groups)}, segments: {n_pairs}, metrics: {len(METRICS)} x (source, references)")
    print(f"direct (libraries, sentence by sentence): median {md:.2f} s  runs {[round(t, 2) for t in t_direct]}")
    print(f"styleval.score:                           median {mo:.2f} s  runs {[round(t, 2) for t in t_ours]}")
    print(f"ratio direct/styleval: {md / mo:.2f}x   max |difference| of any score: {worst:.2e}")
    total = sum(per_metric.values())
    print("styleval time by metric: " + ", ".join(
        f"{k} {v:.2f}s ({v / total:.0%})" for k, v in sorted(per_metric.items(), key=lambda kv: -kv[1])))
    return 0 if worst < 1e-9 else 1


if __name__ == "__main__":
    sys.exit(main())
