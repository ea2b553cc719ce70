"""Overall scores that combine style, content and fluency scores computed by other metrics.

Two layers:

* functions over arrays (segment scores aligned by segment, or system-level numbers):
  :func:`harmonic_mean`, :func:`geometric_mean` (Lai et al. 2022, Fig. 1: of style accuracy and a content score),
  :func:`joint_score` (per-sentence J = mean of STA·SIM·FL, Logacheva et al. 2022 ParaDetox / Krishna et al.),
  :func:`rao_tetreault_combined` (Rao & Tetreault 2018's combined score of formality, fluency and meaning, a
  reconstruction that reproduces their Table 4, see its docstring);
* the registered metrics ``hm``, ``gm``, ``j`` and ``rt_combined`` (:mod:`.composite`) apply these formulas to
  other metrics' statistics; they are the one definition of the overall scores that evaluate and score use.

The functions take scores already in [0, 1] (BLEU ÷ 100); the composite metrics map each component with its own
declared range (:meth:`styleval.metrics.base.Metric.to_unit`).
"""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from ...errors import InputError


def _arr(x: Any, name: str) -> np.ndarray:
    a = np.asarray(x, dtype=float)
    if a.ndim > 1:
        raise InputError(f"{name}: expected a number or a 1-D array, got shape {a.shape}")
    return a


def _check_unit(a: np.ndarray, name: str) -> None:
    finite = a[np.isfinite(a)]
    if finite.size and (finite.min() < -1e-9 or finite.max() > 1 + 1e-9):
        raise InputError(f"{name} must lie in [0, 1] (rescale it first, e.g. BLEU/100); "
                         f"found values in [{finite.min():g}, {finite.max():g}]")


def harmonic_mean(style: Any, content: Any) -> np.ndarray | float:
    """``2·s·c / (s + c)`` (0 where both are 0); inputs in [0, 1], elementwise or on system numbers."""
    s, c = _arr(style, "style"), _arr(content, "content")
    _check_unit(s, "style")
    _check_unit(c, "content")
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(s + c > 0, 2 * s * c / (s + c), 0.0)
    return float(out) if out.ndim == 0 else out


def geometric_mean(style: Any, content: Any) -> np.ndarray | float:
    """``sqrt(s·c)``; inputs in [0, 1]."""
    s, c = _arr(style, "style"), _arr(content, "content")
    _check_unit(s, "style")
    _check_unit(c, "content")
    out = np.sqrt(s * c)
    return float(out) if out.ndim == 0 else out


def indicator(scores: Any, threshold: float, higher_is_better: bool = True) -> np.ndarray:
    """1 where a score passes the threshold (``>=``; ``<=`` for lower-is-better scores), else 0."""
    a = _arr(scores, "scores")
    return (a >= threshold if higher_is_better else a <= threshold).astype(float)


def joint_segments(sta: Any, sim: Any, fl: Any) -> np.ndarray:
    """Per-sentence products STA·SIM·FL (each in [0, 1]: indicators or probabilities/similarities)."""
    a, b, c = _arr(sta, "sta"), _arr(sim, "sim"), _arr(fl, "fl")
    if not (a.shape == b.shape == c.shape):
        raise InputError(f"joint score: STA, SIM and FL have {a.size}, {b.size} and {c.size} segments")
    for arr, name in ((a, "sta"), (b, "sim"), (c, "fl")):
        _check_unit(arr, name)
    return a * b * c


def joint_score(sta: Any, sim: Any, fl: Any) -> float:
    """J = mean over sentences of STA·SIM·FL (ParaDetox, Logacheva et al. 2022)."""
    seg = joint_segments(sta, sim, fl)
    return float(np.mean(seg)) if seg.size else float("nan")


#: The human rating scales of Rao & Tetreault (2018, section 5.1): formality -3..+3, fluency 1..5 (Heilman et al.
#: 2014), meaning 1..6 (STS). The combined score divides each aspect by half its scale's range (3, 2, 2.5).
RT_SCALES: dict[str, tuple[float, float]] = {"formality": (-3.0, 3.0), "fluency": (1.0, 5.0),
                                             "meaning": (1.0, 6.0)}


def recalibrate(values: Any, low: float, high: float) -> np.ndarray:
    """Linear map of ``[low, high]`` onto ``[0, 1]``, clipped."""
    if not high > low:
        raise InputError(f"recalibration needs high > low, got [{low}, {high}]")
    return np.clip((_arr(values, "values") - low) / (high - low), 0.0, 1.0)


def rao_tetreault_combined(formality: Any, fluency: Any, meaning: Any, *,
                           scales: Mapping[str, tuple[float, float]] | None = None,
                           offset: float = 1.5) -> np.ndarray | float:
    """The "combined" score of Rao & Tetreault (2018, Table 4) from formality, fluency and meaning.

    ``combined = f / (range_f / 2) + g / (range_g / 2) + m / (range_m / 2) + offset``; with the paper's scales
    (``RT_SCALES``: formality -3..3, fluency 1..5, meaning 1..6) that is ``f/3 + g/2 + 2m/5 + 1.5``.

    Provenance: the paper says only that the three scores are "recalibrated to normalize for different ranges" and
    combined. This formula is a reconstruction that reproduces all twelve combined values of its Table 4 (human and
    automatic columns, six systems) from the three criteria within 0.05, ten of them within 0.006
    (tests/test_overall.py). Up to the constant it is twice the sum of the three min-max normalised scales, so it
    ranks and correlates exactly like an equal-weight sum of the normalised aspects; the constant 1.5 only places
    the numbers where the paper's are. The paper applies the same formula to its automatic scorers' outputs
    (PT16 formality, H14 fluency, HE15 meaning) as to the human ratings, so pass either. Inputs are not clipped.
    For the formal->informal direction pass ``formality`` negated (the target is informality).
    """
    sc = {**RT_SCALES, **(scales or {})}
    parts = []
    for name, values in (("formality", formality), ("fluency", fluency), ("meaning", meaning)):
        low, high = sc[name]
        if not high > low:
            raise InputError(f"combined score: the {name} scale needs high > low, got [{low}, {high}]")
        parts.append(_arr(values, name) / ((high - low) / 2.0))
    if not (parts[0].shape == parts[1].shape == parts[2].shape):
        raise InputError("combined score: formality, fluency and meaning have different lengths")
    out = parts[0] + parts[1] + parts[2] + float(offset)
    return float(out) if out.ndim == 0 else out


__all__ = ["harmonic_mean", "geometric_mean", "indicator", "joint_segments", "joint_score", "recalibrate",
           "rao_tetreault_combined", "RT_SCALES"]
