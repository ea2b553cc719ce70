"""Saved results read back: ``styleval.load(path)`` for the JSON that ``styleval score --json`` and ``styleval
evaluate --json`` write (:meth:`ScoreResult.write_json`, :meth:`Evaluation.write_json`)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import InputError

if TYPE_CHECKING:
    from .evaluation.battery import Evaluation
    from .results import ScoreResult


def read_json(path: str | Path) -> dict[str, Any]:
    """A JSON object from ``path``; a missing or unreadable file, or one that holds no object, is an
    :class:`InputError` naming it."""
    p = Path(path)
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError("file not found", p) from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"not a JSON file: {exc}", p) from None
    if not isinstance(data, dict):
        raise InputError("not a styleval result: the JSON holds no object", p)
    return data


def load(path: str | Path) -> "ScoreResult | Evaluation":
    """The result saved at ``path``: a :class:`~styleval.results.ScoreResult` for ``styleval score --json``, an
    :class:`~styleval.evaluation.Evaluation` for ``styleval evaluate --json``. Scores, intervals, paired tests,
    signatures, flags and segment scores come back as saved; the segment statistics are not saved, so a loaded
    result gives no new intervals or tests."""
    from .evaluation.battery import FORMAT, Evaluation
    from .results import ScoreResult

    data = read_json(path)
    if data.get("format") == FORMAT:
        return Evaluation.from_dict(data, path)
    if "corpus" in data and "segments" in data:
        return ScoreResult.from_dict(data, path)
    raise InputError("not a styleval result: write one with `styleval score --json FILE` or `styleval evaluate "
                     "--json FILE`", path)
