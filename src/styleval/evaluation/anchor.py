"""The human references as an anchor row: each input's first reference scored as if it were a system's output,
against the remaining references, so the tables show where human rewrites stand on every metric.

Possible only when every input has references to spare (two or more); the anchor's reference-based scores then
use one reference fewer than the systems' (their signatures say so, ``nrefs``). ``evaluate`` adds it by default
when that holds (:func:`wants_anchor`); the anchor is shown beside the systems but is not one of them: the
report's summary of leads and the correlations with human judgments leave it out.
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

from ..errors import InputError
from ..records import Record

#: the anchor's system name in tables, plots and the explorer
ANCHOR_SYSTEM = "human-reference"


def _inputs(records: Sequence[Record]) -> dict[str, Record]:
    """One record per input id, first seen first (the inputs all systems share)."""
    seen: dict[str, Record] = {}
    for r in records:
        seen.setdefault(r.id, r)
    return seen


def wants_anchor(records: Sequence[Record], anchor: bool | None, name: str = ANCHOR_SYSTEM) -> bool:
    """Whether ``evaluate`` adds the anchor row: ``anchor=True`` always (:func:`anchor_records` then refuses inputs
    without references to spare), ``False`` never, ``None`` (auto) when there are records, every input has two
    references or more and no system already has the anchor's name."""
    if anchor is not None:
        return anchor
    inputs = _inputs(records)
    return (bool(inputs) and all(len(r.references) >= 2 for r in inputs.values())
            and not any(r.system == name for r in records))


def anchor_records(records: Sequence[Record], name: str = ANCHOR_SYSTEM) -> list[Record]:
    """One record per input id (first-seen order): its first reference as the output, the others as references.
    :class:`InputError` when an input has fewer than two references or a system already has the name."""
    if any(r.system == name for r in records):
        raise InputError(f"a system is already named {name!r}: the anchor row of the human references needs the name")
    seen = _inputs(records)
    short = [i for i, r in seen.items() if len(r.references) < 2]
    if short:
        raise InputError(f"the anchor row scores each input's first reference against the others: {len(short)} "
                         f"input(s) have fewer than two references, e.g. {short[0]!r}")
    return [Record(id=r.id, source=r.source, output=r.references[0], references=list(r.references[1:]), system=name,
                   direction=r.direction, meta={"anchor": "reference 1 against the others"})
            for r in seen.values()]


def anchor_settings(anchored: Sequence[Record], auto: bool) -> dict[str, Any]:
    """What an evaluation's settings keep about its anchor (``anchored``: :func:`anchor_records`' output): the
    name, how many references it was scored against (fewest and most over the inputs) and whether it was added by
    default."""
    counts = [len(r.references) for r in anchored]
    return {"anchor": anchored[0].system, "anchor_references": [min(counts), max(counts)], "anchor_auto": auto}


def _span(low: int, high: int) -> str:
    return f"{low}" if low == high else f"{low} to {high}"


def anchor_line(settings: Mapping[str, Any]) -> str:
    """The one line the rationale and the report give about the anchor ("" without one): which reference, against
    how many, that its reference-based scores use one reference fewer, and how it came to be there."""
    name = settings.get("anchor")
    if not name:
        return ""
    counts = settings.get("anchor_references")
    if counts:
        low, high = counts
        against = ("the other" if low == 1 else f"the other {low}") if low == high else f"the other {low} to {high}"
        plural = "s" if high != 1 else ""
        fewer = (f"so its reference-based scores use one reference fewer than the systems' ({_span(low, high)} "
                 f"instead of {_span(low + 1, high + 1)}, its signatures' nrefs)")
    else:  # a file written before the counts were kept
        against, plural = "the other", "s"
        fewer = "so its reference-based scores use one reference fewer than the systems' (its signatures' nrefs)"
    auto = settings.get("anchor_auto")
    how = ("added because every input has two references or more (--no-anchor, anchor=False, leaves it out)"
           if auto is True else "asked for with --anchor (anchor=True)" if auto is False else "")
    return (f"anchor: {name} is not a system but each input's first reference scored as an output against {against} "
            f"reference{plural}, {fewer}; {how or 'shown beside the systems'}; it is left out of the leads and of "
            "the correlations with human judgments.")
