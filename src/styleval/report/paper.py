"""Tables for a paper from an evaluation or a score run: LaTeX (booktabs) and Markdown.

One table holds every metric of the run (grouped by aspect, evaluate's HM, GM and J under "Overall"), laid out
with one column per system (``columns="systems"``, metrics as rows) or one column per metric
(``columns="metrics"``, systems as rows, metrics grouped under their aspect). A cell is the score with its
interval's half-width, printed by the one rule of every styleval table (:func:`estimate_parts`: ``0.830 ±0.041``),
and its significance mark:

* ``marks="letters"``: with all pairs tested, the letters of the systems it is significantly better than (each
  system's letter follows its name); against a baseline (``--baseline``), † significantly better than the baseline
  and ‡ significantly worse;
* ``marks="daggers"``: † a system significantly better than every other system (all pairs) or than the baseline,
  ‡ significantly worse than the baseline;
* ``marks="none"``.

The best score of each metric (in its direction: every metric name carries ↑ or ↓) is in bold, every system whose
printed score equals it included; the anchor row of the human references (``evaluate``'s ``human-reference``) is
never bold. The caption says what ± and the marks are (confidence, resamples, seed, test, p threshold); the
signatures follow as a separate block after the table (``signatures="block"``, the default: it may run onto
the next page) or a footnote inside the float (``"footnote"``: for a few metrics; many long signatures make the
float taller than a page), or are left out (``"none"``). The LaTeX needs only ``\\usepackage{booktabs}``.
"""
from __future__ import annotations

import re
from typing import Any, Mapping, Sequence

from ..errors import InputError
from ..evaluation.summary import (ASPECTS, aspect_rows, estimate_parts, overall_rows, signature_rows, system_letters,
                                  systems_of)
from .score_view import report_data
from .tables import latex_escape

COLUMNS = ("systems", "metrics")
MARKS = ("letters", "daggers", "none")
SIGNATURES = ("footnote", "block", "none")
#: the marks against a baseline, and of a system better than every other one with marks="daggers"
BETTER, WORSE = "†", "‡"
_LETTER = re.compile(r"[a-z]\d*")
#: characters LaTeX's default fonts print wrongly or not at all, beyond those :func:`latex_escape` handles
_TEX_EXTRA = {"|": r"$|$", "<": r"$<$", ">": r"$>$", "·": r"$\cdot$", "–": "--",
              "—": "---", "×": r"$\times$", "≥": r"$\geq$", "≤": r"$\leq$", "†": r"\dag{}", "‡": r"\ddag{}"}


def _tex(text: str) -> str:
    return "".join(_TEX_EXTRA.get(ch) or latex_escape(ch) for ch in str(text))


def _check(columns: str, marks: str, signatures: str) -> None:
    for name, value, allowed in (("columns", columns, COLUMNS), ("marks", marks, MARKS),
                                 ("signatures", signatures, SIGNATURES)):
        if value not in allowed:
            raise InputError(f"paper table: {name} must be one of {', '.join(allowed)}, not {value!r}")


def _groups(data: Mapping[str, Any]) -> list[tuple[str, list[dict[str, Any]]]]:
    """``(aspect title, rows)`` with rows as :func:`aspect_rows` gives them; empty aspects left out."""
    groups = [(aspect.capitalize(), aspect_rows(data, aspect)) for aspect in ASPECTS]
    groups.append(("Overall", aspect_rows(data, "overall") + overall_rows(data)))
    return [(title, rows) for title, rows in groups if rows]


def _baseline(data: Mapping[str, Any]) -> str | None:
    return data["score"]["settings"].get("baseline") or None


def _mark(cell: Mapping[str, Any], system: str, data: Mapping[str, Any], marks: str, anchor: str | None) -> str:
    """The cell's mark in the chosen style (see the module docstring)."""
    raw = cell.get("marks") or ""
    if marks == "none" or not raw:
        return ""
    if raw in ("▲", "▼"):  # against the baseline
        return BETTER if raw == "▲" else WORSE
    beaten = set(_LETTER.findall(raw.lstrip("^")))
    if marks == "letters":
        return "".join(sorted(beaten, key=lambda x: (len(x), x)))
    systems = systems_of(data)
    letters = system_letters(systems)
    others = {letters[s] for s in systems if s not in (system, anchor)}
    return BETTER if others and others <= beaten else ""


def _cells(row: Mapping[str, Any], systems: Sequence[str], data: Mapping[str, Any], marks: str,
           intervals: bool) -> dict[str, dict[str, Any]]:
    """Per system: ``value`` (printed score), ``half`` (``±…`` or None), ``mark``, ``unrated`` and ``best``."""
    anchor = data.get("settings", {}).get("anchor")
    out: dict[str, dict[str, Any]] = {}
    for s in systems:
        cell = row["cells"][s]
        if cell["score"] is None:
            out[s] = {"value": None, "half": None, "mark": "", "unrated": "", "best": False}
            continue
        value, half = estimate_parts(cell["score"], cell.get("ci"))
        out[s] = {"value": value, "half": half if intervals else None, "mark": _mark(cell, s, data, marks, anchor),
                  "unrated": cell.get("unrated") or "", "best": False}
    scored = [s for s in systems if s != anchor and row["cells"][s]["score"] is not None
              and row["cells"][s]["score"] == row["cells"][s]["score"]]
    if len(scored) > 1:
        sign = 1 if row["higher_is_better"] else -1
        top = max(scored, key=lambda s: sign * row["cells"][s]["score"])
        for s in scored:
            out[s]["best"] = out[s]["value"] == out[top]["value"]
    return out


