#!/usr/bin/env python
"""Babakov et al.'s Table 4 on SGDD-TST: content metrics merged with a named-entity score, M·(1−p) + NE·p.

Three tables (Spearman with the ``human`` column; Williams test of merged vs plain with r12 = human~merged,
r13 = human~plain, r23 = plain~merged, one-sided p in the direction the data favour, n = pairs used):

1. ``stored``: the stored metric columns merged with the stored NE (``scipy_ner``) and p (``scipy_proprotion``);
2. ``own-ne``: the stored metric columns merged with styleval's own entity extraction (spaCy en_core_web_sm 3.8),
   plus the agreement of our NE score and p with the stored ones;
3. ``e2e``: styleval's own metrics (against the source) on all 10,287 pairs, merged with our entities.

Usage::

    .venv/bin/python studies/reproductions/sgdd_entities.py [--data ../shared/data] [--cache /tmp/styleval-entity]
        [--stage stored|own|e2e|all] [--json FILE]

Entity columns and metric scores are cached in ``--cache`` (``entities.npz``, ``e2e_scores.npz``).
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from styleval.entities import entity_score, entity_share, extract_entities
from styleval.meta.entity_merge import merge_with_entity_score
from styleval.metrics import registry
from styleval.metrics.aware import EntityAware
from styleval.metrics.base import Batch
from styleval.stats.correlation import spearman
from styleval.stats.significance import williams_test

ROOT = Path(__file__).resolve().parents[2]
E2E_METRICS = ["bleu", "chrf", "rouge1", "rouge2", "rougeL", "meteor", "sentence_cosine", "bertscore"]
PAPER = {  # Table 4 / repository README (plain -> merged)
    "Elron/bleurt-large-512": (0.562, 0.558), "bertscore/microsoft/deberta-xlarge-mnli": (0.466, 0.452),
    "bertscore/roberta-large": (0.397, 0.368), "bleu": (0.348, 0.376), "rouge1": (0.292, 0.358),
    "bertscore/bert-base-multilingual-cased": (0.284, 0.357), "rougeL": (0.271, 0.349), "chrf": (0.268, 0.302),
    "w2v_cossim": (0.216, 0.329), "fasttext_cossim": (0.215, 0.324), "rouge2": (0.150, 0.220),
    "rouge3": (0.087, 0.138),
}


def rho(x, y) -> float:
    return float(spearman(x, y).statistic)


def compare(name: str, metric, human, ne, p, scale: float = 1.0) -> dict:
    """Plain and merged Spearman, Williams test; rows with a NaN anywhere are dropped (as in the paper)."""
    m, h, ne, p = (np.asarray(a, dtype=float) for a in (metric, human, ne, p))
    keep = ~(np.isnan(m) | np.isnan(h) | np.isnan(ne) | np.isnan(p))
    m, h, ne, p = m[keep], h[keep], ne[keep], p[keep]
    merged = merge_with_entity_score(m / scale, ne, p)
    r12, r13, r23 = rho(h, merged), rho(h, m), rho(m, merged)
    t, pval = williams_test(r12, r13, r23, int(keep.sum()))
    return {"metric": name, "n": int(keep.sum()), "plain": r13, "merged": r12, "delta": r12 - r13,
            "r23": r23, "williams_t": t, "williams_p": pval, "significant": bool(pval < 0.05 and r12 > r13)}


def print_table(title: str, rows: list[dict], paper: bool = False) -> None:
    print(f"\n== {title}")
    head = f"{'metric':42} {'n':>6} {'plain':>6} {'merged':>7} {'delta':>7} {'r23':>6} {'t':>7} {'p':>9} sig"
    if paper:
        head += "   paper"
    print(head)
    for r in rows:
        line = (f"{r['metric']:42} {r['n']:>6} {r['plain']:>6.3f} {r['merged']:>7.3f} {r['delta']:>+7.3f} "
                f"{r['r23']:>6.3f} {r['williams_t']:>7.2f} {r['williams_p']:>9.2g} "
                f"{'yes' if r['significant'] else 'no ':3}")
        if paper and r["metric"] in PAPER:
            line += f"   {PAPER[r['metric']][0]:.3f} -> {PAPER[r['metric']][1]:.3f}"
        print(line)


def stored_columns(df: pd.DataFrame) -> list[str]:
    return [c for c in df.columns if c not in ("text1", "text2", "human", "average", "scipy_ner", "scipy_proprotion")
            and pd.api.types.is_numeric_dtype(df[c])]


def entity_columns(df: pd.DataFrame, cache: Path) -> dict[str, np.ndarray]:
    path = cache / "entities.npz"
    if path.is_file():
        return dict(np.load(path))
    t0 = time.time()
    src = extract_entities(df["text1"].tolist())
    out = extract_entities(df["text2"].tolist())
    cols = {
        "coverage": np.array([entity_score(s, o, "coverage") for s, o in zip(src, out)]),
        "jaccard": np.array([entity_score(s, o, "jaccard") for s, o in zip(src, out)]),
        "p_span": np.array([entity_share(s, o, "span") for s, o in zip(src, out)]),
        "p_substring": np.array([entity_share(s, o, "substring") for s, o in zip(src, out)]),
    }
    np.savez(path, **cols)
    print(f"entities of {2 * len(df)} texts in {time.time() - t0:.0f} s", file=sys.stderr)
    return cols


def agreement(df: pd.DataFrame, ents: dict[str, np.ndarray]) -> dict:
    ne_s, p_s = df["scipy_ner"].to_numpy(float), df["scipy_proprotion"].to_numpy(float)
    out = {"ne_exact_agreement": float(np.mean(np.isclose(ents["coverage"], ne_s))),
           "ne_pearson": float(np.corrcoef(ents["coverage"], ne_s)[0, 1]),
           "ne_both_zero_or_both_positive": float(np.mean((ents["coverage"] > 0) == (ne_s > 0)))}
    for rule in ("span", "substring"):
        p = ents[f"p_{rule}"]
        out[f"p_{rule}_exact_agreement"] = float(np.mean(np.isclose(p, p_s)))
        out[f"p_{rule}_mean_abs_diff"] = float(np.mean(np.abs(p - p_s)))
        out[f"p_{rule}_pearson"] = float(np.corrcoef(p, p_s)[0, 1])
    return out


def e2e_scores(df: pd.DataFrame, cache: Path) -> dict[str, np.ndarray]:
    path = cache / "e2e_scores.npz"
    have = dict(np.load(path)) if path.is_file() else {}
    batch = Batch(ids=[str(i) for i in range(len(df))], outputs=df["text2"].tolist(), sources=df["text1"].tolist(),
                  references=[[] for _ in range(len(df))], directions=[None] * len(df), system="rewrite")
    for name in E2E_METRICS:
        if name in have:
            continue
        t0 = time.time()
        res = registry.create(name, against="source").score(batch)
        have[name] = res.segment_scores
        have[name + ".sig"] = np.array(str(res.signature))
        np.savez(path, **have)
        print(f"{name}: {time.time() - t0:.0f} s", file=sys.stderr)
    return have


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--cache", type=Path, default=Path("/tmp/styleval-entity"))
    ap.add_argument("--stage", choices=("stored", "own", "e2e", "all"), default="all")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    args.cache.mkdir(parents=True, exist_ok=True)
    from styleval.datasets import sgdd_tst

    df, _ = sgdd_tst.frame(args.data)
    human = df["human"].to_numpy(float)
    report: dict = {}
    if args.stage in ("stored", "all"):
        rows = [compare(c, df[c], human, df["scipy_ner"], df["scipy_proprotion"]) for c in stored_columns(df)]
        rows.sort(key=lambda r: -r["plain"])
        print_table("stored metric columns x stored NE / p (the paper's Table 4)", rows, paper=True)
        report["stored"] = rows
    if args.stage in ("own", "e2e", "all"):
        ents = entity_columns(df, args.cache)
        agree = agreement(df, ents)
        print("\n== agreement of styleval's entities with the stored columns")
        for k, v in agree.items():
            print(f"  {k}: {v:.3f}")
        report["agreement"] = agree
    if args.stage in ("own", "all"):
        for ne_kind, rule in (("coverage", "span"), ("coverage", "substring"), ("jaccard", "span")):
            rows = [compare(c, df[c], human, ents[ne_kind], ents[f"p_{rule}"]) for c in stored_columns(df)]
            rows.sort(key=lambda r: -r["plain"])
            print_table(f"stored metric columns x styleval NE ({ne_kind}, p rule {rule})", rows)
            report[f"own:{ne_kind}:{rule}"] = rows
    if args.stage in ("e2e", "all"):
        scores = e2e_scores(df, args.cache)
        for ne_kind, rule in (("coverage", "span"), ("coverage", "substring"), ("jaccard", "span")):
            rows = []
            for name in E2E_METRICS:
                scale = 100.0 if registry.metric_class(name).value_range[1] == 100.0 else 1.0
                rows.append(compare(name, scores[name], human, ents[ne_kind], ents[f"p_{rule}"], scale=scale))
            rows.sort(key=lambda r: -r["plain"])
            print_table(f"styleval metrics (against source) x styleval NE ({ne_kind}, p rule {rule})", rows)
            report[f"e2e:{ne_kind}:{rule}"] = rows
        # the EntityAware modifier gives the same merged scores as the arithmetic above (checked on rouge1)
        sub = df.iloc[:500]
        b = Batch(ids=[str(i) for i in range(len(sub))], outputs=sub["text2"].tolist(),
                  sources=sub["text1"].tolist(), references=[[] for _ in range(len(sub))],
                  directions=[None] * len(sub))
        mod = EntityAware(inner=registry.create("rouge1", against="source")).score(b)
        direct = merge_with_entity_score(scores["rouge1"][:500], ents["coverage"][:500], ents["p_span"][:500])
        report["modifier_check_max_abs_diff"] = float(np.max(np.abs(mod.segment_scores - direct)))
        diff = report["modifier_check_max_abs_diff"]
        print(f"\nEntityAware(rouge1) vs arithmetic on 500 rows: max |diff| = {diff:.2e}")
        print("signature:", mod.signature)
        report["signatures"] = {n: str(scores[n + ".sig"]) for n in E2E_METRICS}
    if args.json:
        args.json.write_text(json.dumps(report, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
