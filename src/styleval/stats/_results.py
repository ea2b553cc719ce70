"""Result containers shared by the statistics modules (re-exported from :mod:`styleval.stats`)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterator

import numpy as np


@dataclass(frozen=True)
class ConfidenceInterval:
    """A bootstrap confidence interval.

    Unpacks as the 3-tuple ``(low, high, mean)`` (``low, high, mean = bootstrap_ci(...)``), where ``mean`` is the
    mean of the resampled statistics; the other fields carry the observed statistic and every choice made.

    ``n_valid`` is the number of resamples whose statistic was defined (not NaN); the interval is computed over
    those only.
    """

    low: float
    high: float
    mean: float
    statistic: float
    confidence: float
    n_resamples: int
    n_valid: int
    options: dict[str, Any] = field(default_factory=dict)

    def __iter__(self) -> Iterator[float]:
        return iter((self.low, self.high, self.mean))


def percentile_interval(values: np.ndarray, confidence: float) -> tuple[float, float, float, int]:
    """Percentile interval (numpy's default linear interpolation) over the non-NaN entries of ``values``."""
    vals = np.asarray(values, dtype=float)
    vals = vals[~np.isnan(vals)]
    if len(vals) == 0:
        return float("nan"), float("nan"), float("nan"), 0
    alpha = (1.0 - confidence) / 2.0
    low, high = np.quantile(vals, [alpha, 1.0 - alpha])
    return float(low), float(high), float(vals.mean()), len(vals)
