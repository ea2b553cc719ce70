"""Low-level text helpers shared by the readers: strict UTF-8, one line per ``\\n``, nothing else touched.

Rules (the same for every reader):

* A file is decoded as UTF-8, strictly: an undecodable byte raises :class:`InputError` naming the file and the
  1-based line of the byte, and saying how to read or convert a file in another encoding. A leading byte-order mark
  (an encoding artefact, not text) is removed.
* A user's files in another encoding: ``encoding=`` of the readers, or :func:`inputs_encoded` around any reading
  (``styleval ... --encoding latin-1``). The public datasets' readers always read UTF-8, their documented encoding.
* Lines are split on ``\\n`` only (not on the other characters :meth:`str.splitlines` treats as breaks, such as
  U+2028, which can occur inside a sentence). Only the line ending (``\\n`` or ``\\r\\n``) is removed;
  leading/trailing spaces, tabs and everything else are kept.
* Text holds no control characters: a NUL or any other C0 control but tab (form feed and vertical tab included),
  DEL, a C1 control (U+0080-U+009F, the trace of cp1252 text read as latin-1), a carriage return that does not end
  a line (a file with CR-only line endings) or a byte-order mark after the start (files joined with theirs) is an
  :class:`InputError` naming the file, the line and the column (:func:`check_characters`).
* A final line without a trailing newline is a normal line; a trailing newline does not start an extra line.
* A missing file raises :class:`InputError` saying that it does not exist.
"""
from __future__ import annotations

import codecs
import json
import os
import re
import unicodedata
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


#: encodings tried on a file that is not valid in the one asked for (common ones first); single-byte Latin
#: encodings decode any bytes, so each candidate must also read plausibly (:func:`plausible_encodings`)
CANDIDATE_ENCODINGS = ("utf-8", "cp1252", "latin-1", "iso8859-15", "gbk", "big5", "shift_jis", "euc-kr",
                       "cp1251", "koi8-r", "cp1250", "iso8859-7")
#: letter scripts that share words (Japanese mixes kanji and kana); any other mix inside one word is mojibake
_SCRIPT_GROUPS = {"HIRAGANA": "CJK", "KATAKANA": "CJK", "HANGUL": "CJK", "CJK": "CJK"}
_LETTERS = re.compile(r"[^\W\d_]+")


def _script(ch: str) -> str:
    """The script of a letter (``LATIN``, ``CYRILLIC``, ``CJK`` ...) from its Unicode name; "" for other chars."""
    if not ch.isalpha():
        return ""
    first = unicodedata.name(ch, "").split(" ")[0]
    return _SCRIPT_GROUPS.get(first, first)


def implausible_characters(text: str) -> int:
    """How many signs of a wrong decoding ``text`` shows: control, private-use or unassigned characters, modifier
    symbols, broken bars and box or math symbols (``¨¦`` of GBK read as Latin-1, ``─√`` of KOI8-R), and, in words,
    letters of two scripts (``caf茅``), a capital accented letter after a small one (``dšŠcor``), a Latin word made
    mostly of accented letters (``ïðèâåò``), or a stray letter of another script in ASCII text (``Ђ5``)."""
    odd = 0
    for ch in text:
        cat = unicodedata.category(ch)
        if (cat in ("Cc", "Co", "Cn", "Cs") and ch not in "\t\r") or cat == "Sk" \
                or ch in "\u00a6\u00a4\ufffd" or "\u2190" <= ch <= "\u2bff":
            odd += 1
    words = _LETTERS.findall(text)
    ascii_letters = sum(c.isascii() for w in words for c in w)
    all_letters = sum(len(w) for w in words)
    for word in words:
        scripts = {_script(c) for c in word} - {""}
        odd += max(len(scripts) - 1, 0)
        if scripts == {"LATIN"}:
            if len(word) >= 5 and 3 * sum(not c.isascii() for c in word) > 2 * len(word):
                odd += 1
            odd += sum(a.islower() and b.isupper() and not b.isascii() for a, b in zip(word, word[1:]))
        elif scripts and len(word) <= 2 and 2 * ascii_letters >= all_letters:
            odd += 1
    return odd


