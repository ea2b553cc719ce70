"""The worker side of the engine: every metric's segment statistics for the records of one chunk, one
:class:`Group` per system. The in-memory run (:func:`styleval.score`) is one chunk; the streaming engine sends
many, computed here or in Ray actors (:mod:`.ray_engine`); the driver (:mod:`.driver`) reduces the groups.

The one core loop: plain metrics first, then composites, which combine their components' statistics from this
chunk instead of computing them again. While a chunk computes, a per-run memo of model outputs is active
(:func:`styleval.models.outputs.run_memo`), so two metrics over one model (``style_accuracy`` and ``style_emd``)
run the model once per distinct text.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from ..metrics.base import Batch, Metric, SegmentStats
from ..metrics.identity import MetricId
from ..models.outputs import run_memo
from ..models.passes import timed
from ..records import Direction, Record
from .cache import StatsCache, metric_key, segment_key
from .metric_specs import metric_labels

Step = Callable[[str, str], None]
"""Told ``(metric label, system)`` before each metric computes a system's statistics (progress)."""


@dataclass
class Group:
    """One system's records of one chunk with every metric's statistics for them (what a worker sends back):
    ``stats`` by the metric's position in the run."""

    system: str
    ids: list[str]
    lines: list[int]
    paths: list[str]
    empty: list[bool]
    nrefs: int
    directions: list[Direction | None]
    stats: dict[int, SegmentStats]


class CachedStats:
    """``metric.compute`` through a :class:`StatsCache`: segments already in it are read, the others computed and
    stored. One per run; it keeps each metric's identity digest."""

    def __init__(self, cache: StatsCache) -> None:
        self.cache = cache
        self._keys: dict[MetricId, tuple[bytes, str]] = {}

    def compute(self, metric: Metric, batch: Batch, recs: Sequence[Record]) -> SegmentStats:
        metric.check_batch(batch)
        mid = metric.metric_id
        if mid not in self._keys:
            self._keys[mid] = metric_key(metric)
        key, ident = self._keys[mid]
        seg_keys = [segment_key(r) for r in recs]
        found = self.cache.lookup(key, seg_keys, metric.n_stats)
        missing = [i for i, s in enumerate(seg_keys) if s not in found]
        computed: SegmentStats | None = None
        if missing:
            computed = metric.compute(Batch.from_records([recs[i] for i in missing]))
            row_flags: list[list[str]] = [[] for _ in missing]
            for flag, rows in computed.flags.items():
                for r in rows:
                    row_flags[r].append(flag)
            self.cache.store(key, ident, [seg_keys[i] for i in missing], computed.values, row_flags,
                             computed.resources)
            for j, i in enumerate(missing):
                found[seg_keys[i]] = (computed.values[j], row_flags[j])
        values = np.stack([found[s][0] for s in seg_keys])
        flags: dict[str, list[int]] = {}
        for i, s in enumerate(seg_keys):
            for flag in found[s][1]:
                flags.setdefault(flag, []).append(i)
        resources = computed.resources if computed is not None else self.cache.resources(key)
        # the run facts of what was computed now (a judge's requests, tokens, cost); rows read back cost nothing
        extra = dict(computed.extra) if computed is not None else {}
        return SegmentStats(values=values, flags=flags, extra=extra, resources=dict(resources))


def compute_groups(metrics: Sequence[Metric], records: Sequence[Record], lines: Sequence[int],
                   paths: Sequence[str], cache: CachedStats | None = None, step: Step | None = None) -> list[Group]:
    """Every metric's statistics for ``records`` (one chunk), one group per system in order of appearance."""
    labels = metric_labels(metrics)
    positions: dict[str, list[int]] = {}
    for i, r in enumerate(records):
        positions.setdefault(r.system, []).append(i)
    recs = {name: [records[i] for i in idx] for name, idx in positions.items()}
    batches = {name: Batch.from_records(rs) for name, rs in recs.items()}

    def run(metric: Metric, system: str) -> SegmentStats:
        if cache is None:
            return metric.compute(batches[system])
        return cache.compute(metric, batches[system], recs[system])

    stats: dict[str, dict[int, SegmentStats]] = {name: {} for name in batches}
    computed: dict[tuple[MetricId, str], SegmentStats] = {}
    with run_memo():
        for k in sorted(range(len(metrics)), key=lambda k: bool(metrics[k].components())):  # plain metrics first
            metric, mid = metrics[k], labels[k]
            for system, batch in batches.items():
                if step is not None:
                    step(mid.label, system)
                with timed("metric", mid.label, len(batch)):  # where the time went, when a time log is open
                    if metric.components():
                        metric.check_batch(batch)
                        parts = {}
                        for role, comp in metric.components().items():
                            stored = computed.get((comp.metric_id, system))  # a component of this run: not again
                            parts[role] = stored if stored is not None else run(comp, system)
                        stats[system][k] = metric.combine(parts)
                    else:
                        stats[system][k] = computed[(mid, system)] = run(metric, system)
    return [Group(system=name, ids=list(batch.ids), lines=[lines[i] for i in positions[name]],
                  paths=[paths[i] for i in positions[name]], empty=[not o.strip() for o in batch.outputs],
                  nrefs=batch.nrefs, directions=list(dict.fromkeys(batch.directions)), stats=stats[name])
            for name, batch in batches.items()]
