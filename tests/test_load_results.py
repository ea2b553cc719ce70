"""The notebook API (issue #52, item 5): ``styleval.evaluate`` at the top level, ``styleval.load`` (and
``ScoreResult.from_json`` / ``Evaluation.from_json``) reading back what ``score --json`` and ``evaluate --json`` wrote
(scores, intervals, tests, signatures, flags, segments), and segment ids that are all integers sorting as integers."""
from __future__ import annotations

import argparse
import json

import numpy as np
import pandas as pd
import pytest

import styleval
from styleval.cli.main import main
from styleval.cli.score_cmd import load_records
from styleval.errors import InputError
from styleval.evaluation import Evaluation
from styleval.results import ScoreResult


def _records():
    ns = argparse.Namespace(example="formality", input=[], gyafc=None, system=[], systems_dir=None, source=None,
                            reference=[], direction=None)
    return load_records(ns)


def _same_json(a: dict, b: dict) -> None:
    """Two JSON forms equal once both went through JSON (NaN and None alike)."""
    assert json.loads(json.dumps(a)) == json.loads(json.dumps(b))


@pytest.fixture(scope="module")
def scored():
    return styleval.score(_records(), ["bleu", "chrf", "pinc", "bleu:lowercase=true"], bootstrap=200,
                          significance="paired-bootstrap", seed=7)


def test_top_level_api():
    from styleval.evaluation import evaluate
    from styleval.saved import load

    assert styleval.evaluate is evaluate and styleval.load is load
    assert {"evaluate", "load"} <= set(styleval.__all__) and {"evaluate", "load"} <= set(dir(styleval))


def test_score_json_round_trips(scored, tmp_path):
    path = tmp_path / "s.json"
    scored.write_json(path)
    loaded = styleval.load(path)
    assert isinstance(loaded, ScoreResult)
    _same_json(loaded.to_dict(), scored.to_dict())  # everything the file holds comes back
    assert loaded.systems == scored.systems and loaded.metrics == scored.metrics
    assert loaded.signatures() == scored.signatures()
    for mine, theirs in zip(loaded.results, scored.results):
        assert mine.metric_id == theirs.metric_id and mine.metric_id.label == theirs.metric_id.label == mine.metric
        assert mine.ci == pytest.approx(theirs.ci) and mine.ci_level == theirs.ci_level
        np.testing.assert_array_equal(mine.segment_scores, theirs.segment_scores)
        assert mine.stats.shape == (len(mine.ids), 0)  # statistics are not saved
    assert loaded.comparisons == scored.comparisons and len(loaded.comparisons) > 0
    pd.testing.assert_frame_equal(loaded.to_dataframe("corpus"), scored.to_dataframe("corpus"))
    pd.testing.assert_frame_equal(loaded.to_dataframe("comparisons"), scored.to_dataframe("comparisons"))
    plain = scored.to_dataframe("segment").drop(columns=["source", "output", "references"])
    pd.testing.assert_frame_equal(loaded.to_dataframe("segment"), plain)
    assert ScoreResult.from_json(path).to_dict() == loaded.to_dict()


def test_cli_score_json_loads(tmp_path, capsys):
    out = tmp_path / "cli.json"
    assert main(["score", "--example", "formality", "-m", "bleu,meteor", "--bootstrap", "50",
                 "--json", str(out), "-q"]) == 0
    assert capsys.readouterr().out == ""  # --quiet with --json: the results are in the file
    loaded = styleval.load(out)
    data = json.loads(out.read_text(encoding="utf-8"))
    _same_json(loaded.to_dict(), data)
    assert loaded.get("bleu/ref", "rewrite").signature.to_dict() == next(
        r["signature"] for r in data["corpus"] if r["metric"] == "bleu/ref" and r["system"] == "rewrite")


def test_evaluate_json_round_trips(tmp_path):
    ev = styleval.evaluate(_records(), fast=True, bootstrap=100, seed=3)
    path = tmp_path / "ev.json"
    ev.write_json(path)
    loaded = styleval.load(path)
    assert isinstance(loaded, Evaluation)
    _same_json(loaded.to_dict(), ev.to_dict())
    pd.testing.assert_frame_equal(loaded.overall, ev.overall, check_dtype=False)
    assert loaded.overall_ci("rewrite", "j") == pytest.approx(ev.overall_ci("rewrite", "j"))
    assert loaded.overall_comparisons == ev.overall_comparisons and loaded.rationale == ev.rationale
    assert loaded.result.signatures() == ev.result.signatures()
    assert Evaluation.from_json(path).to_dict() == loaded.to_dict()
    assert ScoreResult.from_json(path).to_dict() == loaded.result.to_dict()  # an evaluation's scores alone


def test_segment_ids_sort_as_integers(scored, tmp_path):
    frame = scored.to_dataframe("segment")
    assert frame["id"].dtype == np.int64
    first = frame[(frame["metric"] == "pinc/src") & (frame["system"] == "copy")]
    assert first.sort_values("id")["id"].tolist() == list(range(1, 31))  # 1, 2, ... 10, not '1', '10', '100'
    wide = first.pivot(index="id", columns="system", values="score")
    assert wide.index.tolist() == list(range(1, 31))
    named = styleval.score([r.__class__(id=f"s{k}", source=r.source, output=r.output, references=r.references,
                                        system=r.system, direction=r.direction) for k, r in enumerate(_records())],
                           ["pinc"], bootstrap=0)
    kept = named.to_dataframe("segment")["id"]
    assert not pd.api.types.is_integer_dtype(kept) and kept.iloc[0] == "s0"  # ids not all integers stay text
    # the segment lines written to a file keep the ids as the JSON writes them everywhere: text
    scored.write_jsonl(tmp_path / "seg.jsonl")
    first_line = json.loads((tmp_path / "seg.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert first_line["id"] == "1"


def test_not_a_result_is_one_clear_error(tmp_path):
    bad = tmp_path / "x.json"
    bad.write_text('{"hello": 1}', encoding="utf-8")
    with pytest.raises(InputError, match="not a styleval result") as err:
        styleval.load(bad)
    assert str(bad) in str(err.value) and "\n" not in str(err.value)
    broken = tmp_path / "y.json"
    broken.write_text('{"corpus": [{"metric": "bleu"}], "segments": []}', encoding="utf-8")
    with pytest.raises(InputError, match="not a styleval score result"):
        styleval.load(broken)
    with pytest.raises(InputError, match="file not found"):
        styleval.load(tmp_path / "missing.json")
