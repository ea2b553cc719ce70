"""Score a corpus of any size in chunks: the same numbers as :func:`styleval.score`, in flat memory.

Records are read a chunk at a time (:mod:`.source`); each metric computes the chunk's segment statistics through
the Metric protocol (``compute``, or ``combine`` for composites); segment scores go to a file as they are made
(:mod:`.segments`) and the statistics rows are appended, per (metric, system), to spill files on disk. At the end
each (metric, system) statistics array is read back alone, and its corpus score (``metric.aggregate``), bootstrap
interval and paired tests come from the scoring engine's own functions, so they equal the in-memory results
exactly (same rows in the same order, same seed). What stays in memory besides the chunk in flight: 16 bytes per
segment (id digest and line, for the duplicate and alignment checks) and one metric's statistics during the final
step. An optional :class:`~.cache.StatsCache` makes a run resumable.

Segment statistics must not depend on which other segments share a batch (true of every lexical metric; a
metric whose statistics do, such as BERTScore with corpus idf weights, is refused). Neural metrics compute in
smaller batches here, which can change their last floating-point digits where padding enters the computation.
"""
from __future__ import annotations

import hashlib
import tempfile
from itertools import chain
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np

from ..errors import InputError
from ..metrics.base import Batch, Metric, MetricResult, SegmentStats
from ..records import Direction, Record
from ..results import Comparison, ScoreResult
from ..scoring import (SIGNIFICANCE_METHODS, Modifier, Progress, ResamplingOptions, _add_interval, build_metrics,
                       comparison_pairs, metric_labels, paired_comparison, with_modifiers)
from ..models.outputs import use_store
from .cache import StatsCache, metric_key, segment_key
from .model_cache import ModelOutputCache
from .segments import SegmentWriter
from .source import Chunk, TableOptions, iter_chunks

DEFAULT_CHUNK_SIZE = 10_000


@dataclass
class StreamResult:
    """Corpus scores, intervals and tests of a streamed run (each ``MetricResult`` without per-segment arrays:
    those are in ``segments``), and facts about the run."""

    result: ScoreResult
    segments: Path | None
    n_records: int
    n_chunks: int
    counts: dict[str, int] = field(default_factory=dict)  # system -> number of segments
    cache_hits: int = 0
    cache_misses: int = 0
    model_cache_hits: int = 0  # texts whose model outputs (embeddings, LM log-probabilities) came from the cache
    model_cache_misses: int = 0

    def to_dict(self) -> dict[str, Any]:
        out = self.result.to_dict()
        out.pop("segments", None)
        for row in out["corpus"]:
            row["n_segments"] = self.counts.get(row["system"], 0)
        out["stream"] = {"segments": None if self.segments is None else str(self.segments),
                         "n_records": self.n_records, "n_chunks": self.n_chunks,
                         "cache_hits": self.cache_hits, "cache_misses": self.cache_misses,
                         "model_cache_hits": self.model_cache_hits, "model_cache_misses": self.model_cache_misses}
        return out

    def write_json(self, path: str | Path) -> None:
        import json

        Path(path).write_text(json.dumps(self.to_dict(), indent=1, ensure_ascii=False), encoding="utf-8")


def _id_digest(segment_id: str) -> int:
    return int.from_bytes(hashlib.blake2b(segment_id.encode("utf-8"), digest_size=8).digest(), "little")


