"""The data layer: each public dataset parsed once, its views, and the one seeded split.

The splits are checked against what the shipped models record about their data (the sha256 of the exact texts
and labels in their model cards, the transfer baselines' cards in docs/transfer-cards), so a change of order or
membership fails here. Other figures (first items, counts) were recorded from the parsers this package replaced.
"""
from __future__ import annotations

import json
import math
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest

import styleval
from styleval.datasets import (lai2022, mir2019, paradetox, pt16, sgdd_tst, shuffled_parts, split_data, yelp_dualrl,
                               yelp_shen)
from styleval.errors import InputError

pytestmark = pytest.mark.shared_data
PACKAGE = Path(styleval.__file__).resolve().parent
PROJECT = PACKAGE.parents[1]


def card(name: str) -> dict:
    return json.loads((PACKAGE / "style_models" / "pretrained" / name / "model_card.json").read_text(encoding="utf-8"))


def assert_same_data(data, recorded: dict) -> None:
    assert (len(data), data.data_hash()) == (recorded["n"], recorded["data_hash"])


# ------------------------------------------------------------------------------------------------ split
def test_shuffled_parts_cut_one_seeded_permutation():
    parts = shuffled_parts(101, (0.8, 0.1), seed=13)
    assert [len(p) for p in parts] == [80, 10, 11]
    assert sorted(i for p in parts for i in p) == list(range(101))
    assert shuffled_parts(101, (0.8, 0.1), seed=13) == parts
    assert shuffled_parts(101, (0.8, 0.1), seed=14) != parts
    # the cuts are prefixes of the same permutation, whatever the fractions
    whole = [i for p in parts for i in p]
    assert [i for p in shuffled_parts(101, (0.3,), seed=13) for i in p] == whole
    assert [len(p) for p in shuffled_parts(101, (0.055,), seed=13, rounding="nearest")] == [6, 95]
    assert [len(p) for p in shuffled_parts(10, (0.01,), seed=13, rounding="nearest", at_least=1)] == [1, 9]
    with pytest.raises(InputError, match="fractions"):
        shuffled_parts(10, (0.8, 0.3), seed=1)


# ------------------------------------------------------------------------------------------------ labelled text
def test_paradetox_labelled_splits_are_the_toxicity_classifiers_data(shared_data):
    recorded = card("toxicity-classifier-paradetox")
    parts = paradetox.labelled_splits(shared_data)
    assert_same_data(parts["train"], recorded["training"])
    assert_same_data(parts["dev"], recorded["selection"])
    assert_same_data(parts["test"], recorded["held_out"])


def test_pt16_splits_are_the_formality_models_data(shared_data):
    regressor, classifier = card("formality-regressor-pt16"), card("formality-classifier-pt16")
    assert_same_data(pt16.labelled(shared_data, "train"), regressor["training"])
    assert_same_data(pt16.labelled(shared_data, "tune"), regressor["selection"])
    test = pt16.labelled(shared_data, "test")
    assert_same_data(test, regressor["held_out"])
    assert_same_data(pt16.labelled(shared_data, "test", binary=True), classifier["held_out"])
    # 17 sentences written "None" are left out, by line number (the first on line 106: "104,None,None")
    assert len(test.skipped) == 17 and test.skipped[:3] == [106, 144, 201]
    with pytest.raises(InputError, match="unknown PT16 split"):
        pt16.labelled(shared_data, "dev")


def test_yelp_shen_is_the_sentiment_classifiers_data(shared_data):
    recorded = card("sentiment-classifier-yelp")
    dev = yelp_shen.labelled(shared_data, "dev")
    assert_same_data(dev, recorded["training"])
    assert_same_data(yelp_shen.labelled(shared_data, "test"), recorded["held_out"])
    _, selection = split_data(dev, 0.1, seed=13)  # the linear model's selection part
    assert_same_data(selection, recorded["selection"])
    assert dev.texts[:1] == yelp_shen.sentences(shared_data, "dev", 0)[:1] and dev.labels[0] == "negative"


def test_xformal_sample_is_the_formality_models_calibration_data(shared_data):
    sample = lai2022.xformal(shared_data)  # fr.80.ref1-3
    assert_same_data(sample, card("formality-classifier-pt16")["selection"])
    assert_same_data(sample, card("formality-regressor-pt16")["calibration"]["data"])
    inputs = lai2022.xformal(shared_data, [lai2022.XFORMAL_INPUTS])
    assert inputs.texts[0] == lai2022.records(shared_data)[0].source  # row 0: the first informal input
    assert inputs.labels[:40] == ["informal"] * 40 and inputs.labels[40:] == ["formal"] * 40
    with pytest.raises(InputError, match="unknown xformal file"):
        lai2022.xformal(shared_data, ["train.0"])


