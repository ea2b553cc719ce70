"""The texts of an evaluation, kept beside its scores so a report can show every output next to its scores.

One entry per input id (in first-seen order): the source, the references and the direction, stored once; and per
system its output for each input (None where the system has no record of that input). A system scored against
other references than the first system's (a human rewrite scored against the other humans, the anchor row) has
them under ``system_references``. Nothing is dropped: an empty output is an empty string.
"""
from __future__ import annotations

from typing import Any, Sequence

from ..errors import InputError
from ..records import Record


def segment_texts(records: Sequence[Record]) -> dict[str, Any]:
    """``{"ids", "source", "references", "direction", "outputs": {system: [output or None per id]},
    "system_references": {system: {id: [reference...]}}}``.

    The source and direction of one id must agree across systems: a record that disagrees is an
    :class:`InputError` naming the id and both systems, since the report could not say which source the scores
    belong to. References may differ per system (kept under ``system_references``)."""
    index: dict[str, int] = {}
    first: list[Record] = []
    outputs: dict[str, dict[int, str]] = {}
    own_refs: dict[str, dict[str, list[str]]] = {}
    for record in records:
        i = index.get(record.id)
        if i is None:
            i = index[record.id] = len(first)
            first.append(record)
        else:
            seen = first[i]
            if (seen.source, seen.direction) != (record.source, record.direction):
                raise InputError(f"segment {record.id!r}: system {record.system!r} has a different source or "
                                 f"direction than system {seen.system!r}")
            if list(seen.references) != list(record.references):
                own_refs.setdefault(record.system, {})[record.id] = list(record.references)
        per_system = outputs.setdefault(record.system, {})
        if i in per_system:
            raise InputError(f"segment {record.id!r} appears twice for system {record.system!r}")
        per_system[i] = record.output
    n = len(first)
    return {"ids": [r.id for r in first], "source": [r.source for r in first],
            "references": [list(r.references) for r in first],
            "direction": [None if r.direction is None else str(r.direction) for r in first],
            "outputs": {system: [texts.get(i) for i in range(n)] for system, texts in outputs.items()},
            "system_references": own_refs}