class _System:
    """What the engine keeps of one system between chunks."""

    def __init__(self, name: str, spill: Path, index: int) -> None:
        self.name = name
        self.spill = spill
        self.index = index
        self.n = 0
        self.id_digests: list[np.ndarray] = []
        self.lines: list[np.ndarray] = []
        self.files: list[tuple[int, str]] = []  # (first segment index, path) whenever the file changes
        self.nrefs = 0
        self.directions: dict[Direction | None, None] = {}
        self.empty: list[str] = []
        self.flags: dict[int, dict[str, list[str]]] = {}
        self.resources: dict[int, dict[str, str]] = {}
        self.n_stats: dict[int, int] = {}

    def stats_file(self, k: int) -> Path:
        return self.spill / f"m{k}_s{self.index}.f64"

    def add(self, group: "Group") -> None:
        for position, path in enumerate(group.paths):
            if not self.files or self.files[-1][1] != path:
                self.files.append((self.n + position, path))
        self.id_digests.append(np.fromiter((_id_digest(i) for i in group.ids), dtype=np.uint64, count=len(group.ids)))
        self.lines.append(np.asarray(group.lines, dtype=np.int64))
        self.n += len(group.ids)
        self.nrefs = max(self.nrefs, group.nrefs)
        for d in group.directions:
            self.directions.setdefault(d, None)
        self.empty.extend(i for i, e in zip(group.ids, group.empty) if e)

    def append_stats(self, k: int, values: np.ndarray) -> None:
        if self.n_stats.setdefault(k, values.shape[1]) != values.shape[1]:
            raise RuntimeError(f"statistics width changed between chunks ({self.n_stats[k]} -> {values.shape[1]})")
        with open(self.stats_file(k), "ab") as fh:
            fh.write(np.ascontiguousarray(values, dtype=np.float64).tobytes())

    def load_stats(self, k: int) -> np.ndarray:
        width = self.n_stats.get(k, 1)
        path = self.stats_file(k)
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


def _refuse_batch_dependent(metrics: Sequence[Metric]) -> None:
    for m in metrics:
        if getattr(m, "idf", False):
            raise InputError(f"metric {m.display_name!r} weights words by idf computed over the whole batch; its "
                             "segment statistics depend on the other segments and cannot be streamed")


@dataclass
class Group:
    """One system's records of one chunk with every metric's statistics for them (what a worker sends back)."""

    system: str
    ids: list[str]
    lines: list[int]
    paths: list[str]
    empty: list[bool]
    nrefs: int
    directions: list[Direction | None]
    stats: dict[int, SegmentStats]
    layouts: dict[int, dict[str, int]] = field(default_factory=dict)  # composite -> statistics columns per role


_KEYS: dict[int, tuple[Metric, bytes, str]] = {}  # metric identity digests, computed once per metric object


def _cached_compute(metric: Metric, batch: Batch, recs: list[Record], cache: StatsCache) -> SegmentStats:
    """``metric.compute`` for the segments not in ``cache``; the others read from it."""
    metric.check_batch(batch)
    memo = _KEYS.get(id(metric))
    if memo is None or memo[0] is not metric:
        memo = _KEYS[id(metric)] = (metric, *metric_key(metric))
    _, key, ident = memo
    seg_keys = [segment_key(r) for r in recs]
    found = cache.lookup(key, seg_keys, None)
    missing = [i for i, s in enumerate(seg_keys) if s not in found]
    computed: SegmentStats | None = None
    if missing:
        sub = Batch.from_records([recs[i] for i in missing])
        computed = metric.compute(sub)
        row_flags: list[list[str]] = [[] for _ in missing]
        for flag, rows in computed.flags.items():
            for r in rows:
                row_flags[r].append(flag)
        cache.store(key, ident, [seg_keys[i] for i in missing], computed.values, row_flags, computed.resources)
        for j, i in enumerate(missing):
            found[seg_keys[i]] = (computed.values[j], row_flags[j])
    values = np.stack([found[s][0] for s in seg_keys])
    flags: dict[str, list[int]] = {}
    for i, s in enumerate(seg_keys):
        for flag in found[s][1]:
            flags.setdefault(flag, []).append(i)
    resources = computed.resources if computed is not None else cache.resources(key)
    return SegmentStats(values=values, flags=flags, resources=dict(resources))


