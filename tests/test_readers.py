"""Readers: plain text, tables, GYAFC layout, and the shared published datasets."""
from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from styleval import Direction, InputError
from styleval.datasets import (gyafc_inputs, read_gyafc, read_lai2022, read_lai2022_aspect, read_mir2019,
                               read_sgdd_tst, read_yelp_dualrl)
from styleval.readers import read_any, read_lines, read_parallel, read_system_dir, read_table


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8", newline="")
    return path


# ------------------------------------------------------------------------------------------------ text helpers
def test_lines_strip_only_line_endings(tmp_path):
    p = write(tmp_path / "a.txt", "  lead and trail  \r\nin\u2028side\u2029para\n\ttab\t\nno newline at end")
    assert read_lines(p) == ["  lead and trail  ", "in\u2028side\u2029para", "\ttab\t", "no newline at end"]


def test_final_line_without_newline_counts_and_trailing_newline_adds_none(tmp_path):
    assert read_lines(write(tmp_path / "a", "x\ny")) == ["x", "y"]
    assert read_lines(write(tmp_path / "b", "x\ny\n")) == ["x", "y"]
    assert read_lines(write(tmp_path / "c", "x\n\n")) == ["x", ""]
    assert read_lines(write(tmp_path / "d", "")) == []


def test_bom_is_removed(tmp_path):
    assert read_lines(write(tmp_path / "a", "\ufeffhello\nworld\n")) == ["hello", "world"]


def test_missing_file(tmp_path):
    with pytest.raises(InputError, match="does not exist") as err:
        read_lines(tmp_path / "nope.txt")
    assert err.value.path == str(tmp_path / "nope.txt")


def test_invalid_utf8_names_file_and_line(tmp_path):
    p = write(tmp_path / "out.txt", b"fine\nalso fine\nbad \xff byte\nafter\n")
    with pytest.raises(InputError) as err:
        read_lines(p)
    assert err.value.path == str(p) and err.value.line == 3
    assert f"{p}:3" in str(err.value) and "UTF-8" in str(err.value)


def test_invalid_utf8_in_outputs_via_read_parallel(tmp_path):
    src = write(tmp_path / "src.txt", "a\nb\n")
    out = write(tmp_path / "out.txt", b"ok\n\xc3\x28\n")
    with pytest.raises(InputError) as err:
        read_parallel(out, src)
    assert (err.value.path, err.value.line) == (str(out), 2)


def test_very_long_line_is_intact(tmp_path):
    long = " ".join(f"w{i}" for i in range(10_000))
    src = write(tmp_path / "src.txt", f"short\n{long}\n")
    out = write(tmp_path / "out.txt", f"{long}\nx\n")
    recs = read_parallel(out, src)
    assert recs[0].output == long and recs[1].source == long
    assert len(recs[0].output.split()) == 10_000
    table = write(tmp_path / "t.csv", f'source,output\n"{long}","{long}, quoted"\n')
    (rec,) = read_table(table)
    assert rec.source == long and rec.output == long + ", quoted"
    tsv = write(tmp_path / "t.tsv", f"source\toutput\n{long}\t{long}\n")
    assert read_table(tsv)[0].output == long


# ------------------------------------------------------------------------------------------------ plain text
@pytest.fixture
def parallel(tmp_path):
    src = write(tmp_path / "src.txt", "hi there\nwhat's up\nok then\n")
    out = write(tmp_path / "sys" / "mine.txt", "Hello there.\n\nOkay then.\n")
    ref0 = write(tmp_path / "ref0.txt", "Hello there.\nWhat is happening?\nAlright.\n")
    ref1 = write(tmp_path / "ref1.txt", "Hi.\n \nVery well.")
    return src, out, ref0, ref1


def test_read_parallel_basic(parallel):
    src, out, ref0, ref1 = parallel
    recs = read_parallel(out, src, [ref0, ref1], direction="informal->formal")
    assert [r.id for r in recs] == ["1", "2", "3"]
    assert {r.system for r in recs} == {"mine"}
    assert recs[0].references == ["Hello there.", "Hi."]
    assert recs[2].references == ["Alright.", "Very well."]
    assert all(r.direction == Direction("informal", "formal") for r in recs)
    assert read_parallel(out, src, system="named")[0].system == "named"


