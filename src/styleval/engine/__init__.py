"""The scoring engine. The worker side (:mod:`.worker`) computes every metric's statistics for a chunk of records,
one group per system; the driver side (:mod:`.driver`) accumulates the groups and reduces them to a
:class:`~styleval.results.ScoreResult` (:mod:`.resampling`: intervals and paired tests). :func:`styleval.score`
runs them on one chunk in memory; :func:`score_stream` on chunks read from tables (:mod:`.source`), with a
resumable statistics cache (:mod:`.cache`, :mod:`.model_cache`) or Ray actors as workers (:mod:`.ray_engine`).
Results equal those of :func:`styleval.score` on the same records."""
from __future__ import annotations

from .cache import StatsCache
from .options import SIGNIFICANCE_METHODS, StatisticsOptions
from .source import TableOptions
from .stream import StreamOptions, StreamResult, score_stream

__all__ = ["SIGNIFICANCE_METHODS", "StatisticsOptions", "StatsCache", "StreamOptions", "StreamResult", "TableOptions",
           "score_stream"]