def compute_groups(metrics: Sequence[Metric], records: Sequence[Record], lines: Sequence[int],
                   paths: Sequence[str], cache: StatsCache | None = None) -> list[Group]:
    """Every metric's statistics for the records of one chunk, one group per system (plain metrics first, so
    that composites reuse their components' statistics, as in :func:`styleval.scoring.score_records`)."""
    labels = metric_labels(metrics)
    order = sorted(range(len(metrics)), key=lambda k: bool(metrics[k].components()))
    positions: dict[str, list[int]] = {}
    for i, r in enumerate(records):
        positions.setdefault(r.system, []).append(i)
    groups = []
    for name, idx in positions.items():
        recs = [records[i] for i in idx]
        batch = Batch.from_records(recs)

        def run(metric: Metric, batch: Batch = batch, recs: list[Record] = recs) -> SegmentStats:
            return metric.compute(batch) if cache is None else _cached_compute(metric, batch, recs, cache)

        computed: dict[Any, SegmentStats] = {}
        out: dict[int, SegmentStats] = {}
        layouts: dict[int, dict[str, int]] = {}
        for k in order:
            metric, mid = metrics[k], labels[k]
            if metric.components():
                metric.check_batch(batch)
                parts = {}
                for role, comp in metric.components().items():
                    stored = computed.get(comp.metric_id)  # a component scored in this run is not computed again
                    parts[role] = stored if stored is not None else run(comp)
                out[k] = SegmentStats.of(metric.combine(parts))
                layouts[k] = {role: int(np.asarray(p.values).shape[1]) for role, p in parts.items()}
            else:
                out[k] = computed[mid] = run(metric)
        groups.append(Group(system=name, ids=list(batch.ids), lines=[lines[i] for i in idx],
                            paths=[paths[i] for i in idx], empty=[not o.strip() for o in batch.outputs],
                            nrefs=batch.nrefs, directions=list(dict.fromkeys(batch.directions)), stats=out,
                            layouts=layouts))
    return groups


class _Engine:
    """The driver's side: keeps each system's ids and spilled statistics, writes segment scores."""

    def __init__(self, metrics: list[Metric], writer: SegmentWriter | None, spill: Path) -> None:
        self.metrics = metrics
        self.labels = metric_labels(metrics)
        self.writer = writer
        self.spill = spill
        self.systems: dict[str, _System] = {}
        self.layouts_known: set[int] = set()

    def reduce(self, group: Group) -> None:
        state = self.systems.get(group.system)
        if state is None:
            state = self.systems[group.system] = _System(group.system, self.spill, len(self.systems))
        state.add(group)
        for k, layout in group.layouts.items():
            if k not in self.layouts_known:  # a composite computed elsewhere (a Ray actor): learn its layout
                self.metrics[k].combine({role: SegmentStats(values=np.empty((0, w))) for role, w in layout.items()})
                self.layouts_known.add(k)
        for k, (metric, mid) in enumerate(zip(self.metrics, self.labels)):
            stats = group.stats[k]
            values = np.asarray(stats.values, dtype=float)
            state.append_stats(k, values)
            for flag, rows in stats.flags.items():
                state.flags.setdefault(k, {}).setdefault(flag, []).extend(group.ids[r] for r in rows)
            state.resources.setdefault(k, {}).update(stats.resources)
            if self.writer is not None:
                self.writer.write(group.system, mid.label, group.ids, metric.scores_from_stats(values), group.empty)

    def check_unique(self) -> None:
        for state in self.systems.values():
            digests = np.concatenate(state.id_digests) if state.id_digests else np.empty(0, np.uint64)
            order = np.argsort(digests, kind="stable")
            same = np.flatnonzero(digests[order][1:] == digests[order][:-1])
            if len(same):
                first, second = sorted((int(order[same[0]]), int(order[same[0] + 1])))
                path1, line1 = state.where(first)
                path2, line2 = state.where(second)
                raise InputError(f"system {state.name!r} has a segment id twice (first on {path1}:{line1}); "
                                 "two inputs seem to share the system name, or an id repeats; give each segment "
                                 "its own id", path2, line2)

    def check_alignment(self) -> None:
        states = list(self.systems.values())
        first = np.concatenate(states[0].id_digests)
        for state in states[1:]:
            ids = np.concatenate(state.id_digests)
            if len(ids) != len(first) or not np.array_equal(ids, first):
                raise InputError(f"systems {states[0].name!r} ({len(first)} segments) and {state.name!r} "
                                 f"({len(ids)} segments) do not cover the same segment ids in the same order; "
                                 "paired tests need aligned systems")

    def results(self, options: ResamplingOptions, keep_stats: bool) -> tuple[list[MetricResult], list[Comparison]]:
        results: list[MetricResult] = []
        comparisons: list[Comparison] = []
        systems = list(self.systems.values())
        for k, (metric, mid) in enumerate(zip(self.metrics, self.labels)):
            by_system: dict[str, MetricResult] = {}
            for state in systems:
                stats = state.load_stats(k)
                flags: dict[str, list[str]] = {}
                if state.empty:
                    flags["empty_output"] = list(state.empty)
                flags.update({f: ids for f, ids in state.flags.get(k, {}).items() if ids})
                result = MetricResult(
                    metric=mid.label, system=state.name, ids=[], segment_scores=np.empty(0), stats=stats,
                    corpus_score=metric.aggregate(stats),
                    signature=metric.signature(state.signature_batch(), state.resources.get(k) or None),
                    higher_is_better=metric.higher_is_better, aspect=metric.aspect, flags=flags,
                    extra={"n_segments": state.n}, metric_id=mid)
                if options.bootstrap > 0:
                    _add_interval(result, metric, options)
                by_system[state.name] = result
                results.append(result)
            if options.significance != "none" and len(systems) > 1:
                for system, baseline in comparison_pairs([s.name for s in systems], options.baseline):
                    a, b = by_system[system], by_system[baseline]
                    comparisons.append(paired_comparison(mid.label, system, a.stats, baseline, b.stats,
                                                         metric.aggregate, metric.sum_aggregate(), options))
            if not keep_stats:
                for r in by_system.values():
                    r.stats = np.empty((0, r.stats.shape[1] if r.stats.ndim == 2 else 0))
        return results, comparisons


