"""Where a run's time goes: model passes and metric computations record their wall-clock seconds here.

Model wrappers time the forward passes they actually run (cache and memo hits cost nothing and count nothing) with
:func:`timed`; the engine's worker times each metric's statistics. Nothing is recorded unless a log is open
(:func:`time_log`, which ``evaluate`` opens around its run), so the default path pays one ``None`` check. Entries
are keyed ``(kind, name)``: kind ``model`` (a forward pass over texts: the LM, a sentence or token encoder, a style
classifier), ``load`` (loading a model or resource, the imports it triggers included: a first pass that loads its
model counts the load here, not as a pass), ``metric`` (a metric's statistics, model passes and loads included,
for every system), or ``statistics``.
"""
from __future__ import annotations

import contextlib
import threading
import time
from dataclasses import dataclass
from typing import Iterator


@dataclass
class Timing:
    """Wall-clock seconds spent, texts passed (0 where it does not apply) and calls, summed over a run, with the
    process's CPU seconds over the same blocks (on shared cores wall time moves with the load; CPU time much less;
    it counts every thread of the process, so it exceeds wall time when several work at once)."""

    seconds: float = 0.0
    texts: int = 0
    calls: int = 0
    cpu_seconds: float = 0.0

    def to_dict(self) -> dict[str, float | int]:
        return {"seconds": round(self.seconds, 3), "texts": self.texts, "calls": self.calls,
                "cpu_seconds": round(self.cpu_seconds, 3)}


class TimeLog:
    """Timings by ``(kind, name)``, in the order first recorded."""

    def __init__(self) -> None:
        self.entries: dict[tuple[str, str], Timing] = {}
        self._lock = threading.Lock()

    def add(self, kind: str, name: str, seconds: float, texts: int = 0, cpu_seconds: float = 0.0) -> None:
        with self._lock:
            entry = self.entries.setdefault((kind, name), Timing())
            entry.seconds += seconds
            entry.texts += texts
            entry.calls += 1
            entry.cpu_seconds += cpu_seconds

    def of_kind(self, kind: str) -> dict[str, Timing]:
        return {name: t for (k, name), t in self.entries.items() if k == kind}

    def to_dict(self) -> dict[str, dict[str, dict[str, float | int]]]:
        out: dict[str, dict[str, dict[str, float | int]]] = {}
        for (kind, name), t in self.entries.items():
            out.setdefault(kind, {})[name] = t.to_dict()
        return out


#: kinds that count their own time only: one nested in another is taken out of the outer one
OWN_TIME = ("model", "load")

_log: TimeLog | None = None
_nested = threading.local()  # per thread: (wall, CPU) seconds of the passes and loads run inside the current one


@contextlib.contextmanager
def time_log() -> Iterator[TimeLog]:
    """A fresh log for the block (process-wide, so worker threads record into it too); a nested block shares the
    outer one."""
    global _log
    outer = _log
    log = _log = outer if outer is not None else TimeLog()
    try:
        yield log
    finally:
        if outer is None:
            _log = None


@contextlib.contextmanager
def timed(kind: str, name: str, texts: int = 0) -> Iterator[None]:
    """Record the block's wall-clock seconds under ``(kind, name)`` when a log is open. Model passes and loads
    count their own time only: one run inside another (a style classifier's sentence-encoder block, the load of
    the encoder its first pass needs) is taken out of the outer one, so the model and load entries add up to the
    time spent in models and loading them; metric entries include both."""
    log = _log
    if log is None:
        yield
        return
    own = kind in OWN_TIME
    stack = _nested.__dict__.setdefault("stack", [])
    if own:
        stack.append([0.0, 0.0])
    start, cpu_start = time.perf_counter(), time.process_time()
    try:
        yield
    finally:
        elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu_start
        inner = stack.pop() if own else [0.0, 0.0]
        if own and stack:
            stack[-1][0] += elapsed
            stack[-1][1] += cpu
        log.add(kind, name, elapsed - inner[0], texts, cpu - inner[1])
