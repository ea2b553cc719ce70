"""The schema of a user set's ``benchmark.json``: every key known, every value of its type, one-line errors naming
the key.

A misspelled key is an error (with the nearest known key), not ignored; ``"exclude": "copy"`` is refused (a list
of system names is meant, not the letters of one); ``"scale"`` must be two finite numbers, low below high;
``"convention"`` is one name or a list of names. Which systems ``exclude`` may name is checked once the judgments
are read (:func:`check_excluded`).
"""
from __future__ import annotations

import difflib
import math
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

from ..errors import InputError

#: every key of benchmark.json and what its value must be
KEYS: dict[str, str] = {
    "aspects": 'an object {"HUMAN_ASPECT": "style" | "content" | "fluency", ...}',
    "scale": "a list of two numbers [low, high], low below high",
    "convention": "a convention name or a list of them",
    "repeated_ratings": "a name of how several ratings of one key by one annotator are aggregated",
    "exclude": "a list of system names",
    "directions": 'a list of directions ("both" or e.g. "informal->formal")',
    "outputs": "a file name",
    "human": "a file name",
    "stored": "a file name",
    "stored_aspects": 'an object {"STORED_METRIC": "style" | "content" | "fluency", ...}',
    "lower_is_better": "a list of stored metric names",
    "about": "a text",
}


def _fail(where: Path, key: str, got: Any, hint: str = "") -> InputError:
    shown = repr(got) if len(repr(got)) <= 60 else repr(got)[:57] + "..."
    return InputError(f'key "{key}" must be {KEYS[key]}, not {shown}{hint}', where)


def _text(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip())


def _texts(value: Any) -> bool:
    return isinstance(value, list) and all(_text(v) for v in value)


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def check_manifest(data: Any, where: Path, *, kinds: Sequence[str], conventions: Sequence[str]) -> dict[str, Any]:
    """``data`` (the parsed ``benchmark.json`` at ``where``) checked against :data:`KEYS`; returned as it is."""
    if not isinstance(data, dict):
        raise InputError('expected an object with "aspects": {HUMAN_ASPECT: style|content|fluency, ...}', where)
    for key in data:
        if key not in KEYS:
            close = difflib.get_close_matches(str(key), list(KEYS), n=1, cutoff=0.6)
            hint = f'; did you mean "{close[0]}"?' if close else ""
            raise InputError(f'unknown key "{key}"{hint} (keys: {", ".join(KEYS)})', where)
    if "aspects" not in data:
        raise InputError('key "aspects" is missing: give {HUMAN_ASPECT: style|content|fluency, ...}', where)
    for key in ("aspects", "stored_aspects"):
        if key not in data:
            continue
        value = data[key]
        if not isinstance(value, dict) or (key == "aspects" and not value) or not all(_text(k) for k in value):
            raise _fail(where, key, value)
        for name, kind in value.items():
            if kind not in kinds:
                raise InputError(f'key "{key}": the kind of {name!r} must be one of {", ".join(kinds)}, not '
                                 f"{kind!r}", where)
    if "scale" in data:
        scale = data["scale"]
        if not isinstance(scale, list) or len(scale) != 2 or not all(_number(x) for x in scale) or \
                not scale[0] < scale[1]:
            raise _fail(where, "scale", scale, ' (e.g. [1, 5]; "1-5" and NaN are not numbers)')
    if "convention" in data:
        value = data["convention"]
        names = [value] if isinstance(value, str) else value
        if not (_text(value) or (_texts(value) and value)):
            raise _fail(where, "convention", value)
        for name in names:
            if name not in conventions:
                raise InputError(f'key "convention": unknown convention {name!r} (conventions: '
                                 f'{", ".join(conventions)})', where)
    for key in ("repeated_ratings", "outputs", "human", "stored", "about"):
        if key in data and not (_text(data[key]) or (key == "about" and data[key] == "")):
            raise _fail(where, key, data[key])
    for key in ("exclude", "directions", "lower_is_better"):
        if key in data and not _texts(data[key]):
            hint = f" (write [{data[key]!r}])" if isinstance(data[key], str) else ""
            raise _fail(where, key, data[key], hint)
    return data


def check_excluded(exclude: Iterable[str], judged: Iterable[str], where: Path,
                   more: Callable[[], Iterable[str]] | None = None) -> None:
    """Refuse a system name in ``exclude`` that is none of the ``judged`` systems nor, when ``more`` is given, of
    the systems it returns (those of the outputs table, read only when a name is not judged)."""
    known = set(judged)
    names = [n for n in exclude if n not in known]
    if names and more is not None:
        known |= set(more())
    for name in names:
        if name not in known:
            close = difflib.get_close_matches(name, sorted(known), n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise InputError(f'key "exclude": no system is named {name!r}{hint} (systems: '
                             f'{", ".join(sorted(known))})', where)