def test_empty_output_lines_are_kept(parallel):
    src, out, _, _ = parallel
    recs = read_parallel(out, src)
    assert len(recs) == 3
    assert recs[1].output == "" and recs[1].is_empty_output


def test_blank_reference_is_left_out_and_recorded(parallel):
    src, out, ref0, ref1 = parallel
    rec = read_parallel(out, src, [ref0, ref1])[1]
    assert rec.references == ["What is happening?"]
    assert rec.meta["missing_references"] == [str(ref1)]


def test_blank_source_is_an_error(tmp_path):
    src = write(tmp_path / "src.txt", "a\n   \nc\n")
    out = write(tmp_path / "out.txt", "A\nB\nC\n")
    with pytest.raises(InputError, match="source") as err:
        read_parallel(out, src)
    assert (err.value.path, err.value.line) == (str(src), 2)


@pytest.mark.parametrize("which", ["outputs", "reference"])
def test_length_mismatch_names_both_files_and_counts(tmp_path, which):
    src = write(tmp_path / "src.txt", "a\nb\nc\n")
    good = write(tmp_path / "good.txt", "A\nB\nC\n")
    short = write(tmp_path / "short.txt", "A\nB\n")
    with pytest.raises(InputError) as err:
        if which == "outputs":
            read_parallel(short, src, [good])
        else:
            read_parallel(good, src, [good, short])
    msg = str(err.value)
    assert str(short) in msg and str(src) in msg and "2 lines" in msg and "3 lines" in msg


def test_trailing_blank_line_is_a_line_so_counts_disagree(tmp_path):
    src = write(tmp_path / "src.txt", "a\nb\n")
    out = write(tmp_path / "out.txt", "A\nB\n\n")
    with pytest.raises(InputError, match="3 lines"):
        read_parallel(out, src)


def test_read_system_dir(tmp_path, parallel):
    src, _, ref0, _ = parallel
    d = tmp_path / "systems"
    write(d / "b_sys.txt", "1\n2\n3\n")
    write(d / "a_sys.txt", "x\ny\nz")
    write(d / ".hidden", "junk\n")
    (d / "subdir").mkdir()
    recs = read_system_dir(d, src, [ref0], direction="informal->formal")
    assert [r.system for r in recs] == ["a_sys"] * 3 + ["b_sys"] * 3
    assert recs[2].output == "z" and recs[3].references == ["Hello there."]


def test_read_system_dir_errors(tmp_path, parallel):
    src = parallel[0]
    with pytest.raises(InputError, match="does not exist"):
        read_system_dir(tmp_path / "none", src)
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="no system output files"):
        read_system_dir(tmp_path / "empty", src)
    write(tmp_path / "dup" / "a.txt", "1\n2\n3\n")
    write(tmp_path / "dup" / "a.tsv", "1\n2\n3\n")
    with pytest.raises(InputError, match="same system name"):
        read_system_dir(tmp_path / "dup", src)


# ------------------------------------------------------------------------------------------------ tables
def test_tsv_quotes_are_text_and_extra_columns_go_to_meta(tmp_path):
    p = write(tmp_path / "t.tsv", 'id\tsystem\tsource\toutput\tref0\treference_b\tnote\n'
                                  's1\tA\the said "hi\tHe said "hello."\tR0\tRB\tx\n'
                                  's2\tA\t"quoted" start\t\t\tRB2\ty\n\n')
    recs = read_table(p, default_direction="informal->formal")
    assert [r.id for r in recs] == ["s1", "s2"]
    assert recs[0].source == 'he said "hi' and recs[0].output == 'He said "hello."'
    assert recs[0].references == ["R0", "RB"] and recs[0].meta == {"note": "x"}
    assert recs[1].source == '"quoted" start' and recs[1].output == ""
    assert recs[1].references == ["RB2"] and recs[1].meta["missing_references"] == ["ref0"]
    assert recs[0].direction == Direction("informal", "formal")


