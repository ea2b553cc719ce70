"""styleval evaluate: the fast battery on the bundled example, equal to styleval.score with the same metrics."""
from __future__ import annotations

import argparse
import json

import pytest

from styleval import score
from styleval.cli.score_cmd import load_records
from styleval.errors import InputError
from styleval.evaluation import evaluate, load_evaluation
from styleval.evaluation.anchor import anchor_records


def _records():
    ns = argparse.Namespace(example="formality", input=[], gyafc=None, system=[], systems_dir=None, source=None,
                            reference=[], direction=None)
    return load_records(ns)


@pytest.fixture(scope="module")
def records():
    return _records()


@pytest.fixture(scope="module")
def ev(records):
    return evaluate(records, fast=True, bootstrap=200, significance="paired-bootstrap")


def test_fast_battery_metrics_and_rationale(ev):
    assert ev.aspects["style"] == ["style_accuracy", "style_emd"]
    assert ev.aspects["content"] == ["bleu/src", "chrf/src", "meteor/src", "bleu/ref", "chrf/ref", "meteor/ref"]
    assert ev.aspects["fluency"] == []
    assert ev.settings["style_model"] == "formality-classifier-pt16"
    text = " ".join(ev.rationale)
    assert "formality-classifier-pt16" in text and "fast" in text and "references" in text


def test_real_values(ev):
    r = ev.result
    assert r.get("bleu/src", "copy").corpus_score == pytest.approx(100.0)
    acc = {s: r.get("style_accuracy", s).corpus_score for s in r.systems}
    assert acc["copy"] == min(acc.values()) and acc["copy"] < acc["rewrite"]
    assert r.get("bleu/ref", "rewrite").corpus_score > r.get("bleu/ref", "copy").corpus_score
    # overall: HM of style accuracy and BLEU/ref / 100, computed by hand
    s, c = acc["rewrite"], r.get("bleu/ref", "rewrite").corpus_score / 100
    assert ev.overall_score("rewrite", "hm") == pytest.approx(2 * s * c / (s + c))
    assert ev.overall_score("copy", "hm") == 0.0 and ev.overall_score("copy", "j") == 0.0
    # the rewrite leads on HM and GM; in fast mode J's SIM is chrF against the source, which rewards tidy's small
    # edits enough to put it ahead once the cased formality model credits its capitals (J rewrite .39, tidy .50)
    assert ev.overall_score("rewrite", "hm") > ev.overall_score("tidy", "hm") > ev.overall_score("copy", "hm")
    assert ev.overall_score("rewrite", "gm") > ev.overall_score("tidy", "gm")
    assert ev.overall_score("tidy", "j") > ev.overall_score("rewrite", "j") > ev.overall_score("copy", "j")
    assert any(c.metric == "style_accuracy" for c in r.comparisons)


def test_equal_to_score(ev, records):
    # the example has two references per input, so evaluate adds the anchor row: those records, scored the same way
    assert ev.settings["anchor"] == "human-reference"
    direct = score(records + anchor_records(records), ev.metric_specs, bootstrap=200, significance="paired-bootstrap")
    assert direct.metrics == ev.result.metrics
    for d in direct:
        e = ev.result.get(d.metric, d.system)
        assert e.corpus_score == d.corpus_score and e.ci == d.ci
        assert str(e.signature) == str(d.signature)
    assert [c.to_dict() for c in direct.comparisons] == [c.to_dict() for c in ev.result.comparisons]


def test_json_round_trip(ev, tmp_path):
    path = tmp_path / "ev.json"
    ev.write_json(path)
    data = load_evaluation(path)
    assert data["rationale"] == ev.rationale and data["aspects"] == ev.aspects
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"x": 1}))
    with pytest.raises(InputError):
        load_evaluation(bad)


def test_needs_direction(records):
    from dataclasses import replace

    with pytest.raises(InputError, match="direction"):
        evaluate([replace(r, direction=None) for r in records[:3]], fast=True, bootstrap=0)
    with pytest.raises(InputError):
        evaluate(records, fast=True, content_model="nope")


def test_cli_evaluate_json(tmp_path, capsys):
    from styleval.cli.main import build_parser, main

    out = tmp_path / "ev.json"
    argv = ["evaluate", "--example", "formality", "--fast", "--bootstrap", "50", "--no-progress", "--json", str(out)]
    from styleval.cli.score_options import statistics_options

    assert statistics_options(build_parser().parse_args(argv)).significance == "paired-bootstrap"
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "style_accuracy" in printed and "why these metrics" in printed and "^" in printed
    assert load_evaluation(out)["settings"]["fast"] is True
