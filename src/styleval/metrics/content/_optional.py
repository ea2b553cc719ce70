"""Shared checks for metrics that wrap an optional library and a user-supplied checkpoint."""
from __future__ import annotations

import importlib.util
from pathlib import Path

from ...errors import ResourceUnavailableError


def require_library(metric: str, module: str, distribution: str) -> None:
    if importlib.util.find_spec(module) is None:
        raise ResourceUnavailableError(
            f"metric {metric!r} needs the optional library {distribution!r}, which is not installed here: "
            f"`pip install {distribution}` (styleval does not install it for you)")


def require_checkpoint(metric: str, checkpoint: str | None, what: str) -> Path:
    if not checkpoint:
        raise ResourceUnavailableError(
            f"metric {metric!r} needs a local checkpoint: pass checkpoint=<{what}>; no checkpoint ships with "
            "styleval or any PyPI package, and styleval never downloads one at run time")
    path = Path(checkpoint).expanduser()
    if not path.exists():
        raise ResourceUnavailableError(f"metric {metric!r}: checkpoint {str(path)!r} does not exist")
    return path.resolve()
