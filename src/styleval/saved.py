"""Saved results read back: ``styleval.load(path)`` for the JSON that ``styleval score --json`` and ``styleval
evaluate --json`` write (:meth:`ScoreResult.write_json`, :meth:`Evaluation.write_json`)."""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from .errors import InputError

if TYPE_CHECKING:
    from .evaluation.battery import Evaluation
    from .results import ScoreResult


def load(path: str | Path) -> "ScoreResult | Evaluation":
    """The result saved at ``path``: a :class:`~styleval.results.ScoreResult` for ``styleval score --json``, an
    :class:`~styleval.evaluation.Evaluation` for ``styleval evaluate --json``. Scores, intervals, paired tests,
    signatures, flags and segment scores come back as saved; the segment statistics are not saved, so a loaded
    result gives no new intervals or tests."""
    from .evaluation.battery import FORMAT, Evaluation
    from .results import ScoreResult, read_json

    data = read_json(path)
    if data.get("format") == FORMAT:
        return Evaluation.from_dict(data, path)
    if "corpus" in data and "segments" in data:
        return ScoreResult.from_dict(data, path)
    raise InputError("not a styleval result: write one with `styleval score --json FILE` or `styleval evaluate "
                     "--json FILE`", path)