def test_bad_labelled_rows_name_file_and_line(tmp_path):
    folder = tmp_path / "pt16"
    folder.mkdir()
    (folder / "train.csv").write_text("SID,label,sentence\n0,0.5,Fine .\n1,high,Not a number .\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"train\.csv:3: label 'high' is not a number"):
        pt16.labelled(tmp_path, "train")


# ------------------------------------------------------------------------------------------------ parallel pairs
def test_paradetox_parallel_splits_are_the_transfer_baselines_data(shared_data):
    text = (PROJECT / "docs" / "transfer-cards" / "paradetox-nmt.md").read_text(encoding="utf-8")
    recorded = {m[1]: (int(m[2]), int(m[3]), m[4]) for m in re.finditer(
        r"(train|dev) of a split by source, seed 13, fractions 0\.8/0\.1/0\.1; (\d+) sources, (\d+) pairs, "
        r"sha256 ([0-9a-f]{16})", text)}
    parts = paradetox.parallel_splits(shared_data)
    for name in ("train", "dev"):
        assert (len(parts[name]), len(parts[name].pairs()), parts[name].data_hash()[:16]) == recorded[name]
    assert len(parts["test"]) == 1194 and parts["test"].groups[0].source == "he caused half the shit that started wwii"
    # the same rows and the same cut as the classifier's data: its held-out toxic texts are these test sources
    held = paradetox.labelled_splits(shared_data)["test"]
    assert {t for t, y in zip(held.texts, held.labels) if y == "toxic"} == set(parts["test"].sources)


def test_paradetox_first_rewrites_keep_the_preservation_models_cut(shared_data):
    train = paradetox.first_rewrites(shared_data)
    held = paradetox.first_rewrites(shared_data, held_out=True)
    assert (len(train), len(held)) == (9543, 2386)
    assert train[0] == ("shit ill see wat i can do", "You ill see wat i can do")
    assert held[0] == ("i 'm sure someone could dox their asses .", "i’m sure someone could dox them")
    assert not set(train) & set(held)


def test_paradetox_rows_and_a_bad_header(shared_data, tmp_path):
    path, rows = paradetox.rows(shared_data)
    assert len(rows) == 11935 and rows[0] == paradetox.Row(2, "he had steel balls too !", ("he was brave too!", "", ""))
    bad = tmp_path / "paradetox" / "paradetox.tsv"
    bad.parent.mkdir()
    bad.write_text("neutral\ttoxic\nx\ty\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"paradetox\.tsv:1: expected a header"):
        paradetox.rows(tmp_path)


# ------------------------------------------------------------------------------------------------ records and judgments
def test_lai2022_records_and_judgments_come_from_one_parse(shared_data):
    recs = lai2022.records(shared_data)
    assert len(recs) == 720 and len({r.system for r in recs}) == 9
    first = recs[0]
    assert (first.id, first.system, first.source, first.output, first.references) == (
        "0", "bart", "it all depends on when ur ready.", "It depends on when you are ready.",
        ["It all depends on when you are ready."])
    assert (first.meta["human_1"], first.meta["human_2"]) == (62.4, 77.3)
    tables = lai2022.judgments_json(shared_data)
    assert (len(tables.human), len(tables.metrics)) == (4320, 25200)
    content = {(h["system"], h["segment"], h["annotator"][-1]): h["score"] for h in tables.human
               if h["aspect"] == "content"}
    assert all(content[(r.system, r.id, k)] == r.meta[f"human_{k}"] for r in recs for k in "12")
    assert all(tables.extra["outputs"][(r.system, r.id)] == r.output for r in recs)
    txt = lai2022.judgments_txt(shared_data)
    assert (len(txt.human), len(txt.metrics), len(txt.extra["stored_z"])) == (4320, 20160, 4320)


def test_lai2022_bad_line_names_file_and_line(shared_data, tmp_path):
    folder = tmp_path / "lai2022" / "chatgpt"
    shutil.copytree(shared_data / "lai2022" / "chatgpt", folder)
    lines = (folder / "style.json").read_text(encoding="utf-8").splitlines()
    lines[4] = json.dumps({"src": "a", "ref": "b"})
    (folder / "style.json").write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"style\.json:5: expected an object with keys"):
        lai2022.records(tmp_path, "style")


def test_mir2019_records_and_judgments_share_segments(shared_data):
    recs = mir2019.records(shared_data)
    assert len(recs) == 12 * 244
    assert (recs[0].id, recs[0].system, recs[0].source) == (
        "0", "ARAE_lambda_1", "i complained and received a complimentary room for one night .")
    assert (recs[122].id, recs[122].source) == ("122", "we did a walk in and they took us back right away .")
    tables = mir2019.judgments(shared_data)
    assert (len(tables.human), len(tables.metrics)) == (8296, 64416)
    rated = {(h["system"], h["segment"]) for h in tables.human if h["aspect"] == "content_preservation"}
    assert rated == {(r.system, r.id) for r in recs}


def test_sgdd_tst_frame_matches_pandas_and_records_match_the_frame(shared_data):
    frame, path = sgdd_tst.frame(shared_data)
    pd.testing.assert_frame_equal(frame, pd.read_csv(path), check_exact=True)  # pandas' own reader, side by side
    recs = sgdd_tst.records(shared_data)
    assert len(recs) == 10287 and (recs[0].source, recs[0].output) == (
        "4th of March, 4 people going.", "On the fourth of March, there will be four people attending.")
    assert all(r.source == s and r.meta["human"] == h for r, s, h in zip(recs, frame["text1"], frame["human"]))
    bleu = [r.meta["bleu"] for r in recs]
    assert all((math.isnan(a) and math.isnan(b)) or a == b for a, b in zip(bleu, frame["bleu"]))


def test_yelp_dualrl_records_and_the_repaired_line(shared_data):
    recs = yelp_dualrl.records(shared_data)
    assert len(recs) == 15 * 1000
    repaired = [r for r in recs if "encoding_repaired" in r.meta]
    assert len(repaired) == 15 and {r.id for r in repaired} == {"test.0/29"}
    assert repaired[0].meta["encoding_repaired"][0].endswith("Human2/test.0.tsf:29 (gbk)")