def test_csv_defaults_system_id_and_direction_column(tmp_path):
    p = write(tmp_path / "run7.csv", 'source,output,references,direction,reformulation\n'
                                     '"a, b","A, ""B""",ref,formal->informal,keep\n'
                                     '"multi\nline",out,,,\n')
    recs = read_table(p)
    assert [r.system for r in recs] == ["run7", "run7"] and [r.id for r in recs] == ["1", "2"]
    assert recs[0].output == 'A, "B"' and recs[0].references == ["ref"]
    assert recs[0].direction == Direction("formal", "informal") and recs[1].direction is None
    assert recs[0].meta == {"reformulation": "keep"}  # not a reference column
    assert recs[1].source == "multi\nline"
    assert read_table(p, default_system="S")[0].system == "S"


def test_explicit_columns(tmp_path):
    p = write(tmp_path / "t.tsv", "in\tout\tgold\tr2\nx\tX\tG\tR\n")
    (rec,) = read_table(p, source_col="in", output_col="out", reference_cols=["r2", "gold"])
    assert rec.references == ["R", "G"]


def test_missing_column_names_it(tmp_path):
    p = write(tmp_path / "t.tsv", "source\thypothesis\nx\ty\n")
    with pytest.raises(InputError) as err:
        read_table(p)
    msg = str(err.value)
    assert str(p) in msg and "'output'" in msg and "'hypothesis'" in msg
    with pytest.raises(InputError, match="'gold'"):
        read_table(p, output_col="hypothesis", reference_cols=["gold"])
    j = write(tmp_path / "t.jsonl", '{"source": "x", "output": "y"}\n{"source": "x2"}\n')
    with pytest.raises(InputError, match="'output'") as err:
        read_table(j)
    assert err.value.line == 2


def test_wrong_field_count_in_tsv_and_csv(tmp_path):
    p = write(tmp_path / "t.tsv", "source\toutput\na\tb\nc\td\textra\n")
    with pytest.raises(InputError, match="3 fields") as err:
        read_table(p)
    assert (err.value.path, err.value.line) == (str(p), 3)
    c = write(tmp_path / "t.csv", 'source,output\n"two\nlines",b\nonly one\n')
    with pytest.raises(InputError, match="1 fields") as err:
        read_table(c)
    assert err.value.line == 4


def test_malformed_csv_quote(tmp_path):
    c = write(tmp_path / "t.csv", 'source,output\n"a" oops,b\n')
    with pytest.raises(InputError, match="malformed CSV") as err:
        read_table(c)
    assert err.value.line == 2


def test_jsonl(tmp_path):
    rows = [{"id": 7, "system": "S", "source": "s1", "output": "o1", "references": ["r1", "", "r3"], "score": 0.5},
            {"source": "s2", "output": "", "ref": "r"}]
    p = write(tmp_path / "t.jsonl", "\n".join(json.dumps(r) for r in rows) + "\n\n")
    a, b = read_table(p)
    assert (a.id, a.system, a.references, a.meta) == ("7", "S", ["r1", "r3"],
                                                       {"score": 0.5, "missing_references": ["references[1]"]})
    assert (b.id, b.system, b.output, b.references) == ("2", "t", "", ["r"])
    assert len(read_table(write(tmp_path / "t.json-lines", p.read_text()))) == 2


def test_bad_jsonl_line_number(tmp_path):
    p = write(tmp_path / "t.jsonl", '{"source": "a", "output": "b"}\n{"source": "a", "output": }\n')
    with pytest.raises(InputError, match="JSON") as err:
        read_table(p)
    assert (err.value.path, err.value.line) == (str(p), 2)
    q = write(tmp_path / "u.jsonl", '["source", "output"]\n')
    with pytest.raises(InputError, match="object"):
        read_table(q)


