"""Tables: one segment per row, in TSV, CSV or JSON lines."""
from __future__ import annotations

import csv
import io
import re
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

from ..errors import InputError
from ..records import NAME_EDGE, Direction, Record, name_problem
from .text import (StrPath, character_problem, forbidden_character, iter_json_objects, read_text,
                   split_lines)

FORMATS = {".tsv": "tsv", ".tab": "tsv", ".csv": "csv", ".jsonl": "jsonl", ".json-lines": "jsonl",
           ".ndjson": "jsonl"}

# "ref", "refs", "reference", "references", optionally followed by a non-letter: ref0, ref_1, reference-2, ...
# (but not "reformulation")
_REF_COLUMN = re.compile(r"^(?:ref|refs|reference|references)(?:[^a-z].*)?$", re.IGNORECASE)


def is_reference_column(name: str) -> bool:
    """Whether a column holds references by default: ``ref``, ``ref0``, ``ref_1``, ``reference2``, ``references``."""
    return bool(_REF_COLUMN.match(name))


def table_format(path: StrPath, format: str | None = None) -> str:
    """``tsv``, ``csv`` or ``jsonl``: ``format`` if given, else from the file suffix."""
    if format is not None:
        fmt = format.lower().lstrip(".")
        fmt = {"json-lines": "jsonl", "ndjson": "jsonl", "tab": "tsv"}.get(fmt, fmt)
        if fmt not in ("tsv", "csv", "jsonl"):
            raise InputError(f"unknown table format {format!r}; use tsv, csv or jsonl", path)
        return fmt
    suffix = Path(path).suffix.lower()
    if suffix not in FORMATS:
        raise InputError(f"cannot tell the table format from the suffix {suffix!r}; known: "
                         f"{', '.join(FORMATS)} (or pass format='tsv'|'csv'|'jsonl')", path)
    return FORMATS[suffix]


def iter_delimited(path: StrPath, fmt: str, encoding: str | None = None
                   ) -> tuple[list[str], Iterator[tuple[int, list[str]]]]:
    """Header and ``(line number, fields)`` of each data row of a TSV or CSV file.

    TSV: fields split on tabs with no quoting at all (the csv module's ``QUOTE_NONE``; quotes are ordinary
    characters, style-transfer text has many). CSV: the csv module, comma, ``"``-quoting, strict (a malformed
    quote is an error), quoted fields may span lines; the line number is the row's first line. Empty lines are
    skipped. A row with a different number of fields than the header raises :class:`InputError` with its line.
    ``encoding``: see :func:`~styleval.readers.text.read_text`.
    """
    text = read_text(path, encoding)
    rows = _tsv_rows(text) if fmt == "tsv" else _csv_rows(text, path)
    try:
        first = next(rows)
    except StopIteration:
        raise InputError("empty file: expected a header line", path) from None
    header = first[1]
    dupes = sorted({c for c in header if header.count(c) > 1})
    if dupes:
        raise InputError(f"duplicate column name(s) in header: {', '.join(map(repr, dupes))}", path, first[0])

    def data() -> Iterator[tuple[int, list[str]]]:
        for line, fields in rows:
            if len(fields) != len(header):
                raise InputError(f"{len(fields)} fields, but the header has {len(header)} "
                                 f"({'tab' if fmt == 'tsv' else 'comma'}-separated)", path, line)
            yield line, fields

    return header, data()


def _tsv_rows(text: str) -> Iterator[tuple[int, list[str]]]:
    for number, line in enumerate(split_lines(text), start=1):
        if line:
            yield number, line.split("\t")


def _csv_rows(text: str, path: StrPath) -> Iterator[tuple[int, list[str]]]:
    # a field can be as long as the file, never longer
    return csv_rows(io.StringIO(text, newline=""), path, field_limit=len(text) + 1)


def csv_rows(lines: Iterable[str], path: StrPath, field_limit: int) -> Iterator[tuple[int, list[str]]]:
    """``(first line number, fields)`` of each non-empty CSV record in ``lines`` (strict quoting; a malformed
    record is an :class:`InputError` naming the file and line); fields up to ``field_limit`` characters."""
    reader = csv.reader(iter(lines), delimiter=",", quotechar='"', strict=True)
    old_limit = csv.field_size_limit()
    csv.field_size_limit(max(old_limit, field_limit))
    try:
        start = 1
        while True:
            try:
                fields = next(reader)
            except StopIteration:
                return
            except csv.Error as exc:
                raise InputError(f"malformed CSV: {exc}", path, start) from None
            if fields:
                yield start, fields
            start = reader.line_num + 1
    finally:
        csv.field_size_limit(old_limit)


