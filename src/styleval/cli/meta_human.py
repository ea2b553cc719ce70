"""``styleval meta`` options about the humans themselves: ``--ceiling`` (each task's human ceiling and one rater
against the rest), ``--strata`` (figures where the raters agree and where they do not) and ``--plan`` (how many
items and raters a study needs, from pilot judgments). The work is done by :mod:`styleval.meta.ceiling` and
:mod:`styleval.meta.planning`; this module adds the options, runs them and shapes what ``meta`` prints and writes.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import dataclass, field
from typing import Any, Callable

import pandas as pd

from ..errors import InputError
from ..meta.ceiling import Strata, TaskCeiling, agreement_strata, task_ceiling
from ..meta.evaluate import MetaResult, MetaTask
from ..meta.judgments import Judgments
from ..meta.planning import ITEMS, RATERS, PlanOptions, study_plan


def add_arguments(p: argparse.ArgumentParser) -> None:
    h = p.add_argument_group("the humans themselves (docs/meta-cli.md: reading a ceiling, strata, a study plan)")
    h.add_argument("--ceiling", action="store_true",
                   help="each task's human ceiling: split-half reliability of the human mean (Spearman-Brown to the "
                        "full number of raters) and the highest figure it allows a metric, one rater against the "
                        "rest, both with bootstrap intervals (--ci, default 200 here), and every figure as a share "
                        "of the ceiling; needs two ratings or more per item")
    h.add_argument("--strata", action="store_true",
                   help="each segment-level task's figures on inputs (or cells) where the raters agree and where "
                        "they do not, split at the median rater spread, with sizes, intervals and rank changes")
    h.add_argument("--plan", action="store_true",
                   help="plan a study from the --human judgments as a pilot: power to find a difference of "
                        "--plan-delta points between two systems over items x raters, and (with --scores) the "
                        "expected interval width of each metric's segment-level correlation; --scores optional")
    h.add_argument("--plan-delta", type=float, metavar="D", help="the difference to find, in the pilot's points")
    h.add_argument("--plan-power", type=float, default=0.8, metavar="P", help="power wanted (default .8)")
    h.add_argument("--plan-alpha", type=float, default=0.05, metavar="A", help="level of the test (default .05)")
    h.add_argument("--plan-width", type=float, metavar="W",
                   help="interval width wanted for a metric's correlation (default: print the widths only)")
    h.add_argument("--plan-items", default=",".join(map(str, ITEMS)), metavar="N,N", help="item counts to try")
    h.add_argument("--plan-raters", default=",".join(map(str, RATERS)), metavar="K,K",
                   help="raters per item to try")
    h.add_argument("--plan-test", choices=("paired-bootstrap", "approx-randomization"), default="paired-bootstrap",
                   help="the paired test between two systems (default: styleval's default, the paired bootstrap)")
    h.add_argument("--plan-studies", type=int, default=400, metavar="N", help="simulated studies per design")


def _grid(text: str, name: str) -> tuple[int, ...]:
    try:
        return tuple(int(x) for x in text.split(",") if x.strip())
    except ValueError:
        raise InputError(f"--plan-{name}: expected whole numbers separated by commas, not {text!r}") from None


def plan_options(args: argparse.Namespace) -> PlanOptions:
    if args.plan_delta is None:
        raise InputError("--plan needs --plan-delta D: the smallest difference between two systems that matters, "
                         "in the pilot's points")
    return PlanOptions(delta=args.plan_delta, power=args.plan_power, alpha=args.plan_alpha, width=args.plan_width,
                       confidence=args.confidence, items=_grid(args.plan_items, "items"),
                       raters=_grid(args.plan_raters, "raters"), n_studies=args.plan_studies,
                       n_resamples=args.plan_studies, seed=args.seed, test=args.plan_test)


def plan_aspects(args: argparse.Namespace, human: Judgments) -> list[str]:
    if args.aspect in ("auto", "all"):
        return human.aspects
    aspects = [a.strip() for a in args.aspect.split(",") if a.strip()]
    unknown = [a for a in aspects if a not in human.aspects]
    if unknown:
        raise InputError(f"aspect(s) {', '.join(unknown)} not in the judgments (aspects: {', '.join(human.aspects)})",
                         args.human)
    return aspects


def _pilot_task(args: argparse.Namespace, aspect: str, exclude: tuple[str, ...]) -> MetaTask:
    """The systems and direction of the pilot a plan reads (--systems, ``exclude``, --direction)."""
    systems = [x.strip() for x in (args.systems or "").split(",") if x.strip()]
    direction = args.direction if args.direction not in ("both", "each", "all") else "both"
    return MetaTask(aspect, systems=tuple(systems) if systems else None, exclude=exclude, direction=direction)


def run_plan(args: argparse.Namespace, human: Judgments, results: list[MetaResult],
             exclude: tuple[str, ...] = ()) -> int:
    """Print (and with --json write) a study plan per aspect; ``results``: segment-level results to plan widths;
    ``exclude``: systems the pilot leaves out when no result names its task."""
    from ..outputs import shown, write_text

    options = plan_options(args)
    plans = []
    for aspect in plan_aspects(args, human):
        mine = [r for r in results if r.task.aspect == aspect and r.task.level == "segment"
                and r.task.direction == "both"][:1]
        task = mine[0].task if mine else _pilot_task(args, aspect, exclude)
        try:
            plans.append(study_plan(human, aspect, options, task=task, metrics=mine))
        except InputError as exc:
            raise InputError(f"aspect {aspect}: {exc}") from None
    if args.json:
        write_text(args.json, json.dumps({"human": str(args.human), "plans": [p.to_dict() for p in plans]}, indent=1,
                                         ensure_ascii=False))
    if not args.quiet:
        print("\n\n".join("\n".join(p.describe()) for p in plans))
        if args.json:
            print(f"wrote {shown(args.json)}", file=sys.stderr)
    return 0


@dataclass
class HumanParts:
    """The ceilings and strata of a run's results, by result index."""

    ceilings: dict[int, TaskCeiling] = field(default_factory=dict)
    strata: dict[int, Strata] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.ceilings or self.strata)


