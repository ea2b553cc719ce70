"""Overall scores that combine style, content and fluency scores computed by other metrics.

Two layers:

* functions over arrays (segment scores aligned by segment, or system-level numbers):
  :func:`harmonic_mean`, :func:`geometric_mean` (Lai et al. 2022, Fig. 1: of style accuracy and a content score),
  :func:`joint_score` (per-sentence J = mean of STA·SIM·FL, Logacheva et al. 2022 ParaDetox / Krishna et al.),
  :func:`rao_tetreault_combined` (Rao & Tetreault 2018's combined score of formality, fluency and meaning, a
  reconstruction that reproduces their Table 4, see its docstring);
* :func:`combine_result`, which takes a :class:`~styleval.results.ScoreResult` and the names of its metric
  columns, aligns their segment scores per system, and returns a tidy table.

Scales are the caller's: a content score in [0, 100] (BLEU as sacrebleu reports it) must be rescaled to [0, 1]
with ``scale=`` before it is combined with an accuracy in [0, 1].
"""
from __future__ import annotations


from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

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


# ------------------------------------------------------------------------------------ ScoreResult helper
@dataclass(frozen=True)
class Column:
    """A metric column of a ScoreResult and how to bring it to [0, 1]: ``(x - offset) * scale`` (after
    negation for lower-is-better metrics when ``invert``), or an indicator with ``threshold``."""

    metric: str
    scale: float = 1.0
    offset: float = 0.0
    threshold: float | None = None
    higher_is_better: bool = True

    def transform(self, scores: np.ndarray) -> np.ndarray:
        if self.threshold is not None:
            return indicator(scores, self.threshold, self.higher_is_better)
        return (np.asarray(scores, dtype=float) - self.offset) * self.scale


@dataclass
class Combined:
    """Per-system overall scores and the per-segment products behind them."""

    table: pd.DataFrame  # system, score name, value
    segments: dict[str, pd.DataFrame] = field(default_factory=dict)  # system -> per-segment columns


def _col(c: "str | Column") -> Column:
    return c if isinstance(c, Column) else Column(c)


def _aligned(result: Any, system: str, columns: Mapping[str, Column]) -> pd.DataFrame:
    frames = []
    for role, col in columns.items():
        r = result.get(col.metric, system)
        frames.append(pd.Series(col.transform(r.segment_scores), index=list(r.ids), name=role))
    df = pd.concat(frames, axis=1, join="inner")
    if any(len(f) != len(df) for f in frames):
        raise InputError(f"system {system!r}: the metric columns cover different segments")
    return df


def combine_result(result: Any, *, style: "str | Column", content: "str | Column",
                   fluency: "str | Column | None" = None) -> Combined:
    """Overall scores per system from a ScoreResult's segment scores.

    Per system: ``hm`` and ``gm`` of the system means of style and content (Lai et al. 2022 Fig. 1), and, when a
    fluency column is given, ``j`` = mean over segments of style·content·fluency (ParaDetox J).
    """
    cols = {"style": _col(style), "content": _col(content)}
    if fluency is not None:
        cols["fluency"] = _col(fluency)
    rows, segs = [], {}
    for system in result.systems:
        df = _aligned(result, system, cols)
        s, c = float(df["style"].mean()), float(df["content"].mean())
        rows += [{"system": system, "score": "hm", "value": harmonic_mean(s, c)},
                 {"system": system, "score": "gm", "value": geometric_mean(s, c)}]
        if fluency is not None:
            df["j"] = joint_segments(df["style"], df["content"], df["fluency"])
            rows.append({"system": system, "score": "j", "value": float(df["j"].mean())})
        segs[system] = df
    return Combined(table=pd.DataFrame(rows), segments=segs)


__all__ = ["harmonic_mean", "geometric_mean", "indicator", "joint_segments", "joint_score", "recalibrate",
           "rao_tetreault_combined", "RT_SCALES", "Column", "Combined", "combine_result"]

