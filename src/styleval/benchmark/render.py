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


def row_note(row: Row, set_name: str) -> str:
    """What the terminal prints under a task for one metric: its failure, or its notes (ties, partial figures);
    "" when there is nothing to say."""
    if row.failed:
        return f"FAILED on {set_name}: {row.failed}"
    return "; ".join(row.notes)


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
        if row_note(r, bt.set):
            notes.append(f"  {r.metric}: {row_note(r, bt.set)}")
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
    return "\n".join(lines + human_lines(result, digits))


def human_lines(result: TaskResult, digits: int = 3) -> list[str]:
    """The task's human ceiling (with each metric's share of it) and agreement strata, when computed."""
    lines: list[str] = []
    if result.ceiling is not None:
        lines += result.ceiling.describe(digits)
        shares = [f"{r.metric} {result.share_of_ceiling(r):.0%}" for r in result.rows
                  if not math.isnan(result.share_of_ceiling(r))]
        if shares:
            lines.append("share of the ceiling: " + ", ".join(shares))
    if result.strata is not None:
        lines += result.strata.describe(digits)
    return lines


SUMMARY_HEADER = ["metric", "mean corr.", "mean rank", "top cluster", "failed"]
SUMMARY_TITLE = "summary per aspect (means over the tasks each metric has a figure in)"


def summary_tables(result: BenchmarkResult, digits: int = 3) -> list[tuple[str, list[list[str]]]]:
    """Per aspect kind, ``(title, rows)``: each metric's mean figure and mean cluster rank over its tasks, tasks won
    and tasks failed (the columns of :data:`SUMMARY_HEADER`)."""
    tables = []
    for kind in KINDS:
        summary = [s for s in result.summary() if s.kind == kind]
        if not summary:
            continue
        total = sum(1 for t in result.tasks if t.task.kind == kind and not t.degenerate)
        rows = [[s.metric, _num(s.mean, digits), _num(s.mean_rank, 2), f"{s.wins}/{s.n_tasks}",
                 str(s.n_failed) if s.n_failed else ""] for s in summary]
        tables.append((f"{kind} ({total} tasks)", rows))
    return tables


def left_out_line(result: BenchmarkResult) -> str:
    """The tasks the summary leaves out (too few systems or inputs to rank metrics), or ""."""
    left = result.left_out()
    return ("left out of the summary (too few systems or inputs to rank metrics): " + "; ".join(left)) if left else ""


def format_summary(result: BenchmarkResult, digits: int = 3) -> str:
    """Per aspect kind: each metric's mean figure and mean cluster rank over its tasks, and tasks won."""
    blocks = [f"{title}:\n" + text_table(SUMMARY_HEADER, rows) for title, rows in summary_tables(result, digits)]
    if left_out_line(result):
        blocks.append(left_out_line(result))
    return f"{SUMMARY_TITLE}:\n" + "\n\n".join(blocks)


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
        rows += _human_rows(tasks, digits)
        tables.append(latex_table(["metric", *[t.task.label for t in tasks]], rows, bold=bold,
                                  caption=f"{kind}: correlation with human judgments per task (top cluster in bold)",
                                  label=f"tab:benchmark-{kind}"))
    return "\n\n".join(tables) + "\n"


def _human_rows(tasks: list[TaskResult], digits: int) -> list[list[str]]:
    """The human ceiling and one-rater rows of a metrics x tasks table (none when no task has a ceiling)."""
    if all(t.ceiling is None for t in tasks):
        return []

    def cell(t: TaskResult, which: str) -> str:
        if t.ceiling is None:
            return ""
        if t.ceiling.single:
            return "one score"
        return _num(t.ceiling.ceiling if which == "ceiling" else t.ceiling.one_rater, digits)

    return [["human ceiling", *[cell(t, "ceiling") for t in tasks]],
            ["one rater vs rest", *[cell(t, "one_rater") for t in tasks]]]


