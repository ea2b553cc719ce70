"""llm_judge against a hostile or unlucky server (issue #53), on the project's fault-injecting OpenAI-compatible
server (:mod:`styleval.judges.testing`, real HTTP on 127.0.0.1): the interval over mixed probability-weighted and
parsed ratings, a body dripped a byte a second (Content-Length and chunked), huge and gzip-bomb replies, redirects
to another host, choices out of order, log-probabilities above 0, a non-ASCII key, credentials in the URL, and the
message of ``unrated=fail`` without a request cache. Every failure is one line on stderr, exit 2, no traceback.
"""
from __future__ import annotations

import importlib.util
import json
import sqlite3
import time
from pathlib import Path

import numpy as np
import pytest

from styleval.cli.main import main
from styleval.judges.testing import FaultServer, Reply

if importlib.util.find_spec("openai") is None:
    pytest.skip("the openai client is not installed: pip install 'styleval[judge]'", allow_module_level=True)

N = 30
RATINGS = [str(i % 5 + 1) for i in range(N)]  # 1..5 repeating


@pytest.fixture()
def srv():
    with FaultServer() as server:
        yield server


def _table(path: Path, answers: list[str]) -> Path:
    rows = "".join(f"{i + 1}\tA\tinformal->formal\tsource {i}\tRATE {a} (output {i})\n" for i, a in enumerate(answers))
    path.write_text("id\tsystem\tdirection\tsource\toutput\n" + rows, encoding="utf-8")
    return path


def _spec(srv: FaultServer, tmp_path: Path, **params: object) -> str:
    settings = {"base_url": srv.base_url, "request_cache": str(tmp_path / "requests.sqlite"), "backoff": 0.01,
                "retries": 0, **params}
    return "llm_judge:" + ";".join(f"{k}={v}" for k, v in settings.items())


def _score(table: Path, spec: str, *extra: str) -> list[str]:
    return ["score", "--input", str(table), "-m", spec, "--no-progress", *extra]


def _one_line_error(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip()
    assert "Traceback" not in err and err.count("\n") == 0, err
    return err


def _cached(tmp_path: Path) -> int:
    path = tmp_path / "requests.sqlite"
    if not path.exists():
        return 0
    with sqlite3.connect(path) as db:
        return int(db.execute("SELECT COUNT(*) FROM answers").fetchone()[0])


def _bootstrap_mean(values: np.ndarray, n: int = 2000, seed: int = 7) -> tuple[float, float]:
    """A percentile bootstrap of the mean, computed here, as a yardstick for the engine's interval."""
    rng = np.random.default_rng(seed)
    means = values[rng.integers(0, len(values), size=(n, len(values)))].mean(axis=1)
    return float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5))


# -- the interval covers every rated segment ----------------------------------------------------------------------
def test_interval_covers_weighted_and_parsed_ratings_alike(srv, tmp_path, capsys):
    """Half the answers come with log-probabilities (weighted ratings), half without (parsed): the score is the mean
    of all 30; the interval holds the score and matches a bootstrap of the 30 ratings computed here (it used to be over
the 15 weighted ones only, and did not hold the score)."""
    answers = ["5" if i < 15 else "1" if i % 2 else "2" for i in range(N)]  # the weighted half high, the parsed low
    for i in range(15, N):
        srv.on(f"(output {i})", Reply(logprobs=False))
    out = tmp_path / "s.json"
    assert main(_score(_table(tmp_path / "t.tsv", answers), _spec(srv, tmp_path), "--bootstrap", "1000",
                       "--json", str(out))) == 0
    printed = capsys.readouterr().out
    row = json.loads(out.read_text(encoding="utf-8"))["corpus"][0]
    assert len(row["flags"]["parsed_rating"]) == 15 and row["n_segments"] == N
    score, (low, high) = row["score"], row["ci"]
    ratings = np.array([4.999 if i < 15 else float(answers[i]) for i in range(N)])
    assert score == pytest.approx(ratings.mean(), abs=0.01)  # 5 (weighted, nearly all mass) and 1s and 2s
    assert low < score < high
    ref_low, ref_high = _bootstrap_mean(ratings)
    assert low == pytest.approx(ref_low, abs=0.25) and high == pytest.approx(ref_high, abs=0.25)
    assert "ci_excluded_segments" not in row.get("facts", {}) and "ci_skipped" not in row.get("facts", {})
    assert f"{score:.2f}" in printed


def test_interval_over_parsed_ratings_only(srv, tmp_path, capsys):
    """Every segment parsed (a server without log-probabilities): the interval is there, over all 30."""
    srv.on("RATE", Reply(logprobs=False))
    out = tmp_path / "s.json"
    assert main(_score(_table(tmp_path / "t.tsv", RATINGS), _spec(srv, tmp_path), "--bootstrap", "500",
                       "--json", str(out))) == 0
    row = json.loads(out.read_text(encoding="utf-8"))["corpus"][0]
    assert row["score"] == pytest.approx(3.0) and row["ci"] is not None and row["ci"][0] < 3.0 < row["ci"][1]
    assert "no CI" not in capsys.readouterr().out