def plausible_encodings(data: bytes, failed: str, limit: int = 3) -> list[tuple[str, str]]:
    """``(encoding, the first bad line decoded with it)`` for the candidates (:data:`CANDIDATE_ENCODINGS`, other
    than ``failed``) that decode the whole file and whose decodings of the lines ``failed`` cannot decode look
    like text (no :func:`implausible_characters`); at most ``limit``, common encodings first."""
    bad_lines = []
    for chunk in data.split(b"\n"):
        try:
            chunk.decode(failed)
        except UnicodeDecodeError:
            bad_lines.append(chunk)
            if len(bad_lines) == 20:
                break
    found: list[tuple[str, str]] = []
    failed_name = codecs.lookup(failed).name
    for candidate in CANDIDATE_ENCODINGS:
        if codecs.lookup(candidate).name == failed_name:
            continue
        try:
            data.decode(candidate)
            decoded = [line.decode(candidate) for line in bad_lines]
        except UnicodeDecodeError:
            continue
        if decoded and not any(implausible_characters(line) for line in decoded):
            found.append((candidate, decoded[0].rstrip("\r")))
            if len(found) == limit:
                break
    return found


def encoding_advice(encoding: str, path: StrPath, data: bytes | None = None) -> str:
    """What to do about a file that ``encoding`` cannot decode: the encodings its bytes read plausibly in (when
    ``data`` is given and some do), or how to name its encoding or convert it to UTF-8."""
    shown = "FILE" if str(path).startswith("<") else str(path)
    name = "UTF-8" if codecs.lookup(encoding).name == "utf-8" else encoding
    if data is not None:
        found = plausible_encodings(data, encoding)
        if found:
            best, line = found[0]
            excerpt = line if len(line) <= 60 else line[:57] + "..."
            others = "".join(f" or {e}" for e, _ in found[1:])
            return (f"it reads as {best}{others} (the line as {best}: {excerpt!r}): give --encoding {best} "
                    f"(encoding= in Python) or convert it: iconv -f {best} -t utf-8 {shown} > converted.txt")
        return (f"no common encoding reads it plausibly (tried {', '.join(CANDIDATE_ENCODINGS)}); find its "
                f"encoding (e.g. `file -i {shown}`) and give --encoding NAME, or convert it to UTF-8")
    return (f"if the file is not {name}, give its encoding (--encoding latin-1, or cp1252 for Windows text; "
            f"encoding= in Python) or convert it: iconv -f latin1 -t utf-8 {shown} > converted.txt")


def decode(data: bytes, path: StrPath, encoding: str = "utf-8") -> str:
    """Decode ``data`` strictly; an undecodable byte raises :class:`InputError` with its line number and
    :func:`encoding_advice`, and so does a character no text holds (:func:`check_characters`)."""
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as exc:
        line = _line_of(data, exc.start)
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        bad = data[exc.start:exc.end].hex(" ")
        utf16 = (" (it starts with a UTF-16 byte-order mark: --encoding utf-16)"
                 if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)) else "")
        raise InputError(f"not valid {encoding.upper()}{utf16}: byte(s) {bad} at column {column} (byte offset "
                         f"{exc.start}): {exc.reason}; {encoding_advice(encoding, path, data)}", path, line) from None
    if text.startswith(BOM):
        text = text[1:]
    if not (codecs.lookup(encoding).name == "utf-8" and clean_utf8(data)):
        check_characters(text, path, encoding)
    return text


#: what no text holds: C0 controls but tab, line feed and carriage return; DEL; C1 controls; a byte-order mark
#: (one at the very start is removed before this check); a carriage return not followed by a line feed
_FORBIDDEN = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ufeff]|\r(?!\n)")
_CONTROL_NAMES = {0x00: "NUL", 0x08: "backspace", 0x0B: "vertical tab", 0x0C: "form feed", 0x1A: "SUB, Ctrl-Z",
                  0x1B: "escape", 0x7F: "DEL"}


#: the bytes :func:`clean_utf8` lets through: tab, line feed, carriage return, printable ASCII, every byte >= 0x80
_PLAIN_BYTES = b"\t\n\r" + bytes(range(0x20, 0x7F)) + bytes(range(0x80, 0x100))
_C1_UTF8 = re.compile(rb"\xc2[\x80-\x9f]")


def clean_utf8(data: bytes) -> bool:
    """True when valid UTF-8 ``data`` surely holds none of the characters :func:`check_characters` refuses (a
    leading byte-order mark aside): a check over the bytes, several times faster than scanning the decoded text.
    False only means that the text must be scanned."""
    if data.translate(None, _PLAIN_BYTES):  # a C0 control but tab, LF, CR; or DEL
        return False
    if b"\r" in data and data.count(b"\r") != data.count(b"\r\n"):
        return False
    if data.find(codecs.BOM_UTF8, len(codecs.BOM_UTF8) if data.startswith(codecs.BOM_UTF8) else 0) != -1:
        return False
    return _C1_UTF8.search(data) is None