def _ceiling_cells(columns: list[TaskResult], kind: str, digits: int) -> str:
    """The heat map's human ceiling row of one aspect kind: per task the ceiling, its interval, one rater against
    the rest and the best metric's share of it in the title; "one score" where a set has one score per item."""
    tasks = [t for t in columns if t.task.kind == kind]
    if not tasks or all(t.ceiling is None for t in tasks):
        return ""
    parts = [f"<tr class='ceiling'><td>{kind}</td><td>human ceiling</td>"]
    for t in columns:
        c = t.ceiling if t.task.kind == kind else None
        if c is None:
            parts.append("<td></td>")
        elif c.single or c.result is None:
            parts.append(f"<td class='ceiling none' title='{html.escape(c.describe(digits)[0])}'>one score</td>")
        else:
            low, high = c.interval("ceiling")
            one_low, one_high = c.interval("one_rater")
            best = max((r for r in t.rows if not math.isnan(t.share_of_ceiling(r))),
                       key=lambda r: t.share_of_ceiling(r), default=None)
            title = (f"ceiling {_num(c.ceiling, 4)} [{_num(low, digits)}, {_num(high, digits)}]; one rater vs the "
                     f"rest {_num(c.one_rater, digits)} [{_num(one_low, digits)}, {_num(one_high, digits)}]"
                     + (f"; best metric {best.metric} at {t.share_of_ceiling(best):.0%} of the ceiling" if best else "")
                     + (f"; {'; '.join(c.notes)}" if c.notes else ""))
            parts.append(f"<td class='v ceiling' title='{html.escape(title)}'>{html.escape(_num(c.ceiling, digits))}"
                         "</td>")
    parts.append("</tr>")
    return "".join(parts)


def _human_section(result: BenchmarkResult, digits: int) -> str:
    """Under the heat map: how to read the ceiling row, and the agreement strata of each task that has them."""
    assumptions = list(dict.fromkeys(t.ceiling.assumption for t in result.tasks
                                     if t.ceiling is not None and not t.ceiling.single))
    if not assumptions and all(t.strata is None for t in result.tasks):
        return ""
    out = ""
    if assumptions:
        out += ("<p class='ceiling-note'>Human ceiling row: the highest figure a metric can expect on each task, from "
                "the raters' split-half reliability (title: its interval, one rater against the rest, the best "
                "metric's share of it). Assumptions: " + html.escape(" | ".join(assumptions)) + ".</p>")
    strata = [f"== {t.task.label} ==\n" + "\n".join(t.strata.describe(digits)) for t in result.tasks
              if t.strata is not None]
    if strata:
        out += "<h2>Agreement strata</h2><pre>" + html.escape("\n\n".join(strata)) + "</pre>"
    return out


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


def _html_notes(result: BenchmarkResult) -> dict[tuple[str, str], tuple[int, str]]:
    """``(task name, metric) -> (number, note)`` for every cell the terminal prints a note for, numbered in the
    order the terminal prints them."""
    out: dict[tuple[str, str], tuple[int, str]] = {}
    for t in result.tasks:
        for r in t.rows:
            note = row_note(r, t.task.set)
            if note:
                out[(t.task.name, r.metric)] = (len(out) + 1, note)
    return out


def _summary_html(result: BenchmarkResult, digits: int) -> str:
    blocks = []
    for title, rows in summary_tables(result, digits):
        head = "".join(f"<th>{html.escape(h)}</th>" for h in SUMMARY_HEADER)
        body = "".join("<tr>" + "".join(f"<td{'' if k == 0 else ' class=v'}>{html.escape(c)}</td>"
                                        for k, c in enumerate(row)) + "</tr>" for row in rows)
        blocks.append(f"<table class='summary'><caption>{html.escape(title)}</caption><tr>{head}</tr>{body}</table>")
    return f"<h2>Summary per aspect</h2><p>{html.escape(SUMMARY_TITLE.capitalize())}.</p>" + "".join(blocks)


