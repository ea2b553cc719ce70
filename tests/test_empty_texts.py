"""Empty texts as docs/metrics.md "Empty texts" documents them, for the modifiers and parameters beside the table
(issue #52, item 7): rescaled BERTScore, several references with one empty, evaluate's J on an empty source and
output, and the label order of ``style_emd:ground=ordinal``. Values come from the metrics' reference packages or
the metrics themselves on the bundled example."""
from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

import styleval
from styleval.cli.score_cmd import load_records
from styleval.metrics import registry
from styleval.metrics.content.bertscore import BASELINE_DIR, EMPTY_FLAG, read_baseline
from styleval.records import Record

pytestmark = pytest.mark.usefixtures("one_torch_thread")
DOC = Path(__file__).resolve().parents[1] / "docs" / "metrics.md"
NO_CI = dict(bootstrap=0, significance="none")


def _example() -> list[Record]:
    ns = argparse.Namespace(example="formality", input=[], gyafc=None, system=[], systems_dir=None, source=None,
                            reference=[], direction=None)
    return [r for r in load_records(ns) if r.system == "rewrite"][:6]


def _section() -> str:
    return DOC.read_text(encoding="utf-8").split("## Empty texts", 1)[1]


def test_rescaled_bertscore_on_an_empty_output_is_the_baselines_image_of_zero():
    records = _example()
    records[0] = replace(records[0], output="")
    res = styleval.score(records, ["bertscore:rescale_with_baseline=true;against=source"], **NO_CI)
    got = res.results[0]
    baseline = read_baseline(BASELINE_DIR / "minilm_L6.tsv", 6)[2]  # F: the default component
    expected = (0 - baseline) / (1 - baseline)
    assert got.segment_scores[0] == pytest.approx(expected, abs=1e-12)
    assert round(expected, 4) == -0.2518 and "−0.2518" in _section()  # the figure the docs give
    assert got.flags[EMPTY_FLAG] == [records[0].id] and got.flags["empty_output"] == [records[0].id]
    plain = styleval.score(records, ["bertscore:against=source"], **NO_CI).results[0]
    assert plain.segment_scores[0] == 0.0 and plain.flags[EMPTY_FLAG] == [records[0].id]


def test_one_empty_reference_among_several_changes_nothing_and_is_not_flagged():
    records = _example()
    two = [r for r in records if len(r.references) >= 2]
    assert two, "the bundled example has two references per input"
    one_empty = [replace(two[0], references=[two[0].references[0], ""]), *two[1:]]
    alone = [replace(two[0], references=[two[0].references[0]]), *two[1:]]
    all_empty = [replace(two[0], references=["", " "]), *two[1:]]
    spec = ["bertscore:against=references"]
    with_empty = styleval.score(one_empty, spec, **NO_CI).results[0]
    without = styleval.score(alone, spec, **NO_CI).results[0]
    assert with_empty.segment_scores[0] == pytest.approx(without.segment_scores[0], abs=1e-12)
    assert with_empty.segment_scores[0] > 0.5  # a real score, not the empty text's 0
    assert with_empty.flags.get(EMPTY_FLAG, []) == []
    every = styleval.score(all_empty, spec, **NO_CI).results[0]
    assert every.segment_scores[0] == 0.0 and every.flags[EMPTY_FLAG] == [two[0].id]


def test_evaluates_j_on_an_empty_source_is_its_cosine_and_on_an_empty_output_0():
    records = _example()
    records[0] = replace(records[0], source="")
    res = styleval.score(records, ["j", "style_accuracy", "sentence_cosine:against=source", "acceptability"],
                         **NO_CI)
    j = res.get("j", "rewrite").segment_scores
    sta = res.get("style_accuracy", "rewrite").segment_scores
    sim = np.clip(res.get("sentence_cosine/src", "rewrite").segment_scores, 0, 1)
    fl = res.get("acceptability", "rewrite").segment_scores >= 0.5
    np.testing.assert_allclose(j, sta * sim * fl, atol=1e-12)
    assert sta[0] == 1 and fl[0] and round(float(j[0]), 4) == 0.2357  # scored, as the docs say: not 0
    assert "0.2357" in _section() and "| `j` | 0 | scored |" in _section()
    emptied = [replace(records[1], output=""), *records[2:]]
    out = styleval.score(emptied, ["j", "acceptability"], **NO_CI)
    assert out.get("acceptability", "rewrite").segment_scores[0] == 0.0
    assert out.get("j", "rewrite").segment_scores[0] == 0.0


def test_style_emd_ordinal_names_the_label_order_it_ranks():
    records = _example()
    res = styleval.score(records, ["style_emd:ground=ordinal"], **NO_CI).results[0]
    assert res.signature.resources["ordinal_order"] == "formal<informal"  # the model's label order
    unit = styleval.score(records, ["style_emd"], **NO_CI).results[0]
    np.testing.assert_allclose(res.segment_scores, unit.segment_scores, atol=1e-12)  # two labels: the same EMD
    assert "ordinal_order" not in unit.signature.resources
    assert "ordinal_order" in registry.metric_class("style_emd").parameter_help["ground"]
    assert "`high<low<mid`" in _section()