def _local_groups(first: Chunk, chunks: Iterable[Chunk], metrics: list[Metric], cache: StatsCache | None,
                  has_refs: bool) -> Iterable[tuple[list[Group], int, int, int]]:
    for c in chain([first], chunks):
            if not has_refs and any(r.references for r in c.records):
                raise InputError("references appear only after the first chunk; the metrics were chosen without "
                                 "them. Pass a larger chunk size, or name against=references explicitly",
                                 c.path, c.lines[0])
            groups = compute_groups(metrics, c.records, c.lines, [c.path] * len(c.records), cache)
            yield groups, len(c.records), c.bytes_done, c.bytes_total


def score_stream(inputs: str | Path | Sequence[str | Path], metrics: Iterable[str | Metric] = ("bleu", "chrf"), *,
                 against: Sequence[str] = ("source", "references"), modifiers: Sequence[Modifier] = (),
                 bootstrap: int = 1000, confidence: float = 0.95, significance: str = "none",
                 baseline: str | None = None, seed: int = 12345, segments: str | Path | None = None,
                 segments_format: str | None = None, chunk_size: int = DEFAULT_CHUNK_SIZE,
                 cache: str | Path | StatsCache | None = None, table: TableOptions | None = None,
                 keep_stats: bool = False, engine: str = "local", ray_address: str | None = None,
                 ray_workers: int = 2, progress: Progress | None = None) -> StreamResult:
    """Score TSV/CSV/JSONL tables of any size chunk by chunk; results equal :func:`styleval.score` on the same
    records (corpus scores, intervals, paired tests, signatures).

    ``segments``: a ``.jsonl`` or ``.parquet`` file that receives every segment score as it is computed (written
    to ``<name>.partial`` and renamed when the run succeeds). ``cache``: a SQLite file (or :class:`StatsCache`) of
    segment statistics; a run started again after a crash recomputes only the segments not in it. The same file
    keeps the model outputs of neural metrics (:mod:`.model_cache`: sentence and token embeddings, the LM pass of
    the fluency metrics), so a later run of another metric over the same model reads them instead.
    ``keep_stats``: keep each result's statistics array (for further resampling) instead of dropping it after
    its interval and tests. ``engine="ray"``: the metrics run in Ray actors (``ray_workers`` of them, each loading
    its models once) on the cluster at ``ray_address``, or on a local one started for the run; the driver reduces
    the statistics exactly as the local engine does (no statistics cache there).
    """
    engine_name = engine
    if engine_name not in ("local", "ray"):
        raise InputError(f"engine must be 'local' or 'ray', got {engine_name!r}")
    if engine_name == "ray" and cache is not None:
        raise InputError("the statistics cache (resume) works with the local engine; the Ray engine recomputes "
                         "lost work through Ray's own retries")
    paths = [inputs] if isinstance(inputs, (str, Path)) else list(inputs)
    if not paths:
        raise InputError("no input table to stream")
    if significance not in SIGNIFICANCE_METHODS:
        raise InputError(f"significance must be one of {', '.join(SIGNIFICANCE_METHODS)}, got {significance!r}")
    options = ResamplingOptions(bootstrap=bootstrap, confidence=confidence, significance=significance,
                                baseline=baseline, seed=seed)
    specs = list(metrics)
    table = table or TableOptions()
    chunks = iter_chunks(paths, chunk_size, table)
    first = next(chunks, None)
    if first is None:
        raise InputError("no records to score", paths[0])
    has_refs = any(r.references for r in first.records)
    built = with_modifiers(build_metrics(specs, against, has_refs), modifiers)
    if not built:
        raise InputError("no metric to compute: the metrics asked for need references and none were given")
    _refuse_batch_dependent(built)
    own_cache = cache is not None and not isinstance(cache, StatsCache)
    stats_cache = cache if isinstance(cache, StatsCache) else (StatsCache(cache) if cache is not None else None)
    hits0, misses0 = (stats_cache.hits, stats_cache.misses) if stats_cache is not None else (0, 0)
    # model outputs go to the same file (own tables), so a new metric over a cached model skips the model
    try:
        model_cache = ModelOutputCache(stats_cache.path) if stats_cache is not None else None
    except BaseException:
        if own_cache and stats_cache is not None:
            stats_cache.close()
        raise
    writer = SegmentWriter(segments, segments_format) if segments is not None else None
    n_records = n_chunks = 0
    try:
        with tempfile.TemporaryDirectory(prefix="styleval-stream-") as spill:
            driver = _Engine(built, writer, Path(spill))
            if engine_name == "ray":
                from .ray_engine import ray_groups

                source: Iterable[tuple[list[Group], int, int, int]] = ray_groups(
                    paths, built, chunk_size, table, address=ray_address, workers=ray_workers)
            else:
                source = _local_groups(first, chunks, built, stats_cache, has_refs)
            with use_store(model_cache):
                for groups, n, bytes_done, bytes_total in source:
                    for group in groups:
                        driver.reduce(group)
                    n_records += n
                    n_chunks += 1
                    if progress:
                        progress(f"{n_records:,} records", bytes_done, bytes_total)
            driver.check_unique()
            if significance != "none" and len(driver.systems) > 1:
                driver.check_alignment()
                if baseline is not None and baseline not in driver.systems:
                    raise InputError(f"baseline system {baseline!r} not found; systems: {', '.join(driver.systems)}")
            results, comparisons = driver.results(options, keep_stats)
            counts = {name: s.n for name, s in driver.systems.items()}
        if writer is not None:
            writer.finish()
    except BaseException:
        if writer is not None:
            writer.abort()
        raise
    finally:
        if own_cache and stats_cache is not None:
            stats_cache.close()
        if model_cache is not None:
            model_cache.close()
    settings = {"bootstrap": bootstrap, "confidence": confidence, "seed": seed, "significance": significance,
                "baseline": baseline, "n_trials": options.n_trials if significance == "approx-randomization" else None,
                "systems": list(counts), "n_records": n_records}
    return StreamResult(result=ScoreResult(results=results, comparisons=comparisons, settings=settings),
                        segments=None if segments is None else Path(segments), n_records=n_records,
                        n_chunks=n_chunks, counts=counts,
                        cache_hits=stats_cache.hits - hits0 if stats_cache is not None else 0,
                        cache_misses=stats_cache.misses - misses0 if stats_cache is not None else 0,
                        model_cache_hits=model_cache.hits if model_cache is not None else 0,
                        model_cache_misses=model_cache.misses if model_cache is not None else 0)
