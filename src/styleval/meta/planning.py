"""Planning a human study from a pilot's judgments: how many items and raters to tell two systems apart by D points,
and how many items for a metric's correlation to be known to within a given interval width.

The statistics are :mod:`styleval.stats.power`'s; this module takes the pilot's ratings of one aspect (raw scores,
every system and direction of the pilot unless a task narrows them), runs the grid and picks the smallest design.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Sequence

from styleval.errors import InputError
from styleval.stats import power as stats_power

from .ceiling import rating_cube
from .evaluate import MetaResult, MetaTask, paired_matrices, statistic_function
from .judgments import Judgments

ITEMS = (25, 50, 100, 200, 400, 800)
RATERS = (1, 2, 3, 5)


@dataclass(frozen=True)
class PlanOptions:
    """What a plan asks: a difference ``delta`` (points of the pilot's scale) found with ``power`` at level
    ``alpha``; an interval ``width`` for metric correlations (None: not asked); the grids; resampling sizes."""

    delta: float
    power: float = 0.8
    alpha: float = 0.05
    width: float | None = None
    confidence: float = 0.95
    items: tuple[int, ...] = ITEMS
    raters: tuple[int, ...] = RATERS
    n_studies: int = 400
    n_resamples: int = 400
    seed: int = 0
    test: str = "paired-bootstrap"

    def __post_init__(self) -> None:
        if self.test not in stats_power.TESTS:
            raise InputError(f"the test must be one of {', '.join(stats_power.TESTS)}, not {self.test!r}")
        if isinstance(self.delta, bool) or not isinstance(self.delta, (int, float)) or math.isnan(self.delta):
            raise InputError(f"the difference D must be a number of points, not {self.delta!r}")
        if self.delta == 0:
            raise InputError("a difference D of 0 cannot be detected: any test finds it only at its false alarm "
                             "rate alpha; give the smallest difference that matters (in the pilot's points)")
        stats_power.check_target("power", self.power)
        stats_power.check_target("alpha", self.alpha)
        if self.width is not None and not (isinstance(self.width, (int, float)) and self.width > 0):
            raise InputError(f"the interval width must be a positive number, not {self.width!r}")
        for name, grid in (("items", self.items), ("raters", self.raters)):
            if not grid or any(int(x) != x or x < (2 if name == "items" else 1) for x in grid):
                raise InputError(f"the {name} grid must be whole numbers >= {2 if name == 'items' else 1}; got "
                                 f"{list(grid)}")


@dataclass
class StudyPlan:
    """The power of every design of the grid, the expected interval widths, the smallest designs that reach the
    targets, and the assumptions."""

    aspect: str
    options: PlanOptions
    pilot: stats_power.PilotVariance
    power: dict[tuple[int, int], float]  # (items, raters) -> power
    widths: dict[str, dict[int, float]] = field(default_factory=dict)  # metric -> items -> expected width
    width_task: str = ""
    false_alarm: float = math.nan  # the test's rejection rate without a difference, in the smallest design

    @property
    def smallest(self) -> tuple[int, int] | None:
        """The design with the fewest judgments (items x raters, ties: fewer raters) that reaches the power."""
        ok = [d for d, p in self.power.items() if p >= self.options.power]
        return min(ok, key=lambda d: (d[0] * d[1], d[1])) if ok else None

    def smallest_items(self, metric: str) -> int | None:
        if self.options.width is None:
            return None
        ok = [n for n, w in self.widths.get(metric, {}).items() if not math.isnan(w) and w <= self.options.width]
        return min(ok) if ok else None

    def assumptions(self) -> list[str]:
        o = self.options
        out = [f"the pilot's variance holds in the study: {self.pilot.describe()}",
               "items of the study are like the pilot's (drawn from its items with replacement); each item's true "
               "difference between the two systems varies as the pilot's pairs of systems do around their means",
               "each of the k raters of an item judges both systems' outputs; a rater's deviations from the cell "
               "mean are drawn from the pilot's pooled residuals, independently for the two systems (a rater's own "
               "bias is not assumed to cancel: a cautious plan)",
               f"test: styleval's {o.test} ({o.n_resamples} resamples) on the mean per-item difference, at alpha "
               f"{o.alpha:g}; {o.n_studies} simulated studies per design (power +- "
               f"{2 * math.sqrt(0.25 / o.n_studies):.2f} at most, 2 standard errors)"]
        if not math.isnan(self.false_alarm):
            out.append(f"without a difference this test rejects {self.false_alarm:.1%} of the simulated studies of "
                       f"the smallest design (nominal {o.alpha:g})" + (
                           ": the paired bootstrap's p-value (sacrebleu's) is about a one-sided one, so part of its "
                           "power is false alarms; approx-randomization keeps its level"
                           if self.false_alarm > 1.5 * o.alpha else ""))
        if self.pilot.n_items < 20:
            out.append(f"a pilot of {self.pilot.n_items} items: its variance estimates are rough, and so is the plan")
        if self.widths:
            out.append(f"interval widths: the central {o.confidence:.0%} range of the statistic over {o.n_studies} "
                       f"studies of n inputs drawn from the pilot's inputs, under task {self.width_task}")
        return out

    def describe(self) -> list[str]:
        o = self.options
        lines = [f"study plan for {self.aspect}: find a difference of {o.delta:g} points between two systems with "
                 f"power {o.power:g} at alpha {o.alpha:g}",
                 "power by items (rows) x raters per item (columns):",
                 "  items " + "".join(f"{k:>8}" for k in o.raters)]
        for n in o.items:
            lines.append(f"  {n:>5} " + "".join(f"{self.power[(n, k)]:>8.2f}" for k in o.raters))
        best = self.smallest
        if best is None:
            lines.append(f"no design of the grid reaches power {o.power:g}: give more items (--plan-items) or raters")
        else:
            lines.append(f"smallest design: {best[0]} items x {best[1]} rater(s) per item ({best[0] * best[1]} "
                         f"judgments per system), power {self.power[best]:.2f}")
        for metric, per in self.widths.items():
            lines.append(f"expected {o.confidence:.0%} interval width of {metric}'s correlation: "
                         + ", ".join(f"{n} items {w:.3f}" for n, w in per.items()))
            if o.width is not None:
                n_best = self.smallest_items(metric)
                lines.append(f"  smallest number of inputs for a width <= {o.width:g}: "
                             + (str(n_best) if n_best else "none of the grid"))
        lines.append("assumptions:")
        lines += [f"  - {a}" for a in self.assumptions()]
        return lines

    def to_dict(self) -> dict[str, Any]:
        o = self.options
        best = self.smallest
        return {"aspect": self.aspect, "delta": o.delta, "power_target": o.power, "alpha": o.alpha,
                "grid": [{"items": n, "raters": k, "power": p} for (n, k), p in self.power.items()],
                "smallest_design": None if best is None else {"items": best[0], "raters": best[1],
                                                              "power": self.power[best]},
                "pilot": {"items": self.pilot.n_items, "pairs_of_systems": self.pilot.n_pairs,
                          "item_variance": self.pilot.item_variance, "rater_variance": self.pilot.rater_variance,
                          "mean_raters_per_cell": self.pilot.mean_raters},
                "widths": {m: {"expected": {str(n): (None if math.isnan(w) else w) for n, w in per.items()},
                               "smallest_items": self.smallest_items(m)} for m, per in self.widths.items()},
                "width_target": o.width, "width_task": self.width_task, "confidence": o.confidence,
                "n_studies": o.n_studies, "n_resamples": o.n_resamples, "seed": o.seed, "test": o.test,
                "false_alarm_rate": None if math.isnan(self.false_alarm) else self.false_alarm,
                "assumptions": self.assumptions()}


def study_plan(judgments: Judgments, aspect: str, options: PlanOptions, *, task: MetaTask | None = None,
               metrics: Sequence[MetaResult] = ()) -> StudyPlan:
    """A plan from the pilot's ratings of ``aspect`` (``task`` narrows the systems and direction; default: all);
    ``metrics``: results of a segment-level task whose correlations' interval widths to plan too."""
    base = task or MetaTask(aspect)
    cube = rating_cube(base.with_(human="mean"), judgments)
    pilot = stats_power.pilot_variance(cube.cube)
    grid = {}
    for n in options.items:
        for k in options.raters:
            grid[(int(n), int(k))] = stats_power.simulated_power(
                pilot, int(n), int(k), options.delta, alpha=options.alpha, n_studies=options.n_studies,
                n_resamples=options.n_resamples, seed=options.seed, test=options.test)
    plan = StudyPlan(aspect, options, pilot, grid)
    design = plan.smallest or next(iter(grid))
    plan.false_alarm = stats_power.simulated_power(
        pilot, design[0], design[1], 0.0, alpha=options.alpha, n_studies=options.n_studies,
        n_resamples=options.n_resamples, seed=options.seed, test=options.test, allow_zero=True)
    for result in metrics:
        fn = statistic_function(result.task)
        plan.width_task = result.task.name
        for metric, frame in result.oriented.items():
            m, _, h = paired_matrices(result.task, frame, frame)
            plan.widths[metric] = stats_power.interval_widths(m, h, fn, options.items, n_studies=options.n_studies,
                                                              confidence=options.confidence, seed=options.seed)
    return plan
