"""What grows with the record count is bounded (issue #46): the lexical metrics' cache of reference work holds about
one chunk, not eight, and BLEU's corpus sum holds one block of rows beside the statistics, with the same numbers."""
from __future__ import annotations

import numpy as np
import sacrebleu

from styleval.metrics import registry
from styleval.metrics.content._common import ComparisonCache
from styleval.metrics.content._sacrebleu import sequential_sum


def test_cache_keeps_segments_bounded_beside_the_newest_entry():
    cache = ComparisonCache(maxsize=8, max_segments=100)
    built = []

    def build(tag):
        return lambda: built.append(tag) or tag

    for k in range(6):  # six chunks of 60 segments each: only the newest fits beside the bound
        comps = [[f"ref {k} {i}"] for i in range(60)]
        assert cache.get(comps, build(k)) == k
        assert cache.segments <= 100 and len(cache) == 1
    big = [[f"big {i}"] for i in range(500)]  # larger than the bound: still kept, as the newest
    cache.get(big, build("big"))
    assert len(cache) == 1 and cache.segments == 500
    cache.get(big, build("again"))
    assert built[-1] == "big"  # a hit: not built again
    small = [[f"s {i}"] for i in range(30)]
    cache.get(small, build("s1"))
    cache.get([[f"t {i}"] for i in range(30)], build("s2"))
    assert len(cache) == 2 and cache.segments == 60  # two small entries fit


def test_same_references_hit_across_systems():
    """The point of the cache survives the bound: systems scored one after another against the same references
    reuse the reference work (the segments here are within the bound)."""
    bleu = registry.create("bleu")
    refs = [[f"the food was good number {i}", f"good food {i}"] for i in range(1000)]
    for system in range(3):
        bleu.pair_stats([f"food was good {i} {system}" for i in range(1000)], refs)
    assert len(bleu._ref_cache) == 1 and bleu._ref_cache.segments == 1000


def test_streamed_chunks_hold_one_chunk_of_reference_work():
    """A streamed run sees new references in every chunk; the cache holds at most the bound (or one chunk), and
    BLEU's statistics stay sacrebleu's."""
    bleu = registry.create("bleu")
    rows = []
    hyps, refs = [], []
    for chunk in range(12):
        h = [f"chunk {chunk} output {i} was fine" for i in range(1000)]
        r = [[f"chunk {chunk} reference {i} was fine", f"output {i} fine"] for i in range(1000)]
        rows.append(bleu.pair_stats(h, r))
        hyps += h
        refs += r
        assert bleu._ref_cache.segments <= max(bleu._ref_cache.max_segments, 1000)
    stats = np.concatenate(rows)
    expected = sacrebleu.corpus_bleu(hyps, [[r[0] for r in refs], [r[1] for r in refs]]).score
    assert bleu.aggregate(stats) == expected


def test_sequential_sum_is_the_running_sum_bit_for_bit():
    for n in (1, 2, 5, 1001, 70_000, 200_001):
        x = np.random.default_rng(n).normal(size=(n, 3)) * 1e3
        expected = np.cumsum(x, axis=0)[-1].tolist()
        assert sequential_sum(x) == expected
        assert sequential_sum(x, block=1000) == expected
        if n < 10_000:
            assert sequential_sum(x, block=1) == expected
    assert sequential_sum(np.empty((0, 4))) == [0.0] * 4
