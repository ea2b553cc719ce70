"""Self-contained HTML and Markdown reports of an evaluation (``styleval report``).

The report reads the JSON form of an evaluation, so it is the same whether it is written from an
:class:`~styleval.evaluation.Evaluation` or from ``styleval evaluate --json`` output; its numbers are the corpus
scores and intervals of :func:`styleval.score`, printed as ``styleval score`` prints them (``57.3 ±2.8``,
:func:`styleval.evaluation.summary.estimate`; the interval's bounds in each cell's tooltip). Figures are PNGs
embedded as base64 data URIs, and the segment explorer (:mod:`.explorer`, ``static/explorer.js``) is inline script
over an inline JSON block, so the HTML file needs nothing else; its Content-Security-Policy allows only those
(``default-src 'none'``, the script and style sheets by hash, ``data:`` images). The page opens with the run
(command, input files with hashes, date) and a summary of the leads (:mod:`.header`); the rationale and signatures
are folded away at the bottom.

With human judgments (``human=``, ``styleval report --human FILE``) the report adds how well every metric agrees
with every human aspect (:func:`human_correlations`): a heatmap and table of system-level Pearson and segment-level
Kendall tau-like per input (Lai et al. 2022's conventions, see docs/meta-conventions.md), and top-N / last-N
curves. The numbers are those of :func:`styleval.meta.run`; the segment scores they need are part of the JSON form
(``score.segments``), so a report from ``styleval evaluate --json`` output has them too. Systems can be left out
of the correlations (``exclude_systems``, ``--exclude-system ref``), as Lai et al. leave out the human references;
the report names them.

Trade-off plots draw systems named ``model@setting`` as one line per model through its settings (Mir et al. 2019,
Fig. 2); with naturalness scores (``evaluate --naturalness``) a naturalness–style intensity plot is added.
"""
from __future__ import annotations

import base64
import hashlib
import html
from pathlib import Path
from typing import Any, Mapping, Sequence

from ..errors import InputError
from ..evaluation.battery import Evaluation
from .score_view import report_data
from ..meta.conventions import LAI2022_SEGMENT, LAI2022_SYSTEM
from ..outputs import write_text
from ..evaluation.summary import (ASPECTS, TABLE_ASPECTS, aspect_rows, bounds_text, estimate_parts, fmt, legend,
                                  overall_rows, anchor_of, signature_rows, system_headings, systems_of)
from . import plots
from .explorer import MAX_OUTPUTS, explorer_payload, payload_json
from .header import case_note, perplexity_labels, run_html, summary_html

CSS = """body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:0.5em 0 1.5em}th,td{border:1px solid #ccc;padding:4px 8px;text-align:right}
th:first-child,td:first-child{text-align:left}th{background:#f3f3f3}sup{color:#a33}
.ci{color:#777;font-size:0.85em}.unrated{color:#a33;font-size:0.85em}img{max-width:100%;height:auto}
.rationale li{margin:0.3em 0}code{font-size:0.85em;word-break:break-all}
details>summary h2{display:inline}.run{color:#333}.case-note{font-size:0.9em;color:#555}
table.inputs td,table.inputs th{text-align:left}"""


def _html_cell(cell: Mapping[str, Any], confidence: float) -> str:
    """The score and its ``±half-width`` as every table prints them (:func:`estimate_parts`), the interval's bounds
    in the tooltip, and the significance mark."""
    if cell["score"] is None and not cell.get("ci"):
        return "<td>-</td>" if cell["text"] == "-" else f"<td>{html.escape(cell['text'])}</td>"
    value, half = estimate_parts(cell["score"], cell.get("ci"))
    out = html.escape(value)
    if half is not None:
        low, high = bounds_text(cell["score"], cell["ci"])
        out += (f' <span class="ci" title="{confidence:.0%} CI [{html.escape(low)}, {html.escape(high)}]">'
                f"{html.escape(half)}</span>")
    if cell.get("unrated"):  # segments left out of the score (llm_judge:unrated=skip)
        out += f' <span class="unrated" title="segments the judge gave no rating">{html.escape(cell["unrated"])}</span>'
    if cell.get("marks"):  # all pairs: the letters of ^ac as a superscript; against a baseline: ▲ or ▼
        out += f"<sup>{html.escape(cell['marks'].lstrip('^'))}</sup>"
    return f"<td>{out}</td>"


