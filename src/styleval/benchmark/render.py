"""A benchmark's result as text, CSV, JSON, LaTeX and a self-contained HTML page with a heat map (metrics x tasks)."""
from __future__ import annotations

import html
import json
import math
from typing import Any

from ..report.tables import latex_table, text_table
from .run import BenchmarkResult, Row, TaskResult
from .sets import KINDS


def _num(x: float, digits: int = 3) -> str:
    return "-" if math.isnan(x) else f"{x:.{digits}f}"


def _figure(row: Row, digits: int) -> str:
    if row.failed:
        return "failed"
    return _num(row.statistic, digits) + ("*" if row.partial else "")


def format_task(result: TaskResult, digits: int = 3) -> str:
    """One task: its label and full name, a row per metric (figure, interval, cluster rank, n), failures and
    notes below."""
    bt = result.task
    header = ["rank", "metric", bt.task.method, "CI", "n", "origin"]
    rows, notes = [], []
    for r in result.rows:
        ci = "" if math.isnan(r.ci_low) else f"[{_num(r.ci_low, digits)}, {_num(r.ci_high, digits)}]"
        rows.append([str(r.rank) if r.rank is not None else "-", r.metric, _figure(r, digits), ci,
                     str(r.n) if r.n else "", r.origin])
        if r.failed:
            notes.append(f"  {r.metric}: FAILED on {bt.set}: {r.failed}")
        elif r.notes:
            notes.append(f"  {r.metric}: {'; '.join(r.notes)}")
    c = result.clusters
    test = (f"clusters: one-sided paired permutation tests, {c.n_permutations} resamples, p < {c.alpha:g}"
            if c.n_permutations else "ranks by figure (no significance test)")
    if result.degenerate:
        test = f"NOT RANKED ({result.degenerate}); left out of the summary"
    lines = [f"== {bt.label} ==", f"task: {bt.name}"] + ([result.inputs] if result.inputs else []) + [
        text_table(header, rows, align="rlrrrl"), test]
    if notes:
        marked = any(r.partial and not r.failed for r in result.rows)
        lines.append(("notes (* = some scores missing, left out):\n" if marked else "notes:\n") + "\n".join(notes))
    return "\n".join(lines)


def format_summary(result: BenchmarkResult, digits: int = 3) -> str:
    """Per aspect kind: each metric's mean figure and mean cluster rank over its tasks, and tasks won."""
    blocks = []
    for kind in KINDS:
        summary = [s for s in result.summary() if s.kind == kind]
        if not summary:
            continue
        total = sum(1 for t in result.tasks if t.task.kind == kind and not t.degenerate)
        rows = [[s.metric, _num(s.mean, digits), _num(s.mean_rank, 2), f"{s.wins}/{s.n_tasks}",
                 str(s.n_failed) if s.n_failed else ""] for s in summary]
        blocks.append(f"{kind} ({total} tasks):\n" + text_table(
            ["metric", "mean corr.", "mean rank", "top cluster", "failed"], rows))
    left = result.left_out()
    if left:
        blocks.append("left out of the summary (too few systems or inputs to rank metrics): " + "; ".join(left))
    return "summary per aspect (means over the tasks each metric has a figure in):\n" + "\n\n".join(blocks)


def subset_note(result: BenchmarkResult) -> str:
    """A line saying which sets ran on a subset of their inputs ("" when every set ran whole)."""
    subsets = result.settings.get("subsets") or {}
    if not subsets:
        return ""
    parts = ", ".join(f"{name}: {what}" for name, what in subsets.items())
    return f"SUBSET ({parts}): these figures are not those of the whole sets"


def format_text(result: BenchmarkResult, digits: int = 3) -> str:
    note = subset_note(result)
    blocks = ([note] if note else []) + result.repeated_ratings() + [format_task(t, digits) for t in result.tasks]
    if result.skipped:
        blocks.append("tasks without a metric of their kind: " + "; ".join(result.skipped))
    blocks.append(format_summary(result, digits))
    return "\n\n".join(blocks)


def to_json(result: BenchmarkResult) -> str:
    return json.dumps(result.to_dict(), indent=1, ensure_ascii=False) + "\n"


def to_csv(result: BenchmarkResult) -> str:
    return result.to_frame().to_csv(index=False, lineterminator="\n")


def _grid(result: BenchmarkResult, kind: str) -> tuple[list[TaskResult], list[str]]:
    tasks = [t for t in result.tasks if t.task.kind == kind]
    metrics = list(dict.fromkeys(r.metric for t in tasks for r in t.rows))
    return tasks, metrics


