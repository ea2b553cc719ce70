"""Shared checks for metrics that wrap an optional library and a user-supplied checkpoint."""
from __future__ import annotations

import importlib.util
from pathlib import Path

from ...errors import ResourceUnavailableError


def require_library(metric: str, module: str, distribution: str, source: str | None = None) -> None:
    """An error unless ``module`` imports; it says the command that installs it: ``pip install DISTRIBUTION``, or
    ``pip install SOURCE`` for a library that is not on PyPI (``source``: a pip requirement such as a git URL)."""
    if importlib.util.find_spec(module) is None:
        raise ResourceUnavailableError(
            f"metric {metric!r} needs the optional library {distribution!r}, which is not installed here: "
            f"`pip install {source or distribution}` (styleval does not install it for you)")


def require_checkpoint(metric: str, checkpoint: str | None, what: str) -> Path:
    if not checkpoint:
        raise ResourceUnavailableError(
            f"metric {metric!r} needs a local checkpoint: pass checkpoint=<{what}>; no checkpoint ships with "
            "styleval or any PyPI package, and styleval never downloads one at run time")
    path = Path(checkpoint).expanduser()
    if not path.exists():
        raise ResourceUnavailableError(f"metric {metric!r}: checkpoint {str(path)!r} does not exist")
    return path.resolve()