def _html_table(rows: list[dict[str, Any]], systems: list[str], headings: Mapping[str, str],
                confidence: float = 0.95, marked: "set[str] | frozenset[str]" = frozenset()) -> str:
    """One aspect's table (``headings``: each system's column heading, :func:`system_headings`); the rows of
    ``marked`` metrics carry a † pointing to the note under the table."""
    head = "<tr><th>metric</th>" + "".join(f"<th>{html.escape(headings[s])}</th>" for s in systems) + "</tr>"
    body = "".join("<tr><td>" + html.escape(f"{r['metric']} {'↑' if r['higher_is_better'] else '↓'}"
                                            + (" †" if r["metric"] in marked else "")) + "</td>"
                   + "".join(_html_cell(r["cells"][s], confidence) for s in systems) + "</tr>" for r in rows)
    return f"<table>{head}{body}</table>"


# ------------------------------------------------------------------------------- agreement with human judgments
#: Lai et al. (2022)'s conventions (docs/meta-conventions.md); their ``exclude=ref`` is the caller's choice
#: (``exclude_systems``), every system is kept by default.
SYSTEM_TASK = LAI2022_SYSTEM
SEGMENT_TASK = LAI2022_SEGMENT
LEVEL_LABELS = {"system": "system Pearson r", "segment": "segment Kendall tau-like"}
HumanInput = Any  # Judgments | str | Path | the dict of human_correlations
_EXAMPLES = 5


def _judgments(human: HumanInput):
    from ..meta.judgments import Judgments

    if isinstance(human, Judgments):
        return human
    if isinstance(human, (str, Path)):
        return Judgments.read(human)
    raise InputError(f"human judgments: expected a Judgments, a file path or human_correlations() output, got "
                     f"{type(human).__name__}")


def _check_match(judgments, metric_table, aspects: list[str], exclude: "tuple[str, ...]" = ()) -> None:
    """Every judged (system, segment) must be in the evaluation, and every evaluated system judged per aspect;
    excluded systems are left out of both checks but must exist on one side."""
    source = judgments.source
    frame = judgments.frame
    unknown = [s for s in exclude if s not in set(frame["system"]) and s not in set(metric_table["system"])]
    if unknown:
        raise InputError(f"excluded system(s) {', '.join(map(repr, unknown))} are neither evaluated nor judged; "
                         f"the evaluation's systems are {', '.join(map(repr, dict.fromkeys(metric_table['system'])))}",
                         source)
    frame = frame[~frame["system"].isin(exclude)]
    metric_table = metric_table[~metric_table["system"].isin(exclude)]
    evaluated = set(zip(metric_table["system"], metric_table["segment"]))
    systems = list(dict.fromkeys(metric_table["system"]))
    segments = list(dict.fromkeys(metric_table["segment"]))
    unknown_systems = sorted(set(frame["system"]) - set(systems))
    if unknown_systems:
        raise InputError(f"human judgments name system(s) not in the evaluation: "
                         f"{', '.join(map(repr, unknown_systems[:_EXAMPLES]))}"
                         + (f" (and {len(unknown_systems) - _EXAMPLES} more)" if len(unknown_systems) > _EXAMPLES
                            else "")
                         + f"; the evaluation's systems are {', '.join(map(repr, systems))}", source)
    keys = frame[["system", "segment"]].drop_duplicates()
    stray = [(s, g) for s, g in zip(keys["system"], keys["segment"]) if (s, g) not in evaluated]
    if stray:
        shown = "; ".join(f"system={s!r} segment={g!r}" for s, g in stray[:_EXAMPLES])
        hint = ""
        if {g.lstrip("0") or "0" for _, g in stray} & {g.lstrip("0") or "0" for g in segments}:
            hint = "; the ids differ only in leading zeros: write both sides with the same ids"
        raise InputError(f"{len(stray)} judged (system, segment) pair(s) are not in the evaluation, e.g. {shown}; "
                         f"the evaluation's segment ids look like {', '.join(map(repr, segments[:_EXAMPLES]))}"
                         f"{hint}", source)
    for aspect in aspects:
        judged = set(frame.loc[frame["aspect"] == aspect, "system"])
        missing = [s for s in systems if s not in judged]
        if missing:
            raise InputError(f"human aspect {aspect!r} has no judgment of system(s) "
                             f"{', '.join(map(repr, missing))}: every evaluated system needs judgments of every "
                             "aspect for the system-level correlations", source)


