"""Readers: files in, :class:`~styleval.records.Record` lists out.

* plain text, one sentence per line: :func:`read_parallel`, :func:`read_system_dir`
* tables (TSV, CSV, JSON lines), one segment per row: :func:`read_table`
* :func:`read_any`: a table, or plain text when ``sources`` is given

Common rules: strict UTF-8 unless ``encoding=`` (or :func:`inputs_encoded`) names another encoding (an
undecodable byte is an :class:`~styleval.errors.InputError` naming file and line), only the line ending is
stripped, a control character (but tab) or a CR-only line ending is an error naming file, line and column, empty
outputs are kept, a blank source is an error, a blank reference is left out and named in
``record.meta["missing_references"]``, any count mismatch is an error naming both files, a system name must be
non-blank without tabs, line breaks or other control characters, and a table needs at least one row.

The layouts of published datasets (GYAFC, Lai 2022, Mir 2019, SGDD-TST, yelp-dualrl, ...) are read by
:mod:`styleval.datasets`, which builds on these readers.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from ..errors import InputError
from ..records import Direction, Record
from .plain import read_parallel, read_system_dir
from .tabular import FORMATS, read_table
from .text import StrPath, inputs_encoded, read_lines

__all__ = ["read_parallel", "read_system_dir", "read_table", "read_any", "read_lines", "inputs_encoded"]


def read_any(path: StrPath, *, sources: StrPath | None = None, references: Sequence[StrPath] = (),
             system: str | None = None, direction: str | Direction | None = None, encoding: str | None = None,
             **table_options: Any) -> list[Record]:
    """A table (by suffix: ``.tsv``, ``.csv``, ``.jsonl``, ...) via :func:`read_table`, otherwise a plain-text
    output file via :func:`read_parallel`, which needs ``sources``.

    For tables, ``system`` and ``direction`` are the defaults for rows without them; ``table_options`` go to
    :func:`read_table`.
    """
    if Path(path).suffix.lower() in FORMATS or "format" in table_options:
        if sources is not None or references:
            raise InputError("a table holds its own sources and references; do not pass sources/references", path)
        return read_table(path, default_system=system, default_direction=direction, encoding=encoding,
                          **table_options)
    if table_options:
        raise InputError(f"options {sorted(table_options)} apply to tables only", path)
    if sources is None:
        raise InputError("plain-text outputs need the sources file (sources=...); tables are .tsv/.csv/.jsonl",
                         path)
    return read_parallel(path, sources, references, system=system, direction=direction, encoding=encoding)
