"""Small CLI frictions of issue #52 (item 9), each held by a test: score -q, help for --confidence and --seed, a
misspelt metric's suggestion, a pasteable BLEURT install command, an offline data fetch, `styleval errors` on the
long judgment format, and Ray saying what it does while it starts (`styleval metrics j` is in test_j_defaults.py)."""
from __future__ import annotations

import argparse
import importlib.util
import shlex

import numpy as np
import pytest

from styleval.cli.main import build_parser, main
from styleval.errors import ResourceUnavailableError


def _verbs() -> dict[str, argparse.ArgumentParser]:
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def test_score_quiet_keeps_the_results_unless_files_hold_them(tmp_path, capsys):
    assert main(["score", "--example", "formality", "-m", "bleu", "--bootstrap", "0", "-q"]) == 0
    out, err = capsys.readouterr()
    assert "bleu/ref" in out and "signatures:" in out and err == ""
    assert main(["score", "--example", "formality", "-m", "bleu", "--bootstrap", "0", "-q",
                 "--json", str(tmp_path / "s.json")]) == 0
    out, err = capsys.readouterr()
    assert out == "" and err == "" and (tmp_path / "s.json").is_file()


def test_confidence_and_seed_have_help_in_every_verb():
    for name, parser in _verbs().items():
        for action in parser._actions:
            if {"--confidence", "--seed"} & set(action.option_strings):
                assert action.help and len(action.help) > 20, (name, action.option_strings)
    score = _verbs()["score"].format_help()
    assert "confidence intervals" in score and "same seed gives the same" in score


def test_a_misspelt_metric_suggests_the_right_one(capsys):
    assert main(["score", "--example", "formality", "-m", "blue", "--bootstrap", "0"]) == 2
    err = capsys.readouterr().err
    assert "unknown metric 'blue'; did you mean bleu" in err and len(err.strip().splitlines()) == 1


@pytest.mark.skipif(importlib.util.find_spec("bleurt") is not None, reason="bleurt is installed here")
def test_the_bleurt_install_hint_is_a_command_to_paste(tmp_path):
    from styleval.metrics import registry

    with pytest.raises(ResourceUnavailableError) as err:
        registry.create("bleurt", checkpoint=str(tmp_path))
    command = str(err.value).split("`")[1]
    words = shlex.split(command)
    assert words[:2] == ["pip", "install"] and len(words) == 3 and words[2].startswith("git+https://")
    assert "(" not in command


def test_offline_fetch_suggests_a_mirror_and_leaves_no_partial_set(tmp_path, monkeypatch, capsys):
    from styleval.datasets import fetch

    monkeypatch.delenv(fetch.MIRROR_ENV, raising=False)
    monkeypatch.setattr(fetch, "RAW_URL", "http://127.0.0.1:9/{repository}/{commit}/{prefix}{path}")  # refused
    assert main(["data", "fetch", "lai2022", "--dir", str(tmp_path), "--retries", "0"]) == 2
    err = capsys.readouterr().err
    assert "--mirror URL" in err and fetch.MIRROR_ENV in err and len(err.strip().splitlines()) == 1
    assert list(tmp_path.iterdir()) == []  # no lai2022.partial folder that looks like a set
    # with a mirror given, the error is the download's own
    assert main(["data", "fetch", "lai2022", "--dir", str(tmp_path), "--retries", "0",
                 "--mirror", "http://127.0.0.1:9"]) == 2
    assert "--mirror URL" not in capsys.readouterr().err and list(tmp_path.iterdir()) == []


def test_errors_reads_the_long_judgment_format(shared_data, tmp_path, capsys):
    """`data export --human` writes the long format `campaign export` writes (styleval.meta.judgments): errors takes
    it with --outputs for the texts, one row per judged output (the mean over annotators)."""
    import json

    import pandas as pd

    human, outputs, scores = tmp_path / "h.csv", tmp_path / "o.tsv", tmp_path / "s.json"
    assert main(["data", "export", "lai2022", "--root", str(shared_data), "--human", str(human), "--outputs",
                 str(outputs), "-q"]) == 0
    assert main(["score", "--input", str(outputs), "-m", "bleu", "--against", "source", "--bootstrap", "0",
                 "--json", str(scores), "-q"]) == 0
    capsys.readouterr()
    out_json = tmp_path / "e.json"
    assert main(["errors", str(human), "--outputs", str(outputs), "--aspect", "content", "-m", "bleu/src",
                 "--scores", str(scores), "--top", "5", "--no-base-rates", "--json", str(out_json), "-q"]) == 0
    result = json.loads(out_json.read_text(encoding="utf-8"))
    judged = pd.read_csv(human)
    content = judged[judged["aspect"] == "content"]
    means = content.groupby(["system", "segment"])["score"].mean()
    assert result["n_segments"] == len(means) == 9 * 80
    worst = result["segments"][0]
    system, segment = worst["id"].split(":")
    assert worst["human"] == pytest.approx(means[(system, int(segment))])
    bleu = json.loads(scores.read_text(encoding="utf-8"))
    block = next(b for b in bleu["segments"] if b["metric"] == "bleu/src" and b["system"] == system)
    assert worst["metric"] == pytest.approx(block["scores"][segment])
    assert np.isfinite(worst["gap"])
    # several aspects and no --aspect, or no --outputs: one clear line each
    assert main(["errors", str(human), "--outputs", str(outputs), "-m", "bleu/src", "--scores", str(scores)]) == 2
    assert "choose one with --aspect" in capsys.readouterr().err
    assert main(["errors", str(human), "--aspect", "content", "-m", "bleu/src", "--scores", str(scores)]) == 2
    assert "give --outputs TABLE" in capsys.readouterr().err


def test_ray_says_what_it_does_while_it_starts(tmp_path):
    pytest.importorskip("ray")
    import subprocess
    import sys

    from styleval.examples import get as get_example

    table = get_example("formality").systems_dir.parent / "outputs.tsv"
    if not table.is_file():
        assert main(["data", "example", "formality", str(tmp_path), "-q"]) == 0
        table = tmp_path / "outputs.tsv"
    done = subprocess.run([sys.executable, "-m", "styleval.cli.main", "score", "--input", str(table), "--stream",
                           "--engine", "ray", "-m", "bleu", "--bootstrap", "0", "--progress"],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stderr.splitlines()
    assert any("starting a local Ray cluster (2 metric workers)" in line for line in lines)
    assert any("Ray: starting 2 metric worker(s)" in line for line in lines)
    assert not any("core_worker.cc" in line or "logging.cc" in line for line in lines), done.stderr
    assert all(line.startswith("styleval: ") for line in lines), done.stderr  # nothing but styleval's own lines
