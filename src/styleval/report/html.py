"""Self-contained HTML and Markdown reports of an evaluation (``styleval report``).

The report reads the JSON form of an evaluation, so it is the same whether it is written from an
:class:`~styleval.evaluation.Evaluation` or from ``styleval evaluate --json`` output; its numbers are the corpus
scores and intervals of :func:`styleval.score`, printed with ``.4g`` like ``styleval score``. Figures are PNGs
embedded as base64 data URIs, so the HTML file needs nothing else.
"""
from __future__ import annotations

import html
from pathlib import Path
from typing import Any, Mapping

from ..evaluation.battery import Evaluation, as_dict
from ..evaluation.summary import ASPECTS, aspect_rows, legend, overall_rows, system_letters, systems_of
from . import plots

CSS = """body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:0.5em 0 1.5em}th,td{border:1px solid #ccc;padding:4px 8px;text-align:right}
th:first-child,td:first-child{text-align:left}th{background:#f3f3f3}sup{color:#a33}
.ci{color:#777;font-size:0.85em}.rationale li{margin:0.3em 0}code{font-size:0.85em;word-break:break-all}"""


def _figures(data: Mapping[str, Any]) -> list[tuple[str, bytes]]:
    figs = [("Style–content trade-off", plots.tradeoff_plot(data))]
    metrics = [m for aspect in ASPECTS for m in data["aspects"].get(aspect, [])]
    figs.append(("Segment score distributions", plots.distribution_plot(data, metrics)))
    return figs


def _html_cell(cell: Mapping[str, Any]) -> str:
    from ..evaluation.summary import fmt

    if cell["score"] is None and not cell.get("ci"):
        return "<td>-</td>" if cell["text"] == "-" else f"<td>{html.escape(cell['text'])}</td>"
    out = html.escape(fmt(cell["score"]))
    if cell.get("ci"):
        out += f' <span class="ci">[{html.escape(fmt(cell["ci"][0]))}, {html.escape(fmt(cell["ci"][1]))}]</span>'
    if cell.get("marks"):
        out += f"<sup>{html.escape(cell['marks'])}</sup>"
    return f"<td>{out}</td>"


def _html_table(rows: list[dict[str, Any]], systems: list[str], letters: Mapping[str, str]) -> str:
    head = "<tr><th>metric</th>" + "".join(f"<th>{html.escape(s)} ({letters[s]})</th>" for s in systems) + "</tr>"
    body = "".join("<tr><td>" + html.escape(f"{r['metric']} {'↑' if r['higher_is_better'] else '↓'}") + "</td>"
                   + "".join(_html_cell(r["cells"][s]) for s in systems) + "</tr>" for r in rows)
    return f"<table>{head}{body}</table>"


def render_html(evaluation: "Evaluation | Mapping[str, Any]", *, title: str = "styleval evaluation",
                correlations: "Mapping[str, Mapping[str, float]] | None" = None) -> str:
    """The whole report as one HTML document. ``correlations``: optional metric × human-aspect table
    (e.g. from ``styleval.meta``), drawn as a heatmap."""
    data = as_dict(evaluation)
    systems = systems_of(data)
    letters = system_letters(systems)
    parts = [f"<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>{html.escape(title)}</title>"
             f"<style>{CSS}</style></head><body><h1>{html.escape(title)}</h1>"]
    settings = data["settings"]
    parts.append(f"<p>Direction(s): {html.escape(', '.join(settings.get('directions', [])))}; systems: "
                 f"{html.escape(', '.join(systems))}; {settings.get('n_records', '?')} records"
                 f"{'; fast mode' if settings.get('fast') else ''}.</p>")
    for aspect in ASPECTS:
        rows = aspect_rows(data, aspect)
        if rows:
            parts.append(f"<h2>{aspect.capitalize()}</h2>" + _html_table(rows, systems, letters))
    parts.append("<h2>Overall</h2>" + _html_table(overall_rows(data), systems, letters))
    parts.append(f"<p class=\"legend\">{html.escape(legend(data))}</p>")
    figures = _figures(data)
    if correlations:
        figures.append(("Correlation with human judgments", plots.correlation_heatmap(correlations)))
    for caption, png in figures:
        parts.append(f"<h2>{html.escape(caption)}</h2><figure><img alt=\"{html.escape(caption)}\" "
                     f"src=\"{plots.data_uri(png)}\"><figcaption>{html.escape(caption)}</figcaption></figure>")
    parts.append("<h2>Why these metrics</h2><ul class=\"rationale\">"
                 + "".join(f"<li>{html.escape(line)}</li>" for line in data["rationale"]) + "</ul>")
    sigs = {c["metric"]: c["signature_string"] for c in data["score"]["corpus"]}
    parts.append("<h2>Signatures</h2><ul>" + "".join(f"<li><b>{html.escape(m)}</b>: <code>{html.escape(s)}</code></li>"
                                                     for m, s in sigs.items()) + "</ul></body></html>")
    return "\n".join(parts)


def _md_escape(text: str) -> str:
    return str(text).replace("|", "\\|")


def render_markdown(evaluation: "Evaluation | Mapping[str, Any]", *, title: str = "styleval evaluation") -> str:
    """The report's tables, legend, rationale and signatures as Markdown (no figures)."""
    data = as_dict(evaluation)
    systems = systems_of(data)
    letters = system_letters(systems)
    out = [f"# {title}", ""]

    def table(rows: list[dict[str, Any]]) -> list[str]:
        lines = ["| metric | " + " | ".join(f"{_md_escape(s)} ({letters[s]})" for s in systems) + " |",
                 "|---|" + "---:|" * len(systems)]
        for r in rows:
            lines.append(f"| {_md_escape(r['metric'])} {'↑' if r['higher_is_better'] else '↓'} | "
                         + " | ".join(_md_escape(r["cells"][s]["text"]) for s in systems) + " |")
        return lines + [""]

    for aspect in ASPECTS:
        rows = aspect_rows(data, aspect)
        if rows:
            out += [f"## {aspect.capitalize()}", ""] + table(rows)
    out += ["## Overall", ""] + table(overall_rows(data)) + [legend(data), "", "## Why these metrics", ""]
    out += [f"- {line}" for line in data["rationale"]] + ["", "## Signatures", ""]
    sigs = {c["metric"]: c["signature_string"] for c in data["score"]["corpus"]}
    out += [f"- **{m}**: `{s}`" for m, s in sigs.items()]
    return "\n".join(out) + "\n"


def write_report(evaluation: "Evaluation | Mapping[str, Any]", *, html: str | Path | None = None,
                 markdown: str | Path | None = None, title: str = "styleval evaluation") -> list[Path]:
    """Write the HTML and/or Markdown report; returns the paths written."""
    written = []
    data = as_dict(evaluation)
    if html:
        Path(html).write_text(render_html(data, title=title), encoding="utf-8")
        written.append(Path(html))
    if markdown:
        Path(markdown).write_text(render_markdown(data, title=title), encoding="utf-8")
        written.append(Path(markdown))
    return written
