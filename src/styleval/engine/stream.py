"""Score a corpus of any size in chunks: the same numbers as :func:`styleval.score`, in flat memory.

Records are read a chunk at a time (:mod:`.source`); the worker side (:mod:`.worker`, here or in Ray actors,
:mod:`.ray_engine`) computes each chunk's statistics groups; the driver (:mod:`.driver`) writes segment scores as
they come (:mod:`.segments`), appends the statistics rows to spill files on disk and at the end reduces each
(metric, system) array alone to its corpus score, interval and paired tests, exactly as the in-memory run does
(same rows in the same order, same seed). An optional :class:`~.cache.StatsCache` makes a run resumable.

Segment statistics must not depend on which other segments share a batch (true of every lexical metric; a
metric whose statistics do, such as BERTScore with corpus idf weights, is refused). Neural metrics compute in
smaller batches here, which can change their last floating-point digits where padding enters the computation.
"""
from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass, field
from itertools import chain
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

from ..errors import InputError
from ..metrics.base import Metric
from ..models.outputs import use_store
from ..progress import Progress, reporting
from ..results import ScoreResult
from .cache import StatsCache
from .driver import Driver
from .metric_specs import Modifier, build_metrics, with_modifiers
from .model_cache import ModelOutputCache
from .options import StatisticsOptions
from .ray_engine import ray_groups
from .segments import SegmentWriter
from .source import Chunk, TableOptions, iter_chunks
from .worker import CachedStats, Group, compute_groups

DEFAULT_CHUNK_SIZE = 10_000

GroupSource = Iterable[tuple[list[Group], int, int, int]]
"""Each chunk's groups with its record count, bytes read so far and bytes in all (progress)."""


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
    cache_rejected: int = 0  # cached rows that failed their checksum (changed or torn) and were computed again

    def to_dict(self) -> dict[str, Any]:
        out = self.result.to_dict()
        out.pop("segments", None)
        for row in out["corpus"]:
            row["n_segments"] = self.counts.get(row["system"], 0)
        out["stream"] = {"segments": None if self.segments is None else str(self.segments),
                         "n_records": self.n_records, "n_chunks": self.n_chunks,
                         "cache_hits": self.cache_hits, "cache_misses": self.cache_misses,
                         "model_cache_hits": self.model_cache_hits, "model_cache_misses": self.model_cache_misses,
                         "cache_rejected": self.cache_rejected}
        return out

    def write_json(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_dict(), indent=1, ensure_ascii=False), encoding="utf-8")


def _refuse_batch_dependent(metrics: Sequence[Metric]) -> None:
    for m in metrics:
        if not m.streamable:
            why = m.batch_dependence or "its segment statistics depend on the other segments scored with them"
            raise InputError(f"metric {m.display_name!r} cannot be streamed: {why}; score it in memory "
                             "(styleval score without --stream)")


def _local_groups(first: Chunk, chunks: Iterator[Chunk], metrics: list[Metric], cache: CachedStats | None,
                  has_refs: bool) -> GroupSource:
    for c in chain([first], chunks):
        if not has_refs and any(r.references for r in c.records):
            raise InputError("references appear only after the first chunk; the metrics were chosen without "
                             "them. Pass a larger chunk size, or name against=references explicitly",
                             c.path, c.lines[0])
        groups = compute_groups(metrics, c.records, c.lines, [c.path] * len(c.records), cache)
        yield groups, len(c.records), c.bytes_done, c.bytes_total


@dataclass(frozen=True)
class StreamOptions:
    """How :func:`score_stream` reads, runs and keeps: ``table`` (the input columns, :class:`~.source.TableOptions`;
    None: the defaults), ``chunk_size`` records at a time; ``segments``: a ``.jsonl`` or ``.parquet`` file that
    receives every segment score as it is computed (written to ``<name>.partial`` and renamed when the run
    succeeds; ``segments_format`` names the format when the suffix does not); ``cache``: a SQLite file (or
    :class:`StatsCache`) of segment statistics and model outputs, so a run started again recomputes only what is not
    in it; ``keep_stats``: keep each result's statistics array (for further resampling) instead of dropping it after
    its interval and tests; ``engine``: ``"local"`` or ``"ray"`` (``ray_workers`` actors on the cluster at
    ``ray_address``, or on a local one started for the run)."""

    table: TableOptions | None = None
    chunk_size: int = DEFAULT_CHUNK_SIZE
    segments: str | Path | None = None
    segments_format: str | None = None
    cache: str | Path | StatsCache | None = None
    keep_stats: bool = False
    engine: str = "local"
    ray_address: str | None = None
    ray_workers: int = 2

    def __post_init__(self) -> None:
        if self.engine not in ("local", "ray"):
            raise InputError(f"engine must be 'local' or 'ray', got {self.engine!r}")
        if self.engine == "ray" and self.cache is not None:
            raise InputError("the statistics cache (resume) works with the local engine; the Ray engine recomputes "
                             "lost work through Ray's own retries")


