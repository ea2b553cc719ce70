"""Quality checks computed from stored judgments.

* control items: the share answered as expected (e.g. a copy of the source judged as keeping all content);
* repeated items: the mean absolute difference between the two answers, on the protocol's [0, 1] quality scale;
* degraded items: the annotator's score of an output against their score of the same output after damage, a
  one-sided Wilcoxon signed-rank test that originals score higher (as WMT's Appraise checks "bad references").
  An annotator passes when p < ``alpha``; with fewer than ``min_pairs`` pairs the test is not run (exact one-sided
  p-values cannot fall below 0.05 with fewer than 5 pairs).
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

    @property
    def flagged(self) -> bool:
        """True when a check failed: a failed degraded test, or under half of the control items right."""
        controls_bad = self.controls_total > 0 and self.controls_passed * 2 < self.controls_total
        return bool(self.degraded_passed is False or controls_bad)


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
                   alpha: float = 0.05, min_pairs: int = 5) -> list[AnnotatorQuality]:
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
        report.append(AnnotatorQuality(
            annotator=name, judged=len(mine), median_seconds=statistics.median(seconds) if seconds else None,
            controls_passed=int(passed), controls_total=len(controls), repeat_pairs=len(diffs),
            repeat_mean_abs_diff=float(np.mean(diffs)) if diffs else None, degraded_pairs=len(deg),
            degraded_mean_drop=float(np.mean([o - d for o, d in deg])) if deg else None, degraded_p=p,
            degraded_passed=passed_test))
    return report
