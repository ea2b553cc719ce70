"""Malformed input is refused in one line naming the file, the line and the problem (issue #42, part 5).

Each hole runs through the real command line (``styleval score``, ``evaluate``, ``data export``, ``meta``) on
files written into ``tmp_path``, or through the reader the commands use; what is valid stays valid (an empty output
is a record, a tab inside a line is text, CR LF ends a line).
"""
from __future__ import annotations

import random
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from styleval import Record, score
from styleval.cli.main import main
from styleval.errors import InputError
from styleval.readers import read_table
from styleval.readers.text import clean_utf8, forbidden_character, read_lines

SOURCES = "a cat sat\nthe dog ran\nbirds sing\n"
OUTPUTS = "a cat sits\nthe dog runs\nbirds sang\n"


def _files(tmp_path: Path, outputs: str | bytes = OUTPUTS) -> dict[str, Path]:
    src, out = tmp_path / "src.txt", tmp_path / "out.txt"
    src.write_text(SOURCES, encoding="utf-8")
    if isinstance(outputs, bytes):
        out.write_bytes(outputs)
    else:
        out.write_text(outputs, encoding="utf-8", newline="")
    return {"src": src, "out": out}


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    """Exit status and, on failure, the one line of standard error (asserted to be one ``styleval: error:``
    line); on success, standard output."""
    status = main([*argv])
    captured = capsys.readouterr()
    if status != 0:
        err = captured.err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("styleval: error: "), err
        return status, err[0]
    return status, captured.out


