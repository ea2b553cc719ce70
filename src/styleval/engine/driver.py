"""The driver side of the engine: accumulate the workers' groups system by system, then reduce each metric's
statistics to a :class:`~styleval.results.ScoreResult` (corpus score, bootstrap interval, paired tests).

Statistics rows are kept in memory (the in-memory run, which also keeps segment ids and scores) or appended to
spill files, one per (metric, system), and read back one at a time at the end (the streaming run: flat memory,
16 bytes per segment for the duplicate and alignment checks). Either way every result comes from the same rows in
the same order through the same resampling functions, so the numbers do not depend on the path.
"""
from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from ..errors import InputError
from ..metrics.base import Batch, Metric, MetricResult
from ..models.passes import timed
from ..progress import Progress
from ..records import Direction
from ..results import Comparison, ScoreResult
from .metric_specs import metric_labels
from .options import StatisticsOptions
from .resampling import add_interval, comparison_pairs, paired_comparison, resample_memo
from .segments import SegmentWriter
from .worker import Group


def _id_digest(segment_id: str) -> int:
    return int.from_bytes(hashlib.blake2b(segment_id.encode("utf-8"), digest_size=8).digest(), "little")


def segment_digests(ids: Sequence[str]) -> np.ndarray:
    """8-byte digests of segment ids, in order (what the duplicate and alignment checks compare)."""
    return np.fromiter((_id_digest(i) for i in ids), dtype=np.uint64, count=len(ids))


def check_unique_ids(system: str, digests: np.ndarray, where: Callable[[int], tuple[str, int]],
                     ids: Sequence[str] | None = None) -> None:
    """The one segment-id check: no id twice among one system's segments (``digests`` in arrival order). The error
    names the second place (``where(position)`` -> file, line), the first, and the id when ``ids`` are kept."""
    order = np.argsort(digests, kind="stable")
    same = np.flatnonzero(digests[order][1:] == digests[order][:-1])
    if not len(same):
        return
    first, second = sorted((int(order[same[0]]), int(order[same[0] + 1])))
    path1, line1 = where(first)
    path2, line2 = where(second)
    which = f"segment id {ids[second]!r}" if ids is not None else "a segment id"
    raise InputError(f"system {system!r} has {which} twice (first on {path1}:{line1}); two inputs seem to share the "
                     "system name, or an id repeats; give each system its own name and each segment its own id",
                     path2, line2)


class SystemState:
    """What the driver keeps of one system between groups."""

    def __init__(self, name: str, index: int, spill: Path | None, keep_segments: bool) -> None:
        self.name = name
        self.index = index
        self.spill = spill
        self.keep_segments = keep_segments
        self.n = 0
        self.ids: list[str] = []  # kept with keep_segments only
        self.id_digests: list[np.ndarray] = []
        self.lines: list[np.ndarray] = []
        self.files: list[tuple[int, str]] = []  # (first segment index, path) whenever the file changes
        self.nrefs = 0
        self.directions: dict[Direction | None, None] = {}
        self.empty: list[str] = []
        self.flags: dict[int, dict[str, list[str]]] = {}
        self.resources: dict[int, dict[str, str]] = {}
        self.extra: dict[int, dict[str, Any]] = {}
        self.rows: dict[int, list[np.ndarray]] = {}  # in memory when there is no spill folder

    def add(self, group: Group) -> None:
        for position, path in enumerate(group.paths):
            if not self.files or self.files[-1][1] != path:
                self.files.append((self.n + position, path))
        self.id_digests.append(segment_digests(group.ids))
        self.lines.append(np.asarray(group.lines, dtype=np.int64))
        if self.keep_segments:
            self.ids.extend(group.ids)
        self.n += len(group.ids)
        self.nrefs = max(self.nrefs, group.nrefs)
        for d in group.directions:
            self.directions.setdefault(d, None)
        self.empty.extend(i for i, e in zip(group.ids, group.empty) if e)

    def _stats_file(self, k: int) -> Path:
        assert self.spill is not None
        return self.spill / f"m{k}_s{self.index}.f64"

    def append_stats(self, k: int, values: np.ndarray) -> None:
        if self.spill is None:
            self.rows.setdefault(k, []).append(values)
            return
        with open(self._stats_file(k), "ab") as fh:
            fh.write(np.ascontiguousarray(values, dtype=np.float64).tobytes())

    def load_stats(self, k: int, width: int) -> np.ndarray:
        if self.spill is None:
            parts = self.rows.get(k, [])
            return np.concatenate(parts) if parts else np.empty((0, width))
        path = self._stats_file(k)
        data = np.fromfile(path, dtype=np.float64) if path.exists() else np.empty(0)
        return data.reshape(-1, width)

    def signature_batch(self) -> Batch:
        """A batch that tells ``metric.signature`` what the whole system's batch would: references per segment
        and transfer directions."""
        return Batch(ids=[], outputs=[], sources=[], references=[[""] * self.nrefs], directions=list(self.directions),
                     system=self.name)

    def where(self, position: int) -> tuple[str, int]:
        path = [p for start, p in self.files if start <= position][-1]
        return path, int(np.concatenate(self.lines)[position])


