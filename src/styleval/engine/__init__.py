"""Engines that run the metrics over large inputs: streaming in chunks (flat memory), a resumable statistics
cache, and (optionally) a Ray cluster. Results equal those of :func:`styleval.score` on the same records."""
from __future__ import annotations

from .cache import StatsCache
from .source import TableOptions
from .stream import StreamResult, score_stream

__all__ = ["StatsCache", "StreamResult", "TableOptions", "score_stream"]