def test_table_duplicate_ids_blank_source_and_format(tmp_path):
    dup = write(tmp_path / "d.tsv", "id\tsource\toutput\n1\ta\tb\n1\tc\td\n")
    with pytest.raises(InputError, match="duplicate id") as err:
        read_table(dup)
    assert err.value.line == 3
    blank = write(tmp_path / "b.tsv", "source\toutput\n \tb\n")
    with pytest.raises(InputError, match="empty source"):
        read_table(blank)
    odd = write(tmp_path / "t.data", "source\toutput\na\tb\n")
    with pytest.raises(InputError, match="format"):
        read_table(odd)
    assert read_table(odd, format="tsv")[0].output == "b"
    with pytest.raises(InputError, match="direction"):
        read_table(write(tmp_path / "dir.tsv", "source\toutput\tdirection\na\tb\tsideways\n"))


def test_read_any(tmp_path, parallel):
    src, out, ref0, _ = parallel
    assert len(read_any(out, sources=src, references=[ref0])) == 3
    with pytest.raises(InputError, match="sources"):
        read_any(out)
    t = write(tmp_path / "t.tsv", "source\toutput\na\tb\n")
    assert read_any(t, system="S")[0].system == "S"


# ------------------------------------------------------------------------------------------------ GYAFC
GYAFC_TEXT = {
    "Entertainment_Music": {
        "informal": ["u gotta see that movie lol", "i luv this song"],
        "formal": ["You must see that film.", "I love this song."],
    },
    "Family_Relationships": {
        "informal": ["my bf is sooo sweet", "idk what 2 do", "tell him ur feelings"],
        "formal": ["My boyfriend is very kind.", "I do not know what to do.", "Tell him how you feel."],
    },
}


@pytest.fixture
def gyafc_root(tmp_path):
    root = tmp_path / "GYAFC_Corpus"
    for domain, sides in GYAFC_TEXT.items():
        for side, lines in sides.items():
            folder = root / domain / "test"
            write(folder / side, "\n".join(lines) + "\n")
            for k in range(4):
                other = "formal" if side == "informal" else "informal"
                refs = [f"{other} ref{k} of {line}" for line in lines]
                if domain == "Family_Relationships" and side == "informal" and k == 3:
                    refs[1] = ""
                write(folder / f"{side}.ref{k}", "\n".join(refs) + "\n")
    return root


def test_gyafc_inputs_both_domains_and_directions(gyafc_root):
    segs = gyafc_inputs(gyafc_root)
    assert len(segs) == 2 * 2 + 3 * 2
    assert Counter((s.domain, str(s.direction)) for s in segs) == {
        ("Entertainment_Music", "informal->formal"): 2, ("Entertainment_Music", "formal->informal"): 2,
        ("Family_Relationships", "informal->formal"): 3, ("Family_Relationships", "formal->informal"): 3}
    first = segs[0]
    assert first.id == "Entertainment_Music/informal->formal/1"
    assert first.source == "u gotta see that movie lol" and len(first.references) == 4
    assert first.references[0] == "formal ref0 of u gotta see that movie lol"
    fr = gyafc_inputs(gyafc_root, "Family_Relationships", "formal->informal")
    assert [s.id for s in fr] == [f"Family_Relationships/formal->informal/{i}" for i in (1, 2, 3)]
    assert fr[2].source == "Tell him how you feel." and fr[2].references[3] == "informal ref3 of Tell him how you feel."
    missing = gyafc_inputs(gyafc_root, "Family_Relationships", "informal->formal")[1]
    assert len(missing.references) == 3 and missing.missing_references[0].endswith("informal.ref3")


def test_read_gyafc_pairs_outputs(gyafc_root, tmp_path):
    out_a = write(tmp_path / "a.txt", "My boyfriend is sweet.\nI don't know.\nTell him.\n")
    out_b = write(tmp_path / "b.txt", "\nx\ny\n")
    recs = read_gyafc(gyafc_root, "Family_Relationships", "informal->formal", outputs={"A": out_a, "B": out_b})
    assert len(recs) == 6 and [r.system for r in recs] == ["A"] * 3 + ["B"] * 3
    assert recs[0].id == "Family_Relationships/informal->formal/1" and recs[0].source == "my bf is sooo sweet"
    assert recs[0].output == "My boyfriend is sweet." and recs[0].meta["domain"] == "Family_Relationships"
    assert recs[0].direction == Direction("informal", "formal") and len(recs[0].references) == 4
    assert recs[3].output == ""  # kept
    assert "missing_references" in recs[1].meta
    em = write(tmp_path / "em.txt", "I love it.\nYes.\n")
    recs = read_gyafc(gyafc_root, "Entertainment_Music", "formal->informal", outputs={"em": em})
    assert recs[1].source == "I love this song." and recs[1].direction == Direction("formal", "informal")


