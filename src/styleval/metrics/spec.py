"""The one metric spec grammar of the CLI, Python, JSON and signatures.

A spec is ``NAME`` or ``NAME:key=value;key=value;…``. A value runs to the next ``;``; a value holding ``;``, ``,``,
``"`` or ``\\`` (or spaces at its ends) is written in double quotes, inside which ``\\"`` and ``\\\\`` stand for
``"`` and ``\\``. A bare value is read as a boolean (true/false, yes/no), an integer or a float when it looks like
one, else as text; a quoted value is always text. ``,`` separates metrics in a list (``-m bleu,chrf``); the older
form with ``,`` between parameters (``bleu:lowercase=true,tokenize=intl``) is still read, because it is never
ambiguous: what follows such a ``,`` is ``key=…``, and a metric name holds no ``=``. A ``,`` followed by anything
else inside a bare value is an error (quote the value), never part of the value.

:func:`render_token` writes a parameter value so that :func:`parse_spec` reads the same value back; modifiers
(``+ne[…]``, which :meth:`MetricId.spec` appends) are not part of this grammar and are refused with their name.
"""
from __future__ import annotations

import math
import re
from enum import Enum
from pathlib import PurePath
from typing import Any

from ..errors import InputError

FORM = "NAME:key=value;key=value (quote a value holding ';' or ',' in double quotes)"
_NAME = re.compile(r"^[A-Za-z0-9_.+\-]+$")
_MODIFIER_TAIL = re.compile(r"\+([A-Za-z_]+)(\[[^\]]*\])?$")
_SPECIAL = set(';,"\\')
_KEY_AHEAD = re.compile(r"\s*[A-Za-z_][A-Za-z0-9_]*\s*=")


def _error(spec: str, problem: str) -> InputError:
    return InputError(f"metric spec {spec!r}: {problem}; the form is {FORM}")


def coerce(value: str) -> Any:
    """A bare value read as bool, int or float when it looks like one, else the text itself."""
    low = value.lower()
    if low in ("true", "yes"):
        return True
    if low in ("false", "no"):
        return False
    for cast in (int, float):
        try:
            return cast(value)
        except ValueError:
            pass
    return value


def _split_params(spec: str, rest: str) -> list[tuple[str, Any]]:
    """``key=value;…`` into (key, value) pairs, honouring quotes."""
    items: list[tuple[str, Any]] = []
    i, n = 0, len(rest)
    while i < n:
        # key
        j = i
        while j < n and rest[j] not in "=;,":
            j += 1
        key = rest[i:j].strip()
        if j >= n or rest[j] != "=":
            piece = rest[i:j].strip()
            raise _error(spec, f"parameter {piece!r} is not key=value" if piece else "an empty parameter")
        if not key or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key):
            raise _error(spec, f"{key!r} is not a parameter name")
        i = j + 1
        # value
        while i < n and rest[i] == " ":
            i += 1
        value: Any
        if i < n and rest[i] == '"':
            chars, i = [], i + 1
            while True:
                if i >= n:
                    raise _error(spec, f"the quoted value of {key!r} is not closed")
                c = rest[i]
                if c == "\\" and i + 1 < n and rest[i + 1] in '"\\':
                    chars.append(rest[i + 1])
                    i += 2
                elif c == '"':
                    i += 1
                    break
                else:
                    chars.append(c)
                    i += 1
            value = "".join(chars)
            while i < n and rest[i] == " ":
                i += 1
            if i < n and rest[i] == "," and _KEY_AHEAD.match(rest, i + 1):
                pass
            elif i < n and rest[i] != ";":
                raise _error(spec, f"text after the quoted value of {key!r}: {rest[i:]!r}")
        else:
            j = i
            while j < n and rest[j] not in ";,\"":
                j += 1
            if j < n and rest[j] == "," and not _KEY_AHEAD.match(rest, j + 1):
                raise _error(spec, f"',' inside the value of {key!r} ({rest[i:].strip()!r}): quote a value that "
                                   "holds ','")
            if j < n and rest[j] == '"':
                raise _error(spec, f"a '\"' inside the value of {key!r}: quote the whole value (\\\" inside)")
            value = coerce(rest[i:j].strip())
            i = j
        items.append((key, value))
        if i < n:  # at ';' or at a ',' before the next key=
            i += 1
            if i >= n or not rest[i:].strip():
                break
    return items


