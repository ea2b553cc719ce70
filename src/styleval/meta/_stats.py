"""The statistics the meta-evaluation layer uses, from :mod:`styleval.stats` (one import site for the package).

The meta layer never computes a correlation itself.
"""
from __future__ import annotations

from styleval.stats.correlation import (  # noqa: F401  (re-exports)
    SEGMENT_METHODS,
    CorrelationResult,
    SegmentStatistic,
    orient,
    pearson,
    segment_level,
    system_level,
)

__all__ = ["SEGMENT_METHODS", "CorrelationResult", "SegmentStatistic", "orient", "pearson", "segment_level",
           "system_level"]