def test_no_interval_says_why_beside_the_score(srv, tmp_path, capsys):
    """One rated segment (the other unrated, skipped): no interval, and the reason stands beside the score."""
    assert main(_score(_table(tmp_path / "t.tsv", ["4", "none"]), _spec(srv, tmp_path, unrated="skip"),
                       "--bootstrap", "200")) == 0
    printed = capsys.readouterr().out
    assert "[no CI: 1 scored segment(s); an interval needs 2]" in printed


# -- a whole-request deadline -------------------------------------------------------------------------------------
@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
def test_a_dripping_body_is_cut_at_the_timeout(srv, tmp_path, capsys, chunked):
    """Headers at once, then one byte every 0.2 s (a 400-byte answer would take 80 s): timeout=1.5 ends the
    request at about 1.5 s, a timeout naming the whole request."""
    srv.on("RATE", Reply(drip=0.2, chunked=chunked))
    started = time.monotonic()
    assert main(_score(_table(tmp_path / "t.tsv", ["4"]), _spec(srv, tmp_path, timeout=1.5), "--bootstrap",
                       "0")) == 2
    took = time.monotonic() - started
    err = _one_line_error(capsys)
    assert "no complete answer within timeout=1.5 s (connecting, headers and body together)" in err
    assert 1.4 < took < 6.0, took
    assert _cached(tmp_path) == 0


def test_dripping_headers_are_cut_at_the_timeout_too(srv, tmp_path, capsys):
    """The status line and headers a byte every 0.2 s: the deadline covers them as it covers the body."""
    srv.on("RATE", Reply(drip=0.2, drip_headers=True))
    started = time.monotonic()
    assert main(_score(_table(tmp_path / "t.tsv", ["4"]), _spec(srv, tmp_path, timeout=1.5), "--bootstrap",
                       "0")) == 2
    took = time.monotonic() - started
    assert "no complete answer within timeout=1.5 s" in _one_line_error(capsys)
    assert 1.4 < took < 6.0, took


def test_a_slow_but_steady_body_within_the_timeout_is_read(srv, tmp_path):
    srv.on("RATE", Reply(drip=0.001))
    out = tmp_path / "s.json"
    assert main(_score(_table(tmp_path / "t.tsv", ["4"]), _spec(srv, tmp_path, timeout=10), "--bootstrap", "0",
                       "--json", str(out))) == 0
    assert json.loads(out.read_text())["corpus"][0]["score"] == pytest.approx(4.0, abs=0.1)


# -- a cap on the size of a reply ---------------------------------------------------------------------------------
@pytest.mark.parametrize("reply, said", [
    (Reply(pad=100_000_000), "announces 100.0 MB, more than 16 MB"),  # refused before a byte of the body is read
    (Reply(pad=40_000_000, chunked=True), "longer than 16 MB"),  # no length: counted as it comes
    (Reply(pad=400_000_000, gzip=True), "longer than 16 MB"),  # ~0.4 MB on the wire, 400 MB inflated
], ids=["content-length", "chunked", "gzip-bomb"])
def test_a_huge_reply_is_refused_and_never_cached(srv, tmp_path, capsys, reply, said):
    srv.on("(output 1)", reply)
    assert main(_score(_table(tmp_path / "t.tsv", ["4", "5", "3"]), _spec(srv, tmp_path), "--bootstrap",
                       "0")) == 2
    err = _one_line_error(capsys)
    assert said in err and "max_reply_mb" in err and "system 'A', segment '2'" in err
    assert _cached(tmp_path) <= 2  # the others' answers may be kept; the huge one never
    assert (tmp_path / "requests.sqlite").stat().st_size < 1_000_000


def test_a_gzip_reply_within_the_cap_is_read_and_the_cap_is_a_parameter(srv, tmp_path, capsys):
    srv.on("RATE", Reply(gzip=True, pad=3_000_000))
    out = tmp_path / "s.json"
    assert main(_score(_table(tmp_path / "t.tsv", ["4", "2"]), _spec(srv, tmp_path), "--bootstrap", "0",
                       "--json", str(out))) == 0
    assert json.loads(out.read_text())["corpus"][0]["score"] == pytest.approx(3.0, abs=0.1)
    capsys.readouterr()
    assert main(_score(_table(tmp_path / "u.tsv", ["5"]), _spec(srv, tmp_path, max_reply_mb=1),
                       "--bootstrap", "0")) == 2
    assert "longer than 1 MB (max_reply_mb)" in _one_line_error(capsys)