def parse_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """``NAME`` or ``NAME:key=value;…`` as the name and its parameters (see the module's grammar)."""
    text = spec.strip()
    name, colon, rest = text.partition(":")
    name = name.strip()
    if not name or not _NAME.match(name):
        hint = " (a ':' must follow the metric name)" if any(c in name for c in ";=,") else ""
        raise _error(spec, f"{name!r} is not a metric name{hint}")
    tail = _MODIFIER_TAIL.search(rest if colon else name)
    if tail and tail.group(1) in modifier_suffixes() and not _inside_quotes(rest, tail.start()):
        raise InputError(f"metric spec {spec!r}: the modifier +{tail.group(1)} is not part of a metric spec; apply it "
                         "with its option (score --entity-aware, --sentiment-aware, --style-mask, --style-remove) or "
                         f"its class around the metric; the spec of the metric alone is "
                         f"{(text[:len(text) - len(tail.group(0))])!r}")
    params: dict[str, Any] = {}
    for key, value in _split_params(spec, rest) if colon else []:
        if key in params:
            raise _error(spec, f"parameter {key!r} given twice")
        params[key] = value
    return name, params


def _inside_quotes(text: str, end: int) -> bool:
    quoted, i = False, 0
    while i < end:
        if quoted and text[i] == "\\":
            i += 2
            continue
        if text[i] == '"':
            quoted = not quoted
        i += 1
    return quoted


def modifier_suffixes() -> frozenset[str]:
    """The suffixes of every content-metric modifier class loaded (``ne``, ``sent``, ``mask``, …)."""
    from . import aware, style  # noqa: F401  (importing defines the modifier classes)
    from .modifiers import ContentModifier

    found: set[str] = set()
    todo = list(ContentModifier.__subclasses__())
    while todo:
        cls = todo.pop()
        todo.extend(cls.__subclasses__())
        suffix = getattr(cls, "suffix", None)
        if isinstance(suffix, str):
            found.add(suffix)
    return frozenset(found)


def render_token(value: Any) -> str:
    """``value`` written so that :func:`parse_spec` reads it back equal (quoted where needed)."""
    if hasattr(value, "metric_id"):  # a composite's component: its own spec, quoted
        return quote(value.metric_id.spec())
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else str(value)
    if isinstance(value, Enum):
        value = value.value
    if isinstance(value, PurePath):
        value = str(value)
    text = str(value)
    return quote(text)


def quote(text: str) -> str:
    """``text`` in double quotes with ``"`` and ``\\`` escaped; bare when it reads back as the same text."""
    if (text and text == text.strip() and not any(c in _SPECIAL for c in text) and isinstance(coerce(text), str)
            and not _MODIFIER_TAIL.search(text)):
        return text
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def split_list(text: str) -> list[str]:
    """A comma-separated list of specs (``bleu,chrf:word_order=2;lowercase=true``), commas inside quotes kept; a
    piece that is ``key=value`` (``=`` before any ``:``) continues the spec before it (the older ``,`` form)."""
    pieces, current, quoted, i = [], [], False, 0
    while i < len(text):
        c = text[i]
        if quoted and c == "\\" and i + 1 < len(text):
            current.append(text[i:i + 2])
            i += 2
            continue
        if c == '"':
            quoted = not quoted
        if c == "," and not quoted:
            pieces.append("".join(current))
            current = []
        else:
            current.append(c)
        i += 1
    pieces.append("".join(current))
    specs: list[str] = []
    for piece in (p.strip() for p in pieces if p.strip()):
        if "=" in piece.partition(":")[0] and specs:
            specs[-1] += ("" if ":" in specs[-1] else ":") + ("" if specs[-1].endswith((":", ";")) else ";") + piece
        else:
            specs.append(piece)
    return specs
