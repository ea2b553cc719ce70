"""Quality checks computed from stored judgments.

* control items: the share answered as expected (e.g. a copy of the source judged as keeping all content);
* repeated items: the mean absolute difference between the two answers, on the protocol's [0, 1] quality scale;
* degraded items: the annotator's score of an output against their score of the same output after damage, a
  one-sided Wilcoxon signed-rank test that originals score higher (as WMT's Appraise checks "bad references").
  An annotator passes when p < ``alpha``; with fewer than ``min_pairs`` pairs the test is not run (exact one-sided
  p-values cannot fall below 0.05 with fewer than 5 pairs);
* default answers: the share of slider answers left at the slider's starting value (the middle), flagged from
  ``max_default_share`` on (the page refuses an untouched slider, but one moved back to the middle, or a scripted
  client, still gives the middle);
* time per item: the median from the signed stamp to the commit, flagged below ``min_median_seconds`` (nobody
  reads a source and a rewrite and answers every question in under two seconds) or above
  ``max_median_seconds``; judgments without a time are counted and flagged too. The stamp alone can be padded
  (open every item, wait, then submit them all at once), so the median time between one commit and the next is
  flagged below ``min_median_seconds`` as well.
"""
from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Sequence

import numpy as np
from scipy import stats

from ..protocols import Protocol, control_passed, quality_values
from ..storage import JudgedRow


@dataclass(frozen=True)
class AnnotatorQuality:
    annotator: str
    judged: int
    median_seconds: float | None
    controls_passed: int
    controls_total: int
    repeat_pairs: int
    repeat_mean_abs_diff: float | None
    degraded_pairs: int
    degraded_mean_drop: float | None
    degraded_p: float | None
    degraded_passed: bool | None
    slider_answers: int = 0
    default_share: float | None = None  # share of slider answers at the starting value
    untimed: int = 0  # judgments stored without a time
    thresholds: QualityThresholds | None = None
    median_gap_seconds: float | None = None  # median time between consecutive commits

    @property
    def reasons(self) -> list[str]:
        """Why the annotator is flagged (empty: no check failed)."""
        th = self.thresholds or QualityThresholds()
        out = []
        if self.degraded_passed is False:
            out.append("degraded items not scored lower")
        if self.controls_total > 0 and self.controls_passed * 2 < self.controls_total:
            out.append("under half of the control items right")
        if (self.default_share is not None and self.slider_answers >= th.min_slider_answers
                and self.default_share >= th.max_default_share):
            out.append(f"mostly default answers ({self.default_share:.0%} at the start value)")
        if self.median_seconds is not None and self.median_seconds < th.min_median_seconds:
            out.append(f"implausibly fast (median {self.median_seconds:.1f} s per item)")
        if self.median_gap_seconds is not None and self.median_gap_seconds < th.min_median_seconds:
            out.append(f"implausibly fast submissions (median {self.median_gap_seconds:.2f} s from one answer to "
                       "the next)")
        if self.median_seconds is not None and self.median_seconds > th.max_median_seconds:
            out.append(f"implausibly slow (median {self.median_seconds:.0f} s per item)")
        if self.untimed:
            out.append(f"{self.untimed} judgment(s) without a time")
        return out

    @property
    def flagged(self) -> bool:
        """True when a check failed (see :attr:`reasons`)."""
        return bool(self.reasons)


@dataclass(frozen=True)
class QualityThresholds:
    """When the dashboard flags an annotator (besides the control and degraded-item tests)."""

    min_median_seconds: float = 2.0
    max_median_seconds: float = 1800.0
    max_default_share: float = 0.5
    min_slider_answers: int = 6  # fewer slider answers than this: the default share is shown, not flagged


def slider_defaults(protocol: Protocol, rows: Sequence[JudgedRow]) -> tuple[int, int]:
    """(slider answers, of which at the slider's starting value) over ``rows``."""
    total = at_start = 0
    for r in rows:
        for aspect in protocol.aspects:
            if aspect.widget != "slider" or aspect.kind != "scale":
                continue
            for value in r.answers.get(aspect.name, []):
                total += 1
                at_start += value == aspect.start
    return total, at_start