def _legend(data: Mapping[str, Any], marks: str, intervals: bool) -> list[str]:
    """The sentences under (or in the caption of) a table: what ±, the marks and bold mean."""
    settings = data["score"]["settings"]
    lines = []
    if intervals and settings.get("bootstrap"):
        overall = any(o.get("ci") for o in data.get("overall", []))
        lines.append(f"± half-width of the {settings.get('confidence', 0.95):.0%} bootstrap interval "
                     f"({settings['bootstrap']} resamples, seed {settings.get('seed')}"
                     + ("; HM, GM and J: segments resampled jointly" if overall else "") + ").")
    method = settings.get("significance")
    if marks != "none" and method not in (None, "none"):
        baseline = _baseline(data)
        test = f"{method}, p < 0.05"
        if baseline:
            lines.append(f"{BETTER}/{WORSE}: significantly better/worse than the baseline {baseline} ({test}).")
        elif marks == "letters":
            lines.append(f"Superscript letters: significantly better than the systems with those letters ({test}).")
        else:
            lines.append(f"{BETTER}: significantly better than every other system ({test}).")
    lines.append("Bold: the best score of each metric (↑ higher is better, ↓ lower is better).")
    anchor = data.get("settings", {}).get("anchor")
    if anchor:
        lines.append(f"{anchor}: each input's first human reference scored against the others (an anchor, not a "
                     "system; never bold).")
    return lines


def _heading(system: str, data: Mapping[str, Any], marks: str) -> str:
    letters = system_letters(systems_of(data))
    anchor = data.get("settings", {}).get("anchor")
    lettered = marks == "letters" and not _baseline(data) and bool(data["score"].get("comparisons")
                                                                  or data.get("overall_comparisons"))
    extra = [letters[system]] if lettered else []
    if system == anchor:
        extra.append("anchor")
    return f"{system} ({', '.join(extra)})" if extra else system


def _metric_label(row: Mapping[str, Any]) -> str:
    return f"{row['metric']} {'↑' if row['higher_is_better'] else '↓'}"


# ------------------------------------------------------------------------------------------------------ LaTeX
def _latex_cell(cell: Mapping[str, Any]) -> str:
    if cell["value"] is None:
        return "--"
    value = _tex(cell["value"])
    text = f"\\textbf{{{value}}}" if cell["best"] else value
    if cell["half"]:
        text += f"{{\\scriptsize\\,$\\pm${_tex(cell['half'].lstrip('±'))}}}"
    if cell["unrated"]:
        text += f" {{\\scriptsize {_tex(cell['unrated'])}}}"
    if cell["mark"]:
        text += f"\\textsuperscript{{{_tex(cell['mark'])}}}"
    return text


def _breakable(signature: str) -> str:
    """A signature in typewriter type that may break after its separators (a signature has no spaces); ``|``, ``<``
    and ``>`` are the typewriter font's own glyphs."""
    return "".join((ch if ch in "|<>" else _tex(ch)) + ("\\allowbreak{}" if ch in "|,;:/=" else "")
                   for ch in signature)


def _latex_signatures(data: Mapping[str, Any]) -> list[str]:
    return [f"\\texttt{{{_tex(label)}}}: \\texttt{{{_breakable(sig)}}}" for label, sig in signature_rows(data)]


