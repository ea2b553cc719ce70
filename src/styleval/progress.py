"""The progress callback every long-running library function accepts, and the hook model code reports through.

Library code never prints: it calls ``progress(description, done, total)`` when given one, and the CLI turns the
calls into a progress display (:mod:`styleval.cli.progress`). A description names a stage ("scoring bleu/src ·
copy", "loading style model formality-classifier-pt16") and may end with what ``done`` and ``total`` count in
brackets: ``"scoring bleu/src · copy [segments]"``; :func:`split_unit` takes it apart.

Model code deep inside a computation (loading a model, encoding texts in batches) is not handed a callback: it
calls :func:`report`, which reaches the callback of the nearest enclosing :func:`reporting` block, if any. A
function given ``progress`` opens such a block around its work, so its caller also sees the models load and the
batches go by. Outside any block :func:`report` does nothing.
"""
from __future__ import annotations

import contextlib
import contextvars
import re
from typing import Callable, Iterator

Progress = Callable[[str, int, int], None]
"""Called as ``progress(description, done, total)``."""

_active: contextvars.ContextVar[Progress | None] = contextvars.ContextVar("styleval_progress", default=None)
_UNIT = re.compile(r"^(.*?)\s*\[([^\[\]]+)\]$")


def split_unit(description: str) -> tuple[str, str]:
    """``("scoring bleu/src", "segments")`` from ``"scoring bleu/src [segments]"``; the unit is "" when none is
    named."""
    match = _UNIT.match(description)
    return (match.group(1), match.group(2)) if match else (description, "")


@contextlib.contextmanager
def reporting(progress: Progress | None) -> Iterator[None]:
    """Send what :func:`report` is told inside the block to ``progress`` (None: to nobody)."""
    token = _active.set(progress)
    try:
        yield
    finally:
        _active.reset(token)


def active() -> Progress | None:
    """The callback :func:`report` reaches now, or None."""
    return _active.get()


def report(description: str, done: int, total: int) -> None:
    """Tell the enclosing :func:`reporting` block's callback, if there is one."""
    progress = _active.get()
    if progress is not None:
        progress(description, done, total)


def given_or_active(progress: Progress | None) -> Progress | None:
    """``progress`` when a caller passed one, else the enclosing block's callback (or None)."""
    return progress if progress is not None else _active.get()


@contextlib.contextmanager
def stage(description: str) -> Iterator[None]:
    """Report a stage without counts (0 of 1 at the start, 1 of 1 at the end), e.g. loading a model."""
    report(description, 0, 1)
    yield
    report(description, 1, 1)


#: whether third-party libraries (transformers' "Loading weights" bars ...) may print while models load: not
#: unless a caller asks (``styleval --verbose``); library code does not print
_library_output: contextvars.ContextVar[bool] = contextvars.ContextVar("styleval_library_output", default=False)


@contextlib.contextmanager
def library_output(allowed: bool) -> Iterator[None]:
    """Inside the block, let third-party libraries print their own bars and logs (``allowed``) or not."""
    token = _library_output.set(allowed)
    try:
        yield
    finally:
        _library_output.reset(token)


def library_output_allowed() -> bool:
    """True inside ``library_output(True)``."""
    return _library_output.get()
