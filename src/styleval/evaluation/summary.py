"""Per-aspect tables of an evaluation, shared by the terminal output and the HTML/Markdown report.

Everything here reads the JSON form of an evaluation (``Evaluation.to_dict()`` or ``evaluate --json``), so a
report written from a file shows the same numbers as one written from the Evaluation object. A score with an
interval is printed by :func:`estimate` (``57.31 ±2.8``), as ``styleval score`` prints it; one without, ``.4g``.
"""
from __future__ import annotations

import math
import string
from typing import Any, Mapping, Sequence

from ..results import unrated_note

ASPECTS = ("style", "content", "fluency")
#: the aspects whose metrics have table rows: those of :data:`ASPECTS`, then metrics that declare the overall aspect
#: (a ``styleval score`` run's ``-m j``; evaluate's HM, GM and J are not metrics, see :func:`overall_rows`)
TABLE_ASPECTS = ASPECTS + ("overall",)
OVERALL_NAMES = {"hm": "HM(style acc., content)", "gm": "GM(style acc., content)", "j": "J (STA·SIM·FL)"}


def fmt(value: float | None) -> str:
    """A score as ``styleval score`` prints it (``.4g``); ``nan`` for a missing value."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "nan"
    return f"{value:.4g}"


#: significant digits of an interval's half-width; the score is rounded to the same decimal place
HALF_WIDTH_DIGITS = 2
#: a metric's display precision: this many significant digits of the score's magnitude (``.4g``, as :func:`fmt`
#: prints a score without an interval); an interval narrower than that is shown at that precision, never finer
SCORE_DIGITS = 4


def _finite(value: float | None) -> bool:
    return value is not None and not math.isnan(value) and not math.isinf(value)


def display_decimals(value: float | None, ci: Sequence[float] | None = None) -> int | None:
    """Decimal places of the metric's display precision for ``value``: :data:`SCORE_DIGITS` significant digits of
    the largest magnitude among the score and its bounds (3 for a score near 1, 1 for a BLEU of 35); None when
    there is no finite, non-zero magnitude."""
    magnitudes = [abs(v) for v in [value, *(ci or ())] if v is not None and _finite(v) and v != 0]
    if not magnitudes:
        return None
    return max(0, SCORE_DIGITS - 1 - math.floor(math.log10(max(magnitudes))))


def estimate_decimals(ci: Sequence[float] | None, value: float | None = None) -> int | None:
    """Decimal places that show the half-width of ``ci`` to :data:`HALF_WIDTH_DIGITS` significant digits (0 for a
    half-width of 10 or more), but no more than the display precision of the score (:func:`display_decimals`, from
    ``value`` and the bounds); None without a usable interval (none, not finite, or zero width)."""
    if not ci or not (_finite(ci[0]) and _finite(ci[1])):
        return None
    half = abs(ci[1] - ci[0]) / 2
    if half == 0:
        return None
    rounded = float(f"{half:.{HALF_WIDTH_DIGITS}g}")  # 9.96 -> 10: one digit fewer after the point
    decimals = max(0, HALF_WIDTH_DIGITS - 1 - math.floor(math.log10(rounded)))
    cap = display_decimals(value, ci)
    return decimals if cap is None else min(decimals, cap)


def _fixed(value: float, decimals: int) -> str:
    text = f"{value:.{decimals}f}"
    return text[1:] if text.startswith("-") and not text.strip("-0.") else text  # no "-0.0"


def estimate_parts(value: float | None, ci: Sequence[float] | None) -> tuple[str, str | None]:
    """The score and the ``±half-width`` of :func:`estimate` apart (the second None without an interval)."""
    if value is None or not _finite(value):
        return fmt(value), None
    if ci and _finite(ci[0]) and _finite(ci[1]) and ci[0] == ci[1]:
        return fmt(value), "±0"
    decimals = estimate_decimals(ci, value)
    if decimals is None or ci is None:
        return fmt(value), None
    return _fixed(value, decimals), f"±{_fixed(abs(ci[1] - ci[0]) / 2, decimals)}"


def bounds_text(value: float | None, ci: Sequence[float]) -> tuple[str, str]:
    """An interval's bounds at the decimals of :func:`estimate` (``.4g`` without usable decimals)."""
    decimals = estimate_decimals(ci, value)
    return tuple(fmt(b) if decimals is None else _fixed(b, decimals) for b in ci[:2])  # type: ignore[return-value]


def estimate(value: float | None, ci: Sequence[float] | None) -> str:
    """A score and its interval as every table prints them: ``57.31 ±2.8``, ``35.70 ±3.0``, ``0.830 ±0.041``.

    The half-width of the interval, ``(high - low) / 2``, keeps :data:`HALF_WIDTH_DIGITS` significant digits
    and the score is rounded to the same decimal place (trailing zeros kept), so the digits shown are the ones the
    interval supports; an interval narrower than the score's display precision (:func:`display_decimals`, four
    significant digits) prints at that precision (``1.000 ±0.000``, not ``1.000000062 ±0.000000022``). A
    zero-width interval is ``±0``; without an interval the score is printed ``.4g``."""
    text, half = estimate_parts(value, ci)
    return text if half is None else f"{text} {half}"


