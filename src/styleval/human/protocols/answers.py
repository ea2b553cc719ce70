"""Answers: parsing a submitted form, and turning answers into long-format rows and quality numbers.

Stored shape: ``{aspect: [value per candidate]}`` for scale and rank aspects, ``{aspect: slot}`` for choice
aspects (the chosen candidate's index, ``-1`` for a tie). Form fields are ``<aspect>.<slot>`` and ``<aspect>``.
"""
from __future__ import annotations

import math
from typing import Any, Mapping

from styleval.errors import StyleEvalError

from .base import Question, Protocol

TIE = -1


class AnswerError(StyleEvalError, ValueError):
    """A submitted answer is missing or out of range; the message names the question."""


def _number(raw: Any, aspect: Question, where: str) -> float:
    if raw is None or str(raw).strip() == "":
        raise AnswerError(f"please answer {where}")
    try:
        value = float(str(raw).strip())
    except ValueError:
        raise AnswerError(f"{where}: {raw!r} is not a number") from None
    if not math.isfinite(value):
        raise AnswerError(f"{where}: {raw!r} is not a number")
    return value


def moved_field(field: str) -> str:
    """The form field that says a slider was set by the annotator (a slider always sends a value, even untouched)."""
    return field + ".set"


def parse_answers(protocol: Protocol, form: Mapping[str, Any], n_candidates: int, *,
                  require_moved: bool = False) -> dict[str, Any]:
    """Validate a form against the protocol; return the stored answer dict or raise :class:`AnswerError`.

    ``require_moved``: a slider counts as answered only when its ``<field>.set`` flag is ``1`` (set by the page
    when the slider is moved, or ticked by hand without JavaScript); an untouched slider is refused, not stored
    as its starting value."""
    answers: dict[str, Any] = {}
    for aspect in protocol.aspects:
        if aspect.kind == "choice":
            raw = form.get(aspect.name)
            if raw == "tie" and aspect.allow_tie:
                answers[aspect.name] = TIE
                continue
            value = _number(raw, aspect, f"'{aspect.question}'")
            if value not in range(n_candidates):
                raise AnswerError(f"'{aspect.question}': choose one of the texts")
            answers[aspect.name] = int(value)
            continue
        values: list[float] = []
        for slot in range(n_candidates):
            where = f"'{aspect.question}'" + (f" for text {slot_label(slot)}" if n_candidates > 1 else "")
            field = f"{aspect.name}.{slot}"
            if require_moved and aspect.widget == "slider" and form.get(moved_field(field)) != "1":
                raise AnswerError(f"please answer {where}: move the slider, or tick 'set' to answer {aspect.start}")
            value = _number(form.get(field), aspect, where)
            if aspect.kind == "rank":
                if not value.is_integer() or not 1 <= value <= n_candidates:
                    raise AnswerError(f"{where}: a rank from 1 to {n_candidates}")
            else:
                steps = (value - aspect.low) / aspect.step
                if not aspect.low <= value <= aspect.high or abs(steps - round(steps)) > 1e-9:
                    raise AnswerError(f"{where}: a value from {aspect.low:g} to {aspect.high:g}")
            values.append(int(value) if value.is_integer() else value)
        answers[aspect.name] = values
    return answers


def slot_label(slot: int) -> str:
    """Candidates are shown as A, B, C, ..."""
    return chr(ord("A") + slot)


def slot_value(aspect: Question, answer: Any, slot: int) -> float:
    """One candidate's raw score for an aspect (choice: 1 chosen, 0 not chosen, 0.5 tie)."""
    if aspect.kind == "choice":
        return 0.5 if answer == TIE else float(answer == slot)
    return float(answer[slot])


def normalised_value(aspect: Question, answer: Any, slot: int, n_candidates: int) -> float:
    """A candidate's score mapped to [0, 1], higher = better (ranks reversed)."""
    value = slot_value(aspect, answer, slot)
    if aspect.kind == "rank":
        return (n_candidates - value) / (n_candidates - 1) if n_candidates > 1 else 1.0
    if aspect.kind == "choice":
        return value
    return (value - aspect.low) / (aspect.high - aspect.low)


def answers_to_rows(protocol: Protocol, answers: Mapping[str, Any], systems: list[str]) -> list[tuple[str, str, float]]:
    """``(system, aspect, score)`` for every candidate and aspect; ranks stay ranks (1 = best)."""
    rows = []
    for aspect in protocol.aspects:
        for slot, system in enumerate(systems):
            rows.append((system, aspect.name, slot_value(aspect, answers[aspect.name], slot)))
    return rows


def quality_values(protocol: Protocol, answers: Mapping[str, Any], n_candidates: int) -> list[float]:
    """Per candidate, the mean normalised score over the protocol's quality aspects (for the degraded test)."""
    aspects = protocol.quality_aspects
    return [sum(normalised_value(a, answers[a.name], slot, n_candidates) for a in aspects) / len(aspects)
            for slot in range(n_candidates)]


def control_passed(protocol: Protocol, answers: Mapping[str, Any],
                   expected: Mapping[str, tuple[float, float]], slot: int = 0) -> bool:
    """Whether every expected answer (``{aspect: (low, high)}`` for candidate ``slot``) was given."""
    for name, (low, high) in expected.items():
        value = slot_value(protocol.aspect(name), answers[name], slot)
        if not low <= value <= high:
            return False
    return True
