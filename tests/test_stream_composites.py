"""Composite metrics (hm, gm, j) in the streaming engine: the same corpus scores, intervals, paired tests and
signatures as the in-memory engine, with and without their components in the run, chunked and resumed."""
from __future__ import annotations

import pytest

import styleval
from styleval.engine import StreamOptions, score_stream
from styleval.readers import read_table
from styleval.engine.options import StatisticsOptions

from test_stream import assert_same, write_table

COMPOSITES = ["hm:style=pinc,content=bleu/ref", "gm:style=pinc,content=bleu/ref",
              "j:style=pinc,similarity=chrf/src,fluency=none"]


@pytest.mark.parametrize("with_components", [True, False])
def test_composites_stream_equal_in_memory(tmp_path, with_components):
    table = write_table(tmp_path / "t.jsonl", 60, systems=3, seed=5)
    metrics = (["pinc", "bleu:against=references", "chrf:against=source"] if with_components else []) + COMPOSITES
    options = StatisticsOptions(bootstrap=200, significance="paired-bootstrap", seed=7)
    mem = styleval.score(read_table(table), metrics, options=options)
    assert {r.metric for r in mem.results} >= {"hm", "gm", "j"}
    for chunk_size in (7, 1000):
        streamed = score_stream(table, metrics, options=options,
                                stream=StreamOptions(chunk_size=chunk_size, keep_stats=True))
        assert_same(mem, streamed)


def test_composites_resume_from_the_statistics_cache(tmp_path):
    table = write_table(tmp_path / "t.jsonl", 40, systems=2, seed=6)
    cache = tmp_path / "cache.sqlite"
    options = StatisticsOptions(bootstrap=100, significance="paired-bootstrap")
    first = score_stream(table, COMPOSITES, options=options, stream=StreamOptions(cache=cache, chunk_size=9))
    again = score_stream(table, COMPOSITES, options=options, stream=StreamOptions(cache=cache, chunk_size=9))
    # hm and gm share pinc and bleu/ref: within the first run the second reads the first's stored rows
    assert first.cache_misses == 80 * 3 and again.cache_misses == 0
    assert again.cache_hits == first.cache_hits + first.cache_misses
    assert_same(styleval.score(read_table(table), COMPOSITES, options=options), again)


def test_composites_on_the_ray_engine(tmp_path):
    """The driver learns a composite's statistics layout from the actors' groups (it never combines itself)."""
    pytest.importorskip("ray")
    table = write_table(tmp_path / "t.jsonl", 30, systems=2, seed=3)
    mem = styleval.score(read_table(table), COMPOSITES, options=StatisticsOptions(bootstrap=50))
    assert_same(mem, score_stream(table, COMPOSITES, options=StatisticsOptions(bootstrap=50),
                                  stream=StreamOptions(chunk_size=10, engine="ray", ray_workers=1)))
