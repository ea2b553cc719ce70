"""Exception types. Library code raises these; only the CLI turns them into messages and exit codes."""
from __future__ import annotations

import difflib
import os
from typing import Any


class StyleEvalError(Exception):
    """Base class of every error styleval raises on purpose."""


class InputError(StyleEvalError, ValueError):
    """Bad input data: names the file and, where known, the 1-based line."""

    def __init__(self, problem: str, path: str | os.PathLike[str] | None = None, line: int | None = None) -> None:
        self.problem = problem
        self.path = None if path is None else str(path)
        self.line = line
        where = ""
        if self.path is not None:
            where = self.path if line is None else f"{self.path}:{line}"
            where += ": "
        super().__init__(f"{where}{problem}")


class UnknownNameError(StyleEvalError, KeyError):
    """A registry lookup failed; the message lists what is available."""

    def __init__(self, kind: str, name: str, available: list[str]) -> None:
        self.kind, self.name, self.available = kind, name, sorted(available)
        close = difflib.get_close_matches(str(name).lower(), [a.lower() for a in self.available], n=3, cutoff=0.6)
        by_lower = {a.lower(): a for a in self.available}
        hint = f"; did you mean {', '.join(by_lower[c] for c in close)}?" if close else ""
        msg = f"unknown {kind} {name!r}{hint}; available: {', '.join(self.available) or '(none)'}"
        super().__init__(msg)

    def __str__(self) -> str:  # KeyError would quote the message otherwise
        return self.args[0]


class ResourceUnavailableError(StyleEvalError, RuntimeError):
    """A known model or lexicon that is not installed on this machine; says how to get it."""


class OutputError(StyleEvalError, OSError):
    """An output destination that cannot be written: names the file and what to do."""

    def __init__(self, problem: str, path: str | os.PathLike[str]) -> None:
        self.problem, self.path = problem, str(path)
        super().__init__(f"{self.path}: {problem}")

    def __str__(self) -> str:
        return f"{self.path}: {self.problem}"


class MissingDependencyError(StyleEvalError, ImportError):
    """An optional dependency is not installed: names the package and the extra that brings it."""

    def __init__(self, package: str, extra: str | None, needed_for: str = "") -> None:
        self.package, self.extra = package, extra
        what = f" (needed for {needed_for})" if needed_for else ""
        hint = f"pip install 'styleval[{extra}]'" if extra else f"pip install {package}"
        super().__init__(f"the optional package {package!r} is not installed{what}; install it with: {hint}")


def check_choice(name: str, value: Any, allowed: tuple[str, ...] | list[str]) -> None:
    """Raise :class:`InputError` unless ``value`` is one of ``allowed`` (``name`` says which setting)."""
    if value not in allowed:
        raise InputError(f"{name} must be one of {', '.join(repr(a) for a in allowed)}; got {value!r}")
