"""Plain-text parallel files: one sentence per line, line *i* of every file belongs to segment *i*."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from ..errors import InputError
from ..records import Direction, Record, name_problem
from .text import StrPath, read_lines

#: a file's path (as it should be named in messages and metadata) and its lines
Column = tuple[str, list[str]]


def check_lengths(columns: Sequence[Column], sources: Column, role: str = "file") -> None:
    """Every column must have as many lines as the sources; the error names both files, their roles (``role``:
    what the columns are, e.g. "reference file") and both counts."""
    src_path, src_lines = sources
    for path, lines in columns:
        if len(lines) != len(src_lines):
            raise InputError(f"this {role} has {len(lines)} line{'' if len(lines) == 1 else 's'}, but the sources "
                             f"file {src_path} has {len(src_lines)} lines (line i of each file must belong to "
                             "segment i)", path)


def build_records(outputs: Column, sources: Column, references: Sequence[Column] = (), *, system: str,
                  direction: str | Direction | None = None, ids: Sequence[str] | None = None,
                  meta: dict[str, Any] | None = None) -> list[Record]:
    """Records from already-read columns (shared by the plain-text and dataset readers).

    Lengths must agree (:func:`check_lengths`). A blank source is an :class:`InputError`. An empty output is kept
    (scoring flags it). A blank reference line is left out of that record's references and its file is listed in
    ``record.meta["missing_references"]``. ``ids`` default to line numbers ``"1"``..``"n"``; ``meta`` is copied
    into every record.
    """
    check_lengths([outputs], sources, "output file")
    check_lengths(references, sources, "reference file")
    src_path, src_lines = sources
    if not src_lines:
        raise InputError("the sources file is empty: no segment to score (a segment is a line)", src_path)
    if ids is None:
        ids = [str(i) for i in range(1, len(src_lines) + 1)]
    elif len(ids) != len(src_lines):
        raise InputError(f"{len(ids)} ids for {len(src_lines)} lines", src_path)
    parsed = Direction.parse(direction)
    records = []
    for i, (source, output) in enumerate(zip(src_lines, outputs[1])):
        if not source.strip():
            raise InputError("source line is empty (every segment needs a source)", src_path, i + 1)
        refs: list[str] = []
        missing: list[str] = []
        for ref_path, ref_lines in references:
            if ref_lines[i].strip():
                refs.append(ref_lines[i])
            else:
                missing.append(ref_path)
        rec_meta = dict(meta) if meta else {}
        if missing:
            rec_meta["missing_references"] = missing
        records.append(Record(id=ids[i], source=source, output=output, references=refs, system=system,
                              direction=parsed, meta=rec_meta))
    return records


def _column(path: StrPath, encoding: str | None = None) -> Column:
    return str(path), read_lines(path, encoding)


def read_parallel(outputs: StrPath, sources: StrPath, references: Sequence[StrPath] = (),
                  system: str | None = None, direction: str | Direction | None = None,
                  encoding: str | None = None) -> list[Record]:
    """One system's outputs, aligned line by line with its sources and any number of reference files.

    ``system`` defaults to the stem of ``outputs`` (``out/bart.txt`` -> ``bart``). Ids are line numbers
    ``"1"``..``"n"``. Every file must have the same number of lines, otherwise :class:`InputError` naming both
    files and both counts. Empty output lines are kept; a blank source line is an error; a blank reference line
    is left out of that record's references and named in ``record.meta["missing_references"]``. ``encoding``: of
    every file (default: UTF-8, or :func:`~styleval.readers.text.inputs_encoded`'s).
    """
    name = system if system is not None else Path(outputs).stem
    check_system_name(name, outputs)
    refs = [_column(r, encoding) for r in references]
    return build_records(_column(outputs, encoding), _column(sources, encoding), refs, system=name,
                         direction=direction)


def check_system_name(name: str, path: StrPath) -> None:
    """:class:`InputError` naming ``path`` (the outputs file the name is for) when ``name`` is no usable system name
    (:func:`~styleval.records.name_problem`: blank, or holding a tab, a line break or another control character)."""
    problem = name_problem(name)
    if problem:
        raise InputError(problem, path)


def system_files(directory: StrPath) -> list[Path]:
    """The regular files of ``directory`` sorted by name, hidden files (``.name``) skipped."""
    d = Path(directory)
    if not d.exists():
        raise InputError("directory does not exist", d)
    if not d.is_dir():
        raise InputError("is not a directory", d)
    files = sorted((p for p in d.iterdir() if p.is_file() and not p.name.startswith(".")), key=lambda p: p.name)
    if not files:
        raise InputError("no system output files in directory", d)
    return files


def read_system_dir(directory: StrPath, sources: StrPath, references: Sequence[StrPath] = (),
                    direction: str | Direction | None = None, encoding: str | None = None) -> list[Record]:
    """Every file in ``directory`` is one system's outputs (system = file stem); see :func:`read_parallel`.

    Files are taken in name order; hidden files and sub-directories are skipped. Two files with the same stem
    (``a.txt``, ``a.tsv``) are an :class:`InputError`. Sources and references are read once.
    """
    files = system_files(directory)
    seen: dict[str, Path] = {}
    for f in files:
        check_system_name(f.stem, f)
        if f.stem in seen:
            raise InputError(f"two files give the same system name {f.stem!r}: {seen[f.stem].name} and {f.name}",
                             directory)
        seen[f.stem] = f
    src = _column(sources, encoding)
    refs = [_column(r, encoding) for r in references]
    records: list[Record] = []
    for f in files:
        records += build_records(_column(f, encoding), src, refs, system=f.stem, direction=direction)
    return records
