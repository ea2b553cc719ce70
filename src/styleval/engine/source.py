"""Tables read incrementally, in chunks of records, with :func:`styleval.readers.read_table`'s checks.

The in-memory reader decodes a whole file at once; here a file is read line by line (strict UTF-8 per line,
which is the same as for the whole file since no UTF-8 sequence contains a newline byte; another encoding must
encode the newline as that byte too, as latin-1 and cp1252 do and UTF-16 does not), rows become records
through the reader's own :func:`~styleval.readers.tabular.record_from_row`, and every error still names the
file and the 1-based line. Duplicate segment ids are checked by the engine, which sees every system's ids.
"""
from __future__ import annotations

import codecs
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Sequence

from ..errors import InputError
from ..records import Direction, Record
from ..readers.tabular import csv_rows, no_rows_problem, record_from_row, table_format
from ..readers.text import (BOM, StrPath, check_characters, clean_utf8, encoding_advice, input_encoding,
                            json_object)


@dataclass(frozen=True)
class TableOptions:
    """How table columns map onto records (the arguments of :func:`styleval.readers.read_table`)."""

    source_col: str = "source"
    output_col: str = "output"
    reference_cols: Sequence[str] | None = None
    system_col: str = "system"
    id_col: str = "id"
    direction_col: str = "direction"
    default_system: str | None = None
    default_direction: str | Direction | None = None
    format: str | None = None
    encoding: str | None = None  # of every table (default: UTF-8, or readers.text.inputs_encoded's)


@dataclass
class Chunk:
    """Records read so far from one file, each with its line, and how far into the input the reader is."""

    records: list[Record]
    lines: list[int]
    path: str
    bytes_done: int
    bytes_total: int


class _Lines:
    """Decoded lines of a file with their line numbers (line ending kept), and the bytes read so far."""

    def __init__(self, path: StrPath, encoding: str = "utf-8") -> None:
        p = Path(path)
        if not "a\n".encode(encoding).endswith(b"a\n"):
            raise InputError(f"--stream reads a table line by line, which the encoding {encoding!r} does not allow "
                             "(its newline is not the byte 0a); convert the file to UTF-8 first, e.g. iconv -f "
                             f"{encoding} -t utf-8", p)
        self.encoding = encoding
        self.utf8 = codecs.lookup(encoding).name == "utf-8"
        if not p.exists():
            raise InputError("file does not exist", p)
        if p.is_dir():
            raise InputError("is a directory, not a file", p)
        self.path = p
        self.size = p.stat().st_size
        self.offset = 0
        self.number = 0

    def __iter__(self) -> Iterator[str]:
        with open(self.path, "rb") as fh:
            for raw in fh:
                self.number += 1
                try:
                    text = raw.decode(self.encoding)
                except UnicodeDecodeError as exc:
                    bad = raw[exc.start:exc.end].hex(" ")
                    raise InputError(f"not valid {self.encoding.upper()}: byte(s) {bad} at column {exc.start + 1} "
                                     f"(byte offset {self.offset + exc.start}): {exc.reason}; "
                                     f"{encoding_advice(self.encoding, self.path, raw)}", self.path,
                                     self.number) from None
                if self.number == 1 and text.startswith(BOM):
                    text = text[1:]
                if not (self.utf8 and clean_utf8(raw)):
                    check_characters(text, self.path, self.encoding, self.number)
                self.offset += len(raw)
                yield text


def _strip_ending(text: str) -> str:
    if text.endswith("\n"):
        text = text[:-1]
    return text[:-1] if text.endswith("\r") else text


def _tsv_rows(lines: _Lines) -> Iterator[tuple[int, list[str]]]:
    for text in lines:
        text = _strip_ending(text)
        if text:
            yield lines.number, text.split("\t")


def _csv_rows(lines: _Lines) -> Iterator[tuple[int, list[str]]]:
    # a field may be as long as a file, which a stream does not know in advance
    return csv_rows(lines, lines.path, field_limit=min(sys.maxsize, 2**31 - 1))


def _json_rows(lines: _Lines) -> Iterator[tuple[int, dict[str, Any]]]:
    for text in lines:
        if not text.strip():
            continue
        yield lines.number, json_object(text, lines.path, lines.number)


def _rows(path: StrPath, fmt: str, options: TableOptions, lines: _Lines) -> Iterator[tuple[int, dict[str, Any]]]:
    if fmt == "jsonl":
        yield from _json_rows(lines)
        return
    delimited = _tsv_rows(lines) if fmt == "tsv" else _csv_rows(lines)
    try:
        first_line, header = next(delimited)
    except StopIteration:
        raise InputError("empty file: expected a header line", path) from None
    dupes = sorted({c for c in header if header.count(c) > 1})
    if dupes:
        raise InputError(f"duplicate column name(s) in header: {', '.join(map(repr, dupes))}", path, first_line)
    for col in (options.source_col, options.output_col, *(options.reference_cols or ())):
        if col not in header:
            raise InputError(f"missing column {col!r}; columns present: {', '.join(map(repr, header))}", path)
    for line, fields in delimited:
        if len(fields) != len(header):
            raise InputError(f"{len(fields)} fields, but the header has {len(header)} "
                             f"({'tab' if fmt == 'tsv' else 'comma'}-separated)", path, line)
        yield line, dict(zip(header, fields))


def iter_chunks(paths: Sequence[StrPath], chunk_size: int, options: TableOptions = TableOptions()
                ) -> Iterator[Chunk]:
    """Records of every table in ``paths``, in order, ``chunk_size`` at a time (a chunk never spans files)."""
    if chunk_size < 1:
        raise InputError(f"chunk size must be at least 1, got {chunk_size}")
    sizes = [Path(p).stat().st_size if Path(p).is_file() else 0 for p in paths]
    total, before = sum(sizes), 0
    default_direction = Direction.parse(options.default_direction)
    for path, size in zip(paths, sizes):
        fmt = table_format(path, options.format)
        system = options.default_system if options.default_system is not None else Path(path).stem
        lines = _Lines(path, input_encoding(options.encoding))
        records: list[Record] = []
        numbers: list[int] = []
        row_number = 0
        for row_number, (line, row) in enumerate(_rows(path, fmt, options, lines), start=1):
            records.append(record_from_row(
                row, path, line, row_number, source_col=options.source_col, output_col=options.output_col,
                reference_cols=options.reference_cols, system_col=options.system_col, id_col=options.id_col,
                direction_col=options.direction_col, default_system=system, default_direction=default_direction))
            numbers.append(line)
            if len(records) >= chunk_size:
                yield Chunk(records, numbers, str(path), before + lines.offset, total)
                records, numbers = [], []
        if records:
            yield Chunk(records, numbers, str(path), before + lines.offset, total)
        elif row_number == 0:  # the in-memory reader refuses a table without rows too
            raise InputError(no_rows_problem(fmt), path)
        before += size
