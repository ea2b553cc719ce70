"""The streaming engine's workers on a Ray cluster (optional extra ``styleval[ray]``).

Ray Data reads the input through a datasource whose read tasks run the same validated reader as the local
engine (:mod:`.source`: errors name file and line), one task per file, a block per chunk. ``map_batches`` sends
each block to a pool of actors that build the metrics once and keep them (models load once per actor) and
return every metric's statistics for the block (the worker side, :func:`.worker.compute_groups`). The driver takes
the results in input order and reduces them exactly as the local engine does, so the numbers are the same. On a
cluster (``address``) a lost node costs only recomputation: Ray retries the read tasks and restarts the actors, and
the computation is deterministic; a local Ray lives and dies with this process, so its actors are not restarted.
Ray starts silently (half a minute or more on a small machine): the progress display says when it is starting the
cluster and the workers.
"""
from __future__ import annotations

import logging
import pickle
from typing import Any, Iterator, Sequence

import numpy as np

from ..errors import InputError, MissingDependencyError, StyleEvalError
from ..metrics.base import Metric
from ..records import Direction, Record
from ..readers.text import StrPath
from .source import TableOptions, iter_chunks
from .worker import Group, compute_groups

_COLUMNS = ("seq", "line", "path", "system", "id", "source", "output", "refs", "direction", "bytes_done",
            "bytes_total")


def _ray() -> Any:
    wanted = logging.getLogger("ray").level  # importing Ray sets its logger to INFO: a level set before wins
    try:
        import ray
    except ImportError:
        raise MissingDependencyError("ray", "ray", "--engine ray") from None
    if wanted:
        logging.getLogger("ray").setLevel(wanted)
    return ray


def _log_level() -> int:
    """The level ``ray.init`` keeps for Ray's logger: the one the process set, else Ray's own default."""
    return logging.getLogger("ray").level or logging.INFO


def _block(chunk: Any, seq0: int) -> Any:
    import pyarrow as pa

    recs = chunk.records
    n = len(recs)
    return pa.table({
        "seq": pa.array(range(seq0, seq0 + n), pa.int64()), "line": pa.array(chunk.lines, pa.int64()),
        "path": pa.array([chunk.path] * n), "system": pa.array([r.system for r in recs]),
        "id": pa.array([r.id for r in recs]), "source": pa.array([r.source for r in recs]),
        "output": pa.array([r.output for r in recs]),
        "refs": pa.array([list(r.references) for r in recs], pa.list_(pa.string())),
        "direction": pa.array([None if r.direction is None else str(r.direction) for r in recs], pa.string()),
        "bytes_done": pa.array([chunk.bytes_done] * n, pa.int64()),
        "bytes_total": pa.array([chunk.bytes_total] * n, pa.int64()),
    })


def _datasource(paths: Sequence[StrPath], chunk_size: int, table: TableOptions) -> Any:
    from ray.data.block import BlockMetadata
    from ray.data.datasource import Datasource, ReadTask

    class TableSource(Datasource):
        """One read task per input file, yielding a block per chunk of validated records."""

        def estimate_inmemory_data_size(self) -> int | None:
            return None

        def get_read_tasks(self, parallelism: int, per_task_row_limit: int | None = None,
                           data_context: Any = None) -> list[Any]:
            tasks = []
            for index, path in enumerate(paths):
                def read(path: StrPath = path, index: int = index) -> Iterator[Any]:
                    seq = index << 40  # input order: file first, then row
                    for chunk in iter_chunks([path], chunk_size, table):
                        yield _block(chunk, seq)
                        seq += len(chunk.records)

                tasks.append(ReadTask(read, BlockMetadata(num_rows=None, size_bytes=None, exec_stats=None,
                                                          input_files=(str(path),))))
            return tasks

    return TableSource()


