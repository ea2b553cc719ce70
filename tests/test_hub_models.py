"""Models by hub id, through the real download code (huggingface_hub) against a local stand-in for the hub.

Each run is a subprocess with its own ``HF_HOME`` and ``HF_ENDPOINT`` (huggingface_hub reads both at import), the
way a user's command runs; nothing leaves 127.0.0.1.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from styleval.models.catalog import lookup

from hub_stand_in import HubStandIn

pytest.importorskip("sentence_transformers")

SOURCE = ["hey, what's up with the meeting?", "i dunno if he will come", "this is sooo good lol"]
OUTPUT = ["What is the status of the meeting?", "I do not know whether he will come.", "This is very good."]


@pytest.fixture(scope="module")
def minilm() -> Path:
    try:
        return Path(lookup("minilm").locate())
    except Exception as exc:  # noqa: BLE001 - the model package is an install step
        pytest.skip(f"MiniLM package not installed: {exc}")


@pytest.fixture()
def texts(tmp_path: Path) -> tuple[Path, Path]:
    src, out = tmp_path / "source.txt", tmp_path / "out.txt"
    src.write_text("\n".join(SOURCE) + "\n", encoding="utf-8")
    out.write_text("\n".join(OUTPUT) + "\n", encoding="utf-8")
    return src, out


def _env(hub: HubStandIn, home: Path, *, allow: bool = True, offline: bool = False) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "STYLEVAL_ALLOW_HUB", "HF_HUB_CACHE", "HF_TOKEN")}
    env.update(HF_ENDPOINT=hub.url, HF_HOME=str(home), HF_HUB_DISABLE_TELEMETRY="1")
    if allow:
        env["STYLEVAL_ALLOW_HUB"] = "1"
    if offline:
        env["HF_HUB_OFFLINE"] = "1"
    return env


def _score(texts: tuple[Path, Path], model: str, env: dict[str, str], out_json: Path) -> subprocess.CompletedProcess:
    src, out = texts
    cmd = [sys.executable, "-m", "styleval.cli.main", "score", "--source", str(src), "--system", f"sys={out}",
           "-m", f"sentence_cosine:model={model}", "--against", "source", "--bootstrap", "0", "--json",
           str(out_json), "--no-progress"]
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)


def _resolve(model: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    """Only the resolution (download included), as every metric does it first."""
    code = ("from styleval.models.spec import model_spec\n"
            f"s = model_spec({model!r})\n"
            "print(s.display, s.identity()['model_hash'])")
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)


def test_a_hub_id_downloads_through_the_stand_in_and_signs_its_commit(minilm, texts, tmp_path):
    with HubStandIn() as hub:
        commit = hub.add("acme/minilm", minilm)
        r = _score(texts, "acme/minilm", _env(hub, tmp_path / "home"), tmp_path / "hub.json")
        assert r.returncode == 0, r.stderr
        fetched = hub.files_fetched()
    assert fetched, "nothing was downloaded"
    assert "Traceback" not in r.stderr
    # the same model from its local folder gives the same scores; the signature names the hub id and its commit
    env_local = {k: v for k, v in os.environ.items() if k != "STYLEVAL_ALLOW_HUB"}
    local = _score(texts, str(minilm), env_local, tmp_path / "local.json")
    assert local.returncode == 0, local.stderr
    hub_data = json.loads((tmp_path / "hub.json").read_text())
    local_data = json.loads((tmp_path / "local.json").read_text())
    (sig,) = [m["signature"] for m in hub_data["corpus"] if m["metric"].startswith("sentence_cosine")]
    assert sig["params"]["model"] == "acme/minilm" and sig["resources"]["model_commit"] == commit
    assert _segment_scores(hub_data) == pytest.approx(_segment_scores(local_data), abs=1e-9)
    assert all(0.3 < s < 1.0 for s in _segment_scores(hub_data))


def _segment_scores(data: dict) -> list[float]:
    (seg,) = [s for s in data["segments"] if s["metric"].startswith("sentence_cosine")]
    return [seg["scores"][k] for k in sorted(seg["scores"], key=int)]


def test_without_permission_a_hub_id_is_refused_in_one_line_and_nothing_is_fetched(minilm, texts, tmp_path):
    with HubStandIn() as hub:
        hub.add("acme/minilm", minilm)
        r = _score(texts, "acme/minilm", _env(hub, tmp_path / "home", allow=False), tmp_path / "x.json")
        assert hub.requests == []
    assert r.returncode != 0
    assert "STYLEVAL_ALLOW_HUB=1" in r.stderr
    assert "Traceback" not in r.stderr
    assert len([line for line in r.stderr.splitlines() if line.strip()]) == 1


@pytest.mark.parametrize("fault", ["unknown-repo", "unknown-revision", "status-500"])
def test_hub_faults_are_one_clear_error_and_a_later_run_recovers(fault, minilm, tmp_path):
    home = tmp_path / "home"
    with HubStandIn() as hub:
        hub.add("acme/minilm", minilm)
        model = {"unknown-repo": "acme/nothing", "unknown-revision": "acme/minilm@v9"}.get(fault, "acme/minilm")
        if fault == "status-500":
            hub.status = 500
        r = _resolve(model, _env(hub, home))
        assert r.returncode != 0
        assert "Traceback (most recent call last)" in r.stderr  # a python -c run shows the exception ...
        last = r.stderr.strip().splitlines()[-1]
        assert last.startswith("styleval.errors.ResourceUnavailableError: ")  # ... which is styleval's, one line
        assert model.split("@")[0] in last and hub.url in last
        hub.status = None  # the fault gone, the same cache completes the download
        again = _resolve("acme/minilm", _env(hub, home))
    assert again.returncode == 0, again.stderr
    assert again.stdout.startswith("acme/minilm@")


def test_a_truncated_file_is_resumed_and_the_files_equal_the_published_ones(minilm, tmp_path):
    home = tmp_path / "home"
    with HubStandIn() as hub:
        commit = hub.add("acme/minilm", minilm)
        hub.truncate.add("model.safetensors")
        r = _resolve("acme/minilm", _env(hub, home))
        resumed = [p for m, p in hub.requests if p.endswith("/model.safetensors") and m == "GET"]
    assert r.returncode == 0, r.stderr[-2000:]
    assert len(resumed) == 2  # the cut body, then the rest
    snapshot = next(home.rglob(f"snapshots/{commit}"))
    for f in minilm.rglob("*"):
        if f.is_file():
            assert (snapshot / f.relative_to(minilm)).read_bytes() == f.read_bytes(), f


def test_offline_uses_the_cache_and_refuses_what_is_not_there(minilm, tmp_path):
    home = tmp_path / "home"
    with HubStandIn() as hub:
        commit = hub.add("acme/minilm", minilm)
        cold = _resolve("acme/minilm", _env(hub, home, offline=True))
        assert cold.returncode != 0
        assert "HF_HUB_OFFLINE=1" in cold.stderr.strip().splitlines()[-1]
        assert _resolve("acme/minilm", _env(hub, home)).returncode == 0
        n = len(hub.requests)
        warm = _resolve(f"acme/minilm@{commit}", _env(hub, home, offline=True))
        assert len(hub.requests) == n  # offline: the stand-in heard nothing
    assert warm.returncode == 0, warm.stderr
    assert warm.stdout.split()[0] == f"acme/minilm@{commit}"


def test_two_runs_downloading_the_same_model_at_once_both_succeed(minilm, tmp_path):
    home = tmp_path / "home"
    results: list[subprocess.CompletedProcess] = []
    with HubStandIn() as hub:
        commit = hub.add("acme/minilm", minilm)
        hub.delay = 0.2
        threads = [threading.Thread(target=lambda: results.append(_resolve("acme/minilm", _env(hub, home))))
                   for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert [r.returncode for r in results] == [0, 0], [r.stderr[-500:] for r in results]
    assert results[0].stdout == results[1].stdout
    assert results[0].stdout.split()[0] == f"acme/minilm@{commit}"


def test_a_style_classifier_by_hub_id_scores_as_its_folder_and_signs_its_commit(texts, tmp_path):
    from tiny_classifiers import build_classifier

    folder = build_classifier(tmp_path / "formality", "roberta", labels=("informal", "formal"), seed=7)
    src, out = texts

    def run(model: str, env: dict[str, str], name: str) -> dict:
        cmd = [sys.executable, "-m", "styleval.cli.main", "score", "--source", str(src), "--system", f"sys={out}",
               "--direction", "informal:formal", "-m", f"style_probability:model={model}", "--bootstrap", "0",
               "--json", str(tmp_path / name), "--no-progress"]
        r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, r.stderr
        return json.loads((tmp_path / name).read_text())

    with HubStandIn() as hub:
        commit = hub.add("acme/formality", folder)
        by_hub = run("acme/formality", _env(hub, tmp_path / "home"), "hub.json")
    by_folder = run(str(folder), {k: v for k, v in os.environ.items() if k != "STYLEVAL_ALLOW_HUB"}, "local.json")
    (hub_seg,), (local_seg,) = by_hub["segments"], by_folder["segments"]
    assert hub_seg["scores"] == pytest.approx(local_seg["scores"], abs=1e-9)
    (sig,) = [m["signature"] for m in by_hub["corpus"]]
    assert commit in json.dumps(sig["resources"])
