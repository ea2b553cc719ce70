"""llm_judge and logprop through a real OpenAI-compatible server: llama-cpp-python's server, started here on
127.0.0.1, serving the installed SmolLM2-135M-Instruct GGUF (no mocked HTTP).

Tolerances between the backends come from studies/llm_judges/backend_agreement.py (docs/llm-judges.md): the server
computes with the Q4_1 weights and 8-bit activations, the local backend with the same weights de-quantized to
float32. On 90 Lai 2022 segments the log-probabilities of the same token differed by at most 0.38 nats at a judge's
answer position (median 0.06) and 0.52 over LogProp's output tokens (median 0.02); the probability-weighted ratings
of prompts whose two top-20 lists hold the same rating tokens differed by at most 0.11 (on 1-5). The tolerances are
those maxima with half again as much margin, rounded up.
"""
from __future__ import annotations

import importlib.util
import math
import os
import sqlite3
import threading
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import numpy as np
import pytest

from styleval.judges import local, server
from styleval.judges.server import RequestFailedError
from styleval.judges.templates import judge_template
from styleval.metrics import registry
from styleval.metrics.base import Batch
from styleval.records import Direction

if importlib.util.find_spec("llama_cpp") is None:
    pytest.skip("llama-cpp-python is not installed: pip install 'styleval[judge]' (builds it from source, ~5 min)",
                allow_module_level=True)
if importlib.util.find_spec("openai") is None:
    pytest.skip("the openai client is not installed: pip install 'styleval[judge]'", allow_module_level=True)

from styleval.judges.llamacpp import LlamaCppServer, free_port, smollm2_gguf  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_torch_thread")

LOGPROB_TOLERANCE = 0.8  # nats; measured maximum 0.52 (see the module doc)
RATING_TOLERANCE = 0.25  # on 1-5; measured maximum 0.11 where both backends saw the same rating tokens
KEY = "sk-styleval-test-5f2c"  # the server demands it; the tests read it from an environment variable

BATCH = Batch(ids=["a", "b", "c", "d"],
              outputs=["Would you kindly send me the report?", "gimme the report lol", "I am not sure about that.",
                       "We will meet at noon."],
              sources=["send me the report", "Please send me the report.", "idk bout that",
                       "we gonna meet at 12"],
              references=[[], [], [], []],
              directions=[Direction("informal", "formal"), Direction("formal", "informal"),
                          Direction("informal", "formal"), Direction("informal", "formal")])


@pytest.fixture(scope="module")
def llama_server(smollm, tmp_path_factory):
    log = tmp_path_factory.mktemp("server") / "server.log"
    with LlamaCppServer(smollm2_gguf(), api_key=KEY, log_path=log) as srv:
        yield srv


@pytest.fixture()
def key_env(monkeypatch):
    monkeypatch.setenv("STYLEVAL_TEST_JUDGE_KEY", KEY)
    return "STYLEVAL_TEST_JUDGE_KEY"


def _on(srv, key_env, tmp_path, name="llm_judge", **params):
    return registry.create(name, base_url=srv.base_url, model=srv.alias, api_key_env=key_env,
                           request_cache=str(tmp_path / "requests.sqlite"), **params)


def test_judge_server_and_local_agree_on_the_same_prompts(llama_server, key_env, tmp_path):
    """Same candidate tokens with the same log-probabilities within the tolerance; where both top-20 lists hold the
    same rating tokens, the same rating within its tolerance (where they do not, a rating token at the edge of the
    list is in one and not the other: a jump, not a rounding difference, measured in the study)."""
    model = local.load_local()
    config = server.ServerConfig(base_url=llama_server.base_url, model=llama_server.alias, api_key_env=key_env,
                                 request_cache=str(tmp_path / "requests.sqlite"))
    compared = 0
    for aspect in ("style", "content", "fluency"):
        template = judge_template(aspect)
        messages = [template.messages({"source": s, "output": o, "source_style": d.source_style,
                                       "target_style": d.target_style})
                    for s, o, d in zip(BATCH.sources, BATCH.outputs, BATCH.directions)]
        tops = local.first_token_top(model, [model.chat.render(m) for m in messages], 20, BATCH.ids)
        answers, usage = server.ask(config, llama_server.alias, [server.Request(server.CHAT, {
            "messages": m, "max_tokens": 3, "temperature": 0, "logprobs": True, "top_logprobs": 20}, i)
            for m, i in zip(messages, BATCH.ids)])
        assert usage.requests_sent == len(BATCH)
        local_stats = registry.create("llm_judge", aspect=aspect).compute(BATCH).values
        on_server = _on(llama_server, key_env, tmp_path, aspect=aspect).compute(BATCH)
        assert on_server.extra["requests_cached"] == len(BATCH)  # the metric asks exactly what was asked above
        server_stats = on_server.values
        for i, ((ids, lps), answer) in enumerate(zip(tops, answers)):
            mine = {model.token_text(t): float(v) for t, v in zip(ids, lps)}
            theirs = dict(server.first_answer_top(answer) or [])
            common = mine.keys() & theirs.keys()
            assert len(common) >= 15  # the same candidates, give or take the last places
            assert max(abs(mine[t] - theirs[t]) for t in common) <= LOGPROB_TOLERANCE
            digits = {str(r) for r in template.scale}
            if {t.strip() for t in mine if t.strip() in digits} == {t.strip() for t in theirs if t.strip() in digits}:
                assert abs(local_stats[i, 0] - server_stats[i, 0]) <= RATING_TOLERANCE
                compared += 1
    assert compared >= 6


