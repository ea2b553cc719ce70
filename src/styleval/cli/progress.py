"""The progress display behind the library's ``progress(description, done, total)`` callback.

On a terminal (stderr is a tty) one tqdm line shows the current stage and its counts, e.g.
``scoring 3/15 sentence_cosine/src · rewrite: encoding texts  42%|████▏     | 840/2,000 texts [00:09<00:12]``; it
is redrawn twice a second, so the elapsed time moves during a long batch, and erased when the work ends. Where
stderr is not a terminal (a CI log, a file) nothing is shown unless ``--progress`` asks, and then one plain line
per stage, printed when it starts, and a "still running" line every ``LINE_INTERVAL`` seconds while a stage (loading
a model, a long batch) says nothing. ``--no-progress`` and ``--quiet`` turn it off. :func:`configure` takes those
flags once per command (:func:`styleval.cli.main.main` calls it); a verb asks for its display with :func:`make`
and runs its work inside ``with make(...) as bar:``, which erases the line before the results print.
"""
from __future__ import annotations

import os
import sys
import threading
import time
import warnings
from typing import Any, TextIO

from tqdm import tqdm

from ..progress import reporting, split_unit

#: the flags of the command being run: ``force`` (--progress), ``off`` (--no-progress or --quiet)
_settings = {"force": False, "off": False}
_open: list["ProgressDisplay"] = []
#: seconds between the plain lines of a long counted stage (``--progress`` where stderr is not a terminal)
LINE_INTERVAL = 15.0


def configure(*, force: bool = False, off: bool = False) -> None:
    """The command's output flags: ``force`` shows progress where stderr is no terminal, ``off`` shows none."""
    _settings["force"], _settings["off"] = bool(force), bool(off)


def _size(stream: TextIO) -> tuple[int, int]:
    """The terminal's columns and rows; 80 and 24 where it reports none (a pseudo-terminal that was never sized
    reports 0 x 0, and tqdm then draws nothing)."""
    try:
        size = os.get_terminal_size(stream.fileno())
        columns, rows = size.columns, size.lines
    except (OSError, ValueError, AttributeError):
        columns = rows = 0
    return columns if columns > 0 else 80, rows if rows > 0 else 24


