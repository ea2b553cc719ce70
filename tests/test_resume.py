"""Resume: a streamed run killed with SIGKILL and started again recomputes only what is missing and ends with
the output of an uninterrupted run."""
from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from styleval.engine import StatsCache, StreamOptions, score_stream
from styleval.engine.options import StatisticsOptions

from test_stream import write_table

NO_CI = StatisticsOptions(bootstrap=0)  # no intervals: these tests look at scores

METRICS = "bleu,chrf,ter,meteor"


def _cached_rows(db: Path) -> int:
    if not db.exists():
        return 0
    try:
        with sqlite3.connect(str(db), timeout=1) as con:
            return con.execute("SELECT COUNT(*) FROM segment_stats").fetchone()[0]
    except sqlite3.Error:  # table not created yet, or a write in flight
        return 0


def _cli(table: Path, out: Path, seg: Path, cache: Path | None) -> list[str]:
    cmd = [sys.executable, "-m", "styleval.cli.main", "score", "--input", str(table), "-m", METRICS, "--stream",
           "--chunk-size", "200", "--bootstrap", "100", "--significance", "paired-bootstrap", "--segments", str(seg),
           "--json", str(out), "--no-progress", "--quiet"]
    return cmd + (["--cache", str(cache)] if cache else [])


def test_sigkill_then_resume_gives_identical_output(tmp_path):
    table = write_table(tmp_path / "t.jsonl", 1000, systems=3, seed=11)  # 3,000 records, 15 chunks
    n_rows = 3000 * 8  # 4 metrics x (source, references)
    cache = tmp_path / "stats.sqlite"
    seg, out = tmp_path / "seg.jsonl", tmp_path / "out.json"

    proc = subprocess.Popen(_cli(table, out, seg, cache), start_new_session=True)
    try:
        deadline = time.monotonic() + 600
        while _cached_rows(cache) < n_rows // 4:  # killed once a quarter of the work is stored
            assert proc.poll() is None, "the run ended before it could be killed; make the input larger"
            assert time.monotonic() < deadline
            time.sleep(0.2)
        os.killpg(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL
    done_before = _cached_rows(cache)
    assert 0 < done_before < n_rows
    assert not out.exists() and not seg.exists()  # nothing final written by the killed run

    subprocess.run(_cli(table, out, seg, cache), check=True, timeout=900)
    resumed = json.loads(out.read_text())
    # every stored row was reused (a row serves each segment with the same texts, e.g. a copied source in
    # several systems, hence >=), and only the rest was computed
    hits, misses = resumed["stream"]["cache_hits"], resumed["stream"]["cache_misses"]
    assert hits + misses == n_rows and hits >= done_before and 0 < misses <= n_rows - done_before
    assert _cached_rows(cache) - done_before <= misses

    fresh_out, fresh_seg = tmp_path / "fresh.json", tmp_path / "fresh.jsonl"
    subprocess.run(_cli(table, fresh_out, fresh_seg, None), check=True, timeout=900)
    fresh = json.loads(fresh_out.read_text())
    assert resumed["corpus"] == fresh["corpus"]
    assert resumed["comparisons"] == fresh["comparisons"]
    assert seg.read_bytes() == fresh_seg.read_bytes()


def test_cache_reuses_statistics_across_runs_and_keys_by_metric_parameters(tmp_path):
    table = write_table(tmp_path / "t.jsonl", 40, seed=5)
    with StatsCache(tmp_path / "c.sqlite") as cache:
        first = score_stream(table, ["chrf"], options=NO_CI,
                             stream=StreamOptions(cache=cache, chunk_size=13, keep_stats=True))
        again = score_stream(table, ["chrf"], options=NO_CI,
                             stream=StreamOptions(cache=cache, chunk_size=50, keep_stats=True))
        other = score_stream(table, ["chrf:word_order=1"], options=NO_CI,
                             stream=StreamOptions(cache=cache, keep_stats=True))
    n = 120 * 2
    assert (first.cache_hits, first.cache_misses) == (0, n)
    assert (again.cache_hits, again.cache_misses) == (n, 0)  # other chunking, same rows
    assert (other.cache_hits, other.cache_misses) == (0, n)  # another metric identity computes afresh
    for a, b in zip(first.result.results, again.result.results):
        assert a.corpus_score == b.corpus_score and np.array_equal(a.stats, b.stats)