def read_table(path: StrPath, *, source_col: str = "source", output_col: str = "output",
               reference_cols: Sequence[str] | None = None, system_col: str = "system", id_col: str = "id",
               direction_col: str = "direction", default_system: str | None = None,
               default_direction: str | Direction | None = None, format: str | None = None,
               encoding: str | None = None) -> list[Record]:
    """Records from a table with one segment per row (``.tsv``, ``.csv``, ``.jsonl``/``.json-lines``/``.ndjson``).

    ``source_col`` and ``output_col`` are required; a missing one raises :class:`InputError` naming the file,
    the column and the columns present. References: ``reference_cols`` in that order, by default every column
    named ``ref``/``refs``/``reference``/``references`` optionally followed by a non-letter (``ref0``,
    ``ref_1``, ``reference2``) in table order; in JSON lines a reference field may hold a list of strings.
    A blank reference is left out and its column named in ``record.meta["missing_references"]``.
    Optional columns: ``system_col`` (else ``default_system``, else the file stem), ``id_col`` (else the 1-based
    data row number), ``direction_col`` (else ``default_direction``); an empty cell counts as absent. Any other
    column goes into ``record.meta`` (strings for TSV/CSV, JSON values for JSON lines).

    A blank source is an :class:`InputError`; an empty output is kept. Rows with the wrong number of fields,
    invalid JSON lines and duplicate (system, id) pairs raise :class:`InputError` with the line number.
    ``encoding``: of the file (default: UTF-8, or :func:`~styleval.readers.text.inputs_encoded`'s).
    """
    fmt = table_format(path, format)
    fallback_system = default_system if default_system is not None else Path(path).stem
    fallback_direction = Direction.parse(default_direction)
    if fmt == "jsonl":
        rows: Iterator[tuple[int, dict[str, Any]]] = iter_json_objects(path, encoding)
        header: list[str] | None = None
    else:
        header, delimited = iter_delimited(path, fmt, encoding)
        for col in (source_col, output_col, *(reference_cols or ())):
            if col not in header:
                raise InputError(f"missing column {col!r}; columns present: {', '.join(map(repr, header))}", path)
        rows = ((line, dict(zip(header, fields))) for line, fields in delimited)

    records: list[Record] = []
    seen: dict[tuple[str, str], int] = {}
    for row_number, (line, row) in enumerate(rows, start=1):
        record = record_from_row(row, path, line, row_number, source_col=source_col, output_col=output_col,
                                 reference_cols=reference_cols, system_col=system_col, id_col=id_col,
                                 direction_col=direction_col, default_system=fallback_system,
                                 default_direction=fallback_direction)
        key = (record.system, record.id)
        if key in seen:
            raise InputError(f"duplicate id {record.id!r} for system {record.system!r} (first on line {seen[key]})",
                             path, line)
        seen[key] = line
        records.append(record)
    if not records:
        raise InputError(no_rows_problem(fmt), path)
    return records


def no_rows_problem(fmt: str) -> str:
    """What a table without a single row is told: a segment per row is what a table holds."""
    if fmt == "jsonl":
        return "no JSON object in the file (it is empty or blank): a JSON-lines table holds one segment per line"
    return "a header but no data rows: the table holds no segment"


def record_from_row(row: dict[str, Any], path: StrPath, line: int, row_number: int, *, source_col: str = "source",
                    output_col: str = "output", reference_cols: Sequence[str] | None = None,
                    system_col: str = "system", id_col: str = "id", direction_col: str = "direction",
                    default_system: str = "system", default_direction: Direction | None = None) -> Record:
    """One table row (column name -> cell) as a record, with :func:`read_table`'s checks and defaults; errors
    name ``path`` and ``line``. Duplicate ids are the caller's to check (it sees every row)."""
    keys = list(row)
    for col in (source_col, output_col, *(reference_cols or ())):
        if col not in row:  # only JSON lines get here: delimited headers are checked first
            raise InputError(f"missing column {col!r}; columns present: {', '.join(map(repr, keys))}",
                             path, line)
    source = _text(row[source_col], source_col, path, line)
    output = _text(row[output_col], output_col, path, line)
    if not source.strip():
        raise InputError(f"empty source (column {source_col!r}); every segment needs a source", path, line)
    ref_cols = list(reference_cols) if reference_cols is not None else [k for k in keys if is_reference_column(k)]
    refs, missing = _references(row, ref_cols, path, line)
    system = _optional(row.get(system_col), system_col, path, line) or default_system
    seg_id = _optional(row.get(id_col), id_col, path, line) or str(row_number)
    for value, what in ((system, "system name"), (seg_id, "segment id")):
        problem = name_problem(value, what)
        if problem:
            raise InputError(problem, path, line)
    direction_text = _optional(row.get(direction_col), direction_col, path, line)
    if direction_text:
        try:
            direction = Direction.parse(direction_text)
        except InputError as exc:
            raise InputError(exc.problem, path, line) from None
    else:
        direction = default_direction
    used = {source_col, output_col, system_col, id_col, direction_col, *ref_cols}
    meta = {k: v for k, v in row.items() if k not in used}
    if missing:
        meta["missing_references"] = missing
    return Record(id=seg_id, source=source, output=output, references=refs, system=system,
                  direction=direction, meta=meta)


def _text(value: Any, col: str, path: StrPath, line: int) -> str:
    if not isinstance(value, str):
        raise InputError(f"column {col!r} must be a string, got {type(value).__name__}", path, line)
    index = forbidden_character(value)  # a JSON escape (\u0000) hides it from the file's own check
    if index is not None:
        raise InputError(f"column {col!r}: {character_problem(value, index, f'character {index + 1}')}", path, line)
    return value


def _optional(value: Any, col: str, path: StrPath, line: int) -> str | None:
    """An optional cell as a string, or None when absent or blank (JSON numbers are accepted); ASCII space is
    stripped from its ends, any other (a no-break space) is left for :func:`~styleval.records.name_problem`."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise InputError(f"column {col!r} must be a string, got {type(value).__name__}", path, line)
    text = str(value).strip(NAME_EDGE)
    return text if text.strip() else None


def _references(row: dict[str, Any], cols: list[str], path: StrPath, line: int) -> tuple[list[str], list[str]]:
    refs: list[str] = []
    missing: list[str] = []
    for col in cols:
        value = row.get(col)
        items = list(enumerate(value)) if isinstance(value, list) else [(None, value)]
        for k, item in items:
            name = col if k is None else f"{col}[{k}]"
            if item is None or (isinstance(item, str) and not item.strip()):
                missing.append(name)
            elif isinstance(item, str):
                refs.append(_text(item, name, path, line))
            else:
                raise InputError(f"reference {name!r} must be a string, got {type(item).__name__}", path, line)
    return refs, missing
