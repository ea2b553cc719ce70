#!/usr/bin/env python
"""Meta-evaluate styleval's own metrics end to end, from the raw sentences to correlations with humans.

Two stages, both cached under ``--cache`` (default ``/tmp/styleval-meta-e2e``):

1. score: ``styleval.score`` on Lai et al. (2022)'s GYAFC outputs (8 systems + ``ref``; against the source and
   the reference) and on SGDD-TST (10,287 pairs; against the source), written as ``styleval score --json`` files
   (``lai2022.scores.json``, ``sgdd.scores.json``). Skipped when the file exists (``--rescore`` forces it).
2. meta: the score files are read back with :func:`styleval.meta.scores.read_metric_table` and correlated with the
   human judgments of :mod:`styleval.meta.datasets`:

   * Lai 2022 content: per-input Kendall tau-like and system-level Pearson with the paper's conventions
     (``LAI_SEG``/``LAI_SYS`` below, the reference excluded), ours against the source and against the reference
     next to the same statistic of the paper's stored scores for the same metric;
   * SGDD-TST: Spearman with the ``human`` column over all pairs, ours next to the stored columns.

Usage::

    .venv/bin/python studies/reproductions/meta_end_to_end.py [--data ../shared/data] [--cache DIR]
        [--only lai2022|sgdd]
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import pandas as pd

from styleval import score
from styleval.meta import MetaTask, run
from styleval.meta.conventions import lai2022_tasks
from styleval.meta.datasets import load_lai2022, load_sgdd_tst
from styleval.meta.scores import lower_is_better_from_registry, read_metric_table
from styleval.datasets import read_lai2022, read_sgdd_tst
from styleval.report.tables import text_table

ROOT = Path(__file__).resolve().parents[2]
METRICS = ["bleu", "chrf", "rouge1", "rougeL", "meteor", "wmd", "embedding_average", "sentence_cosine", "bertscore"]
# our metric name -> the stored column of Lai et al. (data/outputs/*.content.{src,ref}.txt) for the same metric
LAI_STORED = {"bleu": "bleu", "chrf": "chrf", "rouge1": "rouge-1", "rougeL": "rouge-l", "meteor": "meteor",
              "wmd": "wmd", "bertscore": "bertscore"}
SGDD_STORED = {"bleu": "bleu", "chrf": "chrf", "rouge1": "rouge1", "rougeL": "rougeL",
               "bertscore": "bertscore/roberta-large"}

LAI_SEG, LAI_SYS = lai2022_tasks("content")
SGDD_TASK = MetaTask("content", level="segment", method="spearman", average_by="none", orientation="abs")


def _score(records, path: Path, against: list[str], rescore: bool) -> None:
    if path.is_file() and not rescore:
        print(f"[cached] {path}", file=sys.stderr)
        return
    t0 = time.time()
    result = score(records, METRICS, against=against, bootstrap=0)
    result.write_json(path)
    print(f"[scored] {len(records)} records x {len(result.metrics)} metrics in {time.time() - t0:.0f} s -> {path}",
          file=sys.stderr)


def _fmt(x: float) -> str:
    return "   -  " if pd.isna(x) else f"{x:6.3f}"


def lai2022(data: Path, cache: Path, rescore: bool) -> pd.DataFrame:
    path = cache / "lai2022.scores.json"
    _score(read_lai2022(data), path, ["source", "references"], rescore)
    ours = read_metric_table(path)
    ds = load_lai2022(data, source="txt")  # 4 decimals: the paper's figures (docs/meta-conventions.md)
    lower = set(lower_is_better_from_registry(ours["metric"].unique())) | set(ds.lower_is_better)
    rows = []
    for name in METRICS:
        row: dict[str, object] = {"metric": name}
        for side in ("src", "ref"):
            ours_name = f"{name}/{side}"
            stored = f"{side}:{LAI_STORED[name]}" if name in LAI_STORED else None
            for label, task in (("kendall", LAI_SEG), ("pearson", LAI_SYS)):
                row[f"{side}_{label}"] = run(task, ds.judgments, ours, metrics=[ours_name],
                                             lower_is_better=lower).statistic(ours_name)
                row[f"{side}_{label}_stored"] = (run(task, ds.judgments, ds.metrics, metrics=[stored],
                                                     lower_is_better=lower).statistic(stored)
                                                 if stored in set(ds.metrics["metric"]) else float("nan"))
        rows.append(row)
    table = pd.DataFrame(rows)
    print("\nLai et al. 2022 content (8 systems, both directions; Kendall = per-input tau-like, "
          "Pearson = system level)")
    print(f"tasks: {LAI_SEG.name}\n       {LAI_SYS.name}")
    head = (f"{'metric':18} | {'vs source':^31} | {'vs reference':^31}\n"
            f"{'':18} | {'Kendall':>7} {'stored':>7} {'Pearson':>7} {'stored':>7} "
            f"| {'Kendall':>7} {'stored':>7} {'Pearson':>7} {'stored':>7}")
    print(head)
    for r in rows:
        print(f"{r['metric']:18} | " + " ".join(f"{_fmt(r[k]):>7}" for k in
                                               ("src_kendall", "src_kendall_stored", "src_pearson",
                                                "src_pearson_stored"))
              + " | " + " ".join(f"{_fmt(r[k]):>7}" for k in ("ref_kendall", "ref_kendall_stored", "ref_pearson",
                                                             "ref_pearson_stored")))
    print("\nper direction, ours against the source (Kendall per input / system Pearson):")
    dir_rows = []
    for name in METRICS:
        cells = [name]
        for direction in ("informal->formal", "formal->informal"):
            for task in (LAI_SEG, LAI_SYS):
                cells.append(_fmt(run(task.with_(direction=direction), ds.judgments, ours,
                                      metrics=[f"{name}/src"], lower_is_better=lower).statistic(f"{name}/src")))
        dir_rows.append(cells)
    print(text_table(["metric", "inf->for Kendall", "inf->for Pearson", "for->inf Kendall", "for->inf Pearson"],
                     dir_rows))
    human_csv = cache / "lai2022.human.csv"
    ds.judgments.write(human_csv)
    print(f"\nsame through the CLI: styleval meta --human {human_csv} --scores {path} --preset lai2022 "
          "--direction all")
    return table


def sgdd(data: Path, cache: Path, rescore: bool) -> pd.DataFrame:
    path = cache / "sgdd.scores.json"
    _score(read_sgdd_tst(data, system="rewrite"), path, ["source"], rescore)
    ours = read_metric_table(path)
    ds = load_sgdd_tst(data)
    lower = set(lower_is_better_from_registry(ours["metric"].unique()))
    rows = []
    for name in METRICS:
        res = run(SGDD_TASK, ds.judgments, ours, metrics=[f"{name}/src"], lower_is_better=lower)
        stored = SGDD_STORED.get(name)
        st = (run(SGDD_TASK, ds.judgments, ds.metrics, metrics=[stored]).statistic(stored)
              if stored else float("nan"))
        used = res.options["metrics"][f"{name}/src"]
        rows.append({"metric": name, "spearman": res.statistic(f"{name}/src"), "n": res[f"{name}/src"].n,
                     "n_nan_dropped": used.get("n_nan_dropped", 0), "stored_column": stored or "-",
                     "stored_spearman": st})
    table = pd.DataFrame(rows)
    print(f"\nSGDD-TST content: Spearman with the human column (task {SGDD_TASK.name})")
    print(table.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    return table


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    p.add_argument("--cache", type=Path, default=Path("/tmp/styleval-meta-e2e"))
    p.add_argument("--only", choices=("lai2022", "sgdd"))
    p.add_argument("--rescore", action="store_true")
    p.add_argument("--score-only", action="store_true", help="stage 1 only")
    args = p.parse_args(argv)
    args.cache.mkdir(parents=True, exist_ok=True)
    if args.score_only:
        if args.only in (None, "lai2022"):
            _score(read_lai2022(args.data), args.cache / "lai2022.scores.json", ["source", "references"],
                   args.rescore)
        if args.only in (None, "sgdd"):
            _score(read_sgdd_tst(args.data, system="rewrite"), args.cache / "sgdd.scores.json", ["source"],
                   args.rescore)
        return 0
    if args.only in (None, "lai2022"):
        lai2022(args.data, args.cache, args.rescore)
    if args.only in (None, "sgdd"):
        sgdd(args.data, args.cache, args.rescore)
    return 0


if __name__ == "__main__":
    sys.exit(main())
