"""Low-level text helpers shared by the readers: strict UTF-8, one line per ``\\n``, nothing else touched.

Rules (the same for every reader):

* A file is decoded as UTF-8, strictly: an undecodable byte raises :class:`InputError` naming the file and the
  1-based line of the byte. A leading byte-order mark (an encoding artefact, not text) is removed.
* Lines are split on ``\\n`` only (not on the other characters :meth:`str.splitlines` treats as breaks, such as
  U+2028 or form feed, which can occur inside a sentence). Only the line ending (``\\n`` or ``\\r\\n``) is
  removed; leading/trailing spaces, tabs and everything else are kept.
* A final line without a trailing newline is a normal line; a trailing newline does not start an extra line.
* A missing file raises :class:`InputError` saying that it does not exist.
"""
from __future__ import annotations

import os
from pathlib import Path
import json
from typing import Any, Iterator, Union

from ..errors import InputError

StrPath = Union[str, "os.PathLike[str]"]

BOM = "\ufeff"


def read_bytes(path: StrPath) -> bytes:
    """The bytes of a file; :class:`InputError` if it does not exist or cannot be read."""
    p = Path(path)
    if not p.exists():
        raise InputError("file does not exist", p)
    if p.is_dir():
        raise InputError("is a directory, not a file", p)
    try:
        return p.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot be read: {exc.strerror or exc}", p) from None


def _line_of(data: bytes, offset: int) -> int:
    return data.count(b"\n", 0, offset) + 1


def decode(data: bytes, path: StrPath, encoding: str = "utf-8") -> str:
    """Decode ``data`` strictly; an undecodable byte raises :class:`InputError` with its line number."""
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as exc:
        line = _line_of(data, exc.start)
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        bad = data[exc.start:exc.end].hex(" ")
        raise InputError(f"not valid {encoding.upper()}: byte(s) {bad} at column {column} (byte offset "
                         f"{exc.start}): {exc.reason}", path, line) from None
    if text.startswith(BOM):
        text = text[1:]
    return text


def read_text(path: StrPath) -> str:
    """The whole file as a string (strict UTF-8, a leading BOM removed, line endings untouched)."""
    return decode(read_bytes(path), path)


def split_lines(text: str) -> list[str]:
    """Split on ``\\n``; remove one ``\\r`` before it; a trailing newline does not make an extra empty line."""
    if not text:
        return []
    parts = text.split("\n")
    if parts[-1] == "":
        parts.pop()
    return [p[:-1] if p.endswith("\r") else p for p in parts]


def read_lines(path: StrPath) -> list[str]:
    """The lines of a UTF-8 text file (see the module docstring for the exact rules)."""
    return split_lines(read_text(path))


def read_lines_with_fallback(path: StrPath, fallback: str) -> tuple[list[str], list[int]]:
    """Like :func:`read_lines`, but a line that is not valid UTF-8 is decoded with ``fallback`` instead.

    Returns the lines and the 1-based numbers of the lines that needed the fallback, so the caller can record
    the repair (nothing is repaired silently). A line that ``fallback`` cannot decode either raises
    :class:`InputError`. For known, documented quirks of published data only; user input stays strict.
    """
    data = read_bytes(path)
    try:
        return split_lines(decode(data, path)), []
    except InputError:
        pass
    raw = data.split(b"\n")
    if raw and raw[-1] == b"":
        raw.pop()
    lines: list[str] = []
    repaired: list[int] = []
    for number, chunk in enumerate(raw, start=1):
        if chunk.endswith(b"\r"):
            chunk = chunk[:-1]
        try:
            lines.append(chunk.decode("utf-8"))
        except UnicodeDecodeError:
            try:
                lines.append(chunk.decode(fallback))
            except UnicodeDecodeError as exc:
                raise InputError(f"not valid UTF-8 nor {fallback}: byte(s) {chunk[exc.start:exc.end].hex(' ')} "
                                 f"at column {exc.start + 1}", path, number) from None
            repaired.append(number)
    if lines and lines[0].startswith(BOM):
        lines[0] = lines[0][1:]
    return lines, repaired


def iter_json_objects(path: StrPath) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` for every non-blank line of a JSON-lines file; a line that is not a JSON
    object raises :class:`InputError` with its line number."""
    for number, line in enumerate(read_lines(path), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"not valid JSON: {exc.msg} (column {exc.colno})", path, number) from None
        if not isinstance(obj, dict):
            raise InputError(f"expected a JSON object per line, got {type(obj).__name__}", path, number)
        yield number, obj
