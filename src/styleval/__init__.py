"""styleval: evaluation of text style transfer systems."""
from __future__ import annotations

__version__ = "0.1.0"

from .errors import InputError, ResourceUnavailableError, StyleEvalError, UnknownNameError
from .records import Direction, Record

__all__ = ["__version__", "Record", "Direction", "InputError", "StyleEvalError", "UnknownNameError",
           "ResourceUnavailableError", "StatisticsOptions", "score", "score_stream"]


def score(*args, **kwargs):  # noqa: D103 - documented in styleval.scoring.score
    from .scoring import score as _score

    return _score(*args, **kwargs)


def score_stream(*args, **kwargs):  # noqa: D103 - documented in styleval.engine.stream.score_stream
    from .engine.stream import score_stream as _score_stream

    return _score_stream(*args, **kwargs)


def __getattr__(name: str):  # light import of the package: the engine loads on first use
    if name == "StatisticsOptions":
        from .engine.options import StatisticsOptions

        return StatisticsOptions
    raise AttributeError(f"module 'styleval' has no attribute {name!r}")