# -- redirects ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("status", [301, 302, 307, 308])
def test_a_redirect_to_another_host_is_refused_and_named(srv, tmp_path, capsys, status):
    """The other server (reached as localhost, another origin) never gets the request; the error names the
    redirect and its target."""
    with FaultServer() as other:
        target = other.base_url.replace("127.0.0.1", "localhost") + "/chat/completions"
        srv.on("RATE", Reply(status, b"", {"Location": target}))
        assert main(_score(_table(tmp_path / "t.tsv", ["4"]), _spec(srv, tmp_path), "--bootstrap", "0")) == 2
        err = _one_line_error(capsys)
        assert f"answered {status}, a redirect" in err and target in err and "RedirectRefused" in err
        assert not other.posts()


def test_a_same_origin_307_is_followed(srv, tmp_path):
    srv.push(Reply(307, b"", {"Location": srv.base_url + "/chat/completions"}))
    out = tmp_path / "s.json"
    assert main(_score(_table(tmp_path / "t.tsv", ["4"]), _spec(srv, tmp_path), "--bootstrap", "0", "--json",
                       str(out))) == 0
    assert json.loads(out.read_text())["corpus"][0]["score"] == pytest.approx(4.0, abs=0.1)
    assert len(srv.posts()) == 2


def test_a_same_origin_302_of_a_post_is_refused(srv, tmp_path, capsys):
    srv.on("RATE", Reply(302, b"", {"Location": srv.base_url + "/chat/completions"}))
    assert main(_score(_table(tmp_path / "t.tsv", ["4"]), _spec(srv, tmp_path), "--bootstrap", "0")) == 2
    assert "answered 302, a redirect with 302, which turns the POST into a GET" in _one_line_error(capsys)


# -- choices and log-probabilities --------------------------------------------------------------------------------
def test_choices_are_read_by_index_not_by_place(srv, tmp_path):
    def two_choices(request):
        answer = srv.answer(request)
        first = answer["choices"][0]
        decoy = json.loads(json.dumps(first)).copy()
        decoy["index"], decoy["message"]["content"], decoy["logprobs"] = 1, "1", None
        answer["choices"] = [decoy, first]  # index 1 listed first
        return answer

    srv.on("RATE", Reply(body=two_choices))
    out = tmp_path / "s.json"
    assert main(_score(_table(tmp_path / "t.tsv", ["5", "4"]), _spec(srv, tmp_path, scoring="parsed"),
                       "--bootstrap", "0", "--json", str(out))) == 0
    assert json.loads(out.read_text())["corpus"][0]["score"] == pytest.approx(4.5)


def test_a_logprob_above_zero_is_a_failed_request(srv, tmp_path, capsys):
    def positive(request):
        answer = srv.answer(request)
        answer["choices"][0]["logprobs"]["content"][0]["top_logprobs"][0]["logprob"] = 0.7
        return answer

    srv.on("(output 0)", Reply(body=positive))
    assert main(_score(_table(tmp_path / "t.tsv", ["4"]), _spec(srv, tmp_path), "--bootstrap", "0")) == 2
    assert "logprob above 0, a probability above 1" in _one_line_error(capsys)
    assert _cached(tmp_path) == 0


# -- the key and the URL ------------------------------------------------------------------------------------------
def test_a_non_ascii_key_is_one_error_naming_the_variable_and_no_request(srv, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("JUDGE_KEY", "sk-abc\u2019def")
    assert main(_score(_table(tmp_path / "t.tsv", ["4"]), _spec(srv, tmp_path, api_key_env="JUDGE_KEY", retries=3),
                       "--bootstrap", "0")) == 2
    err = _one_line_error(capsys)
    assert "JUDGE_KEY holds a character that is not ASCII (U+2019, character 7 of 10)" in err
    assert "abc" not in err and not srv.log


@pytest.mark.parametrize("url, said", [
    ("{base}?code=s3cr3tvalue", "(code=...)"),
    ("{base}/sk-proj-s3cr3tvalue", "looks like an API key in its path"),
])
def test_a_key_in_the_url_as_code_or_path_is_refused(srv, tmp_path, capsys, url, said):
    spec = f"llm_judge:base_url={url.format(base=srv.base_url)};request_cache=none"
    assert main(_score(_table(tmp_path / "t.tsv", ["3"]), spec)) == 2
    err = _one_line_error(capsys)
    assert said in err and "s3cr3tvalue" not in err and not srv.log


def test_unrated_fail_without_a_request_cache_does_not_claim_a_cache(srv, tmp_path, capsys):
    spec = _spec(srv, tmp_path, request_cache="none")
    assert main(_score(_table(tmp_path / "t.tsv", ["4", "nine"]), spec, "--bootstrap", "0")) == 2
    err = _one_line_error(capsys)
    assert "request_cache=none a rerun asks the server for every answer again" in err
    assert "cached" not in err
