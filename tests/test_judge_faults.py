"""llm_judge and the caches under real faults (issue #43): the project's fault-injecting OpenAI-compatible server
(:mod:`styleval.judges.testing`, real HTTP on 127.0.0.1, standard library only) answers each request as the test
scripts it, and ``styleval score`` runs against it in this process. One test (or group) per case of the issue:

1. partial ratings; 2. answerless 200 replies and the request cache; 3. the key; 4. broken replies, parameters and
cache entries; 5. Retry-After; 6. the streaming cache and the served model; 7. errors that say how to fix them;
8. the statistics cache's checksums.
"""
from __future__ import annotations

import importlib.util
import json
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from styleval.cli.main import main
from styleval.judges.request_cache import RequestCache
from styleval.judges.server import RequestFailedError
from styleval.judges.testing import FaultServer, Reply
from styleval.metrics import registry
from styleval.metrics.base import Batch
from styleval.records import Direction

if importlib.util.find_spec("openai") is None:
    pytest.skip("the openai client is not installed: pip install 'styleval[judge]'", allow_module_level=True)

CANARY = "sk-canary-7f3e9a1c-do-not-leak"
N = 30
RATINGS = [str(i % 5 + 1) for i in range(N)]  # 1..5 repeating: mean 3


@pytest.fixture()
def srv():
    with FaultServer() as server:
        yield server


def _table(path: Path, answers: list[str], system: str = "A") -> Path:
    rows = "".join(f"{i + 1}\t{system}\tinformal->formal\tsource {i}\tRATE {a} (output {i})\n"
                   for i, a in enumerate(answers))
    path.write_text("id\tsystem\tdirection\tsource\toutput\n" + rows, encoding="utf-8")
    return path


def _spec(srv: FaultServer, tmp_path: Path, **params: object) -> str:
    settings = {"base_url": srv.base_url, "request_cache": str(tmp_path / "requests.sqlite"), "backoff": 0.01,
                "retries": 1, **params}
    return "llm_judge:" + ";".join(f"{k}={v}" for k, v in settings.items())


def _score(tmp_path: Path, table: Path, spec: str, *extra: str) -> list[str]:
    return ["score", "--input", str(table), "-m", spec, "--bootstrap", "0", "--no-progress", *extra]