class MetricWorker:
    """A Ray actor: holds the metrics (their models load on first use, once per actor) and computes blocks."""

    def __init__(self, metrics_blob: bytes, threads: int = 1) -> None:
        try:
            import torch

            torch.set_num_threads(threads)
        except ImportError:
            pass
        self.metrics: list[Metric] = pickle.loads(metrics_blob)

    def __call__(self, batch: Any) -> dict[str, Any]:
        rows = batch.to_pylist()
        records = [Record(id=r["id"], source=r["source"], output=r["output"], references=list(r["refs"] or []),
                          system=r["system"], direction=Direction.parse(r["direction"]) if r["direction"] else None)
                   for r in rows]
        groups = compute_groups(self.metrics, records, [r["line"] for r in rows], [r["path"] for r in rows])
        last = rows[-1]
        payload = pickle.dumps((groups, len(rows), last["bytes_done"], last["bytes_total"]))
        return {"seq": np.array([rows[0]["seq"]], dtype=np.int64), "payload": np.array([payload], dtype=object)}


def _start(address: str | None, workers: int) -> bool:
    """Join ``address`` or start a local Ray; True when this call started it (and must shut it down)."""
    ray = _ray()
    if ray.is_initialized():
        return False
    if address:
        ray.init(address=address, log_to_driver=False, include_dashboard=False, logging_level=_log_level())
    else:
        # address="local": a new cluster for this run, never one that `ray start` left on the machine
        ray.init(address="local", num_cpus=workers + 1, include_dashboard=False, log_to_driver=False,
                 object_store_memory=256 * 1024 * 1024, logging_level=_log_level())
    return True


def ray_groups(paths: Sequence[StrPath], metrics: list[Metric], chunk_size: int, table: TableOptions, *,
               address: str | None = None, workers: int = 2
               ) -> Iterator[tuple[list[Group], int, int, int]]:
    """The statistics groups of every block, in input order, computed by ``workers`` Ray actors."""
    from ..progress import report

    ray = _ray()
    if workers < 1:
        raise InputError(f"--ray-workers must be at least 1, got {workers}")
    # Ray says nothing while it starts (half a minute or more on a small machine): the progress display does
    report(f"joining the Ray cluster at {address}" if address else
           f"starting a local Ray cluster ({workers} metric workers)", 0, 0)
    started = _start(address, workers)
    try:
        from ray.data import DataContext

        ctx = DataContext.get_current()
        ctx.execution_options.preserve_order = True
        ctx.enable_progress_bars = False
        blob = pickle.dumps(metrics)
        ds = ray.data.read_datasource(_datasource(paths, chunk_size, table), override_num_blocks=len(paths),
                                     ray_remote_args={"num_cpus": 0.25})  # reading is light; never starved by actors
        # actors restart on a cluster, where a node may be lost; a local Ray lives and dies with this process, so
        # restarts gain nothing there (and Ray's core logs a warning about them at every run)
        restarts = -1 if address else 0
        out = ds.map_batches(MetricWorker, fn_constructor_kwargs={"metrics_blob": blob}, batch_format="pyarrow",
                             batch_size=chunk_size, concurrency=(1, workers), num_cpus=1,
                             max_restarts=restarts, max_task_retries=restarts)
        last = -1
        report(f"Ray: starting {workers} metric worker(s), each loading the metrics' models, then the first "
               "block", 0, 0)
        try:
            for batch in out.iter_batches(batch_size=1, batch_format="numpy", prefetch_batches=1):
                seq = int(batch["seq"][0])
                if seq <= last:  # preserve_order guarantees input order; the reduce depends on it
                    raise RuntimeError(f"Ray returned block {seq} after block {last}: input order lost")
                last = seq
                yield pickle.loads(batch["payload"][0])
        except Exception as exc:  # a worker's InputError arrives wrapped in Ray's task error
            cause = getattr(exc, "cause", None)
            if isinstance(cause, StyleEvalError):
                raise cause from None
            raise
    finally:
        if started:
            ray.shutdown()
