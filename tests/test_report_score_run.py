"""`report` on a `styleval score` run: the JSON keeps the run and the texts, the page's tables are the run's scores
grouped by the aspect each metric declares, a `ScoreResult` renders from Python too, and a file that is neither an
evaluation nor scores is one error naming it. (The explorer in a real browser: ``tests/test_report_explorer.py``.)"""
from __future__ import annotations

import argparse
import json
import re

import pytest

from styleval import score
from styleval.cli import main as cli_main
from styleval.cli.score_cmd import load_records
from styleval.errors import InputError
from styleval.evaluation.summary import estimate
from styleval.report.html import render_html, render_markdown
from styleval.report.score_view import load_report_data


def _records():
    ns = argparse.Namespace(example="formality", input=[], gyafc=None, system=[], systems_dir=None, source=None,
                            reference=[], direction=None)
    return load_records(ns)


def _payload(page: str) -> dict:
    return json.loads(re.search(r'<script type="application/json" id="sv-data">(.*?)</script>', page, re.S).group(1))


def test_score_json_keeps_run_and_texts_and_reports(tmp_path, capsys):
    out = tmp_path / "s.json"
    assert cli_main.main(["score", "--example", "formality", "-m", "bleu,pinc", "--bootstrap", "50",
                          "--json", str(out), "-q"]) == 0
    data = json.loads(out.read_text(encoding="utf-8"))
    records = _records()
    assert data["run"]["command"].startswith("styleval score --example formality")
    assert {f["option"] for f in data["run"]["inputs"]} <= {"--example", "--example file"} and data["run"]["inputs"]
    by_key = {(r.system, r.id): r for r in records}
    texts = data["texts"]
    for system, outputs in texts["outputs"].items():
        for i, output in zip(texts["ids"], outputs):
            assert output == by_key[(system, i)].output
    assert texts["direction"] == [str(by_key[("copy", i)].direction) for i in texts["ids"]]
    assert cli_main.main(["report", str(out), "--markdown", str(tmp_path / "r.md")]) == 0
    capsys.readouterr()
    md = (tmp_path / "r.md").read_text(encoding="utf-8")
    assert md.startswith("# styleval scores\n") and "## Content" in md and "## Overall" not in md
    for c in data["corpus"]:
        assert estimate(c["score"], c["ci"]) in md


def test_a_score_result_renders_from_python():
    result = score(_records(), ["bleu", "chrf"], bootstrap=0)
    page = render_html(result, title="my scores")
    payload = _payload(page)
    assert payload["has_texts"] and payload["systems"] == result.systems
    assert [m["key"] for m in payload["metrics"]] == result.metrics
    first = payload["ids"][0]
    copy = next(r for r in _records() if r.system == "copy" and r.id == first)
    assert payload["strings"][payload["out"][result.systems.index("copy")][0]] == copy.output
    assert "fig-tradeoff" not in page and "fig-distribution" in page  # no style metric: no trade-off plot
    assert "Scored through the Python API" in page
    assert "## Content" in render_markdown(result)


@pytest.mark.parametrize("content, message", [
    ('{"format": "something-else"}', "neither a styleval evaluation"),
    ("not json", "not a JSON file"),
])
def test_a_file_that_is_neither_is_one_error(tmp_path, content, message):
    path = tmp_path / "x.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(InputError, match=message) as err:
        load_report_data(path)
    assert str(path) in str(err.value) and "\n" not in str(err.value)
