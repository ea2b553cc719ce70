"""``styleval meta``: which metrics agree with human judgments, with every choice named.

Human judgments (long format, :class:`styleval.meta.Judgments`) and metric scores (a ``styleval score --json`` file
or a system/segment/metric/score table) in; correlation tables out on the terminal and, on request, as JSON, CSV
and LaTeX. The work is done by :mod:`styleval.meta`; this module parses options and prints.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from typing import Any

import pandas as pd

from ..errors import InputError
from ..meta import MetaTask
from ..meta.conventions import lai2022_cli_preset
from ..meta.aspects import pair_aspects
from ..meta.analysis import DIRECTION_MODES, curves_frame, expand_tasks, results_dict, results_frame, run_tasks
from ..meta.evaluate import AGGREGATE, AVERAGE_BY, METHODS, MetaResult, MetaRunOptions
from ..meta.judgments import Judgments
from ..meta.scores import lower_is_better_from_registry, read_metric_file
from ..report.tables import latex_table, text_table
from .direction_help import direction_help
from .encoding import add_encoding_argument
from . import meta_human

#: named sets of conventions; options given on the command line win
PRESETS: dict[str, dict[str, Any]] = {
    "lai2022": lai2022_cli_preset(),
    "wmt-pooled": {"segment_method": "kendall_tau_like", "system_method": "pearson", "average_by": "none",
                   "human_ties": "skip", "metric_ties": "discordant"},
    "spearman": {"segment_method": "spearman", "system_method": "spearman", "average_by": "none"},
}
DEFAULTS: dict[str, Any] = {"segment_method": "kendall_tau_like", "system_method": "pearson", "average_by": "none",
                            "aggregate": "mean", "undefined": "skip", "threshold": 0.0, "tie_rule": "le",
                            "human_ties": "skip", "metric_ties": "discordant", "orientation": "abs",
                            "human_aggregation": "mean", "ddof": 0, "exclude": ""}


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("meta", help="correlate metric scores with human judgments (meta-evaluation)",
                       description="Meta-evaluate metrics: correlate their scores with human judgments. Every "
                                   "choice is printed as a task name and stored in the output files.")
    i = p.add_argument_group("inputs")
    i.add_argument("--human", required=True, metavar="FILE",
                   help="human judgments, long format CSV/TSV/JSONL: system, segment, annotator, aspect, score"
                        "[, direction]")
    i.add_argument("--scores", action="append", default=[], metavar="FILE",
                   help="metric scores: a 'styleval score --json' file, or CSV/TSV/JSONL with system, segment (or "
                        "id), metric, score[, higher_is_better] (repeatable)")
    i.add_argument("--scale", metavar="LOW,HIGH", type=_scale,
                   help="the human rating scale (e.g. 1,5 or 0,100): a judgment outside it is an error naming the "
                        "file and line (default: any finite score)")
    i.add_argument("--metrics", "-m", help="comma-separated metrics to evaluate (default: all in the score files)")
    i.add_argument("--lower-is-better", default="", metavar="M1,M2",
                   help="metrics where lower is better (added to those the score file or the metric registry name)")
    i.add_argument("--no-infer-direction", action="store_true",
                   help="do not look metric names up in the registry to find lower-is-better metrics")
    i.add_argument("--allow-unmatched", action="store_true",
                   help="leave out metric rows without a human judgment (counted and reported) instead of failing")
    t = p.add_argument_group("task (every choice goes into the task name)")
    t.add_argument("--preset", choices=sorted(PRESETS), help="a named set of conventions: " + "; ".join(
        f"{k}: {', '.join(f'{a}={b}' for a, b in v.items())}" for k, v in PRESETS.items()))
    t.add_argument("--aspect", default="auto", metavar="ASPECT[,ASPECT]|auto|all",
                   help="human aspect(s) to correlate with: auto (default) pairs each metric with its own kind "
                        "(style, content, fluency, from the metric registry) as the human file names it "
                        "(content_preservation, naturalness...); a list correlates every metric with each aspect "
                        "named; all, with every aspect of the file. The output names the aspect of every table")
    t.add_argument("--level", choices=("segment", "system", "both"), default="both")
    t.add_argument("--method", choices=METHODS + ("kendall_like",), help="statistic at both levels")
    t.add_argument("--segment-method", choices=METHODS + ("kendall_like",),
                   help="segment-level statistic (default kendall_tau_like)")
    t.add_argument("--system-method", choices=METHODS + ("kendall_like",),
                   help="system-level statistic (default pearson)")
    t.add_argument("--average-by", choices=AVERAGE_BY, help="segment level: none (pooled), item, system")
    t.add_argument("--aggregate", choices=AGGREGATE, help="per-group statistics: mean, or pooled pair counts")
    t.add_argument("--undefined", choices=("skip", "zero"), help="groups with an undefined statistic")
    t.add_argument("--threshold", type=float, help="human differences up to this are ties (pairwise methods)")
    t.add_argument("--tie-rule", choices=("le", "lt"), help="tie if |d| <= threshold (le) or < threshold (lt)")
    t.add_argument("--human-ties", choices=("skip", "match"))
    t.add_argument("--metric-ties", choices=("discordant", "concordant", "skip", "half"))
    t.add_argument("--direction", default="both", metavar="MODE",
                   help=f"{', '.join(DIRECTION_MODES)} (pooled, per direction, both of those) or "
                        + direction_help(lead="one direction SRC:TGT"))
    t.add_argument("--orientation", choices=("abs", "signed"),
                   help="abs: negate lower-is-better metrics first (default); signed: as stored")
    t.add_argument("--systems", help="comma-separated systems to include (default: all)")
    t.add_argument("--exclude", help="comma-separated systems to leave out (e.g. ref)")
    t.add_argument("--human-aggregation", dest="human_aggregation", choices=("mean", "z"),
                   help="mean of raw scores or of per-annotator z-scores")
    t.add_argument("--ddof", type=int, help="z-scores: 0 = population standard deviation (default), 1 = sample")
    t.add_argument("--task", action="append", default=[], metavar="NAME",
                   help="a full task name (as printed); repeatable; replaces the task options above")
    s = p.add_argument_group("statistics")
    s.add_argument("--significance", choices=("none", "williams", "permutation", "both"), default="williams",
                   help="test every metric against the best one (default williams; permutation is slower)")
    s.add_argument("--permutations", type=int, default=1000, help="resamples of the permutation test")
    s.add_argument("--ci", type=int, default=0, metavar="N", help="bootstrap resamples for CIs (0: none)")
    s.add_argument("--confidence", type=float, default=0.95,
                   help="coverage of the bootstrap confidence intervals (default 0.95: 95%% intervals)")
    s.add_argument("--seed", type=int, default=0,
                   help="seed of the bootstrap and permutation resamples (default 0)")
    s.add_argument("--top-n", type=int, metavar="MIN_N", nargs="?", const=3,
                   help="system level: correlations over the top-N and last-N systems by human score, N >= MIN_N "
                        "(default 3)")
    o = p.add_argument_group("outputs")
    o.add_argument("--json", metavar="FILE", help="everything: tasks, figures, CIs, tests, curves, counts")
    o.add_argument("--csv", metavar="FILE", help="one row per task and metric, every choice a column")
    o.add_argument("--latex", metavar="FILE", help="metrics x tasks table (best per column in bold)")
    o.add_argument("--curves-csv", metavar="FILE", help="top-N/last-N curves as a long table")
    o.add_argument("--digits", type=int, default=3)
    o.add_argument("--quiet", "-q", action="store_true", help="print nothing but errors")
    meta_human.add_arguments(p)
    add_encoding_argument(p)
    p.set_defaults(run=run)


# ------------------------------------------------------------------------------------------------ building
def _split(text: str | None) -> list[str]:
    return [x.strip() for x in (text or "").split(",") if x.strip()]


def _choices(args: argparse.Namespace) -> dict[str, Any]:
    """Option values: command line, then preset, then defaults."""
    preset = PRESETS.get(args.preset or "", {})
    out = {}
    for key, default in DEFAULTS.items():
        value = getattr(args, key, None)
        out[key] = value if value is not None else preset.get(key, default)
    if args.method:
        out["segment_method"] = out["system_method"] = args.method
    return out


def build_tasks(args: argparse.Namespace, human: Judgments, aspect: str | None = None) -> list[MetaTask]:
    """The tasks the options ask for (``--task`` names, or template x levels x directions) for one human
    ``aspect`` (default ``args.aspect``)."""
    if args.task:
        try:
            return [MetaTask.from_name(name) for name in args.task]
        except ValueError as exc:
            raise InputError(f"--task: {exc}") from None
    c = _choices(args)
    systems = _split(args.systems)
    try:
        template = MetaTask(aspect or args.aspect, level="segment", method=c["segment_method"],
                            average_by=c["average_by"],
                            aggregate=c["aggregate"], undefined=c["undefined"], threshold=c["threshold"],
                            tie_rule=c["tie_rule"], human_ties=c["human_ties"], metric_ties=c["metric_ties"],
                            orientation=c["orientation"], systems=tuple(systems) if systems else None,
                            exclude=tuple(_split(c["exclude"])), human=c["human_aggregation"], ddof=c["ddof"])
        levels = ("segment", "system") if args.level == "both" else (args.level,)
        return expand_tasks(template, human, levels=levels, directions=args.direction,
                            system_method=c["system_method"], segment_method=c["segment_method"])
    except ValueError as exc:  # MetaTask validation (InputError is a ValueError too)
        if isinstance(exc, InputError):
            raise
        raise InputError(str(exc)) from None


def _scale(text: str) -> tuple[float, float]:
    """``--scale LOW,HIGH``: two finite numbers, low below high."""
    parts = text.split(",")
    try:
        low, high = (float(p) for p in parts)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected LOW,HIGH such as 1,5 or 0,100, not {text!r}") from None
    if not (math.isfinite(low) and math.isfinite(high) and low < high):
        raise argparse.ArgumentTypeError(f"expected two finite numbers, low below high, not {text!r}")
    return low, high


def load_inputs(args: argparse.Namespace) -> tuple[Judgments, pd.DataFrame, set[str]]:
    human = Judgments.read(args.human, scale=getattr(args, "scale", None))
    tables, lower = [], set(_split(args.lower_is_better))
    for path in args.scores:
        table, declared = read_metric_file(path)
        tables.append(table)
        lower |= declared
    metric_table = pd.concat(tables, ignore_index=True)
    dup = metric_table.duplicated(["system", "segment", "metric"], keep=False)
    if dup.any():
        first = metric_table.loc[dup].iloc[0]
        raise InputError(f"the score files repeat {int(dup.sum())} (system, segment, metric) rows, e.g. system="
                         f"{first['system']!r} segment={first['segment']!r} metric={first['metric']!r}")
    if not args.no_infer_direction:
        lower |= lower_is_better_from_registry(metric_table["metric"].unique())
    return human, metric_table, lower


# ------------------------------------------------------------------------------------------------ printing
def _num(x: Any, digits: int) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "nan"
    return f"{x:.{digits}f}"


def _p(x: Any) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    return "<.001" if x < 0.001 else f"{x:.3f}"


def label(task: MetaTask) -> str:
    """A short column label: level, statistic and direction."""
    d = "" if task.direction == "both" else f" {task.direction}"
    return f"{task.level} {task.method}{d}"


def format_result(result: MetaResult, digits: int = 3) -> str:
    """One task as a block: heading, task name, a row per metric, notes."""
    task = result.task
    has_w = any("not_applicable" not in t.get("williams", {"not_applicable": 1}) for t in result.tests.values())
    has_p = any("permutation" in t for t in result.tests.values())
    common = set.intersection(*(set(v) for v in result.notes.values())) if len(result.notes) > 1 else set()
    header = ["metric", task.method]
    if result.cis:
        ci = next(iter(result.cis.values()))
        header.append(f"{ci.confidence:.0%} CI")
    if has_w:
        header.append("p Williams")
    if has_p:
        header.append("p perm.")
    header += ["n", ""]
    rows, footnotes = [], []
    order = sorted(result.results, key=lambda m: -_sortable(result.statistic(m)))
    for metric in order:
        res = result.results[metric]
        negated = result.options["metrics"][metric]["negated"]
        row = [metric + (" (negated)" if negated else ""), _num(res.statistic, digits)]
        if result.cis:
            ci = result.cis[metric]
            row.append(f"[{_num(ci.low, digits)}, {_num(ci.high, digits)}]")
        tests = result.tests.get(metric, {})
        if has_w:
            row.append("best" if metric == result.best else _p(tests.get("williams", {}).get("pvalue")))
        if has_p:
            row.append("best" if metric == result.best else _p(tests.get("permutation", {}).get("pvalue")))
        row.append(str(res.n))
        marks = ""
        for note in result.notes.get(metric, []):
            if note not in common:
                footnotes.append(f"  {metric}: {note}")
                marks = "†"
        row.append(marks)
        rows.append(row)
    head = f"== {task.aspect}, {label(task)} =="
    lines = [head, f"task: {task.name}", text_table(header, rows, align="l" + "r" * (len(header) - 2) + "l")]
    if footnotes:
        lines.append("† " + "\n".join(footnotes).lstrip())
    for note in sorted(common):
        lines.append(f"every metric: {note}")
    for tests in result.tests.values():
        for kind, test in tests.items():
            if "not_applicable" in test:
                lines.append(f"{kind} not applicable: {test['not_applicable']}")
                break
        else:
            continue
        break
    return "\n".join(lines)


def _sortable(x: float) -> float:
    return -math.inf if math.isnan(x) else x


def format_curves(result: MetaResult, digits: int = 3) -> str:
    """Top-N and last-N curves of one system-level result: rows N, columns metrics."""
    if not result.curves:
        return ""
    metrics = list(result.curves)
    blocks = []
    for which in ("top", "last"):
        ns = [n for n, _ in result.curves[metrics[0]][which]]
        rows = [[str(n)] + [_num(dict(result.curves[m][which]).get(n, math.nan), digits) for m in metrics]
                for n in ns]
        blocks.append(f"{which}-N systems by human score ({label(result.task)}):\n"
                      + text_table([("N")] + metrics, rows))
    return "\n\n".join(blocks)


def _column_key(task: MetaTask) -> str:
    """A task's name without its aspect: tasks that differ only in aspect share a summary column."""
    return ";".join(part for part in task.name.split(";") if not part.startswith("aspect="))


