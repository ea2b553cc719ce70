"""styleval: evaluation of text style transfer systems."""
from __future__ import annotations

__version__ = "0.1.0"

from importlib import import_module
from typing import TYPE_CHECKING, Any

from .errors import InputError, ResourceUnavailableError, StyleEvalError, UnknownNameError
from .records import Direction, Record

if TYPE_CHECKING:  # type checkers see the real objects; at run time they load on first use (``__getattr__``)
    from .engine.options import StatisticsOptions
    from .engine.stream import StreamOptions, score_stream
    from .evaluation import evaluate
    from .saved import load
    from .scoring import score

__all__ = ["__version__", "Record", "Direction", "InputError", "StyleEvalError", "UnknownNameError",
           "ResourceUnavailableError", "StatisticsOptions", "StreamOptions", "score", "score_stream",
           "evaluate", "load", "terminal_progress"]

#: names whose modules load on first use, so that ``import styleval`` stays light (the engine imports pandas)
_LAZY = {"score": "scoring", "evaluate": "evaluation", "load": "saved",
         "score_stream": "engine.stream", "StatisticsOptions": "engine.options",
         "StreamOptions": "engine.stream", "terminal_progress": "cli.progress"}


def __getattr__(name: str) -> Any:
    """The engine's entry points, imported on first access: ``styleval.score`` *is* :func:`styleval.scoring.score`
    (its signature and docstring show in ``help``)."""
    if name in _LAZY:
        value = getattr(import_module(f".{_LAZY[name]}", __name__), name)
        globals()[name] = value  # later accesses skip this function
        return value
    raise AttributeError(f"module 'styleval' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