def score_stream(inputs: str | Path | Sequence[str | Path], metrics: Iterable[str | Metric] = ("bleu", "chrf"), *,
                 against: Sequence[str] = ("source", "references"), modifiers: Sequence[Modifier] = (),
                 options: StatisticsOptions | None = None, stream: StreamOptions | None = None,
                 progress: Progress | None = None, **statistics: Any) -> StreamResult:
    """Score TSV/CSV/JSONL tables of any size chunk by chunk; results equal :func:`styleval.score` on the same
    records (corpus scores, intervals, paired tests, signatures).

    ``options``: intervals and paired tests (:class:`~.options.StatisticsOptions`; its fields may also be given
    as keywords, ``bootstrap=0``). ``stream``: how the tables are read and the run is kept
    (:class:`StreamOptions`: chunk size, segment-score file, statistics cache, engine). The cache file keeps the
    model outputs of neural metrics too (:mod:`.model_cache`: sentence and token embeddings, the LM pass of the
    fluency metrics), so a later run of another metric over the same model reads them instead. With the Ray engine
    the driver reduces the statistics exactly as the local engine does (no statistics cache there).
    """
    stream = stream or StreamOptions()
    chunk_size, segments, cache, keep_stats = stream.chunk_size, stream.segments, stream.cache, stream.keep_stats
    opts = StatisticsOptions.given(options, **statistics)
    paths = [inputs] if isinstance(inputs, (str, Path)) else list(inputs)
    if not paths:
        raise InputError("no input table to stream")
    table = stream.table or TableOptions()
    chunks = iter_chunks(paths, chunk_size, table)
    first = next(chunks, None)
    if first is None:
        raise InputError("no records to score", paths[0])
    has_refs = any(r.references for r in first.records)
    built = with_modifiers(build_metrics(list(metrics), against, has_refs), modifiers)
    if not built:
        raise InputError("no metric to compute: the metrics asked for need references and none were given")
    _refuse_batch_dependent(built)
    own_cache = cache is not None and not isinstance(cache, StatsCache)
    stats_cache = cache if isinstance(cache, StatsCache) else (StatsCache(cache) if cache is not None else None)
    hits0, misses0, rejected0 = ((stats_cache.hits, stats_cache.misses, stats_cache.rejected)
                                 if stats_cache is not None else (0, 0, 0))
    # model outputs go to the same file (own tables), so a new metric over a cached model skips the model
    try:
        model_cache = ModelOutputCache(stats_cache.path) if stats_cache is not None else None
    except BaseException:
        if own_cache and stats_cache is not None:
            stats_cache.close()
        raise
    writer = SegmentWriter(segments, stream.segments_format) if segments is not None else None
    n_chunks = 0
    try:
        with tempfile.TemporaryDirectory(prefix="styleval-stream-") as spill:
            driver = Driver(built, spill=Path(spill), writer=writer)
            source: GroupSource
            if stream.engine == "ray":
                source = ray_groups(paths, built, chunk_size, table, address=stream.ray_address,
                                    workers=stream.ray_workers)
            else:
                computer = CachedStats(stats_cache) if stats_cache is not None else None
                source = _local_groups(first, chunks, built, computer, has_refs)
            def inner(description: str, done: int, total: int) -> None:  # a model's report inside a chunk
                if progress:
                    progress(f"scoring chunk {n_chunks + 1}: {description}", done, total)

            with use_store(model_cache), reporting(inner if progress else None):
                for groups, _, bytes_done, bytes_total in source:
                    for group in groups:
                        driver.reduce(group)
                    n_chunks += 1
                    if progress:
                        progress(f"scoring, {driver.n_records:,} records so far [bytes]", bytes_done, bytes_total)
            driver.check_unique()
            result = driver.finalize(opts, keep_stats, progress=progress)
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
    return StreamResult(result=result, segments=None if segments is None else Path(segments),
                        n_records=driver.n_records, n_chunks=n_chunks, counts=counts,
                        cache_hits=stats_cache.hits - hits0 if stats_cache is not None else 0,
                        cache_misses=stats_cache.misses - misses0 if stats_cache is not None else 0,
                        cache_rejected=stats_cache.rejected - rejected0 if stats_cache is not None else 0,
                        model_cache_hits=model_cache.hits if model_cache is not None else 0,
                        model_cache_misses=model_cache.misses if model_cache is not None else 0)
