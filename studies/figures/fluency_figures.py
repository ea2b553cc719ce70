"""Fluency and naturalness figures for the report (not a test: minutes of CPU).

Lai et al. 2022 (GYAFC): correlation of fluency scorers with human fluency per direction, with the conventions of
docs/meta-conventions.md (8 systems, mean of the two raters, per-input Kendall tau-like with human ties skipped and
metric ties discordant; system-level Pearson; perplexity negated, ``orientation=abs``). Scorers: the stored GPT-2
perplexity (the paper's), generic SmolLM2 perplexity, SmolLM2 + LoRA adapted to the target style, and a
modified-KN trigram per target style. Style LMs are trained on PT16 sentences split by the sign of the formality
label (formal > 0, informal < 0): the only formality data in shared/.

Mir et al. 2019 (Yelp): adversarial naturalness (unigram and embedding classifiers, 5-fold cross-fitting)
agreement with the relative A/B judgments; the same agreement for plain SmolLM2 perplexity (output preferred
when its perplexity is lower than the input's) and Pearson of perplexity with absolute naturalness.

    .venv/bin/python studies/figures/fluency_figures.py --work /tmp/styleval-fluency [--lora-steps 150]
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT.parent / "shared" / "data"


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def pt16_by_style() -> dict[str, list[str]]:
    out: dict[str, list[str]] = {"formal": [], "informal": []}
    for split in ("train", "tune", "test"):
        with open(DATA / "pt16" / f"{split}.csv", encoding="utf-8") as fh:
            for row in csv.DictReader(fh):
                text, label = (row.get("sentence") or "").strip(), row.get("label") or ""
                try:
                    v = float(label)
                except ValueError:  # empty or 'None' labels
                    continue
                if not text:
                    continue
                if v > 0:
                    out["formal"].append(text)
                elif v < 0:
                    out["informal"].append(text)
    return out


def train_lms(work: Path, steps: int) -> tuple[dict[str, str], dict[str, str]]:
    from styleval.training.lm import train_ngram_lm, train_style_lm
    from styleval.training.options import LMAdapterOptions

    data = pt16_by_style()
    lora, ngram = {}, {}
    for style, sents in data.items():
        log(f"{style}: {len(sents)} PT16 sentences")
        arpa = work / f"ngram-{style}.arpa"
        if not arpa.is_file():
            train_ngram_lm(sents, arpa, style=style, order=3)
        ngram[style] = str(arpa)
        folder = work / f"lora-{style}"
        if not (folder / "adapter_config.json").is_file():
            t = time.time()
            train_style_lm(sents, folder, style=style, options=LMAdapterOptions(max_steps=steps, batch_size=16))
            log(f"LoRA {style}: {steps} steps in {time.time() - t:.0f}s")
        lora[style] = str(folder)
    return lora, ngram


def score_table(records, metric) -> pd.DataFrame:
    from styleval.metrics.base import Batch

    rows = []
    by_sys: dict[str, list] = {}
    for r in records:
        by_sys.setdefault(r.system, []).append(r)
    for system, recs in by_sys.items():
        res = metric.score(Batch.from_records(recs))
        rows += [{"system": system, "segment": i, "score": float(s), "direction": str(r.direction)}
                 for i, s, r in zip(res.ids, res.segment_scores, recs)]
    return pd.DataFrame(rows)


def lai_figures(work: Path, lora: dict[str, str], ngram: dict[str, str]) -> pd.DataFrame:
    from styleval.meta import run
    from styleval.meta.conventions import lai2022_tasks
    from styleval.meta.datasets import load_lai2022
    from styleval.metrics.fluency.ngram import NgramPerplexity
    from styleval.metrics.fluency.perplexity import Perplexity
    from styleval.datasets import read_lai2022_aspect

    ds = load_lai2022(DATA / "lai2022")
    records = [r for r in read_lai2022_aspect(DATA / "lai2022", "fluency") if r.system != "ref"]
    scorers = {
        "smollm2": Perplexity(),
        "smollm2+lora-style": Perplexity(style_lms=lora),
        "ngram3-style": NgramPerplexity(style_lms=ngram),
    }
    tables = []
    for name, metric in scorers.items():
        t = time.time()
        tab = score_table(records, metric)
        tab["metric"] = f"fluency:{name}"
        tables.append(tab)
        log(f"lai2022 {name}: scored in {time.time() - t:.0f}s")
    ours = pd.concat(tables, ignore_index=True)
    stored = ds.metrics[ds.metrics["metric"] == "fluency:gpt2_ppl"]
    metrics = pd.concat([stored[ours.columns], ours], ignore_index=True)
    ours.to_csv(work / "lai2022_fluency_scores.csv", index=False)
    lower = {m for m in metrics["metric"].unique()}
    seg, sys_ = lai2022_tasks("fluency")
    rows = []
    for direction in ("informal->formal", "formal->informal", "both"):
        for label, task in (("kendall_tau_like", seg), ("system_pearson", sys_)):
            res = run(task.with_(direction=direction), ds.judgments, metrics, lower_is_better=lower)
            for m in sorted(metrics["metric"].unique()):
                rows.append({"direction": direction, "figure": label, "metric": m,
                             "value": round(res.statistic(m), 3), "task": task.with_(direction=direction).name})
    return pd.DataFrame(rows)


def mir_figures(work: Path) -> pd.DataFrame:
    from scipy.stats import pearsonr

    from styleval.lm.causal import token_nll
    from styleval.meta.datasets import load_mir2019
    from styleval.lm.loading import load_causal_lm
    from styleval.naturalness import adversarial_scores, agreement
    from styleval.datasets import read_mir2019

    ds = load_mir2019(DATA / "mir2019")
    rel = ds.extra["naturalness_relative"]
    records = read_mir2019(DATA)
    lm = load_causal_lm()
    nat = ds.judgments.frame
    nat = nat[nat["aspect"] == "naturalness"]
    inputs = sorted({(r.id, r.source) for r in records}, key=lambda x: int(x[0]))
    in_ppl = dict(zip([i for i, _ in inputs], token_nll(lm, [s for _, s in inputs]).perplexity()))
    rows = []
    pooled: dict[str, list[float]] = {}
    for system in sorted(rel["system"].unique()):
        recs = [r for r in records if r.system == system]
        choice = rel[rel["system"] == system].set_index("segment")["choice"].reindex([r.id for r in recs])
        choices = [c if isinstance(c, str) else None for c in choice]
        row: dict[str, object] = {"system": system}
        for clf in ("unigram", "embedding"):
            res = adversarial_scores([r.source for r in recs], [r.output for r in recs], classifier=clf)
            a, n = agreement(res, choices)
            row[f"{clf}_agreement"], row[f"{clf}_share_more_natural"] = round(a, 3), round(res.share_more_natural, 3)
            row[f"{clf}_cv_accuracy"] = round(res.accuracy, 3)
            pooled.setdefault(clf, []).extend([a * n, n])
        out_ppl = token_nll(lm, [r.output for r in recs]).perplexity()
        inp = np.array([in_ppl[r.id] for r in recs])

        class _P:  # perplexity as a preference: lower is more natural
            p_input, p_output = -inp, -out_ppl

        a, n = agreement(_P, choices)  # type: ignore[arg-type]
        row["ppl_agreement"] = round(a, 3)
        pooled.setdefault("ppl", []).extend([a * n, n])
        human = nat[nat["system"] == system].set_index("segment")["score"].reindex([r.id for r in recs])
        ok = human.notna().to_numpy() & np.isfinite(out_ppl)
        row["ppl_pearson_abs_naturalness"] = round(float(pearsonr(-np.log(out_ppl[ok]), human.to_numpy()[ok])[0]), 3)
        row["n_ab"] = n
        rows.append(row)
        log(f"mir2019 {system}: {row}")
    total = {"system": "POOLED"}
    for k, v in pooled.items():
        total[f"{k}_agreement"] = round(sum(v[0::2]) / sum(v[1::2]), 3)
    rows.append(total)
    return pd.DataFrame(rows)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work", default="/tmp/styleval-fluency")
    ap.add_argument("--lora-steps", type=int, default=150)
    ap.add_argument("--skip", choices=["lai", "mir"], action="append", default=[])
    args = ap.parse_args()
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    out: dict[str, object] = {}
    if "mir" not in args.skip:
        mir = mir_figures(work)
        mir.to_csv(work / "mir2019_naturalness.csv", index=False)
        print(mir.to_string(index=False))
        out["mir2019"] = mir.to_dict(orient="records")
    if "lai" not in args.skip:
        lora, ngram = train_lms(work, args.lora_steps)
        lai = lai_figures(work, lora, ngram)
        lai.to_csv(work / "lai2022_fluency_meta.csv", index=False)
        print(lai.pivot_table(index="metric", columns=["direction", "figure"], values="value").to_string())
        out["lai2022"] = lai.to_dict(orient="records")
    (work / "fluency_figures.json").write_text(json.dumps(out, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
