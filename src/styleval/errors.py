"""Exception types. Library code raises these; only the CLI turns them into messages and exit codes."""
from __future__ import annotations

from pathlib import Path


class StyleEvalError(Exception):
    """Base class of every error styleval raises on purpose."""


class InputError(StyleEvalError, ValueError):
    """Bad input data: names the file and, where known, the 1-based line."""

    def __init__(self, problem: str, path: str | Path | None = None, line: int | None = None) -> None:
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
        msg = f"unknown {kind} {name!r}; available: {', '.join(self.available) or '(none)'}"
        super().__init__(msg)

    def __str__(self) -> str:  # KeyError would quote the message otherwise
        return self.args[0]


class ResourceUnavailableError(StyleEvalError, RuntimeError):
    """A known model or lexicon that is not installed on this machine; says how to get it."""
