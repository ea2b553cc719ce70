"""Low-level text helpers shared by the readers: strict UTF-8, one line per ``\\n``, nothing else touched.

Rules (the same for every reader):

* A file is decoded as UTF-8, strictly: an undecodable byte raises :class:`InputError` naming the file and the
  1-based line of the byte, and saying how to read or convert a file in another encoding. A leading byte-order mark
  (an encoding artefact, not text) is removed.
* A user's files in another encoding: ``encoding=`` of the readers, or :func:`inputs_encoded` around any reading
  (``styleval ... --encoding latin-1``). The public datasets' readers always read UTF-8, their documented encoding.
* Lines are split on ``\\n`` only (not on the other characters :meth:`str.splitlines` treats as breaks, such as
  U+2028 or form feed, which can occur inside a sentence). Only the line ending (``\\n`` or ``\\r\\n``) is
  removed; leading/trailing spaces, tabs and everything else are kept.
* A final line without a trailing newline is a normal line; a trailing newline does not start an extra line.
* A missing file raises :class:`InputError` saying that it does not exist.
"""
from __future__ import annotations

import codecs
import json
import os
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any, Iterator, Union

from ..errors import InputError

StrPath = Union[str, "os.PathLike[str]"]

BOM = "\ufeff"

#: the encoding of users' input files where a reader is not given one: UTF-8 unless :func:`inputs_encoded` says
_INPUT_ENCODING: ContextVar[str] = ContextVar("styleval_input_encoding", default="utf-8")


def check_encoding(name: str) -> str:
    """The codec's canonical name (``latin1`` -> ``iso8859-1``); :class:`InputError` for a name Python does not
    know, or for one that is not a text encoding."""
    try:
        info = codecs.lookup(name)
    except LookupError:
        raise InputError(f"unknown encoding {name!r} (e.g. utf-8, latin-1, cp1252, utf-16)") from None
    if not getattr(info, "_is_text_encoding", True):
        raise InputError(f"{name!r} is not a text encoding")
    return info.name


def input_encoding(encoding: str | None = None) -> str:
    """``encoding`` when given, else the encoding of input files in this context (UTF-8 by default)."""
    return encoding or _INPUT_ENCODING.get()


@contextmanager
def inputs_encoded(encoding: str | None) -> Iterator[None]:
    """Within the block, readers given no encoding read users' files in ``encoding`` (None: UTF-8); what
    ``styleval VERB --encoding NAME`` does for the whole verb."""
    token = _INPUT_ENCODING.set(check_encoding(encoding) if encoding else "utf-8")
    try:
        yield
    finally:
        _INPUT_ENCODING.reset(token)


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


def encoding_advice(encoding: str, path: StrPath) -> str:
    """What to do about a file that ``encoding`` cannot decode: name its encoding, or convert it to UTF-8."""
    shown = "FILE" if str(path).startswith("<") else str(path)
    name = "UTF-8" if codecs.lookup(encoding).name == "utf-8" else encoding
    return (f"if the file is not {name}, give its encoding (--encoding latin-1, or cp1252 for Windows text; "
            f"encoding= in Python) or convert it: iconv -f latin1 -t utf-8 {shown} > converted.txt")


def decode(data: bytes, path: StrPath, encoding: str = "utf-8") -> str:
    """Decode ``data`` strictly; an undecodable byte raises :class:`InputError` with its line number and
    :func:`encoding_advice`."""
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as exc:
        line = _line_of(data, exc.start)
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        bad = data[exc.start:exc.end].hex(" ")
        raise InputError(f"not valid {encoding.upper()}: byte(s) {bad} at column {column} (byte offset "
                         f"{exc.start}): {exc.reason}; {encoding_advice(encoding, path)}", path, line) from None
    if text.startswith(BOM):
        text = text[1:]
    return text


def read_text(path: StrPath, encoding: str | None = None) -> str:
    """The whole file as a string (strict decoding in ``encoding``, by default :func:`input_encoding`; a leading
    BOM removed, line endings untouched)."""
    return decode(read_bytes(path), path, input_encoding(encoding))


def split_lines(text: str) -> list[str]:
    """Split on ``\\n``; remove one ``\\r`` before it; a trailing newline does not make an extra empty line."""
    if not text:
        return []
    parts = text.split("\n")
    if parts[-1] == "":
        parts.pop()
    return [p[:-1] if p.endswith("\r") else p for p in parts]


def read_lines(path: StrPath, encoding: str | None = None) -> list[str]:
    """The lines of a text file, UTF-8 unless ``encoding`` or :func:`inputs_encoded` says otherwise (see the
    module docstring for the exact rules)."""
    return split_lines(read_text(path, encoding))


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


def iter_json_objects(path: StrPath, encoding: str | None = None) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` for every non-blank line of a JSON-lines file (decoded as :func:`read_lines`
    does); a line that is not a JSON object raises :class:`InputError` with its line number."""
    for number, line in enumerate(read_lines(path, encoding), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"not valid JSON: {exc.msg} (column {exc.colno})", path, number) from None
        if not isinstance(obj, dict):
            raise InputError(f"expected a JSON object per line, got {type(obj).__name__}", path, number)
        yield number, obj