def test_logprop_server_and_local_agree(llama_server, key_env, tmp_path):
    """Content is a mean of max log-probabilities, so it moves by at most the largest token difference; style is
    a mean of differences of probabilities, each within (e^tol - 1) of the local one."""
    from styleval.engine.model_cache import ModelOutputCache
    from styleval.models.outputs import use_store

    batch = Batch(ids=BATCH.ids[:2], outputs=BATCH.outputs[:2], sources=BATCH.sources[:2], references=[[], []],
                  directions=BATCH.directions[:2])  # the llama.cpp server's echo costs ~2 s a request here
    for first in (False, True):  # the second round reads both backends' answers from their caches
        with ModelOutputCache(tmp_path / "outputs.sqlite") as store, use_store(store):
            here = registry.create("logprop", score_first_token=first).compute(batch).values
        # one request at a time: the llama.cpp server answers them in turn, so on busy cores a queued echo
        # request would spend its timeout waiting for the others (run-only: no score changes)
        on_server = _on(llama_server, key_env, tmp_path, "logprop", chat_template="smollm2-135m",
                        score_first_token=first, concurrency=1).compute(batch)
        assert on_server.extra["requests_sent"] == (6 if not first else 0)
        there = on_server.values
        np.testing.assert_array_equal(here[:, 2], there[:, 2])  # the same tokens scored
        assert np.max(np.abs(here[:, 0] - there[:, 0])) <= LOGPROB_TOLERANCE
        assert np.max(np.abs(here[:, 1] - there[:, 1])) <= 2 * (math.exp(LOGPROB_TOLERANCE) - 1)


def test_cache_token_counts_cost_and_no_key_anywhere(llama_server, key_env, tmp_path):
    metric = _on(llama_server, key_env, tmp_path, aspect="content", max_tokens=2, price="100/200", concurrency=3)
    first = metric.score(BATCH)
    facts = first.extra
    assert facts["requests_sent"] == 4 and facts["requests_cached"] == 0 and facts["retries"] == 0
    assert facts["prompt_tokens"] > 4 * 50 and 4 <= facts["completion_tokens"] <= 8
    assert facts["cost_estimate"] == pytest.approx((facts["prompt_tokens"] * 100 + facts["completion_tokens"] * 200)
                                                   / 1e6)
    uncached = registry.create("llm_judge", aspect="content", max_tokens=2, base_url=llama_server.base_url,
                               model=llama_server.alias, api_key_env=key_env, request_cache="none")
    assert uncached.score(BATCH).extra["requests_sent"] == 4 == uncached.score(BATCH).extra["requests_sent"]
    again = metric.score(BATCH)  # everything from the request cache
    assert again.extra["requests_sent"] == 0 and again.extra["requests_cached"] == 4
    assert again.extra["cost_sent"] == 0 and again.extra["cost_estimate"] == facts["cost_estimate"]
    np.testing.assert_array_equal(first.segment_scores, again.segment_scores)
    sig = str(first.signature)
    assert f"judge_model_reported:{llama_server.alias}" in sig and "template_hash:" in sig
    assert "price" not in sig and "concurrency" not in sig
    for text in (sig, repr(first.extra), repr(metric),
                 (tmp_path / "requests.sqlite").read_bytes().decode("latin-1")):
        assert KEY not in text


def test_a_request_failing_for_good_names_the_segment(llama_server, key_env, tmp_path, monkeypatch):
    monkeypatch.setenv(key_env, "sk-wrong-key-1234")  # 401: not retried
    with pytest.raises(RequestFailedError) as err:
        _on(llama_server, key_env, tmp_path, aspect="fluency", retries=3).compute(BATCH)
    message = str(err.value)
    assert "segment" in message and "after 1 attempt:" in message and "sk-wrong-key-1234" not in message
    dead = registry.create("llm_judge", aspect="fluency", base_url=f"http://127.0.0.1:{free_port()}/v1",
                           model="x", retries=2, backoff=0.01, request_cache="none")
    with pytest.raises(RequestFailedError, match=r"segment '.'.*after 3 attempts: APIConnectionError"):
        dead.compute(BATCH)