class ProgressDisplay:
    """A ``progress(description, done, total)`` callback that draws on stderr; close it before printing results
    (or use it as a context manager)."""

    def __init__(self, enabled: bool = True, stream: TextIO | None = None, *, force: bool | None = None,
                 interval: float = LINE_INTERVAL) -> None:
        self.stream = stream if stream is not None else sys.stderr
        terminal = self.stream.isatty()
        forced = _settings["force"] if force is None else force
        self.mode = "off" if not enabled or _settings["off"] else \
            "terminal" if terminal else "lines" if forced else "off"
        self.interval = interval
        self._last_stage, self._last_at = "", 0.0  # the stage of the last plain line, and when it was written
        self._series: dict[tuple[str, int], tuple[float, int]] = {}  # (unit, total) -> (time, count) it began
        self._counts: dict[tuple[str, int], int] = {}  # (unit, total) -> the last count heard
        self.enabled = self.mode != "off"
        self._bar: tqdm | None = None
        self._unit = ""
        self._lock = threading.RLock()
        self._ticker: threading.Thread | None = None
        self._stop = threading.Event()
        self._showwarning: Any = None
        self._started = time.monotonic()
        self._scopes: list[Any] = []
        self._printed: set[str] = set()
        self._current: tuple[str, str, int, int, float] | None = None  # the stage heard last, and since when

    # -- the callback -----------------------------------------------------------------------------------
    def __call__(self, description: str, done: int, total: int) -> None:
        if self.mode == "off":
            return
        stage, unit = split_unit(description)
        with self._lock:
            if self.mode == "lines":
                self._line(stage, unit, done, total)
                return
            self._draw(stage, unit, done, total)

    def _line(self, stage: str, unit: str, done: int, total: int) -> None:
        """A plain line when a stage is first heard of, and again, with its counts, share and time left, every
        ``interval`` seconds while a counted stage runs (a long stage is not one unchanging line)."""
        now = time.monotonic()
        if self._current is None or self._current[0] != stage:
            self._current = (stage, unit, done, total, now)
        else:
            self._current = (stage, unit, done, total, self._current[4])
        if self._ticker is None:
            self._start_ticker()
        counted = bool(unit) and total > 1
        if counted:  # the rate behind "time left": since this count began (it restarts when it goes back)
            began = self._series.get((unit, total))
            if began is None or done < self._counts.get((unit, total), 0):
                self._series[(unit, total)] = (now, done)
            self._counts[(unit, total)] = done
        first = stage not in self._printed
        again = counted and stage == self._last_stage and now - self._last_at >= self.interval and 0 < done < total
        if not (first or again):
            return
        self._printed.add(stage)
        self._last_stage, self._last_at = stage, now
        text = stage
        if counted:
            if unit == "bytes":
                text += f": {_amount(done, unit)} of {_amount(total, unit)} read"
            else:
                text += f": {done:,}/{total:,} {unit}" if done else f" ({total:,} {unit})"
            if done:
                text += f" ({done / total:.0%}{_time_left(self._series[(unit, total)], now, done, total)})"
        self.stream.write(f"styleval: [{now - self._started:6.1f}s] {text}\n")
        self.stream.flush()

    def _still_running(self) -> None:
        """A plain line for a stage that has said nothing for ``interval`` seconds (loading a model, one long
        batch): a silent stage is still a stage, and its time shows."""
        if self._current is None:
            return
        stage, unit, done, total, since = self._current
        now = time.monotonic()
        if done >= total or now - self._last_at < self.interval:
            return
        counts = f", {done:,}/{total:,} {unit}" if unit and total > 1 else ""
        self._last_stage, self._last_at = stage, now
        self.stream.write(f"styleval: [{now - self._started:6.1f}s] {stage}: still running ({now - since:.0f} s"
                          f"{counts})\n")
        self.stream.flush()

    def _draw(self, stage: str, unit: str, done: int, total: int) -> None:
        bar = self._bar
        if bar is None or bar.total != total or done < bar.n or unit != self._unit:  # a new stage
            self._unit = unit
            bytes_ = unit == "bytes"
            counts = "{n_fmt}/{total_fmt}B" if bytes_ else "{n:,}/{total:,} {unit}"
            # a stage without counts (loading a model) shows its elapsed time only
            fmt = "{desc} [{elapsed}]" if total <= 1 else \
                "{desc}: {percentage:3.0f}%|{bar}| " + counts + " [{elapsed}<{remaining}]"
            if bar is None:
                bar = self._bar = self._new_bar(stage, unit, done, total, fmt)
            else:  # restart the count and the clock in place, without drawing the old stage again
                bar.bar_format, bar.unit, bar.unit_scale = fmt, unit, bytes_
                bar.total, bar.n, bar.initial, bar.last_print_n = total, done, done, done
                bar.start_t = bar.last_print_t = time.time()
        bar.set_description_str(stage, refresh=False)
        bar.n = done
        bar.ncols, bar.nrows = _size(self.stream)
        bar.refresh()

    def _new_bar(self, stage: str, unit: str, done: int, total: int, fmt: str) -> tqdm:
        bar = tqdm(desc=stage, total=total, initial=done, unit=unit, unit_scale=unit == "bytes", bar_format=fmt,
                   file=self.stream, leave=False, ncols=_size(self.stream)[0], nrows=_size(self.stream)[1],
                   mininterval=0)
        self._showwarning = warnings.showwarning
        warnings.showwarning = self._warning  # a warning prints above the line, not through it
        _open.append(self)
        self._start_ticker()
        return bar

    def _warning(self, message: Any, category: type[Warning], filename: str, lineno: int, file: Any = None,
                 line: str | None = None) -> None:
        with tqdm.external_write_mode(file=self.stream):  # clear the line, let the warning print, draw it again
            self._showwarning(message, category, filename, lineno, file, line)

    def _start_ticker(self) -> None:
        """Redraw twice a second, so the elapsed time moves while a long step runs."""
        self._stop.clear()

        def tick() -> None:
            while not self._stop.wait(min(0.5, self.interval)):
                with self._lock:
                    if self._bar is not None:
                        self._bar.refresh()
                    elif self.mode == "lines":
                        self._still_running()

        self._ticker = threading.Thread(target=tick, name="styleval-progress", daemon=True)
        self._ticker.start()

    # -- the end ------------------------------------------------------------------------------------------
    def close(self) -> None:
        """Erase the line (terminal) and stop redrawing; the display may be used again afterwards."""
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join()
            self._ticker = None
        with self._lock:
            if self._bar is not None:
                self._bar.close()
                self._bar = None
                if warnings.showwarning == self._warning:
                    warnings.showwarning = self._showwarning
            if self in _open:
                _open.remove(self)
            self._unit = ""
            self._current = None

    def __enter__(self) -> "ProgressDisplay":
        """Inside the block the display also hears what models report without being handed a callback
        (:func:`styleval.progress.report`: loading, encoding batches)."""
        scope = reporting(self if self.enabled else None)
        scope.__enter__()
        self._scopes.append(scope)
        return self

    def __exit__(self, *exc: object) -> None:
        self._scopes.pop().__exit__(None, None, None)
        self.close()


def _amount(n: int, unit: str) -> str:
    """A count as a line shows it: bytes in kB/MB/GB, anything else with thousands separators."""
    if unit != "bytes":
        return f"{n:,}"
    for size, name in ((1e9, "GB"), (1e6, "MB"), (1e3, "kB")):
        if n >= size:
            return f"{n / size:.1f} {name}"
    return f"{n} B"


def _time_left(start: tuple[float, int], now: float, done: int, total: int) -> str:
    """``", about 2 min 10 s left"`` at the rate since ``start`` (time, count); "" before there is a rate."""
    began, done0 = start
    if now <= began or done <= done0 or done >= total:
        return ""
    left = (total - done) / ((done - done0) / (now - began))
    if left < 1:
        return ""
    minutes, seconds = divmod(int(round(left)), 60)
    return f", about {minutes} min {seconds} s left" if minutes else f", about {seconds} s left"


def terminal_progress(force: bool = True) -> ProgressDisplay:
    """A progress display for Python sessions: ``styleval.score(records, metrics, progress=terminal_progress())``,
    or ``with terminal_progress() as bar:`` around several calls (the block also hears the models load). A tqdm
    line where stderr is a terminal; elsewhere (a notebook, a log) plain lines, unless ``force=False``."""
    return ProgressDisplay(True, force=force)


def make(enabled: bool = True) -> ProgressDisplay:
    """The display for a verb; ``enabled=False`` (the verb's own --no-progress or --quiet) shows nothing."""
    return ProgressDisplay(enabled)


def close_all() -> None:
    """Erase every open display (before an error message is printed)."""
    for display in list(_open):
        display.close()
