"""The human references as an anchor row: each input's first reference scored as if it were a system's output,
against the remaining references, so the tables show where human rewrites stand on every metric.

Possible only when every input has references to spare (two or more); the anchor's reference-based scores then
use one reference fewer than the systems' (their signatures say so, ``nrefs``).
"""
from __future__ import annotations

from typing import Sequence

from ..errors import InputError
from ..records import Record

#: the anchor's system name in tables, plots and the explorer
ANCHOR_SYSTEM = "human-reference"


def anchor_records(records: Sequence[Record], name: str = ANCHOR_SYSTEM) -> list[Record]:
    """One record per input id (first-seen order): its first reference as the output, the others as references.
    :class:`InputError` when an input has fewer than two references or a system already has the name."""
    if any(r.system == name for r in records):
        raise InputError(f"a system is already named {name!r}: the anchor row of the human references needs the name")
    seen: dict[str, Record] = {}
    for r in records:
        seen.setdefault(r.id, r)
    short = [i for i, r in seen.items() if len(r.references) < 2]
    if short:
        raise InputError(f"the anchor row scores each input's first reference against the others: {len(short)} "
                         f"input(s) have fewer than two references, e.g. {short[0]!r}")
    return [Record(id=r.id, source=r.source, output=r.references[0], references=list(r.references[1:]), system=name,
                   direction=r.direction, meta={"anchor": "reference 1 against the others"})
            for r in seen.values()]