def paired_degradation_test(original: Sequence[float], degraded: Sequence[float]) -> float:
    """One-sided p-value that ``original`` scores exceed their ``degraded`` counterparts (Wilcoxon signed-rank).

    All differences zero gives 1.0 (no evidence the annotator tells them apart).
    """
    diff = np.asarray(original, float) - np.asarray(degraded, float)
    if len(diff) == 0 or np.all(diff == 0):
        return 1.0
    return float(stats.wilcoxon(diff, zero_method="wilcox", alternative="greater").pvalue)


def degraded_pairs(protocol: Protocol, rows: Sequence[JudgedRow]) -> dict[str, list[tuple[float, float]]]:
    """Per annotator: (quality of the original output, quality of its degraded copy)."""
    by_key = {(r.annotator, r.item_key): r for r in rows}
    out: dict[str, list[tuple[float, float]]] = {}
    for r in rows:
        if r.kind != "degraded":
            continue
        orig = by_key.get((r.annotator, r.truth["of"]))
        if orig is None or r.truth["system"] not in orig.systems:
            continue
        q_orig = quality_values(protocol, orig.answers, len(orig.systems))[orig.systems.index(r.truth["system"])]
        q_deg = quality_values(protocol, r.answers, len(r.systems))[r.truth["slot"]]
        out.setdefault(r.annotator, []).append((q_orig, q_deg))
    return out


def quality_report(protocol: Protocol, rows: Sequence[JudgedRow], annotators: Sequence[str], *,
                   alpha: float = 0.05, min_pairs: int = 5,
                   thresholds: QualityThresholds | None = None) -> list[AnnotatorQuality]:
    """One :class:`AnnotatorQuality` per annotator (in the given order)."""
    by_key = {(r.annotator, r.item_key): r for r in rows}
    pairs = degraded_pairs(protocol, rows)
    report = []
    for name in annotators:
        mine = [r for r in rows if r.annotator == name]
        controls = [r for r in mine if r.kind == "control"]
        passed = sum(control_passed(protocol, r.answers, r.truth["expect"], r.truth["slot"]) for r in controls)
        diffs = []
        for r in mine:
            if r.kind == "repeat" and (name, r.truth["of"]) in by_key:
                a = quality_values(protocol, r.answers, len(r.systems))
                b = quality_values(protocol, by_key[(name, r.truth["of"])].answers, len(r.systems))
                diffs.append(float(np.mean(np.abs(np.subtract(a, b)))))
        deg = pairs.get(name, [])
        p = passed_test = None
        if len(deg) >= min_pairs:
            p = paired_degradation_test([o for o, _ in deg], [d for _, d in deg])
            passed_test = p < alpha
        seconds = [r.seconds for r in mine if r.seconds is not None]
        commits = sorted(r.submitted_at for r in mine if r.submitted_at is not None)
        gaps = [b - a for a, b in zip(commits, commits[1:])]
        sliders, at_start = slider_defaults(protocol, mine)
        report.append(AnnotatorQuality(
            annotator=name, judged=len(mine), median_seconds=statistics.median(seconds) if seconds else None,
            controls_passed=int(passed), controls_total=len(controls), repeat_pairs=len(diffs),
            repeat_mean_abs_diff=float(np.mean(diffs)) if diffs else None, degraded_pairs=len(deg),
            degraded_mean_drop=float(np.mean([o - d for o, d in deg])) if deg else None, degraded_p=p,
            degraded_passed=passed_test, slider_answers=sliders,
            default_share=at_start / sliders if sliders else None, untimed=len(mine) - len(seconds),
            thresholds=thresholds or QualityThresholds(),
            median_gap_seconds=statistics.median(gaps) if gaps else None))
    return report
