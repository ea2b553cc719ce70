"""Readers of the shared meta-evaluation data (skip when ../shared/data is absent)."""
from __future__ import annotations

import pytest

from styleval.meta import standardise
from styleval.meta.datasets import load_lai2022, load_mir2019, load_sgdd_tst

pytestmark = pytest.mark.shared_data


@pytest.fixture(scope="module")
def lai_json(shared_data):
    return load_lai2022(shared_data, source="json")


@pytest.fixture(scope="module")
def lai_txt(shared_data):
    return load_lai2022(shared_data, source="txt")


def test_lai2022_shapes(lai_json, lai_txt):
    for d in (lai_json, lai_txt):
        j = d.judgments
        assert len(j) == 9 * 80 * 3 * 2
        assert sorted(j.systems) == ["bart", "high", "ibt", "luo", "niu", "rao", "ref", "yi", "zhou"]
        assert j.aspects == ["content", "style", "fluency"] and len(j.annotators) == 8
        assert set(j.directions) == {"informal->formal", "formal->informal"}
    assert {"src:bleurt", "ref:bleurt", "style:c-gyafc", "fluency:gpt2_ppl", "src:chatgpt"} <= set(
        lai_json.metric_names)
    assert {"src:comet", "src:wmd", "src:chrf", "style:cls-xformal-target", "style:reg-pt16"} <= set(
        lai_txt.metric_names)


def test_lai2022_json_and_txt_agree(lai_json, lai_txt):
    assert lai_json.judgments == lai_txt.judgments
    a = lai_json.metrics.set_index(["system", "segment", "metric"])["score"]
    b = lai_txt.metrics.set_index(["system", "segment", "metric"])["score"]
    # README quirk: the .txt columns named "W2V charF" hold chrF then WMD; the JSON's comet-20 is the txt COMET-w
    for json_name, txt_name in [("src:chrf", "src:chrf"), ("src:wmd", "src:wmd"), ("src:bleurt", "src:bleurt"),
                                ("src:comet-20", "src:comet-w"), ("style:c-gyafc", "style:cls-xformal-target")]:
        x = a.xs(json_name, level="metric").sort_index()
        y = b.xs(txt_name, level="metric").sort_index()
        assert (x - y).abs().max() <= 5.01e-4, json_name


def test_lai2022_stored_z_scores_are_population_z(lai_txt):
    ours = standardise(lai_txt.judgments, ddof=0)
    stored = lai_txt.extra["stored_z"].frame
    merged = ours.merge(stored, on=["system", "segment", "annotator", "aspect"], suffixes=("", "_stored"))
    assert len(merged) == len(ours)
    assert (merged["z"] - merged["score_stored"]).abs().max() < 1e-4
    sample = standardise(lai_txt.judgments, ddof=1).merge(stored, on=["system", "segment", "annotator", "aspect"],
                                                           suffixes=("", "_stored"))
    assert (sample["z"] - sample["score_stored"]).abs().max() > 1e-3


def test_mir2019(shared_data):
    d = load_mir2019(shared_data)
    j = d.judgments
    assert len(j.systems) == 13 and "input" in j.systems and len(j.segments) == 244
    assert len(j.filter(aspect="style_transfer_intensity")) == 12 * 244
    assert len(j.filter(aspect="naturalness")) == 10 * 244
    assert {m: len(s) for m, s in d.extra["models"].items()} == {"ARAE": 3, "CAAE": 5, "DAR": 4}
    assert "style_masked:WMD" in d.lower_is_better and "emd:textcnn" in d.metric_names
    rel = d.extra["naturalness_relative"]
    assert set(rel["choice"].dropna()) == {"A", "B"} and len(rel) == 9 * 244 and rel["choice"].isna().any()


def test_sgdd_tst(shared_data):
    d = load_sgdd_tst(shared_data)
    assert len(d.judgments) == 10287
    counts = d.metrics.groupby("metric").size()
    assert counts["w2v_cossim"] == 10287 - 27 and counts["bleu"] == 10287
    assert {"scipy_ner", "scipy_proprotion", "Elron/bleurt-large-512"} <= set(counts.index)
