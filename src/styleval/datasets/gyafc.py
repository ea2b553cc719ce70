"""The GYAFC corpus in its release layout (Rao & Tetreault, 2018); the corpus itself is not bundled.

Layout, for each domain (``Entertainment_Music``, ``Family_Relationships``) and split (``train``, ``tune``,
``test``)::

    <root>/<domain>/<split>/informal          informal sources (informal->formal)
    <root>/<domain>/<split>/informal.ref0..3  formal rewrites of those (the references)
    <root>/<domain>/<split>/formal            formal sources (formal->informal)
    <root>/<domain>/<split>/formal.ref0..3    informal rewrites of those

Views: :func:`gyafc_inputs` (segments with references), :func:`read_gyafc` (records, given system outputs),
:func:`parallel` (source -> rewrites groups, for transfer models).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, cast

from ..errors import InputError
from ..readers.plain import build_records
from ..readers.text import StrPath, read_lines
from ..records import Direction, Record
from .parallel import RewriteGroup, ParallelData

DOMAINS = ("Entertainment_Music", "Family_Relationships")
DIRECTIONS = ("informal->formal", "formal->informal")
MAX_REFERENCES = 16


@dataclass
class GyafcSegment:
    """One GYAFC input with its references; ``id`` is ``"<domain>/<direction>/<line>"``."""

    id: str
    source: str
    references: list[str]
    direction: Direction
    domain: str
    missing_references: list[str] = field(default_factory=list)


def _select(value: str | Direction | None, choices: tuple[str, ...], what: str) -> list[str]:
    if value is None:
        return list(choices)
    text = str(Direction.parse(value)) if what == "direction" else str(value)
    if text not in choices:
        raise InputError(f"unknown GYAFC {what} {str(value)!r}; choose from {', '.join(choices)} (or None: all)")
    return [text]


def _reference_files(folder: Path, side: str) -> list[Path]:
    refs = []
    for k in range(MAX_REFERENCES):
        p = folder / f"{side}.ref{k}"
        if not p.is_file():
            break
        refs.append(p)
    return refs


def gyafc_inputs(root: StrPath, domain: str | None = None, direction: str | Direction | None = None,
                 split: str = "test") -> list[GyafcSegment]:
    """The inputs of a GYAFC split with their references, for one or both domains and directions.

    Order: domains as in :data:`DOMAINS`, then directions as in :data:`DIRECTIONS`, then line order. References
    are ``<side>.ref0``, ``<side>.ref1``, ... (consecutive from 0; at least one is required). Every reference
    file must have as many lines as its source file. A blank source is an :class:`InputError`; a blank reference
    is left out and its file listed in ``missing_references``. A selected domain folder that is missing is an
    :class:`InputError` (also with ``domain=None``: pass the domain you have).
    """
    base = Path(root)
    if not base.is_dir():
        raise InputError("GYAFC root directory does not exist", base)
    segments: list[GyafcSegment] = []
    for dom in _select(domain, DOMAINS, "domain"):
        folder = base / dom / split
        if not folder.is_dir():
            raise InputError(f"GYAFC folder for domain {dom!r}, split {split!r} not found", folder)
        for dir_text in _select(direction, DIRECTIONS, "direction"):
            side = dir_text.split("->")[0]
            src = folder / side
            refs = _reference_files(folder, side)
            if not refs:
                raise InputError(f"no reference files {side}.ref0, {side}.ref1, ... next to the sources", src)
            src_lines = read_lines(src, "utf-8")
            # build_records does the length and blank-source checks; the output column is a placeholder
            recs = build_records((str(src), src_lines), (str(src), src_lines),
                                 [(str(r), read_lines(r, "utf-8")) for r in refs], system="", direction=dir_text,
                                 ids=[f"{dom}/{dir_text}/{i}" for i in range(1, len(src_lines) + 1)])
            segments += [GyafcSegment(id=r.id, source=r.source, references=r.references,
                                      direction=cast(Direction, r.direction),
                                      domain=dom, missing_references=r.meta.get("missing_references", []))
                         for r in recs]
    return segments


def read_gyafc(root: StrPath, domain: str | None = None, direction: str | Direction | None = None,
               split: str = "test", *, outputs: Mapping[str, StrPath]) -> list[Record]:
    """Pair each system's output file with the GYAFC segments selected by ``domain``/``direction``/``split``.

    ``outputs`` maps a system name to a file with one output per line, in the order of :func:`gyafc_inputs`
    for the same selection (usually one domain and one direction per file). A file with a different number of
    lines than there are segments raises :class:`InputError` naming both counts. Record ids are the segment
    ids (``"Family_Relationships/informal->formal/1"``); ``meta["domain"]`` holds the domain.
    """
    if not outputs:
        raise InputError("no system outputs given (use gyafc_inputs for the inputs alone)")
    segments = gyafc_inputs(root, domain, direction, split)
    selection = f"domain={domain or 'all'}, direction={direction or 'all'}, split={split}"
    records: list[Record] = []
    for system, path in outputs.items():
        lines = read_lines(path)
        if len(lines) != len(segments):
            raise InputError(f"{len(lines)} lines, but GYAFC under {root} has {len(segments)} segments for "
                             f"{selection}", path)
        for seg, output in zip(segments, lines):
            meta: dict[str, object] = {"domain": seg.domain}
            if seg.missing_references:
                meta["missing_references"] = list(seg.missing_references)
            records.append(Record(id=seg.id, source=seg.source, output=output, references=list(seg.references),
                                  system=system, direction=seg.direction, meta=meta))
    return records


def parallel(root: StrPath, direction: str, *, domain: str | None = None, split: str = "train") -> ParallelData:
    """A GYAFC split as :class:`ParallelData`: each source (stripped) with its non-blank rewrites; sources without
    any rewrite are left out."""
    segments = gyafc_inputs(root, domain, direction, split)
    groups = [RewriteGroup(s.source.strip(), tuple(r.strip() for r in s.references if r.strip())) for s in segments]
    groups = [g for g in groups if g.targets]
    if not groups:
        raise InputError(f"no GYAFC sources with a rewrite for {direction}, split {split}", root)
    return ParallelData(groups, origin=f"GYAFC {root} [{domain or 'both domains'}, {direction}]", split=split)