def human_correlations(evaluation: "Evaluation | Mapping[str, Any]", human: HumanInput, *,
                       exclude_systems: "Sequence[str]" = (), curves_min_n: int = 2) -> dict[str, Any]:
    """Every metric of ``evaluation`` against every human aspect in ``human`` (a
    :class:`~styleval.meta.Judgments` or a judgments file), computed by :func:`styleval.meta.run`.

    Two tasks per aspect: system-level Pearson of per-system means (with top-N / last-N curves over the systems
    sorted by human score, N from ``curves_min_n``) and segment-level Kendall tau-like per input averaged over
    inputs (``SYSTEM_TASK`` / ``SEGMENT_TASK``: Lai et al. 2022's conventions). Human scores are the mean of the
    annotators; lower-is-better metrics are negated (orientation abs). Segments nobody judged are left out (counted
    in the notes); judged systems or segments absent from the evaluation are an :class:`InputError`.
    ``exclude_systems`` are left out of every correlation (the tasks' ``exclude``, e.g. ``("ref",)`` for Lai et
    al.'s 8 systems without the human references); a name neither evaluated nor judged is an :class:`InputError`.
    The evaluation's anchor row of the human references (``settings["anchor"]``) is always left out (``anchor``).

    Returns ``{"aspects", "metrics", "system": {metric: {aspect: r}}, "segment": {metric: {aspect: tau}},
    "curves": {aspect: {metric: {"top": [(N, r)...], "last": [...]}}}, "tasks": {level: {aspect: task name}},
    "notes": [text...], "negated": [metric...], "n_segments": {aspect: n}, "excluded": [system...], "anchor",
    "systems": [system...], "segment_means": {aspect: {system: {segment: mean}}}}`` (``systems``: those the
    correlations use; ``segment_means``: every judged segment, excluded systems included, for the explorer).
    """
    from ..meta import MetaRunOptions, MetaTask, run
    from ..meta.scores import lower_is_better_from_score_dict, metric_table_from_score_dict

    data = report_data(evaluation)
    judgments = _judgments(human)
    if len(judgments) == 0:
        raise InputError("no human judgments", judgments.source)
    metric_table = metric_table_from_score_dict(data["score"])
    metrics = list(dict.fromkeys(metric_table["metric"]))
    lower = lower_is_better_from_score_dict(data["score"])
    aspects = judgments.aspects
    exclude = asked = tuple(dict.fromkeys(str(s) for s in exclude_systems))
    anchor = anchor_of(data)
    if anchor is not None and anchor in set(metric_table["system"]) and anchor not in exclude:
        exclude += (anchor,)  # the human references' anchor row is not a system: nobody judged it
    _check_match(judgments, metric_table, aspects, exclude)
    kept = [s for s in dict.fromkeys(metric_table["system"]) if s not in exclude]
    if len(kept) < 2:
        raise InputError(f"excluding {', '.join(map(repr, exclude))} leaves {len(kept)} system(s); the correlations "
                         "need at least 2")
    out: dict[str, Any] = {"aspects": aspects, "metrics": metrics, "system": {m: {} for m in metrics},
                           "segment": {m: {} for m in metrics}, "curves": {}, "tasks": {"system": {}, "segment": {}},
                           "notes": [], "negated": [m for m in metrics if m in lower], "n_segments": {},
                           "excluded": list(asked),
                           "anchor": anchor, "systems": kept,
                           "segment_means": segment_means(judgments)}
    for aspect in aspects:
        for level, choices in (("system", SYSTEM_TASK), ("segment", SEGMENT_TASK)):
            task = MetaTask(aspect=aspect, exclude=exclude, **choices)
            res = run(task, judgments, metric_table, lower_is_better=lower,
                      options=MetaRunOptions(unmatched="report", curves=level == "system", curves_min_n=curves_min_n))
            out["tasks"][level][aspect] = task.name
            for metric in metrics:
                out[level][metric][aspect] = res.statistic(metric)
                for note in res.notes.get(metric, []):
                    out["notes"].append(f"{metric} vs human {aspect} ({LEVEL_LABELS[level]}): {note}")
            if level == "system":
                out["curves"][aspect] = {m: {"top": list(c["top"]), "last": list(c["last"])}
                                         for m, c in res.curves.items()}
                out["n_segments"][aspect] = max(u["n_segments"] for u in res.options["metrics"].values())
    return out