def to_html(result: BenchmarkResult, digits: int = 3) -> str:
    """A self-contained page: one heat map of metrics x tasks (per aspect kind, tasks side by side), each cell the
    figure with its interval and cluster rank in its title, and a numbered mark for the note the terminal prints
    under its task (metric ties, a partial figure, a failure), the note in the title and in the list under the
    map; the summary as tables and the signatures below."""
    parts = ["<!DOCTYPE html><html><head><meta charset='utf-8'><title>styleval benchmark</title><style>",
             "body{font-family:sans-serif;margin:1.5em}table{border-collapse:collapse;margin-bottom:1.5em}"
             "td,th{border:1px solid #ccc;padding:3px 6px;font-size:13px}th.task{writing-mode:vertical-rl;"
             "transform:rotate(180deg);max-height:16em}td.v{text-align:right}td.top{font-weight:bold}"
             "td.failed{background:#f4c0c0}sup.note a{color:#a33;text-decoration:none;font-weight:normal}"
             "tr.ceiling td{background:#f3f0e0;font-style:italic}"
             "ol.notes{font-size:13px}caption{text-align:left;font-weight:bold;padding:0.3em 0}"
             "ul.signatures{font-size:13px;max-width:100%}ul.signatures code{overflow-wrap:anywhere;"
             "word-break:break-all;white-space:normal}</style></head><body><h1>styleval benchmark</h1>",
             "<p>Correlation of each metric with human judgments, per task (the set's published convention; the "
             "full task name is each column's title). Bold: top significance cluster; * some scores missing; a "
             "red number: a note on that figure (below, and in the cell's tooltip).</p>",
             "<table><tr><th>aspect</th><th>metric</th>"]
    notes = _html_notes(result)
    if subset_note(result):
        parts.insert(2, f"<p><strong>{html.escape(subset_note(result))}</strong></p>")
    columns: list[TaskResult] = [t for kind in KINDS for t in result.tasks if t.task.kind == kind]
    parts += [f"<th class='task' title='{html.escape(t.task.name)}'>{html.escape(t.task.label)}</th>"
              for t in columns]
    parts.append("</tr>")
    for kind in KINDS:
        _, metrics = _grid(result, kind)
        parts.append(_ceiling_cells(columns, kind, digits))
        for metric in metrics:
            parts.append(f"<tr><td>{kind}</td><td>{html.escape(metric)}</td>")
            for t in columns:
                row = _cell(t, metric) if t.task.kind == kind else None
                if row is None:
                    parts.append("<td></td>")
                    continue
                number, note = notes.get((t.task.name, metric), (0, ""))
                mark = (f"<sup class='note'><a href='#note-{number}'>{number}</a></sup>" if number else "")
                if row.failed:
                    parts.append(f"<td class='failed' title='{html.escape(note)}'>failed{mark}</td>")
                else:
                    title = (f"{row.statistic:.4f} [{_num(row.ci_low, digits)}, {_num(row.ci_high, digits)}], "
                             f"rank {row.rank}, n {row.n}" + (f"; note {number}: {note}" if note else ""))
                    klass = "v top" if row.rank == 1 else "v"
                    parts.append(f"<td class='{klass}' style='background:{_colour(row.statistic)}' "
                                 f"title='{html.escape(title)}'>{html.escape(_figure(row, digits))}{mark}</td>")
            parts.append("</tr>")
    parts.append("</table>" + _human_section(result, digits))
    if notes:
        labels = {t.task.name: t.task.label for t in result.tasks}
        parts.append("<h2>Notes</h2><p>As the terminal prints them under each task (* = some scores missing, left "
                     "out).</p><ol class='notes'>" + "".join(
                         f"<li id='note-{number}'><b>{html.escape(labels[task])}</b> · {html.escape(metric)}: "
                         f"{html.escape(note)}</li>" for (task, metric), (number, note) in notes.items()) + "</ol>")
    if result.skipped:
        parts.append("<p class='skipped'>Tasks without a metric of their kind: "
                     + html.escape("; ".join(result.skipped)) + "</p>")
    parts.append(_summary_html(result, digits) + "<h2>Signatures</h2><ul class='signatures'>"
                 + "".join(f"<li><b>{html.escape(k)}</b>: <code>{html.escape(v)}</code></li>"
                           for k, v in result.signatures.items()) + "</ul>")
    parts.append("</body></html>\n")
    return "".join(parts)


def outputs(result: BenchmarkResult, digits: int = 3) -> dict[str, Any]:
    """Every rendering by format name."""
    return {"text": format_text(result, digits), "json": to_json(result), "csv": to_csv(result),
            "latex": to_latex(result, digits), "html": to_html(result, digits)}