def _answers_stored(path) -> int:
    try:
        with sqlite3.connect(str(path)) as db:
            return int(db.execute("SELECT COUNT(*) FROM answers").fetchone()[0])
    except sqlite3.Error:
        return 0


def _posts(log) -> int:
    return sum("POST /v1/chat/completions" in line for line in log.read_text(errors="replace").splitlines())


def test_a_run_resumed_after_the_server_died_sends_only_the_missing_requests(smollm, tmp_path):
    n = 10
    batch = Batch(ids=[str(i) for i in range(n)], outputs=[f"Please call me at {i} o'clock." for i in range(n)],
                  sources=[f"call me at {i}" for i in range(n)], references=[[] for _ in range(n)],
                  directions=[Direction("informal", "formal")] * n)
    port = free_port()
    cache = tmp_path / "requests.sqlite"
    params = dict(aspect="content", base_url=f"http://127.0.0.1:{port}/v1", model="local-gguf", concurrency=1,
                  retries=1, backoff=0.05, request_cache=str(cache))
    first_log, second_log = tmp_path / "first.log", tmp_path / "second.log"
    failure: list[BaseException] = []
    srv = LlamaCppServer(smollm2_gguf(), port=port, log_path=first_log).start()

    def run() -> None:
        try:
            registry.create("llm_judge", **params).compute(batch)
        except BaseException as exc:  # noqa: B036 - handed to the test thread
            failure.append(exc)

    worker = threading.Thread(target=run)
    worker.start()
    deadline = time.monotonic() + 120
    while _answers_stored(cache) < 3 and time.monotonic() < deadline:
        time.sleep(0.005)
    srv.kill()  # mid-corpus, as a crash would
    worker.join(timeout=120)
    stored = _answers_stored(cache)
    assert failure and isinstance(failure[0], RequestFailedError) and "segment" in str(failure[0])
    assert 3 <= stored < n
    with LlamaCppServer(smollm2_gguf(), port=port, log_path=second_log):
        resumed = registry.create("llm_judge", **params).compute(batch)
        assert _posts(second_log) == n - stored  # counted by the server itself
        assert resumed.extra["requests_sent"] == n - stored and resumed.extra["requests_cached"] == stored
        fresh = registry.create("llm_judge", **{**params, "request_cache": str(tmp_path / "fresh.sqlite")})
        uninterrupted = fresh.compute(batch)
    assert _answers_stored(cache) == n
    np.testing.assert_allclose(resumed.values, uninterrupted.values, atol=1e-6)


@pytest.mark.parametrize("stream", [False, True])
def test_score_cli_reports_requests_tokens_and_cost(llama_server, key_env, tmp_path, capsys, stream):
    """`styleval score` prints the requests, tokens and cost of a judge and writes them under `facts` in its JSON;
    streamed in chunks of 2 segments, the counts of every chunk add up (the same as one chunk)."""
    import json

    from styleval.cli.main import main

    table = tmp_path / "outputs.tsv"
    table.write_text("id\tsystem\tsource\toutput\n" + "".join(
        f"{i + 1}\tA\t{src}\t{out}\n" for i, (src, out) in enumerate(zip(BATCH.sources, BATCH.outputs))),
        encoding="utf-8")
    spec = (f"llm_judge:aspect=fluency;max_tokens=1;base_url={llama_server.base_url};model={llama_server.alias};"
            f"api_key_env={key_env};request_cache={tmp_path / 'requests.sqlite'};price=100/200")
    out_json = tmp_path / "scores.json"
    argv = ["score", "--input", str(table), "-m", spec, "--bootstrap", "0", "--json", str(out_json)]
    if stream:
        argv += ["--stream", "--chunk-size", "2"]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    facts = json.loads(out_json.read_text(encoding="utf-8"))["corpus"][0]["facts"]
    assert facts["requests_sent"] == 4 and facts["requests_cached"] == 0
    assert facts["prompt_tokens"] > 4 * 40 and facts["completion_tokens"] == 4
    assert facts["cost_estimate"] == pytest.approx((facts["prompt_tokens"] * 100 + facts["completion_tokens"] * 200)
                                                   / 1e6)
    assert "model server requests (costs in the currency of the price given):" in printed
    assert (f"llm_judge · A: 4 requests (4 sent, 0 from the cache, 0 retries); {facts['prompt_tokens']:,} prompt + "
            f"4 completion tokens") in printed
    assert KEY not in printed and KEY not in out_json.read_text(encoding="utf-8")
