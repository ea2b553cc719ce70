"""The command line, end to end, on the bundled example and on bad input."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from styleval.cli.main import main


def test_score_example_prints_table_and_signatures(capsys):
    assert main(["score", "--example", "formality", "--metrics", "bleu,chrf", "--bootstrap", "100"]) == 0
    out = capsys.readouterr().out
    assert "bleu/src" in out and "bleu/ref" in out
    for system in ("copy", "tidy", "rewrite"):
        assert system in out
    assert "signatures:" in out and "nrefs:2" in out and "sacrebleu:" in out


def test_score_writes_files(tmp_path, capsys):
    j, c, s, l = (tmp_path / n for n in ("a.json", "a.csv", "seg.csv", "seg.jsonl"))
    rc = main(["score", "--example", "formality", "--metrics", "bleu", "--against", "references",
               "--significance", "approx-randomization", "--baseline", "copy", "--bootstrap", "50",
               "--json", str(j), "--csv", str(c), "--segments-csv", str(s), "--jsonl", str(l)])
    assert rc == 0
    data = json.loads(j.read_text())
    assert {x["system"] for x in data["comparisons"]} == {"tidy", "rewrite"}
    assert len(l.read_text().splitlines()) == 3 * 30
    assert len(s.read_text().splitlines()) == 1 + 3 * 30
    assert len(c.read_text().splitlines()) == 1 + 3


def test_missing_file_is_a_clear_error(tmp_path, capsys):
    rc = main(["score", "--system", str(tmp_path / "nope.txt"), "--source", str(tmp_path / "src.txt")])
    assert rc == 2
    err = capsys.readouterr().err
    assert "nope.txt" in err or "src.txt" in err


def test_length_mismatch_names_both_files(tmp_path, capsys):
    (tmp_path / "src.txt").write_text("a\nb\nc\n")
    (tmp_path / "out.txt").write_text("a\nb\n")
    rc = main(["score", "--system", str(tmp_path / "out.txt"), "--source", str(tmp_path / "src.txt"),
               "--metrics", "bleu"])
    assert rc == 2
    err = capsys.readouterr().err
    assert "out.txt" in err and "src.txt" in err and "2" in err and "3" in err


def test_metrics_verb_lists_lexical_battery(capsys):
    assert main(["metrics"]) == 0
    out = capsys.readouterr().out
    for name in ("bleu", "chrf", "chrf++", "ter", "rouge1", "rougeL", "meteor", "pinc", "levenshtein"):
        assert name in out


def test_console_script_runs():
    proc = subprocess.run([sys.executable, "-m", "styleval.cli.main", "--version"], capture_output=True, text=True)
    assert proc.returncode == 0 and "styleval" in proc.stdout