def segment_means(judgments) -> dict[str, dict[str, dict[str, float]]]:
    """The mean human score per aspect, system and segment (over annotators): the human columns of the explorer."""
    means = judgments.frame.groupby(["aspect", "system", "segment"], sort=False)["score"].mean()
    out: dict[str, dict[str, dict[str, float]]] = {}
    for (aspect, system, segment), value in means.items():
        out.setdefault(str(aspect), {}).setdefault(str(system), {})[str(segment)] = float(value)
    return out


def _human_data(evaluation: Mapping[str, Any], human: HumanInput, exclude_systems: "Sequence[str]" = ()
                ) -> dict[str, Any]:
    if isinstance(human, Mapping) and "system" in human and "segment" in human and "aspects" in human:
        if exclude_systems and list(exclude_systems) != list(human.get("excluded", [])):
            raise InputError("exclude_systems differs from the exclusion the given correlations were computed with")
        return dict(human)
    return human_correlations(evaluation, human, exclude_systems=exclude_systems)


def _excluded_text(corr: Mapping[str, Any]) -> str:
    excluded = corr.get("excluded") or []
    anchor = corr.get("anchor")
    left = (f"The anchor row {anchor} (the human references, not a system) is left out of the correlations. "
            if anchor and anchor not in excluded else "")
    if not excluded:
        return left + ("No system is excluded from the correlations." if not left
                       else f"No system is excluded: correlations over {', '.join(corr.get('systems', []))}.")
    return (left + f"Excluded from the correlations: {', '.join(excluded)} (their scores stay in the tables above); "
            f"correlations over {', '.join(corr.get('systems', []))}.")


def _human_columns(corr: Mapping[str, Any]) -> list[tuple[str, str]]:
    return [(aspect, level) for aspect in corr["aspects"] for level in ("system", "segment")]


def _corr_text(value: Any) -> str:
    return "-" if value is None or value != value else fmt(value)