def _one_line_error(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip()
    assert "Traceback" not in err and err.count("\n") == 0, err
    return err


def _batch(answers: list[str]) -> Batch:
    return Batch(ids=[str(i + 1) for i in range(len(answers))], outputs=[f"RATE {a}" for a in answers],
                 sources=["s"] * len(answers), references=[[] for _ in answers],
                 directions=[Direction("informal", "formal")] * len(answers), system="A")


# -- 1. a partial score is never reported as complete ------------------------------------------------------------
def test_fault_partial_rating_fails_the_run_by_default(srv, tmp_path, capsys):
    """15 of 30 answers hold no rating (off the scale, a word, empty): the default stops with one line naming the
    system, the first segments and the count, and writes no JSON."""
    answers = [a if i % 2 == 0 else ("9", "four", "empty")[i % 3] for i, a in enumerate(RATINGS)]
    table = _table(tmp_path / "t.tsv", answers)
    out = tmp_path / "scores.json"
    assert main(_score(tmp_path, table, _spec(srv, tmp_path), "--json", str(out))) == 2
    err = _one_line_error(capsys)
    assert "15 of 30 segments got no rating on the scale 1-5" in err
    assert "system 'A': 15 of 30 (first: '2', '4', '6')" in err and "unrated=skip" in err
    assert not out.exists()


def test_fault_partial_rating_skip_shows_the_count_everywhere(srv, tmp_path, capsys):
    answers = [a if i % 2 == 0 else ("9", "four", "empty")[i % 3] for i, a in enumerate(RATINGS)]
    table = _table(tmp_path / "t.tsv", answers)
    out = tmp_path / "scores.json"
    assert main(_score(tmp_path, table, _spec(srv, tmp_path, unrated="skip"), "--json", str(out))) == 0
    printed = capsys.readouterr().out
    assert "[15 unrated, 50%]" in printed and "left out of the score (unrated=skip)" in printed
    row = json.loads(out.read_text(encoding="utf-8"))["corpus"][0]
    rated = [float(a) for i, a in enumerate(RATINGS) if i % 2 == 0]
    assert row["score"] == pytest.approx(np.mean(rated), abs=0.05)  # probability-weighted, near the digits
    assert row["unrated_segments"] == 15 and row["facts"]["unrated_segments"] == 15
    assert row["facts"]["unrated_share"] == 0.5 and row["n_segments"] == 30
    assert "unrated:15/30" in row["signature_string"] and "unrated:skip" in row["signature_string"]
    assert len(row["flags"]["no_rating"]) == 15
    sent = len(srv.posts())
    assert main(_score(tmp_path, table, _spec(srv, tmp_path, unrated="skip"))) == 0  # all from the request cache
    assert len(srv.posts()) == sent


def test_fault_partial_rating_shows_in_the_report(srv, tmp_path):
    """The HTML and Markdown reports print the count beside the score (from the JSON form of a run)."""
    import styleval
    from styleval.evaluation.summary import aspect_rows
    from styleval.report.html import _html_table

    records = [styleval.Record(id=str(i), source="s", output=f"RATE {a}", system="A",
                               direction="informal->formal") for i, a in enumerate(["4", "nope", "2", "5"])]
    result = styleval.score(records, [registry.create("llm_judge", base_url=srv.base_url, request_cache="none",
                                                      unrated="skip")], bootstrap=0)
    data = {"score": result.to_dict(), "aspects": {"style": [result.metrics[0]]}}
    rows = aspect_rows(data, "style")  # what the HTML and Markdown reports draw their tables from
    page = _html_table(rows, ["A"], {"A": "a"})
    markdown = rows[0]["cells"]["A"]["text"]  # the Markdown report's cell, and the evaluation's terminal cell
    assert "[1 unrated, 25%]" in page and 'class="unrated"' in page and "[1 unrated, 25%]" in markdown


# -- 2. a 200 reply without an answer is a failed request, never cached ------------------------------------------
@pytest.mark.parametrize("body", [{"error": {"message": "model overloaded"}}, {"choices": []}, {"choices": None}])
def test_fault_answerless_reply_is_retried_never_cached(srv, tmp_path, capsys, body):
    table = _table(tmp_path / "t.tsv", RATINGS[:6])
    srv.on("(output 3)", Reply(200, body))
    assert main(_score(tmp_path, table, _spec(srv, tmp_path, retries=2))) == 2
    err = _one_line_error(capsys)
    assert "system 'A', segment '4'" in err and "failed after 3 attempts" in err
    assert ("the reply has no answer" if "choices" in body else "the reply is an error: {'message': 'model "
            "overloaded'}") in err
    assert len([r for r in srv.posts() if "(output 3)" in json.dumps(r.body)]) == 3  # retried within the bound
    srv.clear()  # the server recovers: only the missing answer is asked, and the score is complete
    before = len(srv.posts())
    out = tmp_path / "s.json"
    assert main(_score(tmp_path, table, _spec(srv, tmp_path), "--json", str(out))) == 0
    assert len(srv.posts()) - before == 1
    assert json.loads(out.read_text())["corpus"][0]["score"] == pytest.approx(np.mean([1, 2, 3, 4, 5, 1]), abs=0.1)


# -- 3. the key never leaves the process --------------------------------------------------------------------------
def test_fault_key_echoed_by_the_server_is_in_no_output_cache_or_log(srv, tmp_path, capsys, monkeypatch):
    """A server that echoes the key in the model name, in the answer and in an error body: stdout, stderr, the
    JSON, the segment file, the request cache and the statistics cache hold no trace of it."""
    monkeypatch.setenv("JUDGE_KEY", CANARY)
    srv.api_key = CANARY

    def echo(request):
        answer = srv.answer(request)
        key = request.headers.get("authorization", "")
        assert key == f"Bearer {CANARY}"
        answer["model"] = f"proxy-{key}"
        answer["system_fingerprint"] = key
        return answer

    srv.on("RATE", Reply(body=echo))
    table = _table(tmp_path / "t.tsv", RATINGS[:6])
    out, seg, cache = tmp_path / "s.json", tmp_path / "seg.jsonl", tmp_path / "stats.sqlite"
    spec = _spec(srv, tmp_path, api_key_env="JUDGE_KEY")
    assert main(_score(tmp_path, table, spec, "--json", str(out), "--stream", "--cache", str(cache),
                       "--segments", str(seg))) == 0
    assert main(_score(tmp_path, table, spec)) == 0
    srv.clear()
    srv.push(Reply(400, {"error": {"message": f"bad request from {CANARY}"}}))
    assert main(_score(tmp_path, _table(tmp_path / "u.tsv", ["5"]), spec)) == 2
    captured = capsys.readouterr()
    assert "***" in captured.err and "proxy-Bearer ***" in out.read_text()
    texts = [captured.out, captured.err, out.read_text(), seg.read_text()]
    texts += [p.read_bytes().decode("latin-1") for p in tmp_path.glob("*.sqlite*")]
    assert len(texts) >= 6
    for text in texts:
        assert CANARY not in text


@pytest.mark.parametrize("url", ["{base}?api-key={key}", "{base}?x=1&access_token={key}", "http://u:{key}@{host}/v1"])
def test_fault_key_in_the_url_is_refused_without_repeating_it(srv, tmp_path, capsys, url):
    host = srv.base_url.split("//")[1].split("/")[0]
    spec = f"llm_judge:base_url={url.format(base=srv.base_url, key=CANARY, host=host)};request_cache=none"
    assert main(_score(tmp_path, _table(tmp_path / "t.tsv", ["3"]), spec)) == 2
    err = _one_line_error(capsys)
    assert CANARY not in err and "api_key_env" in err and not srv.log


# -- 4. ordinary faults are one line, exit 2 ----------------------------------------------------------------------
@pytest.mark.parametrize("reply, said", [
    (Reply(200, b'{"choices": [{"message": {"content": "4"'), "not JSON"),
    (Reply(200, b"<html><body>Gateway login</body></html>", {"Content-Type": "text/html"}), "text/html"),
    (Reply(200, {"choices": [{"message": {"content": "4"}, "logprobs": {"content": [
        {"token": "4", "logprob": "-0.1", "top_logprobs": [{"token": "4", "logprob": "-0.1"}]}]}}]}),
     "numeric logprob"),
])
def test_fault_broken_reply_names_the_segment_in_one_line(srv, tmp_path, capsys, reply, said):
    srv.on("(output 1)", reply)
    assert main(_score(tmp_path, _table(tmp_path / "t.tsv", RATINGS[:3]), _spec(srv, tmp_path))) == 2
    err = _one_line_error(capsys)
    assert "system 'A', segment '2'" in err and said in err and "after 2 attempts" in err


@pytest.mark.parametrize("param, said", [("timeout=nan", "timeout must be a finite number"),
                                         ("top_logprobs=abc", "top_logprobs must be an integer in [1, 20]"),
                                         ("retries=1.5", "retries must be an integer >= 0"),
                                         ("unrated=lowest", "unrated must be one of fail, skip")])
def test_fault_bad_parameter_is_one_line(srv, tmp_path, capsys, param, said):
    spec = f"llm_judge:base_url={srv.base_url};{param}"
    assert main(_score(tmp_path, _table(tmp_path / "t.tsv", ["3"]), spec)) == 2
    assert said in _one_line_error(capsys) and not srv.log


@pytest.mark.parametrize("entry", ["[1, 2]", '{"choices": "x"}', "{}", "not json"])
def test_fault_wrong_shape_cache_entry_is_asked_again(srv, tmp_path, entry):
    """A request-cache entry of the wrong shape is not a rating: it is asked again and overwritten."""
    path = tmp_path / "requests.sqlite"
    metric = registry.create("llm_judge", base_url=srv.base_url, request_cache=str(path))
    batch = _batch(["4", "2"])
    clean = metric.compute(batch).values
    with sqlite3.connect(path) as db:
        db.execute("UPDATE answers SET answer = ? WHERE answer LIKE '%\"content\": \"4\"%'", (entry,))
    again = metric.compute(batch)
    assert again.extra["requests_sent"] == 1 and again.extra["requests_cached"] == 1
    np.testing.assert_array_equal(again.values, clean)
    cache = RequestCache(path)
    try:
        assert len(cache.get_many(list(_keys(path)))) == 2 and cache.rejected == 0
    finally:
        cache.close()


def _keys(path: Path) -> list[str]:
    with sqlite3.connect(path) as db:
        return [k for (k,) in db.execute("SELECT key FROM answers")]


def test_fault_server_failing_half_way_leaves_nothing_that_looks_complete(srv, tmp_path, capsys):
    table = _table(tmp_path / "t.tsv", RATINGS[:12])
    srv.on("(output 7)", Reply(503, {"error": {"message": "upstream down"}}))
    out, seg = tmp_path / "s.json", tmp_path / "seg.jsonl"
    code = main(_score(tmp_path, table, _spec(srv, tmp_path, concurrency=1), "--stream", "--chunk-size", "4",
                       "--json", str(out), "--segments", str(seg), "--cache", str(tmp_path / "stats.sqlite")))
    assert code == 2
    err = _one_line_error(capsys)
    assert "segment '8'" in err and "503" in err and "upstream down" in err
    assert not out.exists() and not seg.exists() and not list(tmp_path.glob("seg.jsonl*"))


# -- 5. Retry-After ---------------------------------------------------------------------------------------------
def test_fault_retry_after_is_honoured(srv, tmp_path):
    srv.push(Reply(429, {"error": {"message": "rate limited"}}, {"Retry-After": "1.5"}))
    metric = registry.create("llm_judge", base_url=srv.base_url, request_cache="none", backoff=0.01, concurrency=1)
    out = metric.compute(_batch(["3"]))
    first, second = srv.posts()
    assert second.time - first.time >= 1.5 and out.extra["retries"] == 1 and out.values[0, 0] == pytest.approx(3,
                                                                                                              abs=0.1)
    srv.push(Reply(429, {"error": {"message": "quota"}}, {"Retry-After": "3600"}))
    with pytest.raises(RequestFailedError, match="asks to wait 3600 s"):
        metric.compute(_batch(["2"]))
    assert len(srv.posts()) == 3  # no retry for an hour


# -- 6. the streaming cache and the served model --------------------------------------------------------------
def test_fault_stream_cache_keys_on_the_served_model_and_keeps_run_facts(srv, tmp_path, capsys):
    table = _table(tmp_path / "t.tsv", RATINGS)
    cache, out = tmp_path / "stats.sqlite", tmp_path / "s.json"
    argv = _score(tmp_path, table, _spec(srv, tmp_path, price="1/2"), "--stream", "--chunk-size", "7", "--cache",
                  str(cache), "--json", str(out))
    assert main(argv) == 0
    printed = capsys.readouterr().out
    row = json.loads(out.read_text())["corpus"][0]
    assert row["facts"]["requests_sent"] == N and "cost_estimate" in row["facts"]
    assert f"llm_judge · A: {N} requests ({N} sent" in printed
    assert "judge_model:fault-judge" in row["signature_string"]
    srv.model = "swapped-judge"  # the server now serves another model under no name the user gave
    assert main(argv) == 0
    row = json.loads(out.read_text())["corpus"][0]
    assert row["facts"]["requests_sent"] == N and len(srv.posts()) == 2 * N
    assert "judge_model:swapped-judge" in row["signature_string"]
    assert "judge_model_reported:swapped-judge" in row["signature_string"]
    assert main(argv) == 0  # the same model again: everything from the statistics cache
    assert len(srv.posts()) == 2 * N


# -- 7. errors that say how to fix them --------------------------------------------------------------------------
def test_fault_server_errors_say_how_to_fix(srv, tmp_path, capsys, monkeypatch):
    table = _table(tmp_path / "t.tsv", ["3"])
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("MY_KEY", raising=False)
    root = srv.base_url[:-len("/v1")]
    cases = [(f"base_url={root}", "is base_url missing its /v1 suffix? (try " + root + "/v1)"),
             (f"base_url={root[len('http://'):]}/v1", "must start with http:// or https://"),
             (f"base_url={srv.base_url};api_key_env=MY_KEY", "api_key_env=MY_KEY names an environment variable "
                                                              "that is unset"),
             ("base_url=https://judge.example.invalid/v1", "is not on this machine and OPENAI_API_KEY is unset")]
    for params, said in cases:
        assert main(_score(tmp_path, table, f"llm_judge:{params};request_cache=none;retries=0")) == 2
        assert said in _one_line_error(capsys), params
    assert [r.path for r in srv.log] == ["/models"]  # the listing without /v1 (404); nothing else was sent
    srv.api_key = CANARY
    assert main(_score(tmp_path, table, f"llm_judge:base_url={srv.base_url};request_cache=none")) == 2
    err = _one_line_error(capsys)
    assert "401" in err and "the server wants an API key: OPENAI_API_KEY is unset" in err


def test_fault_progress_counts_requests_sent_cached_and_left(srv, tmp_path):
    from styleval.progress import reporting

    heard: list[tuple[str, int, int]] = []
    metric = registry.create("llm_judge", base_url=srv.base_url, request_cache=str(tmp_path / "r.sqlite"),
                             concurrency=1)
    metric.compute(_batch(["1", "2"]))
    with reporting(lambda d, done, total: heard.append((d, done, total))):
        metric.compute(_batch(["1", "2", "3", "4"]))
    assert heard[0][0].endswith("0 sent, 2 from the cache, 2 left [requests]") and heard[0][1:] == (2, 4)
    assert heard[-1][0].endswith("2 sent, 2 from the cache, 0 left [requests]") and heard[-1][1:] == (4, 4)


# -- 8. the statistics cache trusts no byte -----------------------------------------------------------------------
@pytest.mark.parametrize("damage", ["float", "torn", "flags"])
def test_fault_stats_cache_changed_or_torn_row_is_recomputed(tmp_path, damage):
    from styleval.engine import StreamOptions, StatsCache, score_stream

    table = tmp_path / "t.tsv"
    table.write_text("id\tsystem\tsource\toutput\n" + "".join(
        f"{i}\tA\tthe cat sat on mat {i}\tthe cat sat on the mat {i}\n" for i in range(8)), encoding="utf-8")
    cache = tmp_path / "stats.sqlite"
    clean = score_stream(table, ["chrf:against=source"], bootstrap=0,
                         stream=StreamOptions(cache=cache, keep_stats=True))
    with sqlite3.connect(cache) as db:
        segment, row = db.execute("SELECT segment, row FROM segment_stats LIMIT 1").fetchone()
        if damage == "float":
            values = np.frombuffer(row, dtype=np.float64).copy()
            values[0] += 3.5
            db.execute("UPDATE segment_stats SET row = ? WHERE segment = ?", (values.tobytes(), segment))
        elif damage == "torn":
            db.execute("UPDATE segment_stats SET row = ? WHERE segment = ?", (row[:5], segment))
        else:
            db.execute("UPDATE segment_stats SET flags = '{not json' WHERE segment = ?", (segment,))
    with StatsCache(cache) as stats:
        again = score_stream(table, ["chrf:against=source"], bootstrap=0,
                             stream=StreamOptions(cache=stats, keep_stats=True))
        assert stats.rejected == 1
    assert again.cache_hits == 7 and again.cache_misses == 1 and again.cache_rejected == 1
    np.testing.assert_array_equal(again.result.results[0].stats, clean.result.results[0].stats)
