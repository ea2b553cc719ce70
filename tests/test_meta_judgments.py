"""Judgments: construction, file formats, validation."""
from __future__ import annotations

import json

import pytest

from styleval.errors import InputError
from styleval.meta import Judgments

RECORDS = [
    {"system": "a", "segment": 0, "annotator": "r1", "aspect": "content", "score": 3, "direction": "informal->formal"},
    {"system": "a", "segment": 0, "annotator": "r2", "aspect": "content", "score": 5.5,
     "direction": "informal->formal"},
    {"system": "b", "segment": 1, "annotator": "r1", "aspect": "style", "score": "2"},
]


def test_from_records_normalises_identifiers_and_direction():
    j = Judgments.from_records(RECORDS)
    f = j.frame
    assert list(f.columns) == ["system", "segment", "annotator", "aspect", "score", "direction"]
    assert f["segment"].tolist() == ["0", "0", "1"]
    assert f["score"].tolist() == [3.0, 5.5, 2.0]
    assert f["direction"].tolist() == ["informal->formal", "informal->formal", None]
    assert j.systems == ["a", "b"] and j.aspects == ["content", "style"] and len(j) == 3


@pytest.mark.parametrize("suffix", ["csv", "tsv", "jsonl"])
def test_write_read_round_trip(tmp_path, suffix):
    j = Judgments.from_records(RECORDS)
    path = j.write(tmp_path / f"j.{suffix}")
    assert Judgments.read(path) == j


def test_missing_column_names_file_and_column(tmp_path):
    path = tmp_path / "j.csv"
    path.write_text("system,segment,annotator,score\na,0,r1,3\n")
    with pytest.raises(InputError) as exc:
        Judgments.read(path)
    assert "aspect" in str(exc.value) and str(path) in str(exc.value)


def test_missing_key_in_jsonl_names_line(tmp_path):
    path = tmp_path / "j.jsonl"
    good = {"system": "a", "segment": 0, "annotator": "r", "aspect": "x", "score": 1}
    path.write_text(json.dumps(good) + "\n" + json.dumps({k: v for k, v in good.items() if k != "score"}) + "\n")
    with pytest.raises(InputError) as exc:
        Judgments.read(path)
    assert exc.value.line == 2 and "score" in exc.value.problem and exc.value.path == str(path)


@pytest.mark.parametrize("suffix,sep", [("csv", ","), ("tsv", "\t")])
def test_non_numeric_score_names_file_and_line(tmp_path, suffix, sep):
    path = tmp_path / f"j.{suffix}"
    rows = ["system segment annotator aspect score", "a 0 r1 c 3", "a 1 r1 c high"]
    path.write_text("\n".join(sep.join(r.split()) for r in rows) + "\n")
    with pytest.raises(InputError) as exc:
        Judgments.read(path)
    assert exc.value.path == str(path) and exc.value.line == 3 and "'high'" in exc.value.problem


def test_non_numeric_score_in_jsonl(tmp_path):
    path = tmp_path / "j.jsonl"
    path.write_text('{"system":"a","segment":0,"annotator":"r","aspect":"c","score":null}\n')
    with pytest.raises(InputError) as exc:
        Judgments.read(path)
    assert exc.value.line == 1


def test_duplicates_are_named():
    dup = RECORDS + [dict(RECORDS[0], score=1)]
    with pytest.raises(InputError) as exc:
        Judgments.from_records(dup)
    msg = str(exc.value)
    assert "duplicate" in msg and "system='a'" in msg and "annotator='r1'" in msg and "segment='0'" in msg


def test_bad_direction_and_unknown_format(tmp_path):
    with pytest.raises(InputError):
        Judgments.from_records([dict(RECORDS[0], direction="sideways")])
    with pytest.raises(InputError):
        Judgments.from_records(RECORDS).write(tmp_path / "j.xlsx")


def test_filter():
    j = Judgments.from_records(RECORDS)
    assert len(j.filter(aspect="content")) == 2
    assert len(j.filter(exclude_systems=["a"])) == 1
    assert len(j.filter(direction="informal -> formal")) == 2
    assert len(j.filter(direction="both")) == 3