def test_read_gyafc_errors(gyafc_root, tmp_path):
    short = write(tmp_path / "short.txt", "one line\n")
    with pytest.raises(InputError) as err:
        read_gyafc(gyafc_root, "Family_Relationships", "informal->formal", outputs={"s": short})
    assert str(short) in str(err.value) and "1 lines" in str(err.value) and "3 segments" in str(err.value)
    with pytest.raises(InputError, match="domain"):
        gyafc_inputs(gyafc_root, "Sports")
    with pytest.raises(InputError, match="direction"):
        gyafc_inputs(gyafc_root, direction="formal->shouting")
    with pytest.raises(InputError, match="not found"):
        gyafc_inputs(gyafc_root, split="tune")
    bad = gyafc_root / "Entertainment_Music" / "test" / "formal.ref2"
    bad.write_text("only one\n", encoding="utf-8")
    with pytest.raises(InputError, match="formal.ref2"):
        gyafc_inputs(gyafc_root, "Entertainment_Music", "formal->informal")


# ------------------------------------------------------------------------------------------------ shared data
@pytest.mark.shared_data
def test_lai2022(shared_data):
    recs = read_lai2022(shared_data / "lai2022")
    assert len(recs) == 80 * 9
    assert Counter(r.system for r in recs) == {s: 80 for s in
                                               ("bart", "high", "ibt", "luo", "niu", "rao", "ref", "yi", "zhou")}
    first = recs[0]
    assert first.source == "it all depends on when ur ready." and first.id == "0" and first.system == "bart"
    assert first.references == ["It all depends on when you are ready."]
    assert first.output == "It depends on when you are ready."
    assert first.meta["human_1"] == 62.4 and first.meta["bleu"] == 0.173 and "out" not in first.meta
    assert all(isinstance(v, float) for v in first.meta.values())
    by_id = {r.id: r for r in recs if r.system == "ref"}
    assert str(by_id["39"].direction) == "informal->formal" and str(by_id["40"].direction) == "formal->informal"
    assert by_id["0"].output == by_id["0"].references[0]
    assert read_lai2022(shared_data)[0] == first  # the parent folder works too


@pytest.mark.shared_data
@pytest.mark.parametrize("aspect,key,value", [("content.ref", "bleu", 0.767), ("style", "c-gyafc", 0.999),
                                              ("fluency", "gpt2_ppl", 11.293)])
def test_lai2022_aspects(shared_data, aspect, key, value):
    recs = read_lai2022_aspect(shared_data / "lai2022", aspect)
    assert len(recs) == 720 and recs[0].system == "bart" and recs[0].meta[key] == value
    assert {"human_1", "human_2"} <= recs[0].meta.keys()
    with pytest.raises(InputError, match="aspect"):
        read_lai2022_aspect(shared_data / "lai2022", "content")


@pytest.mark.shared_data
def test_mir2019(shared_data):
    root = shared_data / "mir2019"
    recs = read_mir2019(root)
    counts = Counter(r.system for r in recs)
    assert len(counts) == 12 and set(counts.values()) == {244}
    npy = {p.stem for p in (root / "evaluations" / "human" / "style_transfer_intensity").glob("*.npy")}
    assert set(counts) == npy
    arae = [r for r in recs if r.system == "ARAE_lambda_1"]
    assert [r.id for r in arae] == [str(i) for i in range(244)]
    src0 = read_lines(root / "data" / "sentiment.test.0")
    src1 = read_lines(root / "data" / "sentiment.test.1")
    assert arae[0].source == src0[0] and arae[122].source == src1[0] and arae[243].source == src1[-1]
    assert str(arae[121].direction) == "negative->positive" and str(arae[122].direction) == "positive->negative"
    # the order of the evaluation arrays: stored sentence BLEU is 100 exactly where output == source (>= 4 tokens)
    bleu = np.load(root / "evaluations" / "automated" / "content_preservation" / "sentence_level" /
                   "ARAE_lambda_1.npz", allow_pickle=True)["unmasked"].item()["BLEU"]
    same = [r.output == r.source and len(r.source.split()) >= 4 for r in arae]
    assert sum(same) >= 20
    assert all(bleu[i] > 99.99 for i, s in enumerate(same) if s)