def _human_html(corr: Mapping[str, Any]) -> tuple[str, list[tuple[str, bytes]]]:
    cols = _human_columns(corr)
    head = ("<tr><th>metric</th>" + "".join(f"<th>{html.escape(a)}: {html.escape(LEVEL_LABELS[lv])}</th>"
                                           for a, lv in cols) + "</tr>")
    negated = set(corr.get("negated", []))
    body = "".join("<tr><td>" + html.escape(m + (" (negated)" if m in negated else "")) + "</td>"
                   + "".join(f"<td>{html.escape(_corr_text(corr[lv][m].get(a)))}</td>" for a, lv in cols) + "</tr>"
                   for m in corr["metrics"])
    text = ("<p>Agreement of every metric with the mean human score per output, as computed by "
            "<code>styleval.meta.run</code>: system-level Pearson r of per-system means and segment-level Kendall "
            "tau-like per input over its systems, averaged over inputs (Lai et al. 2022's conventions; lower-is-better "
            "metrics negated). Segments judged: "
            + html.escape(", ".join(f"{a}: {n}" for a, n in corr.get("n_segments", {}).items())) + ".</p>"
            + f"<p class=\"excluded\">{html.escape(_excluded_text(corr))}</p>"
            + f"<table class=\"human\">{head}{body}</table>")
    if corr.get("notes"):
        text += "<ul class=\"notes\">" + "".join(f"<li>{html.escape(n)}</li>" for n in corr["notes"]) + "</ul>"
    tasks = corr.get("tasks", {})
    text += "<details><summary>tasks</summary><ul>" + "".join(
        f"<li><code>{html.escape(name)}</code></li>" for level in ("system", "segment")
        for name in tasks.get(level, {}).values()) + "</ul></details>"
    figures = [(f"Correlation with human judgments ({LEVEL_LABELS[level]})",
                plots.correlation_heatmap({m: {a: corr[level][m][a] for a in corr["aspects"]}
                                           for m in corr["metrics"]}, title=LEVEL_LABELS[level]))
               for level in ("system", "segment")]
    if any(corr.get("curves", {}).values()):
        figures.append(("Top-N / last-N system-level correlation (systems sorted by human score)",
                        plots.top_n_curves_plot(corr["curves"])))
    return text, figures


#: the page's own script and style sheets, shipped beside this module
_STATIC = Path(__file__).with_name("static")


def _static(name: str) -> str:
    return (_STATIC / name).read_text(encoding="utf-8")


def _csp_hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii") + "'"


def content_security_policy(scripts: Sequence[str], styles: Sequence[str]) -> str:
    """Nothing is allowed but the page's own inline scripts and style sheets (by hash) and its embedded images:
    no network, no other script, no plugin, no form target."""
    return ("default-src 'none'; img-src data:; " + "style-src " + " ".join(_csp_hash(s) for s in styles) + "; "
            + "script-src " + " ".join(_csp_hash(s) for s in scripts) + "; base-uri 'none'; form-action 'none'")


Figure = tuple[str, bytes, "str | None", "list[dict[str, Any]]"]  # caption, PNG, element id, clickable points


def _figures(data: Mapping[str, Any]) -> list[Figure]:
    """``(caption, png, element id, clickable points)``: the trade-off plot (a point per system) and the segment
    score distributions (a point per box plot outlier) open their segments in the explorer."""
    marks: list[plots.Mark] = []
    figs: list[Figure] = []
    roles = data.get("roles", {})
    if roles.get("style") and roles.get("content"):  # a score run may have no style or no content metric
        png, points = plots.png_and_points(plots.tradeoff_figure(data, marks=marks), marks)
        figs.append(("Style–content trade-off", png, "fig-tradeoff", points))
    if plots.naturalness_points(data) is not None and plots.intensity_metric(data):
        figs.append(("Naturalness–style intensity trade-off", plots.naturalness_plot(data), None, []))
    metrics = [m for aspect in TABLE_ASPECTS for m in data["aspects"].get(aspect, [])]
    marks = []
    png, points = plots.png_and_points(plots.distribution_figure(data, metrics, marks=marks), marks)
    figs.append(("Segment score distributions", png, "fig-distribution", points))
    return figs