def compute(args: argparse.Namespace, human: Judgments, results: list[MetaResult]) -> HumanParts:
    parts = HumanParts()
    if not (args.ceiling or args.strata):
        return parts
    n_ci = args.ci or 200
    cache: dict[str, TaskCeiling] = {}
    for i, r in enumerate(results):
        if args.ceiling:
            if r.task.name not in cache:
                cache[r.task.name] = task_ceiling(r.task, human, ci=n_ci, confidence=args.confidence, seed=args.seed)
            parts.ceilings[i] = cache[r.task.name]
        if args.strata and r.task.level == "segment":
            try:
                parts.strata[i] = agreement_strata(r, human, ci=n_ci, confidence=args.confidence, seed=args.seed)
            except InputError:
                if not args.ceiling:  # with --ceiling the ceiling line already says there is one score per item
                    raise
    return parts


def block(parts: HumanParts, i: int, result: MetaResult, digits: int) -> str:
    """Lines under a task's table: its ceiling, each metric's share of it, its strata."""
    lines: list[str] = []
    ceiling = parts.ceilings.get(i)
    if ceiling is not None:
        lines += ceiling.describe(digits)
        shares = [(m, ceiling.share(result.statistic(m))) for m in result.results]
        shares = [(m, s) for m, s in shares if not math.isnan(s)]
        if shares:
            lines.append("share of the ceiling: " + ", ".join(f"{m} {s:.0%}" for m, s in
                                                              sorted(shares, key=lambda x: -x[1])))
    if i in parts.strata:
        lines += parts.strata[i].describe(digits)
    return "\n".join(lines)


def add_to_json(data: dict[str, Any], parts: HumanParts, results: list[MetaResult]) -> dict[str, Any]:
    for i, entry in enumerate(data["results"]):
        ceiling = parts.ceilings.get(i)
        if ceiling is not None:
            entry["ceiling"] = ceiling.to_dict()
            for m, e in entry["metrics"].items():
                share = ceiling.share(results[i].statistic(m))
                e["share_of_ceiling"] = None if math.isnan(share) else share
        if i in parts.strata:
            entry["strata"] = parts.strata[i].to_dict()
    return data


def add_to_frame(frame: pd.DataFrame, parts: HumanParts, results: list[MetaResult]) -> pd.DataFrame:
    """The CSV's ceiling columns (ceiling, its interval, one rater, share of the ceiling) on every metric row."""
    if not parts.ceilings:
        return frame
    rows = []
    for i, r in enumerate(results):
        c = parts.ceilings.get(i)
        if c is None:
            continue
        low, high = c.interval("ceiling")
        for m in r.results:
            rows.append({"task": r.task.name, "metric": m, "ceiling": c.ceiling, "ceiling_low": low,
                         "ceiling_high": high, "one_rater": c.one_rater, "share_of_ceiling": c.share(r.statistic(m))})
    return frame.merge(pd.DataFrame(rows).drop_duplicates(["task", "metric"]), on=["task", "metric"], how="left")


def latex_rows(header: list[str], parts: HumanParts, results: list[MetaResult], digits: int,
               column_key: Callable[[MetaTask], str]) -> list[list[str]]:
    """Rows "human ceiling" and "one rater vs rest" (per aspect when the table has several) for meta's wide LaTeX
    table, one column per ``column_key`` of a task."""
    if not parts.ceilings:
        return []
    _column_key = column_key
    columns = list(dict.fromkeys(_column_key(r.task) for r in results))
    several = header[1:2] == ["aspect"]
    found: dict[tuple[str, str], TaskCeiling] = {}
    for i, r in enumerate(results):
        if i in parts.ceilings:
            found.setdefault((r.task.aspect, _column_key(r.task)), parts.ceilings[i])

    def cell(aspect: str, column: str, which: str) -> str:
        c = found.get((aspect, column))
        if c is None:
            return "-"
        if c.single:
            return "one score"
        value = c.ceiling if which == "ceiling" else c.one_rater
        return "-" if math.isnan(value) else f"{value:.{digits}f}"

    rows = []
    for aspect in dict.fromkeys(a for a, _ in found):
        for which, name in (("ceiling", "human ceiling"), ("one_rater", "one rater vs rest")):
            rows.append([name, *([aspect] if several else []), *[cell(aspect, c, which) for c in columns]])
    return rows
