"""Several meta-evaluation tasks at once: levels, direction splits, and one long table of every figure.

:func:`expand_tasks` turns one template task into the tasks a report needs (segment and/or system level, pooled
and/or per direction); :func:`run_tasks` runs them with the same options; :func:`results_frame` stacks the results
(one row per task and metric, every choice a column) and :func:`results_dict` gives the JSON form.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any, Iterable, Sequence

import pandas as pd

from styleval.errors import InputError
from styleval.progress import Progress
from styleval.records import Direction

from .aggregate import segment_scores
from .evaluate import MetaResult, MetaRunOptions, MetaTask, run
from .judgments import Judgments

DIRECTION_MODES = ("both", "each", "all")


def directions_of(human: Judgments | pd.DataFrame, aspect: str) -> list[str]:
    """The transfer directions present in the human scores of ``aspect``, in first-seen order."""
    if isinstance(human, Judgments):
        frame = human.filter(aspect=aspect).frame
    else:
        frame = human[human["aspect"] == aspect] if "aspect" in human.columns else human
    if "direction" not in frame.columns:
        return []
    return [str(d) for d in dict.fromkeys(frame["direction"].dropna())]


def expand_tasks(template: MetaTask, human: Judgments | pd.DataFrame, *, levels: Sequence[str] = ("segment",),
                 directions: str = "both", system_method: str | None = None,
                 segment_method: str | None = None) -> list[MetaTask]:
    """Tasks for every requested level and direction, from one template.

    ``directions``: ``"both"`` (pooled only), ``"each"`` (one task per direction in the judgments), ``"all"``
    (pooled, then each), or one ``source->target`` direction. At system level ``average_by``/``aggregate`` are
    reset to ``none``/``mean``; ``system_method``/``segment_method`` override the template's method per level.
    """
    if directions in DIRECTION_MODES:
        found = directions_of(human, template.aspect)
        if directions != "both" and not found:
            raise InputError(f"per-direction results asked for, but the human scores of {template.aspect!r} have "
                             "no directions")
        dirs = (["both"] if directions in ("both", "all") else []) + ([] if directions == "both" else found)
    else:
        dirs = [str(Direction.parse(directions))]
    tasks = []
    for level in levels:
        if level not in ("segment", "system"):
            raise InputError(f"level must be 'segment' or 'system', not {level!r}")
        changes: dict[str, Any] = {"level": level}
        if level == "system":
            changes.update(average_by="none", aggregate="mean")
            if system_method:
                changes["method"] = system_method
        elif segment_method:
            changes["method"] = segment_method
        for d in dirs:
            tasks.append(template.with_(direction=d, **changes))
    return tasks


def run_tasks(tasks: Iterable[MetaTask], human: Judgments | pd.DataFrame, metric_table: pd.DataFrame, *,
              metrics: Iterable[str] | None = None, lower_is_better: Iterable[str] = (),
              options: MetaRunOptions | None = None, progress: Progress | None = None) -> list[MetaResult]:
    """:func:`styleval.meta.run` for every task; ``options.curves`` only applies to the system-level ones.

    The human side is aggregated once per (aspect, human, ddof), not once per task. A ``progress`` callback
    hears each task's stages, prefixed ``task K/N (ASPECT, LEVEL METHOD):``.
    """
    options = options or MetaRunOptions()
    names = None if metrics is None else list(metrics)
    lower = list(lower_is_better)
    cache: dict[tuple[str, str, int], pd.DataFrame] = {}
    out = []
    task_list = list(tasks)
    for k, task in enumerate(task_list, start=1):
        stage = _task_stage(progress, f"task {k}/{len(task_list)} ({task.aspect}, {task.level} {task.method})") \
            if progress else None
        table = human
        if isinstance(human, Judgments):
            key = (task.aspect, task.human, task.ddof)
            if key not in cache:
                cache[key] = segment_scores(human, task.aspect, human=task.human, ddof=task.ddof)
            table = cache[key]
        task_options = replace(options, curves=options.curves and task.level == "system")
        out.append(run(task, table, metric_table, metrics=names, lower_is_better=lower, options=task_options,
                       progress=stage))
    return out


def _task_stage(progress: Progress, prefix: str) -> Progress:
    return lambda description, done, total: progress(f"{prefix}: {description}", done, total)


def results_frame(results: Iterable[MetaResult]) -> pd.DataFrame:
    """Every figure of every result as one long table (one row per task and metric)."""
    frames = [r.to_frame() for r in results]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def curves_frame(results: Iterable[MetaResult]) -> pd.DataFrame:
    """Top-N / last-N curves as a long table: task, direction, metric, which (top/last), n, statistic."""
    rows = []
    for r in results:
        for metric, curves in r.curves.items():
            for which, points in curves.items():
                rows += [{"task": r.task.name, "direction": r.task.direction, "metric": metric, "which": which,
                          "n": n, "statistic": stat} for n, stat in points]
    return pd.DataFrame(rows, columns=["task", "direction", "metric", "which", "n", "statistic"])


def results_dict(results: Iterable[MetaResult], **extra: Any) -> dict[str, Any]:
    """The JSON form: ``{"results": [MetaResult.to_dict(), ...], **extra}``."""
    return {**extra, "results": [r.to_dict() for r in results]}