def _segment_humans(corr: Mapping[str, Any] | None) -> "dict[str, Any] | None":
    return None if corr is None else corr.get("segment_means")


_EXPLORER_CONTROLS = """<div class="controls">
<label>view<select id="sv-view"><option value="all">all inputs</option>
<option value="diff">two systems: where they differ most</option>
<option value="disagree">metrics disagree</option></select></label>
<label>system<select id="sv-system"></select></label>
<label>direction<select id="sv-dir"></select></label>
<label>decision<select id="sv-decision"></select></label>
<label>text<input id="sv-text" type="search" placeholder="search (press /)"></label>
</div><div class="controls">
<label>sort by<select id="sv-sort"></select></label>
<label>of<select id="sv-sortsys"></select></label>
<label>order<select id="sv-order"><option value="worst">worst first</option><option value="best">best first
</option></select></label>
<label>min<input id="sv-min" type="number" step="any" size="6"></label>
<label>max<input id="sv-max" type="number" step="any" size="6"></label>
</div>
<div class="box" id="sv-diffbox" hidden><label>system A<select id="sv-a"></select></label>
<label>system B<select id="sv-b"></select></label><label>on<select id="sv-dm"></select></label></div>
<div class="box" id="sv-disbox" hidden><label>metric 1<select id="sv-m1"></select></label>
<label>metric 2<select id="sv-m2"></select></label></div>
<p><button type="button" id="sv-prev">◀ previous</button> <button type="button" id="sv-next">next ▶</button>
<button type="button" id="sv-clear" hidden>show every input</button> <span id="sv-count" role="status"></span></p>
<p class="active"><span id="sv-active"></span> <button type="button" id="sv-reset" hidden>reset all filters</button></p>
<div class="tablewrap"><table class="segments" id="sv-table"><thead id="sv-head"></thead></table></div></section>"""


def _explorer_html(payload: Mapping[str, Any]) -> str:
    sample = payload.get("sample")
    notes = ""
    if sample:
        notes += f"<p class=\"sample-note\">{html.escape(sample['note'])}</p>"
    if not payload.get("has_texts"):
        notes += ("<p class=\"sample-note\">This evaluation file holds no texts (written before texts were kept): "
                  "the explorer shows the segment scores by id only.</p>")
    return ("<section id=\"explorer\"><h2>Segment explorer</h2><p>Every input with its source, references, each "
            "system's output (insertions against the source <ins>underlined</ins>, deletions <del>struck</del>) "
            "and each metric's segment score, coloured by aspect (a bar: the share of the metric's segments it beats). "
            "Sort and filter by metric, system, direction, decision or text; compare two systems; find the inputs "
            "where two metrics (or a metric and the humans) order the systems oppositely; click a point of the "
            "plots above to open its segments. Keys: <kbd>/</kbd> search, <kbd>[</kbd> <kbd>]</kbd> pages.</p>"
            + notes + _EXPLORER_CONTROLS)