def wide_table(results: list[MetaResult], digits: int = 3) -> tuple[list[str], list[list[str]], list[tuple[int, int]]]:
    """Metrics as rows (with their aspect when the results judge several), tasks as columns; also the (row,
    column) cells of each column's best metric."""
    several = len({r.task.aspect for r in results}) > 1
    columns = list(dict.fromkeys(_column_key(r.task) for r in results))
    labels = {_column_key(r.task): label(r.task) for r in results}
    keys = list(dict.fromkeys((r.task.aspect, m) for r in results for m in r.results))
    by_cell = {(r.task.aspect, _column_key(r.task)): r for r in results}
    header = ["metric"] + (["aspect"] if several else []) + [labels[c] for c in columns]
    first = 2 if several else 1
    rows, best = [], []
    for i, (aspect, metric) in enumerate(keys):
        row = [metric] + ([aspect] if several else [])
        for j, column in enumerate(columns, start=first):
            r = by_cell.get((aspect, column))
            if r is None or metric not in r.results:
                row.append("-")
                continue
            row.append(_num(r.statistic(metric), digits))
            if r.best == metric or (r.best is None and metric == max(
                    r.results, key=lambda m: _sortable(r.statistic(m)))):
                best.append((i, j))
        rows.append(row)
    return header, rows, best