def latex_paper_table(source: Any, *, columns: str = "systems", marks: str = "letters",
                      signatures: str = "block", intervals: bool = True, caption: str | None = None,
                      label: str | None = "tab:styleval") -> str:
    """The run's scores as a LaTeX ``table`` with a booktabs ``tabular`` (see the module docstring). ``source``:
    an :class:`~styleval.evaluation.Evaluation`, a :class:`~styleval.results.ScoreResult` or either's JSON form;
    ``caption``: the caption's first sentence (the legend follows it); ``label``: the ``\\label`` (None: none)."""
    _check(columns, marks, signatures)
    data = report_data(source)
    systems = systems_of(data)
    groups = _groups(data)
    legend = " ".join(_legend(data, marks, intervals))
    cap = (caption.rstrip(".") + ". " if caption else "") + legend
    lines = [r"\begin{table}[t]", r"\centering", r"\small", r"\setlength{\tabcolsep}{4pt}"]
    if columns == "systems":
        lines += [f"\\begin{{tabular}}{{l{'r' * len(systems)}}}", r"\toprule",
                  " & ".join(["Metric"] + [_tex(_heading(s, data, marks)) for s in systems]) + r" \\"]
        for title, rows in groups:
            lines.append(r"\midrule")
            lines.append(f"\\multicolumn{{{len(systems) + 1}}}{{l}}{{\\textit{{{_tex(title)}}}}} \\\\")
            for row in rows:
                cells = _cells(row, systems, data, marks, intervals)
                lines.append(" & ".join([_tex(_metric_label(row))] + [_latex_cell(cells[s]) for s in systems])
                             + r" \\")
    else:
        flat = [row for _, rows in groups for row in rows]
        per_row = [_cells(row, systems, data, marks, intervals) for row in flat]
        lines += [f"\\begin{{tabular}}{{l{'r' * len(flat)}}}", r"\toprule"]
        spans, rules, start = [""], [], 2
        for title, rows in groups:
            spans.append(f"\\multicolumn{{{len(rows)}}}{{c}}{{{_tex(title)}}}")
            rules.append(f"\\cmidrule(lr){{{start}-{start + len(rows) - 1}}}")
            start += len(rows)
        lines += [" & ".join(spans) + r" \\", " ".join(rules),
                  " & ".join(["System"] + [_tex(_metric_label(row)) for row in flat]) + r" \\", r"\midrule"]
        for s in systems:
            lines.append(" & ".join([_tex(_heading(s, data, marks))] + [_latex_cell(c[s]) for c in per_row])
                         + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    if signatures == "footnote":
        lines += [r"\par\smallskip", r"\parbox{\linewidth}{\raggedright\footnotesize Signatures: "
                  + "; ".join(_latex_signatures(data)) + "}"]
    lines.append(f"\\caption{{{_tex(cap)}}}")
    if label:
        lines.append(f"\\label{{{label}}}")
    lines.append(r"\end{table}")
    if signatures == "block":
        intro = f"Signatures of the scores in Table~\\ref{{{label}}}:" if label else "Signatures:"
        lines += ["", r"\begin{flushleft}\footnotesize", intro, r"\begin{itemize}"]
        lines += [f"\\item {s}" for s in _latex_signatures(data)]
        lines += [r"\end{itemize}", r"\end{flushleft}"]
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------------------------------- Markdown
def _md(text: str) -> str:
    return str(text).replace("|", "\\|")


def _md_cell(cell: Mapping[str, Any]) -> str:
    if cell["value"] is None:
        return "–"
    text = f"**{cell['value']}**" if cell["best"] else cell["value"]
    if cell["half"]:
        text += f" {cell['half']}"
    if cell["unrated"]:
        text += f" {cell['unrated']}"
    if cell["mark"]:
        text += f"<sup>{cell['mark']}</sup>"
    return _md(text)


def markdown_paper_table(source: Any, *, columns: str = "systems", marks: str = "letters",
                         signatures: str = "block", intervals: bool = True, caption: str | None = None) -> str:
    """The table of :func:`latex_paper_table` in Markdown (GitHub's dialect: ``<sup>`` marks, ``[^n]`` footnotes):
    the caption, the table, the legend, and the signatures as footnotes of the metric names or a list after it."""
    _check(columns, marks, signatures)
    data = report_data(source)
    systems = systems_of(data)
    groups = _groups(data)
    sigs = signature_rows(data)
    in_rows = {row["metric"] for _, rows in groups for row in rows}
    note = {label: k + 1 for k, label in enumerate(label for label, _ in sigs if label in in_rows)} \
        if signatures == "footnote" else {}

    def name(row: Mapping[str, Any]) -> str:
        return _md(_metric_label(row)) + (f"[^{note[row['metric']]}]" if row["metric"] in note else "")

    out = [f"**{_md(caption.rstrip('.'))}.**", ""] if caption else []
    if columns == "systems":
        out += ["| metric | " + " | ".join(_md(_heading(s, data, marks)) for s in systems) + " |",
                "|---|" + "---:|" * len(systems)]
        for title, rows in groups:
            out.append(f"| *{_md(title)}* |" + " |" * len(systems))
            for row in rows:
                cells = _cells(row, systems, data, marks, intervals)
                out.append(f"| {name(row)} | " + " | ".join(_md_cell(cells[s]) for s in systems) + " |")
    else:
        flat = [(title, row) for title, rows in groups for row in rows]
        per_row = [_cells(row, systems, data, marks, intervals) for _, row in flat]
        out += ["| system | " + " | ".join(f"{_md(title.lower())}: {name(row)}" for title, row in flat) + " |",
                "|---|" + "---:|" * len(flat)]
        for s in systems:
            out.append(f"| {_md(_heading(s, data, marks))} | " + " | ".join(_md_cell(c[s]) for c in per_row) + " |")
    out += [""] + [" ".join(_legend(data, marks, intervals)), ""]
    if signatures == "footnote":
        out += [f"[^{note[label]}]: `{sig}`" for label, sig in sigs if label in note]
        rest = [(label, sig) for label, sig in sigs if label not in note]  # the anchor's own signatures
        out += [f"- `{label}`: `{sig}`" for label, sig in rest]
        out.append("")
    elif signatures == "block":
        out += ["Signatures:", ""] + [f"- `{label}`: `{sig}`" for label, sig in sigs] + [""]
    return "\n".join(out)