def forbidden_character(text: str) -> int | None:
    """The index of the first character of ``text`` that no text holds (see :func:`check_characters`), or None.
    Line feeds, tabs and CR LF pairs are allowed: a caller that wants one line checks for them itself."""
    match = _FORBIDDEN.search(text)
    return None if match is None else match.start()


def character_problem(text: str, index: int, where: str, encoding: str = "utf-8") -> str:
    """What is wrong with ``text[index]`` (found by :func:`forbidden_character`) and what to do, ``where``
    saying where it is (``"column 7"``)."""
    char = text[index]
    code = ord(char)
    if char == "\r":
        return (f"a carriage return (CR) that does not end a line, at {where}: lines end in LF or CR LF; a file "
                "with CR-only line endings (classic Mac OS) converts with: tr '\\r' '\\n' < FILE > converted.txt")
    if char == BOM:
        return (f"a byte-order mark (U+FEFF) inside the text, at {where} (files joined together with their "
                "marks?); remove it: sed 's/\\xEF\\xBB\\xBF//g' FILE > converted.txt")
    if 0x80 <= code <= 0x9F:
        hint = ("the file is probably cp1252 (Windows) text: give --encoding cp1252"
                if codecs.lookup(encoding).name == "iso8859-1" else "is the encoding right?")
        return f"C1 control character U+{code:04X} at {where}: text holds none; {hint}"
    if code == 0:
        return (f"a NUL character (U+0000) at {where}: text holds none (a binary file? UTF-16 without a "
                "byte-order mark? then give --encoding utf-16)")
    name = _CONTROL_NAMES.get(code, "a control character")
    return f"control character U+{code:04X} ({name}) at {where}: text holds no control character but tab"


def check_characters(text: str, path: StrPath, encoding: str = "utf-8", first_line: int = 1) -> None:
    """:class:`InputError` naming ``path``, the line (counting from ``first_line``) and the column of the first
    character of ``text`` that no text holds (:func:`forbidden_character`)."""
    index = forbidden_character(text)
    if index is None:
        return
    line = text.count("\n", 0, index) + first_line
    column = index - (text.rfind("\n", 0, index) + 1) + 1
    raise InputError(character_problem(text, index, f"column {column}", encoding), path, line)


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
    for number, line in enumerate(lines, start=1):
        check_characters(line, path, fallback if number in repaired else "utf-8", number)
    return lines, repaired


class DuplicateKeyError(ValueError):
    """A JSON object names a key twice (:func:`loads_json`)."""

    def __init__(self, key: str) -> None:
        self.key = key
        super().__init__(f"the key {key!r} appears twice in one object (JSON readers keep only the last; say "
                         "which value is meant)")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj: dict[str, Any] = {}
    for key, value in pairs:
        if key in obj:
            raise DuplicateKeyError(key)
        obj[key] = value
    return obj


def loads_json(text: str) -> Any:
    """``json.loads`` that refuses an object with a key twice (:class:`DuplicateKeyError`), where the standard
    parser silently keeps the last value."""
    return json.loads(text, object_pairs_hook=_unique_keys)


def json_object(line: str, path: StrPath, number: int) -> dict[str, Any]:
    """One line of a JSON-lines file as an object; :class:`InputError` naming ``path`` and line ``number`` for
    invalid JSON, a key given twice or a value that is not an object."""
    try:
        obj = loads_json(line)
    except json.JSONDecodeError as exc:
        raise InputError(f"not valid JSON: {exc.msg} (column {exc.colno})", path, number) from None
    except DuplicateKeyError as exc:
        raise InputError(str(exc), path, number) from None
    if not isinstance(obj, dict):
        raise InputError(f"expected a JSON object per line, got {type(obj).__name__}", path, number)
    return obj


def iter_json_objects(path: StrPath, encoding: str | None = None) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` for every non-blank line of a JSON-lines file (decoded as :func:`read_lines`
    does); a line that is not a JSON object, or an object with a key twice, raises :class:`InputError` with its
    line number."""
    for number, line in enumerate(read_lines(path, encoding), start=1):
        if not line.strip():
            continue
        yield number, json_object(line, path, number)
