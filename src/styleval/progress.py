"""The progress callback every long-running library function accepts.

Library code never prints: it calls ``progress(description, done, total)`` when given one, and the CLI turns the
calls into a progress bar (:mod:`styleval.cli.progress`).
"""
from __future__ import annotations

from typing import Callable

Progress = Callable[[str, int, int], None]
"""Called as ``progress(description, done, total)``."""