def system_letters(systems: list[str]) -> dict[str, str]:
    """One letter per system (a, b, ...; then a1, b1, ... after z), used by significance marks."""
    letters = string.ascii_lowercase
    return {s: letters[i % 26] + ("" if i < 26 else str(i // 26)) for i, s in enumerate(systems)}


def beaten_letters(comparisons: Any, letters: Mapping[str, str], metric: str, system: str, higher_is_better: bool,
                   alpha: float = 0.05) -> str:
    """Letters of the systems that ``system`` is significantly better than on ``metric`` among ``comparisons``
    (dicts with metric, system, baseline, delta = system - baseline, p_value)."""
    beaten = []
    for comp in comparisons:
        if comp["metric"] != metric or comp["p_value"] is None or comp["p_value"] >= alpha:
            continue
        delta = comp["delta"] if higher_is_better else -comp["delta"]  # delta = system - baseline
        if comp["system"] == system and delta > 0:
            beaten.append(comp["baseline"])
        elif comp["baseline"] == system and delta < 0:
            beaten.append(comp["system"])
    return "".join(sorted(letters[s] for s in set(beaten) if s in letters))


#: the marks of a cell tested against a baseline: significantly better, significantly worse (see ``markers_legend``)
BETTER, WORSE = "▲", "▼"


def baseline_mark(comparisons: Any, metric: str, system: str, higher_is_better: bool, alpha: float = 0.05) -> str:
    """``▲`` when ``system`` is significantly better than the baseline it was tested against on ``metric``, ``▼``
    when significantly worse (better: higher, or lower for a lower-is-better metric), else ``""``."""
    for comp in comparisons:
        if comp["metric"] != metric or comp["system"] != system:
            continue
        if comp["p_value"] is None or comp["p_value"] >= alpha or not comp["delta"]:
            return ""
        better = comp["delta"] > 0 if higher_is_better else comp["delta"] < 0  # delta = system - baseline
        return BETTER if better else WORSE
    return ""


def significance_mark(comparisons: Any, letters: Mapping[str, str], metric: str, system: str,
                      higher_is_better: bool, baseline: str | None, alpha: float = 0.05) -> str:
    """The mark of one cell: against a ``baseline``, :func:`baseline_mark`; all pairs, ``^`` and the letters of the
    systems ``system`` is significantly better than (:func:`beaten_letters`); ``""`` when there is nothing to mark."""
    if baseline:
        return baseline_mark(comparisons, metric, system, higher_is_better, alpha)
    beaten = beaten_letters(comparisons, letters, metric, system, higher_is_better, alpha)
    return f"^{beaten}" if beaten else ""


def markers_legend(method: str, baseline: str | None, alpha: float = 0.05) -> str:
    """One legend for both kinds of mark, the kind in use first: ``▲``/``▼`` against a baseline, ``^letters``
    for all pairs."""
    arrows = (f"▲/▼: significantly better/worse than the baseline {baseline!r}" if baseline else
              "▲/▼ (with --baseline): significantly better/worse than the baseline")
    letters = ("^ac: significantly better than the systems in columns a and c" if not baseline
               else "^ac (all pairs, without --baseline): significantly better than the systems in columns a and c")
    first, second = (arrows, letters) if baseline else (letters, arrows)
    return f"{first}; {second}; p < {alpha:g} ({method}); better: higher for ↑ metrics, lower for ↓"


def significance_letters(data: Mapping[str, Any], metric: str, system: str, alpha: float = 0.05) -> str:
    """Letters of the systems that ``system`` is significantly better than on ``metric`` (p < alpha)."""
    score = data["score"]
    hib = next((c["higher_is_better"] for c in score["corpus"] if c["metric"] == metric), True)
    return beaten_letters(score.get("comparisons", []), system_letters(systems_of(data)), metric, system, hib, alpha)


def cell_mark(data: Mapping[str, Any], metric: str, system: str, alpha: float = 0.05) -> str:
    """The significance mark of ``system`` on ``metric`` (:func:`significance_mark`)."""
    score = data["score"]
    hib = next((c["higher_is_better"] for c in score["corpus"] if c["metric"] == metric), True)
    return significance_mark(score.get("comparisons", []), system_letters(systems_of(data)), metric, system, hib,
                             score["settings"].get("baseline"), alpha)


def overall_mark(data: Mapping[str, Any], name: str, system: str, alpha: float = 0.05) -> str:
    """The significance mark of ``system`` on overall score ``name`` (higher is better)."""
    return significance_mark(data.get("overall_comparisons", []), system_letters(systems_of(data)), name, system,
                             True, data["score"]["settings"].get("baseline"), alpha)


def _corpus(data: Mapping[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(c["metric"], c["system"]): c for c in data["score"]["corpus"]}


def systems_of(data: Mapping[str, Any]) -> list[str]:
    score = data["score"]
    return list(score["settings"].get("systems") or dict.fromkeys(c["system"] for c in score["corpus"]))


def anchor_of(data: Mapping[str, Any]) -> str | None:
    """The anchor row of the human references (``evaluate``'s ``anchor``), or None without one."""
    return data.get("settings", {}).get("anchor") or None


def signature_rows(data: Mapping[str, Any]) -> list[tuple[str, str]]:
    """``(label, signature)`` per metric: the signature of its first system, then, labelled ``metric (systems)``,
    each other signature some systems have (the anchor row's, whose reference-based scores use one reference
    fewer: nrefs)."""
    by_metric: dict[str, dict[str, list[str]]] = {}
    for c in data["score"]["corpus"]:
        by_metric.setdefault(c["metric"], {}).setdefault(c["signature_string"], []).append(c["system"])
    rows = []
    for metric, signatures in by_metric.items():
        for k, (signature, systems) in enumerate(signatures.items()):
            rows.append((metric if k == 0 else f"{metric} ({', '.join(systems)})", signature))
    return rows


def system_headings(data: Mapping[str, Any]) -> dict[str, str]:
    """Each system's column heading: ``name (letter)``; the anchor row's says so, ``name (letter, anchor)``."""
    systems = systems_of(data)
    letters = system_letters(systems)
    anchor = anchor_of(data)
    return {s: f"{s} ({letters[s]}{', anchor' if s == anchor else ''})" for s in systems}


def format_cell(entry: Mapping[str, Any] | None, marks: str = "", interval: bool = True) -> str:
    """``score ±half-width`` (:func:`estimate`) followed by its significance mark (:func:`significance_mark`)."""
    if entry is None:
        return "-"
    text = estimate(entry["score"], entry.get("ci") if interval else None)
    if unrated_note(entry.get("facts")):
        text += f" {unrated_note(entry.get('facts'))}"
    if marks:
        text += f" {marks}"
    return text


def aspect_rows(data: Mapping[str, Any], aspect: str) -> list[dict[str, Any]]:
    """Rows of one aspect: ``metric``, ``higher_is_better``, and per system ``cells[system]`` with the corpus
    entry (score, ci), the significance mark and the formatted text."""
    corpus = _corpus(data)
    systems = systems_of(data)
    rows = []
    for metric in data["aspects"].get(aspect, []):
        first = next((corpus[(metric, s)] for s in systems if (metric, s) in corpus), None)
        if first is None:
            continue
        cells = {}
        for system in systems:
            entry = corpus.get((metric, system))
            marks = cell_mark(data, metric, system) if entry else ""
            cells[system] = {"score": None if entry is None else entry["score"],
                             "ci": None if entry is None else entry["ci"], "marks": marks,
                             "unrated": "" if entry is None else unrated_note(entry.get("facts")),
                             "text": format_cell(entry, marks)}
        rows.append({"metric": metric, "higher_is_better": first["higher_is_better"], "cells": cells})
    return rows


def overall_rows(data: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Rows of the overall scores (HM, GM, J) with their joint-bootstrap intervals and significance marks."""
    systems = systems_of(data)
    entries = {(o["system"], o["score"]): o for o in data["overall"]}
    names = list(dict.fromkeys(o["score"] for o in data["overall"]))
    rows = []
    for n in names:
        cells = {}
        for s in systems:
            o = entries.get((s, n))
            entry = None if o is None else {"score": o["value"], "ci": o.get("ci")}
            marks = overall_mark(data, n, s) if o else ""
            cells[s] = {"score": None if o is None else o["value"], "ci": None if o is None else o.get("ci"),
                        "marks": marks, "text": format_cell(entry, marks)}
        rows.append({"metric": OVERALL_NAMES.get(n, n), "key": n, "higher_is_better": True, "cells": cells})
    return rows


def legend(data: Mapping[str, Any]) -> str:
    """The lines under the tables: what ± is, and what the significance marks mean (:func:`markers_legend`)."""
    settings = data["score"]["settings"]
    text = []
    if settings.get("bootstrap"):
        text.append(f"±: half-width of the {settings.get('confidence', 0.95):.0%} bootstrap CI "
                    f"({settings['bootstrap']} resamples, seed {settings.get('seed')}"
                    + ("; overall scores: segments resampled jointly, style and content recomputed on each "
                       "resample" if any(o.get("ci") for o in data.get("overall", [])) else "") + ")")
    if settings.get("significance") not in (None, "none"):
        text.append(markers_legend(settings["significance"], settings.get("baseline")))
    return "\n".join(text)