@pytest.mark.shared_data
def test_sgdd_tst(shared_data):
    recs = read_sgdd_tst(shared_data / "sgdd-tst")
    assert len(recs) == 10_287
    first = recs[0]
    assert first.source == "4th of March, 4 people going."
    assert first.output == "On the fourth of March, there will be four people attending."
    assert first.meta["human"] == pytest.approx(2.666666667) and first.id == "0" and first.system == "sgdd"
    assert first.references == [] and first.direction is None
    assert sum(math.isnan(r.meta["w2v_cossim"]) for r in recs) == 27
    assert all(isinstance(v, float) for v in first.meta.values()) and len(first.meta) == 15


@pytest.mark.shared_data
def test_yelp_dualrl(shared_data):
    recs = read_yelp_dualrl(shared_data / "yelp-dualrl")
    counts = Counter(r.system for r in recs)
    humans = {"Human0", "Human1", "Human2", "Human3"}
    assert len(counts) == 15 and set(counts.values()) == {1000} and humans <= set(counts)
    for r in recs:
        assert len(r.references) == (3 if r.system in humans else 4)
    dual = [r for r in recs if r.system == "DualRL"]
    assert dual[0].id == "test.0/1" and dual[499].id == "test.0/500" and dual[500].id == "test.1/1"
    assert str(dual[0].direction) == "negative->positive" and str(dual[500].direction) == "positive->negative"
    # UnsuperMT_Zhang/test.0.tsf has no final newline (wc -l: 499) but 500 lines
    zhang = [r for r in recs if r.system == "UnsuperMT_Zhang"]
    assert zhang[499].output and zhang[499].output == read_lines(
        shared_data / "yelp-dualrl" / "outputs" / "yelp" / "UnsuperMT_Zhang" / "test.0.tsf")[-1]
    # Human2/test.0.tsf line 29 is GBK, decoded and recorded
    h2 = next(r for r in recs if r.system == "Human2" and r.id == "test.0/29")
    assert h2.output == "the d\u00e9cor was really beautiful"
    assert h2.meta["encoding_repaired"][0].endswith("Human2/test.0.tsf:29 (gbk)")
    h0 = next(r for r in recs if r.system == "Human0" and r.id == "test.0/29")
    assert "the d\u00e9cor was really beautiful" in h0.references and "encoding_repaired" in h0.meta
    yelp = shared_data / "yelp-dualrl" / "outputs" / "yelp"
    line29 = {h: read_lines(yelp / h / "test.0.tsf")[28] for h in ("Human0", "Human1", "Human3")}
    assert h0.output == line29["Human0"]
    assert h0.references == [line29["Human1"], h2.output, line29["Human3"]]  # the other three, not its own
    only = read_yelp_dualrl(shared_data / "yelp-dualrl", systems=["DualRL"], include_humans_as_systems=False)
    assert len(only) == 1000 and only[0].references == dual[0].references
    with pytest.raises(InputError, match="Human0"):
        read_yelp_dualrl(shared_data / "yelp-dualrl", systems=["Human0"], include_humans_as_systems=False)


@pytest.mark.shared_data
def test_strict_reader_rejects_the_gbk_line(shared_data):
    with pytest.raises(InputError) as err:
        read_lines(shared_data / "yelp-dualrl" / "outputs" / "yelp" / "Human2" / "test.0.tsf")
    assert err.value.line == 29
