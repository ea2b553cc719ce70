#!/usr/bin/env python
"""Meta-evaluation of the SmolLM2-135M judge (``llm_judge``) and LogProp next to classic metrics: Lai et al. 2022,
Mir et al. 2019 and SGDD-TST (docs/results.md, "LLM judges and LogProp").

The prompts (``src/styleval/judges/templates/``) were fixed and committed before any figure here was computed;
nothing was tuned on any of these sets.

Two stages, both under ``--work`` (default ``/tmp/styleval-llm-judges``):

1. ``score``: every metric below on every system, written row by row to ``<set>.scores.csv`` (system, segment,
   metric, score, direction), resumable: a (metric, system) already written is skipped, and the LM passes go
   through a model-output store (``outputs.sqlite``). Seconds per (metric, system) go to ``<set>.timing.csv``.
2. ``meta``: the correlations, printed and written to ``meta.json``.

Sets and what ran on them:

* ``lai``: Lai et al. 2022, 80 inputs (``--lai-inputs`` of each direction) x 8 systems (the human reference left
  out, as Lai et al. do). Style, content (against the source) and fluency: per-input Kendall tau-like and
  system-level Pearson (Lai et al.'s conventions, :func:`styleval.meta.conventions.lai2022_tasks`), next to the
  stored scores (BLEURT, COMET, BLEU, chrF, BERTScore; the XFORMAL classifier; GPT-2 perplexity) and styleval's
  MiniLM cosine.
* ``mir``: Mir et al. 2019, the first ``--mir-inputs`` inputs of each direction (all 122 by default) x 12
  settings; style intensity and
  content: Pearson pooled over each model's settings (as docs/results.md's Mir figures), naturalness: Pearson pooled
  over the 9 judged settings; next to the stored EMD (TextCNN), BLEU and WMD.
* ``sgdd``: SGDD-TST, every ``--sgdd-every``-th pair; content: Spearman with the mean crowd vote, Williams test
  (one-sided, Spearman) of each metric against MiniLM cosine. SGDD-TST rewrites go both ways, so the target style a
  judge and LogProp are told is inferred per pair: ``formal`` when the shipped formality classifier
  (``formality-classifier-pt16``) gives the rewrite a higher probability of formal than the original, else
  ``informal``.

Usage::

    .venv/bin/python studies/llm_judges/meta_judges.py --stage score [--sets lai,mir,sgdd]
    .venv/bin/python studies/llm_judges/meta_judges.py --stage meta
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import numpy as np
import pandas as pd

from styleval.datasets import read_lai2022, read_mir2019, read_sgdd_tst
from styleval.engine.model_cache import ModelOutputCache
from styleval.meta import MetaRunOptions, MetaTask, run
from styleval.meta.conventions import lai2022_tasks
from styleval.meta.datasets import load_lai2022, load_mir2019, load_sgdd_tst
from styleval.metrics import registry
from styleval.metrics.base import Batch
from styleval.models.outputs import use_store
from styleval.records import Direction, Record
from styleval.stats.significance import williams_test

ROOT = Path(__file__).resolve().parents[2]
#: our column name -> (registered metric, parameters)
METRICS: dict[str, tuple[str, dict[str, Any]]] = {
    "judge_style": ("llm_judge", {"aspect": "style"}),
    "judge_content": ("llm_judge", {"aspect": "content"}),
    "judge_fluency": ("llm_judge", {"aspect": "fluency"}),
    "logprop_content": ("logprop", {}),
    "logprop_style": ("logprop", {"part": "style"}),  # the same LM pass as logprop_content, read from the store
    "minilm_cosine": ("sentence_cosine", {"against": "source"}),
}
PER_SET = {"lai": list(METRICS),
           "mir": list(METRICS),
           "sgdd": ["judge_content", "logprop_content", "minilm_cosine"]}


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


# -- the sets -----------------------------------------------------------------------------------------------------
def lai_records(data: Path, n_inputs: int) -> list[Record]:
    keep = {str(i) for i in list(range(n_inputs)) + list(range(40, 40 + n_inputs))}
    return [r for r in read_lai2022(data) if r.system != "ref" and r.id in keep]


def mir_records(data: Path, n_inputs: int) -> list[Record]:
    keep = {str(i) for i in list(range(n_inputs)) + list(range(122, 122 + n_inputs))}
    return [r for r in read_mir2019(data) if r.id in keep]


def sgdd_records(data: Path, every: int) -> list[Record]:
    from styleval.style_models.pretrained import load_style_model

    records = [r for r in read_sgdd_tst(data, system="rewrite") if int(r.id) % every == 0]
    model = load_style_model("formality-classifier-pt16")
    formal = model.style_index("formal")
    p_source = model.predict_proba([r.source for r in records])[:, formal]
    p_output = model.predict_proba([r.output for r in records])[:, formal]
    out = []
    for r, ps, po in zip(records, p_source, p_output):
        target = "formal" if po > ps else "informal"
        out.append(Record(id=r.id, source=r.source, output=r.output, system=r.system,
                          direction=Direction("informal" if target == "formal" else "formal", target)))
    return out


def records_of(name: str, args: argparse.Namespace) -> list[Record]:
    if name == "lai":
        return lai_records(args.data, args.lai_inputs)
    if name == "mir":
        return mir_records(args.data, args.mir_inputs)
    return sgdd_records(args.data, args.sgdd_every)


# -- stage 1 ------------------------------------------------------------------------------------------------------
def stage_score(args: argparse.Namespace) -> None:
    args.work.mkdir(parents=True, exist_ok=True)
    with ModelOutputCache(args.work / "outputs.sqlite") as store, use_store(store):
        for name in args.sets:
            records = records_of(name, args)
            path, timing = args.work / f"{name}.scores.csv", args.work / f"{name}.timing.csv"
            done = set()
            if path.is_file():
                done = {(row["metric"], row["system"]) for row in csv.DictReader(path.open(encoding="utf-8"))}
            by_system: dict[str, list[Record]] = {}
            for r in records:
                by_system.setdefault(r.system, []).append(r)
            log(f"{name}: {len(records)} segments, {len(by_system)} systems")
            for column in PER_SET[name]:
                metric_name, params = METRICS[column]
                metric = registry.create(metric_name, **params)
                for system, recs in by_system.items():
                    if (column, system) in done:
                        continue
                    t = time.perf_counter()
                    computed = metric.compute(Batch.from_records(recs))
                    seconds = time.perf_counter() - t
                    scores = metric.scores_from_stats(computed.values)
                    new = not path.is_file()
                    with path.open("a", encoding="utf-8", newline="") as fh:
                        w = csv.writer(fh)
                        if new:
                            w.writerow(["system", "segment", "metric", "score", "direction"])
                        w.writerows([system, r.id, column, float(s), str(r.direction)] for r, s in zip(recs, scores))
                    new = not timing.is_file()
                    with timing.open("a", encoding="utf-8", newline="") as fh:
                        w = csv.writer(fh)
                        if new:
                            w.writerow(["metric", "system", "segments", "seconds"])
                        w.writerow([column, system, len(recs), round(seconds, 2)])
                    log(f"{name} {column} {system}: {len(recs)} in {seconds:.0f} s")


# -- stage 2 ------------------------------------------------------------------------------------------------------
def ours(args: argparse.Namespace, name: str) -> pd.DataFrame:
    """Our scores of one set; a segment a judge left unrated (no score) is left out, and said so."""
    frame = pd.read_csv(args.work / f"{name}.scores.csv", dtype={"system": str, "segment": str})
    missing = frame[frame["score"].isna()]
    for (metric, system), group in missing.groupby(["metric", "system"]):
        log(f"{name} {metric} {system}: {len(group)} segment(s) without a score left out "
            f"(first: {group['segment'].iloc[0]})")
    return frame[frame["score"].notna()]


def _round(x: float) -> float:
    return round(float(x), 3)


def meta_lai(args: argparse.Namespace) -> dict[str, Any]:
    ds = load_lai2022(args.data, source="txt")
    mine = ours(args, "lai")
    stored = ds.metrics[ds.metrics["segment"].isin(set(mine["segment"]))]  # the same inputs (all 80 by default)
    table = pd.concat([mine, stored], ignore_index=True)
    lower = set(ds.lower_is_better)
    columns = {"style": ["judge_style", "logprop_style", "style:cls-xformal-target", "style:reg-pt16"],
               "content": ["judge_content", "logprop_content", "minilm_cosine", "src:bleurt", "src:comet",
                           "src:bertscore", "src:chrf", "src:bleu"],
               "fluency": ["judge_fluency", "fluency:gpt2_ppl"]}
    out: dict[str, Any] = {"share_of_ratings_exactly_1": {
        m: _round((mine.loc[mine["metric"] == m, "score"] == 1.0).mean())
        for m in ("judge_style", "judge_content", "judge_fluency")}}
    for aspect, metrics in columns.items():
        seg, sys_ = lai2022_tasks(aspect)
        kendall = run(seg, ds.judgments, table, metrics=metrics, lower_is_better=lower)
        # the same with the metric's ties left out instead of counted as discordant (the judges tie often)
        untied = run(seg.with_(metric_ties="skip"), ds.judgments, table, metrics=metrics, lower_is_better=lower)
        pearson = run(sys_, ds.judgments, table, metrics=metrics, lower_is_better=lower)
        out[aspect] = {m: {"kendall": _round(kendall.statistic(m)), "kendall_ties_skipped": _round(untied.statistic(m)),
                           "pearson": _round(pearson.statistic(m))} for m in metrics}
        out[aspect]["tasks"] = [seg.name, sys_.name]
    return out


def meta_mir(args: argparse.Namespace) -> dict[str, Any]:
    ds = load_mir2019(args.data)
    mine = ours(args, "mir")
    segments = set(mine["segment"])
    stored = ds.metrics[ds.metrics["segment"].isin(segments)]
    table = pd.concat([mine, stored], ignore_index=True)
    lower = set(ds.lower_is_better)
    out: dict[str, Any] = {"inputs": len(segments)}
    columns = {"style_transfer_intensity": ["judge_style", "logprop_style", "emd:textcnn"],
               "content_preservation": ["judge_content", "logprop_content", "minilm_cosine", "unmasked:BLEU",
                                        "unmasked:WMD"]}
    for model, systems in ds.extra["models"].items():
        for aspect, metrics in columns.items():
            task = MetaTask(aspect, level="segment", method="pearson", average_by="none", orientation="abs",
                            systems=tuple(systems), human="mean")
            res = run(task, ds.judgments, table, metrics=metrics, lower_is_better=lower,
                      options=MetaRunOptions(unmatched="report"))
            out.setdefault(aspect, {})[model] = {m: _round(res.statistic(m)) for m in metrics}
    judged = sorted(set(ds.judgments.frame.query("aspect == 'naturalness'")["system"]) - {"input"})
    task = MetaTask("naturalness", level="segment", method="pearson", average_by="none", orientation="abs",
                    systems=tuple(judged), human="mean")
    res = run(task, ds.judgments, table, metrics=["judge_fluency"], options=MetaRunOptions(unmatched="report"))
    out["naturalness"] = {"judge_fluency": _round(res.statistic("judge_fluency")), "settings": len(judged)}
    return out


def meta_sgdd(args: argparse.Namespace) -> dict[str, Any]:
    ds = load_sgdd_tst(args.data)
    mine = ours(args, "sgdd")
    segments = set(mine["segment"])
    stored = ds.metrics[ds.metrics["segment"].isin(segments) & ds.metrics["metric"].isin(
        ["bleu", "chrf", "bertscore/roberta-large", "Elron/bleurt-large-512"])]
    wide = pd.concat([mine, stored]).pivot_table(index="segment", columns="metric", values="score")
    human = ds.judgments.frame.set_index("segment")["score"].reindex(wide.index)
    out: dict[str, Any] = {"pairs": int(len(wide))}
    base = "minilm_cosine"
    for metric in wide.columns:
        ok = wide[metric].notna() & wide[base].notna() & human.notna()
        x, b, h = wide.loc[ok, metric], wide.loc[ok, base], human[ok]
        rho = float(x.corr(h, method="spearman"))
        row: dict[str, Any] = {"spearman": _round(rho), "n": int(ok.sum())}
        if metric != base:
            rho_b = float(b.corr(h, method="spearman"))
            t, p = williams_test(rho, rho_b, float(x.corr(b, method="spearman")), int(ok.sum()))
            row.update({"vs_minilm_t": _round(t), "vs_minilm_p": float(f"{p:.3g}")})
        out[metric] = row
    return out


def stage_meta(args: argparse.Namespace) -> None:
    out: dict[str, Any] = {}
    parts = {"lai": meta_lai, "mir": meta_mir, "sgdd": meta_sgdd}
    for name in args.sets:
        if (args.work / f"{name}.scores.csv").is_file():
            out[name] = parts[name](args)
    timing = {}
    for name in args.sets:
        path = args.work / f"{name}.timing.csv"
        if path.is_file():
            t = pd.read_csv(path).groupby("metric")[["segments", "seconds"]].sum()
            timing[name] = {m: _round(row["segments"] / row["seconds"]) for m, row in t.iterrows()}
    out["segments_per_second"] = timing
    text = json.dumps(out, indent=1)
    print(text)
    (args.work / "meta.json").write_text(text + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--stage", choices=("score", "meta"), required=True)
    ap.add_argument("--sets", default="lai,mir,sgdd")
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--work", type=Path, default=Path("/tmp/styleval-llm-judges"))
    ap.add_argument("--lai-inputs", type=int, default=40, help="inputs of each direction (of 40)")
    ap.add_argument("--mir-inputs", type=int, default=122, help="inputs of each direction (of 122; all by default)")
    ap.add_argument("--sgdd-every", type=int, default=20, help="every k-th pair (of 10,287)")
    args = ap.parse_args(argv)
    args.sets = [s.strip() for s in args.sets.split(",") if s.strip()]
    np.seterr(all="ignore")
    (stage_score if args.stage == "score" else stage_meta)(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