def _table(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8", newline="")
    return path


# -- control characters ------------------------------------------------------------------------------------------
def test_a_nul_byte_in_a_line_is_refused_by_score_and_evaluate(tmp_path, capsys):
    files = _files(tmp_path, b"a cat sits\nthe dog\x00 runs\nbirds sang\n")
    expected = f"styleval: error: {files['out']}:2: a NUL character (U+0000) at column 8: text holds none"
    for verb in (["score", "-m", "bleu", "--bootstrap", "0"], ["evaluate", "--fast", "--bootstrap", "0"]):
        status, err = _run(capsys, *verb, "--system", f"A={files['out']}", "--source", str(files["src"]),
                           "--direction", "informal:formal")
        assert status == 2 and err.startswith(expected), err


def test_a_nul_in_a_table_is_refused_in_memory_and_streamed_and_behind_a_json_escape(tmp_path, capsys):
    tsv = _table(tmp_path, "t.tsv", "source\toutput\na cat sat\ta cat sits\nthe dog\tthe\x00 dog\n")
    for extra in ([], ["--stream"]):
        status, err = _run(capsys, "score", "--input", str(tsv), "-m", "bleu", "--bootstrap", "0", *extra)
        assert status == 2 and err.startswith(f"styleval: error: {tsv}:3: a NUL character (U+0000) at column 12")
    jsonl = _table(tmp_path, "t.jsonl", '{"source": "a cat sat", "output": "a cat\\u0000 sits"}\n')
    for extra in ([], ["--stream"]):
        status, err = _run(capsys, "score", "--input", str(jsonl), "-m", "bleu", "--bootstrap", "0", *extra)
        assert status == 2 and err.startswith(f"styleval: error: {jsonl}:1: column 'output': a NUL character "
                                              "(U+0000) at character 6"), err


@pytest.mark.parametrize("char,name", [("\x01", "U+0001 (a control character)"), ("\x08", "U+0008 (backspace)"),
                                       ("\x0b", "U+000B (vertical tab)"), ("\x0c", "U+000C (form feed)"),
                                       ("\x1b", "U+001B (escape)"), ("\x7f", "U+007F (DEL)")])
def test_every_other_control_character_is_refused_with_its_line_and_column(tmp_path, char, name):
    path = _table(tmp_path, "a.txt", f"fine\nsome{char}thing\n")
    with pytest.raises(InputError) as caught:
        read_lines(path)
    assert str(caught.value) == f"{path}:2: control character {name} at column 5: text holds no control character " \
                                "but tab"


def test_the_fast_byte_check_never_passes_what_the_text_scan_refuses():
    pool = ["a", " ", "\t", "\n", "\r", "\r\n", "\x00", "\x0c", "\x1f", "\x7f", "\x80", "\x9f", "\xa0", "\xc2",
            "é", "\u2028", "\ufeff", "\U0001f600", "–"]
    rng = random.Random(7)
    seen = {True: 0, False: 0}
    for _ in range(3000):
        text = "".join(rng.choice(pool) for _ in range(rng.randint(0, 6)))
        clean = forbidden_character(text[1:] if text.startswith("\ufeff") else text) is None
        assert clean_utf8(text.encode("utf-8")) == clean, repr(text)
        seen[clean] += 1
    assert min(seen.values()) > 300  # both outcomes drawn often


def test_a_tab_inside_a_line_and_crlf_endings_stay_valid(tmp_path):
    path = _table(tmp_path, "a.txt", "a\tb\r\nc\r\n")
    assert read_lines(path) == ["a\tb", "c"]


def test_a_file_with_cr_only_line_endings_is_refused_with_the_conversion(tmp_path, capsys):
    files = _files(tmp_path, "a cat sits\rthe dog runs\rbirds sang\r")
    status, err = _run(capsys, "score", "--system", f"A={files['out']}", "--source", str(files["src"]), "-m", "bleu")
    assert status == 2
    assert err == (f"styleval: error: {files['out']}:1: a carriage return (CR) that does not end a line, at column "
                   "11: lines end in LF or CR LF; a file with CR-only line endings (classic Mac OS) converts with: "
                   "tr '\\r' '\\n' < FILE > converted.txt")


def test_a_byte_order_mark_after_the_start_is_refused(tmp_path):
    joined = _table(tmp_path, "joined.txt", "\ufeffa cat sits\n\ufeffthe dog runs\n")
    with pytest.raises(InputError, match=r"joined.txt:2: a byte-order mark \(U\+FEFF\) inside the text, at column 1 "
                                         r"\(files joined together"):
        read_lines(joined)
    assert read_lines(_table(tmp_path, "one.txt", "\ufeffa cat sits\n")) == ["a cat sits"]


def test_cp1252_text_read_as_latin1_is_refused_and_named(tmp_path, capsys):
    files = _files(tmp_path, "a cat sits\nthe \x93dog\x94 runs\nbirds sang\n".encode("latin-1"))
    argv = ["score", "--system", f"A={files['out']}", "--source", str(files["src"]), "-m", "bleu", "--bootstrap",
            "0"]
    status, err = _run(capsys, *argv, "--encoding", "latin-1")
    assert status == 2 and err == (f"styleval: error: {files['out']}:2: C1 control character U+0093 at column 5: "
                                   "text holds none; the file is probably cp1252 (Windows) text: give --encoding "
                                   "cp1252")
    status, out = _run(capsys, *argv, "--encoding", "cp1252")
    assert status == 0


def test_utf16_with_its_byte_order_mark_is_named(tmp_path):
    path = tmp_path / "u16.txt"
    path.write_bytes("a cat sits\n".encode("utf-16"))
    with pytest.raises(InputError, match=r"not valid UTF-8 \(it starts with a UTF-16 byte-order mark: --encoding "
                                         r"utf-16\)"):
        read_lines(path)
    assert read_lines(path, "utf-16") == ["a cat sits"]


# -- system names and segment ids ---------------------------------------------------------------------------------
@pytest.mark.parametrize("verb", [["score", "-m", "bleu"], ["evaluate", "--fast"]])
@pytest.mark.parametrize("name,problem", [("", "system name is empty"), ("  ", "system name '  ' is blank"),
                                          ("a\tb", "system name 'a\\tb' holds a control character (U+0009)"),
                                          ("a\nb", "system name 'a\\nb' holds a control character (U+000A)")])
def test_a_system_name_that_is_empty_or_holds_a_tab_or_newline_is_refused(tmp_path, capsys, verb, name, problem):
    files = _files(tmp_path)
    item = f"{name}={files['out']}"
    status, err = _run(capsys, *verb, "--system", item, "--source", str(files["src"]), "--direction",
                       "informal:formal")
    assert status == 2 and err.startswith(f"styleval: error: --system {item!r}: {problem}"), err


def test_system_names_and_ids_from_tables_and_file_names_are_checked(tmp_path, capsys):
    jsonl = _table(tmp_path, "t.jsonl", '{"source": "a", "output": "b", "system": "x\\ty"}\n')
    csv = _table(tmp_path, "t.csv", 'source,output,id\na,b,"1\n2"\n')
    for table, where, problem in ((jsonl, 1, "system name 'x\\ty' holds a control character (U+0009)"),
                                  (csv, 2, "segment id '1\\n2' holds a control character (U+000A)")):
        for extra in ([], ["--stream"]):
            status, err = _run(capsys, "score", "--input", str(table), "-m", "bleu", "--bootstrap", "0", *extra)
            assert status == 2 and err.startswith(f"styleval: error: {table}:{where}: {problem}"), err
    folder = tmp_path / "systems"
    folder.mkdir()
    (folder / "good.txt").write_text(OUTPUTS, encoding="utf-8")
    (folder / "ta\tb.txt").write_text(OUTPUTS, encoding="utf-8")
    files = _files(tmp_path)
    status, err = _run(capsys, "score", "--systems-dir", str(folder), "--source", str(files["src"]), "-m", "bleu")
    named = folder / "ta\tb.txt"
    assert status == 2 and err.startswith(f"styleval: error: {named}: system name 'ta\\tb' holds"), err


def test_the_python_api_refuses_an_empty_system_name():
    with pytest.raises(InputError, match="record '1': system name is empty"):
        score([Record("1", "a cat sat", "a cat sits", system="")], ["bleu"], against=["source"], bootstrap=0)


# -- options that only the streaming engine reads ------------------------------------------------------------------
@pytest.mark.parametrize("extra,problem", [
    (["--segments", "seg.jsonl"], "--segments works with --stream only: add --stream (it reads --input tables) or "
                                  "leave it out (in memory, --segments-csv FILE or --jsonl FILE write segment scores)"),
    (["--cache", "c.db", "--chunk-size", "10000"], "--cache and --chunk-size work with --stream only"),
    (["--ray-workers", "4"], "--ray-workers works with --engine ray only"),
    (["--stream", "--ray-address", "localhost:1"], "--ray-address and --ray-workers work with --engine ray only"),
])
def test_an_option_of_the_streaming_engine_is_never_silently_ignored(tmp_path, capsys, extra, problem):
    table = _table(tmp_path, "t.tsv", "source\toutput\na cat sat\ta cat sits\n")
    status, err = _run(capsys, "score", "--input", str(table), "-m", "bleu", "--bootstrap", "0",
                       *[str(tmp_path / e) if e.endswith((".jsonl", ".db")) else e for e in extra])
    assert status == 2 and err.startswith(f"styleval: error: {problem}"), err
    assert not (tmp_path / "seg.jsonl").exists() and not (tmp_path / "c.db").exists()


# -- duplicated keys and columns ------------------------------------------------------------------------------------
def test_a_json_key_given_twice_is_refused_in_tables_and_judgments(tmp_path, capsys):
    table = _table(tmp_path, "t.jsonl", '{"source": "a cat sat", "output": "a cat sits"}\n'
                                        '{"source": "the dog ran", "output": "x", "output": "the dog runs"}\n')
    for extra in ([], ["--stream"]):
        status, err = _run(capsys, "score", "--input", str(table), "-m", "bleu", "--bootstrap", "0", *extra)
        assert status == 2 and err == (f"styleval: error: {table}:2: the key 'output' appears twice in one object "
                                       "(JSON readers keep only the last; say which value is meant)")
    human = _table(tmp_path, "h.jsonl", '{"system": "A", "segment": "1", "annotator": "r1", "aspect": "content", '
                                        '"score": 3, "score": 4}\n')
    scores = _table(tmp_path, "s.csv", "system,segment,metric,score\nA,1,bleu,3\n")
    status, err = _run(capsys, "meta", "--human", str(human), "--scores", str(scores))
    assert status == 2 and err.startswith(f"styleval: error: {human}:1: the key 'score' appears twice"), err


def test_judgments_refuse_a_name_holding_a_tab_and_a_duplicated_column(tmp_path, capsys):
    scores = _table(tmp_path, "s.csv", "system,segment,metric,score\nA,1,bleu,3\n")
    human = _table(tmp_path, "h.csv", "system,segment,annotator,aspect,score\nA,1,r1,content,3\nB\tC,1,r1,content,4\n")
    status, err = _run(capsys, "meta", "--human", str(human), "--scores", str(scores))
    assert status == 2 and err.startswith(f"styleval: error: {human}:3: system 'B\\tC' holds a control character "
                                          "(U+0009)"), err
    human = _table(tmp_path, "h2.csv", "system,segment,annotator,aspect,score,score\nA,1,r1,content,3,4\n")
    status, err = _run(capsys, "meta", "--human", str(human), "--scores", str(scores))
    assert status == 2 and err == f"styleval: error: {human}:1: duplicate column name(s) in header: 'score'"


def test_a_duplicated_table_column_is_refused_in_memory_and_streamed(tmp_path, capsys):
    table = _table(tmp_path, "t.tsv", "source\toutput\toutput\na cat sat\ta\tb\n")
    for extra in ([], ["--stream"]):
        status, err = _run(capsys, "score", "--input", str(table), "-m", "bleu", "--bootstrap", "0", *extra)
        assert status == 2 and err == f"styleval: error: {table}:1: duplicate column name(s) in header: 'output'"


# -- empty files, header-only tables and empty outputs ---------------------------------------------------------------
def test_a_table_without_rows_and_an_empty_sources_file_are_named(tmp_path, capsys):
    header_only = _table(tmp_path, "h.tsv", "source\toutput\n")
    blank_jsonl = _table(tmp_path, "b.jsonl", "\n\n")
    for table, problem in ((header_only, "a header but no data rows: the table holds no segment"),
                           (blank_jsonl, "no JSON object in the file (it is empty or blank)")):
        for extra in ([], ["--stream"]):
            status, err = _run(capsys, "score", "--input", str(table), "-m", "bleu", "--bootstrap", "0", *extra)
            assert status == 2 and err.startswith(f"styleval: error: {table}: {problem}"), err
    empty = _table(tmp_path, "empty.txt", "")
    status, err = _run(capsys, "score", "--system", str(empty), "--source", str(empty), "-m", "bleu")
    assert status == 2 and err == (f"styleval: error: {empty}: the sources file is empty: no segment to score (a "
                                   "segment is a line)")
    with pytest.raises(InputError, match="a header but no data rows"):
        read_table(header_only)


def test_a_file_of_empty_outputs_is_scored_as_empty_outputs(tmp_path, capsys):
    files = _files(tmp_path, "\n\n\n")
    status, out = _run(capsys, "score", "--system", f"A={files['out']}", "--source", str(files["src"]), "-m",
                       "bleu", "--bootstrap", "0")
    assert status == 0 and "note: A: 3 empty output(s) scored as they are" in out
    table = _table(tmp_path, "t.jsonl", '{"source": "a cat sat", "output": ""}\n')
    records = read_table(table)
    assert len(records) == 1 and records[0].output == "" and records[0].is_empty_output


# -- data export: the stored human scores of Lai et al. 2022 --------------------------------------------------------
@pytest.fixture()
def lai_copy(shared_data, tmp_path):
    """A copy of lai2022/chatgpt (792 KB) whose third line of style.json a test may change."""
    root = tmp_path / "lai2022"
    shutil.copytree(shared_data / "lai2022" / "chatgpt", root / "chatgpt")
    return root


def _replace_in_line(path: Path, index: int, old: str, new: str) -> None:
    lines = path.read_text(encoding="utf-8").split("\n")
    assert old in lines[index]
    lines[index] = lines[index].replace(old, new, 1)
    path.write_text("\n".join(lines), encoding="utf-8")


@pytest.mark.parametrize("value,problem", [
    ("-50", "system 'bart' human_1: human score -50 is not on the raters' 0-100 scale"),
    ("150", "system 'bart' human_1: human score 150 is not on the raters' 0-100 scale"),
    ("NaN", "system 'bart' human_1: the human score is missing (null, NaN or an empty cell)"),
    ("null", "system 'bart' human_1: the human score is missing (null, NaN or an empty cell)"),
    ("86.5, \"human_1\": 12", "the key 'human_1' appears twice in one object"),
])
def test_data_export_refuses_a_bad_human_score_naming_file_and_row(lai_copy, tmp_path, capsys, value, problem):
    style = lai_copy / "chatgpt" / "style.json"
    _replace_in_line(style, 2, '"human_1": 86.5', f'"human_1": {value}')
    status, err = _run(capsys, "data", "export", "lai2022", "--root", str(lai_copy), "--human",
                       str(tmp_path / "h.csv"), "-q")
    assert status == 2 and err.startswith(f"styleval: error: {style}:3: {problem}"), err
    assert not (tmp_path / "h.csv").exists()


def test_data_export_reads_the_untouched_copy(lai_copy, tmp_path, capsys):
    status, _ = _run(capsys, "data", "export", "lai2022", "--root", str(lai_copy), "--human", str(tmp_path / "h.csv"),
                     "-q")
    assert status == 0 and len((tmp_path / "h.csv").read_text(encoding="utf-8").splitlines()) == 4320 + 1


def test_the_txt_copy_of_the_human_scores_is_checked_too(shared_data, tmp_path):
    from styleval.meta.datasets import load_lai2022

    root = tmp_path / "lai2022"
    shutil.copytree(shared_data / "lai2022" / "data" / "outputs", root / "data" / "outputs")
    assert len(load_lai2022(root, source="txt").judgments.frame) == 4320
    path = root / "data" / "outputs" / "BART.content.src.txt"
    lines = path.read_text(encoding="utf-8").split("\n")
    cells = lines[4].split("\t")
    cells[5] = "250"
    lines[4] = "\t".join(cells)
    path.write_text("\n".join(lines), encoding="utf-8")
    with pytest.raises(InputError) as caught:
        load_lai2022(root, source="txt")
    assert str(caught.value) == (f"{path}:5: column 5 (style, rater 1): human score 250 is not on the raters' 0-100 "
                                 "scale")


def test_data_export_checks_mir2019_and_sgdd_tst_human_scales_too(shared_data, tmp_path, capsys):
    mir = tmp_path / "mir2019"
    shutil.copytree(shared_data / "mir2019" / "evaluations", mir / "evaluations")
    npy = mir / "evaluations" / "human" / "content_preservation" / "CAAE_rho_1.npy"
    values = np.load(npy)
    values[7] = 6.0
    np.save(npy, values)
    status, err = _run(capsys, "data", "export", "mir2019", "--root", str(mir), "--human", str(tmp_path / "m.csv"))
    assert status == 2 and err == (f"styleval: error: {npy}: entry 7 (content_preservation of CAAE_rho_1): human "
                                   "score 6 is not on the raters' 1-5 scale")
    sgdd = tmp_path / "sgdd-tst"
    shutil.copytree(shared_data / "sgdd-tst" / "metric", sgdd / "metric")
    table = sgdd / "metric" / "SGDD-TST_with_metrics.csv"
    frame = pd.read_csv(table)
    frame.loc[3, "human"] = 0.5
    frame.to_csv(table, index=False)
    status, err = _run(capsys, "data", "export", "sgdd-tst", "--root", str(sgdd), "--human", str(tmp_path / "s.csv"))
    assert status == 2 and err == f"styleval: error: {table}:5: human score 0.5 is not on the crowd's 1-3 scale", err


# -- one end-to-end run through the console script -------------------------------------------------------------------
def test_the_console_script_prints_one_line_and_no_traceback(tmp_path):
    files = _files(tmp_path, b"a cat sits\x00\nthe dog runs\nbirds sang\n")
    done = subprocess.run([sys.executable, "-m", "styleval.cli.main", "score", "--system", str(files["out"]),
                           "--source", str(files["src"]), "-m", "bleu"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines() == [f"styleval: error: {files['out']}:1: a NUL character (U+0000) at "
                                                "column 11: text holds none (a binary file? UTF-16 without a "
                                                "byte-order mark? then give --encoding utf-16)"]
    assert done.stdout == ""