class Driver:
    """Reduces groups into results. ``spill``: a folder for the statistics rows (None: memory);
    ``keep_segments``: keep segment ids, segment scores and each metric's run facts in the results (one chunk;
    without it only facts that add up, such as a judge's requests and tokens, are kept);
    ``writer``: receives every segment score as its group arrives."""

    def __init__(self, metrics: Sequence[Metric], *, spill: Path | None = None, keep_segments: bool = False,
                 writer: SegmentWriter | None = None) -> None:
        self.metrics = list(metrics)
        self.labels = metric_labels(self.metrics)
        self.spill = spill
        self.keep_segments = keep_segments
        self.writer = writer
        self.systems: dict[str, SystemState] = {}
        self.n_records = 0

    def reduce(self, group: Group) -> None:
        state = self.systems.get(group.system)
        if state is None:
            state = self.systems[group.system] = SystemState(group.system, len(self.systems), self.spill,
                                                             self.keep_segments)
        state.add(group)
        self.n_records += len(group.ids)
        for k, (metric, mid) in enumerate(zip(self.metrics, self.labels)):
            stats = group.stats[k]
            values = np.asarray(stats.values, dtype=float)
            if values.shape[1] != metric.n_stats:
                raise RuntimeError(f"{mid.label}: {values.shape[1]} statistics columns, {metric.n_stats} declared")
            state.append_stats(k, values)
            for flag, rows in stats.flags.items():
                state.flags.setdefault(k, {}).setdefault(flag, []).extend(group.ids[r] for r in rows)
            state.resources.setdefault(k, {}).update(stats.resources)
            if self.keep_segments or metric.facts_add_up:
                state.extra[k] = metric.merge_facts(state.extra.get(k, {}), stats.extra)
            if self.writer is not None:
                self.writer.write(group.system, mid.label, group.ids, metric.scores_from_stats(values), group.empty)

    def check_unique(self) -> None:
        """No system has one segment id twice."""
        for state in self.systems.values():
            digests = np.concatenate(state.id_digests) if state.id_digests else np.empty(0, np.uint64)
            check_unique_ids(state.name, digests, state.where, state.ids if self.keep_segments else None)

    def check_comparable(self, options: StatisticsOptions) -> None:
        """Systems compared by paired tests cover the same segments in the same order; the baseline exists."""
        if options.significance == "none" or len(self.systems) < 2:
            return
        states = list(self.systems.values())
        first = np.concatenate(states[0].id_digests)
        for state in states[1:]:
            ids = np.concatenate(state.id_digests)
            if len(ids) != len(first) or not np.array_equal(ids, first):
                raise InputError(f"systems {states[0].name!r} ({len(first)} segments) and {state.name!r} "
                                 f"({len(ids)} segments) do not cover the same segment ids in the same order; "
                                 "paired tests need aligned systems")
        if options.baseline is not None and options.baseline not in self.systems:
            raise InputError(f"baseline system {options.baseline!r} not found; systems: {', '.join(self.systems)}")

    def _result(self, k: int, state: SystemState) -> MetricResult:
        metric, mid = self.metrics[k], self.labels[k]
        stats = state.load_stats(k, metric.n_stats)
        flags: dict[str, list[str]] = {"empty_output": list(state.empty)} if state.empty else {}
        flags.update({f: ids for f, ids in state.flags.get(k, {}).items() if ids})
        extra = dict(state.extra.get(k, {})) if self.keep_segments else {"n_segments": state.n,
                                                                          **state.extra.get(k, {})}
        return metric.summarise(state.name, stats, ids=state.ids if self.keep_segments else None, flags=flags,
                                extra=extra, signature=metric.signature(state.signature_batch(),
                                                                        state.resources.get(k) or None),
                                metric_id=mid)

    def finalize(self, options: StatisticsOptions, keep_stats: bool = True,
                 progress: Progress | None = None) -> ScoreResult:
        """Every (metric, system) result with its interval, and the paired tests the options ask for;
        ``progress`` hears ``intervals and tests · LABEL [metrics]`` before each metric."""
        self.check_comparable(options)
        for k, metric in enumerate(self.metrics):  # a metric may refuse statistics (unrated segments) before results
            metric.check_complete({s.name: (s.n, s.flags.get(k, {})) for s in self.systems.values()})
        what = "intervals and tests" if options.bootstrap > 0 or options.significance != "none" else "corpus scores"
        with timed("statistics", what):
            results, comparisons = self._finalize_metrics(options, keep_stats, what, progress)
        settings = {**options.settings(), "systems": list(self.systems), "n_records": self.n_records}
        return ScoreResult(results=results, comparisons=comparisons, settings=settings)

    def _finalize_metrics(self, options: StatisticsOptions, keep_stats: bool, what: str,
                          progress: Progress | None) -> tuple[list[MetricResult], list[Comparison]]:
        results: list[MetricResult] = []
        comparisons: list[Comparison] = []
        for k, (metric, mid) in enumerate(zip(self.metrics, self.labels)):
            if progress:
                progress(f"{what} · {mid.label} [metrics]", k, len(self.metrics))
            by_system: dict[str, MetricResult] = {}
            memo = resample_memo(metric)  # each system resampled once for its interval and all its tests
            for state in self.systems.values():
                result = by_system[state.name] = self._result(k, state)
                if options.bootstrap > 0:
                    add_interval(result, metric, options, memo)
                results.append(result)
            if options.significance != "none" and len(by_system) > 1:
                for system, baseline in comparison_pairs(list(by_system), options.baseline):
                    a, b = by_system[system], by_system[baseline]
                    comparisons.append(paired_comparison(mid.label, system, metric.resample_stats(a.stats), baseline,
                                                         metric.resample_stats(b.stats),
                                                         memo.aggregate, memo.sum_then, options, memo))
            if not keep_stats:
                for r in by_system.values():
                    r.stats = np.empty((0, metric.n_stats))
        if progress:
            progress(f"{what} [metrics]", len(self.metrics), len(self.metrics))
        return results, comparisons