def render_html(evaluation: "Evaluation | Mapping[str, Any]", *, title: str = "styleval evaluation",
                correlations: "Mapping[str, Mapping[str, float]] | None" = None, human: HumanInput = None,
                exclude_systems: "Sequence[str]" = (), max_outputs: int = MAX_OUTPUTS) -> str:
    """The whole report as one HTML document. ``correlations``: optional metric × human-aspect table
    (e.g. from ``styleval.meta``), drawn as a heatmap. ``human``: judgments (a :class:`~styleval.meta.Judgments`,
    a judgments file, or :func:`human_correlations` output) for the section "Agreement with human judgments" and
    the human scores in the explorer; ``exclude_systems``: systems left out of those correlations (see
    :func:`human_correlations`); ``max_outputs``: the explorer's budget (:mod:`.explorer`)."""
    data = report_data(evaluation)
    corr = None if human is None else _human_data(data, human, exclude_systems)
    systems = systems_of(data)
    headings = system_headings(data)
    confidence = data["score"]["settings"].get("confidence", 0.95)
    figures = _figures(data)
    payload = explorer_payload(data, _segment_humans(corr), max_outputs=max_outputs,
                               seed=int(data["score"]["settings"].get("seed") or 0),
                               figures=[{"img": fid, "points": pts} for _, _, fid, pts in figures if fid])
    note = case_note(data)
    perplexities = set(perplexity_labels(data)) if note else set()
    for metric in payload["metrics"]:
        if metric["key"] in perplexities:
            metric["note"] = note
    script, css, explorer_css = _static("explorer.js"), CSS, _static("explorer.css")
    csp = content_security_policy([script], [css, explorer_css])
    parts = [f"<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
             f"<meta http-equiv=\"Content-Security-Policy\" content=\"{html.escape(csp, quote=False)}\">"
             "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
             f"<title>{html.escape(title)}</title><style>{css}</style><style>{explorer_css}</style></head><body>"
             f"<h1>{html.escape(title)}</h1>", run_html(data)]
    settings = data["settings"]
    anchor = anchor_of(data)
    shown = ", ".join(s for s in systems if s != anchor)
    if anchor in systems:
        shown += f" and the anchor row {anchor}"
    parts.append(f"<p>Direction(s): {html.escape(', '.join(settings.get('directions', [])))}; systems: "
                 f"{html.escape(shown)}; "
                 f"{html.escape(settings.get('size') or str(settings.get('n_records', '?')) + ' records')}"
                 f"{'; fast mode' if settings.get('fast') else ''}.</p>")
    parts.append(summary_html(data))
    for aspect in ASPECTS:
        rows = aspect_rows(data, aspect)
        if rows:
            parts.append(f"<h2>{aspect.capitalize()}</h2>" + _html_table(rows, systems, headings, confidence,
                                                                          marked=perplexities))
            if note and any(r["metric"] in perplexities for r in rows):
                parts.append(f"<p class=\"case-note\">† {html.escape(note)}</p>")
    overall = aspect_rows(data, "overall") + overall_rows(data)
    if overall:
        parts.append("<h2>Overall</h2>" + _html_table(overall, systems, headings, confidence))
    parts.append("<p class=\"legend\">" + "<br>".join(html.escape(line) for line in legend(data).splitlines())
                 + "</p>")
    extra: list[Figure] = []
    if correlations:
        extra.append(("Correlation with human judgments", plots.correlation_heatmap(correlations), None, []))
    for caption, png, fid, points in figures + extra:
        parts.append(_figure_html(caption, png, element_id=fid, clickable=bool(points),
                                  bars=any("equals" in p for p in points)))
    parts.append(_explorer_html(payload))
    if corr is not None:
        text, human_figures = _human_html(corr)
        parts.append("<h2 id=\"human\">Agreement with human judgments</h2>" + text)
        for caption, png in human_figures:
            parts.append(_figure_html(caption, png, level=3))
    parts.append("<details class=\"rationale\"><summary><h2>Why these metrics</h2></summary><ul>"
                 + "".join(f"<li>{html.escape(line)}</li>" for line in data["rationale"]) + "</ul></details>")
    parts.append("<details class=\"signatures\"><summary><h2>Signatures</h2></summary><ul>"
                 + "".join(f"<li><b>{html.escape(m)}</b>: <code>{html.escape(s)}</code></li>"
                           for m, s in signature_rows(data))
                 + "</ul></details>")
    parts.append(f"<script type=\"application/json\" id=\"sv-data\">{payload_json(payload)}</script>"
                 f"<script>{script}</script></body></html>")
    return "\n".join(parts)


