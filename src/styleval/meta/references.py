"""Correlation with humans as a function of the number of references.

:func:`score_with_k_references` scores the records once per ``k`` with only the first ``k`` references of every
segment (through :func:`styleval.score`, so every score keeps its signature with ``nrefs=k``);
:func:`correlation_by_reference_count` correlates each of those metric tables with the human scores under one
:class:`~styleval.meta.MetaTask`.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any, Iterable, Mapping, Sequence

import pandas as pd

from styleval.errors import InputError
from styleval.records import Record

from .evaluate import MetaTask, run
from .judgments import Judgments
from .scores import metric_table_from_result


def score_with_k_references(records: Sequence[Record], metrics: Iterable[str], ks: Iterable[int], *,
                            allow_fewer: bool = False, **score_kwargs: Any) -> dict[int, pd.DataFrame]:
    """Metric tables (system, segment, metric, score) keyed by ``k``, each scored against the first ``k`` references.

    Content metrics are compared with the references only. A record with fewer than ``k`` references is an
    :class:`InputError` naming how many records are short (``allow_fewer=True`` scores them with the references
    they have). ``score_kwargs`` go to :func:`styleval.score` (``bootstrap`` defaults to 0).
    """
    from styleval.scoring import score

    records = list(records)
    if not records:
        raise InputError("no records to score")
    ks = sorted({int(k) for k in ks})
    if not ks or ks[0] < 1:
        raise InputError(f"numbers of references must be integers >= 1; got {ks}")
    specs = list(metrics)
    score_kwargs.setdefault("bootstrap", 0)
    score_kwargs["against"] = ["references"]
    tables: dict[int, pd.DataFrame] = {}
    for k in ks:
        short = [r for r in records if len(r.references) < k]
        if short and not allow_fewer:
            ex = short[0]
            raise InputError(f"{len(short)} of {len(records)} records have fewer than {k} references (e.g. system "
                             f"{ex.system!r} id {ex.id!r} has {len(ex.references)}); pass allow_fewer=True to "
                             "score them with the references they have")
        subset = [replace(r, references=list(r.references[:k])) for r in records]
        tables[k] = metric_table_from_result(score(subset, specs, **score_kwargs))
    return tables


def correlation_by_reference_count(task: MetaTask, human: Judgments | pd.DataFrame,
                                   tables: Mapping[int, pd.DataFrame], **run_kwargs: Any) -> pd.DataFrame:
    """One row per (k, metric): the task's statistic with the metric scored against ``k`` references.

    ``tables`` maps a number of references to a metric table (e.g. from :func:`score_with_k_references`);
    ``run_kwargs`` go to :func:`styleval.meta.run` (``lower_is_better``, ``metrics``, ``options``...). Columns: k,
    metric, statistic, pvalue, n, [ci_low, ci_high,] note, task and the task's fields.
    """
    if not tables:
        raise InputError("no metric tables: give at least one number of references")
    frames = []
    for k in sorted(tables):
        frame = run(task, human, tables[k], **run_kwargs).to_frame()
        frame.insert(0, "k", int(k))
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)