def run(args: argparse.Namespace) -> int:
    from ..outputs import atomic_writer, check_destinations, shown, write_text
    from .progress import make as make_progress

    check_destinations(("--json", args.json), ("--csv", args.csv), ("--curves-csv", args.curves_csv),
                       ("--latex", args.latex),
                       inputs=[("--human", args.human)] + [("--scores", s) for s in args.scores])
    if not args.scores:
        if not args.plan:
            raise InputError("meta needs --scores FILE (metric scores to correlate), or --plan to plan a study from "
                             "the --human judgments alone")
        return meta_human.run_plan(args, Judgments.read(args.human), [], tuple(_split(_choices(args)["exclude"])))
    human, metric_table, lower = load_inputs(args)
    metrics = _split(args.metrics) or None
    options = MetaRunOptions(unmatched="report" if args.allow_unmatched else "error", ci=args.ci,
                             confidence=args.confidence, significance=args.significance,
                             n_permutations=args.permutations, seed=args.seed, curves=args.top_n is not None,
                             curves_min_n=args.top_n or 3)
    with make_progress(not args.quiet) as bar:
        pairing = None
        if args.task:  # full task names: every metric with each task's aspect
            tasks = build_tasks(args, human)
            results = run_tasks(tasks, human, metric_table, metrics=metrics, lower_is_better=lower, options=options,
                                progress=bar)
        else:
            pairing = pair_aspects(metrics or metric_table["metric"].unique(), human.aspects, args.aspect)
            tasks, results = [], []
            for aspect, names in pairing.groups.items():
                aspect_tasks = build_tasks(args, human, aspect)
                tasks += aspect_tasks
                results += run_tasks(aspect_tasks, human, metric_table, metrics=names, lower_is_better=lower,
                                     options=options, progress=bar)
    if args.plan:
        return meta_human.run_plan(args, human, results)
    extra = meta_human.compute(args, human, results)
    inputs = {"human": str(args.human), "scores": [str(s) for s in args.scores],
              "lower_is_better": sorted(lower), "preset": args.preset,
              "aspects": None if pairing is None else {"mode": pairing.mode, "groups": pairing.groups,
                                                       "paired_by_default": pairing.how}}
    if args.json:
        write_text(args.json, json.dumps(meta_human.add_to_json(results_dict(results, inputs=inputs), extra, results),
                                         indent=1, ensure_ascii=False))
    for path, frame in ((args.csv, results_frame), (args.curves_csv, curves_frame)):
        if path:
            table = frame(results)
            if frame is results_frame:
                table = meta_human.add_to_frame(table, extra, results)
            with atomic_writer(path) as fh:
                table.to_csv(fh, index=False)
    if args.latex:
        header, rows, best = wide_table(results, args.digits)
        caption = (f"Correlation with human {' / '.join(dict.fromkeys(t.aspect for t in tasks))} judgments; best "
                   "metric per column in bold. Tasks: "
                   + "; ".join(f"{label(r.task)}: {r.task.name}" for r in results))
        rows += meta_human.latex_rows(header, extra, results, args.digits, _column_key)
        write_text(args.latex, latex_table(header, rows, caption=caption, label="tab:meta", bold=best))
    if args.quiet:
        return 0
    blocks = [] if pairing is None else ["aspects (" + ("each metric with its own kind" if pairing.mode == "auto"
                                                        else pairing.mode) + "):\n"
                                         + "\n".join(f"  {line}" for line in pairing.describe())]
    blocks += ["\n".join(x for x in (format_result(r, args.digits), meta_human.block(extra, i, r, args.digits)) if x)
               for i, r in enumerate(results)]
    blocks += [c for c in (format_curves(r, args.digits) for r in results) if c]
    if len(results) > 1:
        header, rows, _ = wide_table(results, args.digits)
        left = 2 if header[1:2] == ["aspect"] else 1
        blocks.append("summary:\n" + text_table(header, rows, align="l" * left + "r" * (len(header) - left)))
    print("\n\n".join(blocks))
    for path in (args.json, args.csv, args.latex, args.curves_csv):
        if path:
            print(f"wrote {shown(path)}", file=sys.stderr)
    return 0