def _figure_html(caption: str, png: bytes, level: int = 2, element_id: str | None = None,
                 clickable: bool = False, bars: bool = False) -> str:
    ident = f" id=\"{element_id}\"" if element_id else ""
    points = (f"<details><summary>open the segments behind a point</summary><div class=\"points\" "
              f"id=\"{element_id}-points\"></div></details>") if clickable and element_id else ""
    hint = (" Click a point to open its segments in the explorer" + (
        "; a bar of a 0/1 metric opens the system's segments scored 1, the space above it those scored 0"
        if bars else "") + ".") if clickable else ""
    return (f"<h{level}>{html.escape(caption)}</h{level}><figure><img{ident} alt=\"{html.escape(caption)}\" "
            f"src=\"{plots.data_uri(png)}\"><figcaption>{html.escape(caption)}.{hint}</figcaption></figure>{points}")


def _md_escape(text: str) -> str:
    return str(text).replace("|", "\\|")


def render_markdown(evaluation: "Evaluation | Mapping[str, Any]", *, title: str = "styleval evaluation",
                    human: HumanInput = None, exclude_systems: "Sequence[str]" = ()) -> str:
    """The report's tables, legend, rationale and signatures as Markdown (no figures); with ``human`` (see
    :func:`render_html`) also the table of correlations with the human judgments."""
    data = report_data(evaluation)
    corr = None if human is None else _human_data(data, human, exclude_systems)
    systems = systems_of(data)
    headings = system_headings(data)
    out = [f"# {title}", ""]

    def table(rows: list[dict[str, Any]]) -> list[str]:
        lines = ["| metric | " + " | ".join(_md_escape(headings[s]) for s in systems) + " |",
                 "|---|" + "---:|" * len(systems)]
        for r in rows:
            lines.append(f"| {_md_escape(r['metric'])} {'↑' if r['higher_is_better'] else '↓'} | "
                         + " | ".join(_md_escape(r["cells"][s]["text"]) for s in systems) + " |")
        return lines + [""]

    for aspect in ASPECTS:
        rows = aspect_rows(data, aspect)
        if rows:
            out += [f"## {aspect.capitalize()}", ""] + table(rows)
    overall = aspect_rows(data, "overall") + overall_rows(data)
    if overall:
        out += ["## Overall", ""] + table(overall)
    out += [legend(data).replace("\n", "\n\n"), ""]
    if corr is not None:
        cols = _human_columns(corr)
        negated = set(corr.get("negated", []))
        out += ["## Agreement with human judgments", "", _md_escape(_excluded_text(corr)), "",
                "| metric | " + " | ".join(f"{_md_escape(a)}: {LEVEL_LABELS[lv]}" for a, lv in cols) + " |",
                "|---|" + "---:|" * len(cols)]
        out += [f"| {_md_escape(m + (' (negated)' if m in negated else ''))} | "
                + " | ".join(_corr_text(corr[lv][m].get(a)) for a, lv in cols) + " |" for m in corr["metrics"]]
        out += [""] + [f"- {_md_escape(n)}" for n in corr.get("notes", [])] + [""]
    out += ["## Why these metrics", ""]
    out += [f"- {line}" for line in data["rationale"]] + ["", "## Signatures", ""]
    out += [f"- **{m}**: `{s}`" for m, s in signature_rows(data)]
    return "\n".join(out) + "\n"


def write_report(evaluation: "Evaluation | Mapping[str, Any]", *, html: str | Path | None = None,
                 markdown: str | Path | None = None, title: str = "styleval evaluation",
                 human: HumanInput = None, exclude_systems: "Sequence[str]" = ()) -> list[Path]:
    """Write the HTML and/or Markdown report; returns the paths written. ``human``, ``exclude_systems``: see
    :func:`render_html` (the correlations are computed once for both files)."""
    written = []
    data = report_data(evaluation)
    corr = None if human is None else _human_data(data, human, exclude_systems)
    if html:
        write_text(html, render_html(data, title=title, human=corr))
        written.append(Path(html))
    if markdown:
        write_text(markdown, render_markdown(data, title=title, human=corr))
        written.append(Path(markdown))
    return written