def _cell(task: TaskResult, metric: str) -> Row | None:
    try:
        return task.row(metric)
    except KeyError:
        return None


def to_latex(result: BenchmarkResult, digits: int = 3) -> str:
    """Per aspect kind a metrics x tasks table; the top cluster of each task in bold."""
    tables = []
    for kind in KINDS:
        tasks, metrics = _grid(result, kind)
        if not tasks:
            continue
        rows, bold = [], []
        for i, metric in enumerate(metrics):
            cells = [metric]
            for j, t in enumerate(tasks):
                row = _cell(t, metric)
                cells.append("" if row is None else _figure(row, digits))
                if row is not None and row.rank == 1:
                    bold.append((i, j + 1))
            rows.append(cells)
        tables.append(latex_table(["metric", *[t.task.label for t in tasks]], rows, bold=bold,
                                  caption=f"{kind}: correlation with human judgments per task (top cluster in bold)",
                                  label=f"tab:benchmark-{kind}"))
    return "\n\n".join(tables) + "\n"


def _colour(value: float) -> str:
    """White at 0, deep blue at 1, red for negative figures."""
    if math.isnan(value):
        return "#eeeeee"
    v = max(-1.0, min(1.0, value))
    if v >= 0:
        c = int(255 - 180 * v)
        return f"rgb({c},{c + int(40 * v)},255)"
    c = int(255 + 180 * v)
    return f"rgb(255,{c},{c})"


def to_html(result: BenchmarkResult, digits: int = 3) -> str:
    """A self-contained page: one heat map of metrics x tasks (per aspect kind, tasks side by side), each cell the
    figure with its interval and cluster rank in its title; the summary below."""
    parts = ["<!DOCTYPE html><html><head><meta charset='utf-8'><title>styleval benchmark</title><style>",
             "body{font-family:sans-serif;margin:1.5em}table{border-collapse:collapse;margin-bottom:1.5em}"
             "td,th{border:1px solid #ccc;padding:3px 6px;font-size:13px}th.task{writing-mode:vertical-rl;"
             "transform:rotate(180deg);max-height:16em}td.v{text-align:right}td.top{font-weight:bold}"
             "td.failed{background:#f4c0c0}</style></head><body><h1>styleval benchmark</h1>",
             "<p>Correlation of each metric with human judgments, per task (the set's published convention; the "
             "full task name is each column's title). Bold: top significance cluster; * some scores missing.</p>",
             "<table><tr><th>aspect</th><th>metric</th>"]
    if subset_note(result):
        parts.insert(2, f"<p><strong>{html.escape(subset_note(result))}</strong></p>")
    columns: list[TaskResult] = [t for kind in KINDS for t in result.tasks if t.task.kind == kind]
    parts += [f"<th class='task' title='{html.escape(t.task.name)}'>{html.escape(t.task.label)}</th>"
              for t in columns]
    parts.append("</tr>")
    for kind in KINDS:
        _, metrics = _grid(result, kind)
        for metric in metrics:
            parts.append(f"<tr><td>{kind}</td><td>{html.escape(metric)}</td>")
            for t in columns:
                row = _cell(t, metric) if t.task.kind == kind else None
                if row is None:
                    parts.append("<td></td>")
                elif row.failed:
                    parts.append(f"<td class='failed' title='{html.escape(row.failed)}'>failed</td>")
                else:
                    title = (f"{row.statistic:.4f} [{_num(row.ci_low, digits)}, {_num(row.ci_high, digits)}], "
                             f"rank {row.rank}, n {row.n}")
                    klass = "v top" if row.rank == 1 else "v"
                    parts.append(f"<td class='{klass}' style='background:{_colour(row.statistic)}' "
                                 f"title='{html.escape(title)}'>{html.escape(_figure(row, digits))}</td>")
            parts.append("</tr>")
    parts.append("</table><h2>Summary per aspect</h2><pre>" + html.escape(format_summary(result, digits))
                 + "</pre><h2>Signatures</h2><pre>"
                 + html.escape("\n".join(f"{k}: {v}" for k, v in result.signatures.items())) + "</pre>")
    parts.append("</body></html>\n")
    return "".join(parts)


def outputs(result: BenchmarkResult, digits: int = 3) -> dict[str, Any]:
    """Every rendering by format name."""
    return {"text": format_text(result, digits), "json": to_json(result), "csv": to_csv(result),
            "latex": to_latex(result, digits), "html": to_html(result, digits)}
