"""Shifted files, edited fetched sets, look-alike names, a loose benchmark.json and files that are not caches
(issue #53), on real files on disk: copies of ``../shared/data`` edited the way an unlucky user or a broken tool
would, the real download code against a local mirror, and every case through the CLI with stderr checked for a
traceback (:func:`test_no_case_ends_in_a_traceback`)."""
from __future__ import annotations

import json
import os
import shutil
import sqlite3
import unicodedata
from pathlib import Path

import pytest

from mirror_server import Mirror
from styleval.cli.main import main
from styleval.datasets import lai2022
from styleval.errors import InputError

EXAMPLE_HEADER = "id\tsystem\tdirection\tsource\toutput\tref0\n"


def _err(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip()
    assert "Traceback" not in err and err.count("\n") == 0 and err, err
    return err


def _lai_copy(shared: Path, tmp_path: Path) -> Path:
    folder = tmp_path / "lai2022"
    shutil.copytree(shared / "lai2022", folder)
    return folder


# -- a release whose files no longer line up --------------------------------------------------------------------
@pytest.mark.shared_data
def test_lai2022_duplicated_and_dropped_line_fails_with_file_and_line(shared_data, tmp_path, capsys):
    """Line 11 of chatgpt/content.src.json duplicated, line 51 dropped: still 80 rows, so only the line-by-line
    cross-check against the other three files of the release finds it; it names the file and line 12 (the first
    that no longer matches) and writes nothing."""
    folder = _lai_copy(shared_data, tmp_path)
    path = folder / "chatgpt" / "content.src.json"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    shifted = lines[:11] + [lines[10]] + lines[11:50] + lines[51:]
    assert len(shifted) == 80
    path.write_text("".join(shifted), encoding="utf-8")
    out = tmp_path / "human.csv"
    assert main(["data", "export", "lai2022", "--root", str(tmp_path), "--human", str(out), "-q"]) == 2
    err = _err(capsys)
    assert f"{path}:12: row 12 of the release: the source differs from content.ref.json line 12" in err
    assert "style.json line 12, fluency.json line 12" in err and not out.exists()
    assert main(["data", "export", "lai2022", "--root", str(tmp_path), "--outputs", str(tmp_path / "o.tsv")]) == 2
    assert f"{path}:12:" in _err(capsys)


@pytest.mark.shared_data
def test_lai2022_one_output_changed_names_the_system(shared_data, tmp_path):
    folder = _lai_copy(shared_data, tmp_path)
    path = folder / "chatgpt" / "style.json"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    rows[5]["sys"]["niu"]["out"] += " (edited)"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    with pytest.raises(InputError) as caught:
        lai2022.judgments_json(tmp_path)
    assert caught.value.path == str(path) and caught.value.line == 6
    assert "system 'niu''s output differs from content.src.json line 6" in caught.value.problem


@pytest.mark.shared_data
def test_lai2022_txt_files_of_a_system_are_cross_checked(shared_data, tmp_path):
    folder = _lai_copy(shared_data, tmp_path)
    path = folder / "data" / "outputs" / "RAO.ppl.txt"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    lines[20], lines[21] = lines[21], lines[20]
    path.write_text("".join(lines), encoding="utf-8")
    with pytest.raises(InputError) as caught:
        lai2022.judgments_txt(tmp_path)
    assert caught.value.path == str(path) and caught.value.line == 21 and "the survey id" not in caught.value.problem
    assert "RAO.content.src.txt line 21" in caught.value.problem


@pytest.mark.shared_data
def test_the_shipped_release_is_aligned(shared_data):
    """The cross-checks pass on the release as published (4 JSON files, 9 x 7 text files)."""
    assert len(lai2022.judgments_json(shared_data).human) == 4320
    assert len(lai2022.judgments_txt(shared_data).human) == 4320


# -- a fetched set is checked when used, by data fetch, and fully by --verify -------------------------------------
@pytest.fixture
def fetched(shared_data, tmp_path):
    with Mirror(shared_data) as server:
        assert main(["data", "fetch", "lai2022", "--dir", str(tmp_path / "data"), "--mirror", server.url, "-q"]) == 0
        yield server, tmp_path / "data"


@pytest.mark.shared_data
def test_an_edited_fetched_file_is_refused_when_used_and_fetched_again(fetched, shared_data, tmp_path, capsys,
                                                                       monkeypatch):
    server, data = fetched
    monkeypatch.setenv("STYLEVAL_SHARED_DATA", str(tmp_path / "nowhere"))  # the fetched copy is what is read
    monkeypatch.setenv("STYLEVAL_DATA_DIR", str(data))
    assert (data / "lai2022.fetched.json").is_file()
    target = data / "lai2022" / "chatgpt" / "content.src.json"
    original = target.read_bytes()
    assert b'"human_1": 62.4' in original
    target.write_bytes(original.replace(b'"human_1": 62.4', b'"human_1": 99.9', 1))  # same size, new score
    out = tmp_path / "h.csv"
    assert main(["data", "export", "lai2022", "--human", str(out)]) == 2
    err = _err(capsys)
    assert f"{target}: changed since `styleval data fetch` checked it: sha256" in err
    assert f"styleval data fetch lai2022 --dir {data}" in err and not out.exists()
    before = len(server.requests)
    assert main(["data", "fetch", "lai2022", "--dir", str(data), "--mirror", server.url]) == 0
    said = capsys.readouterr().out
    assert "1 changed since fetched, downloaded again: chatgpt/content.src.json (sha256" in said
    assert len(server.requests) == before + 1 and target.read_bytes() == original
    assert main(["data", "export", "lai2022", "--human", str(out), "-q"]) == 0


@pytest.mark.shared_data
def test_a_touched_file_is_rehashed_and_an_edit_hiding_its_mtime_needs_verify(fetched, capsys):
    server, data = fetched
    target = data / "lai2022" / "data" / "outputs" / "BART.ppl.txt"
    stat = target.stat()
    os.utime(target, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))  # touched, same bytes: hashed, passes
    assert main(["data", "fetch", "lai2022", "--dir", str(data), "--mirror", server.url]) == 0
    assert "already complete: sizes and modification times as fetched" in capsys.readouterr().out
    stamp = json.loads((data / "lai2022.fetched.json").read_text())
    assert stamp["files"]["data/outputs/BART.ppl.txt"]["stat"][1] == stat.st_mtime_ns + 10**9  # stamped again
    text = target.read_bytes()
    stat = target.stat()
    assert b"11.293071" in text
    target.write_bytes(text.replace(b"11.293071", b"11.293099", 1))  # an edit whose size and mtime are put back
    os.utime(target, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert main(["data", "fetch", "lai2022", "--dir", str(data), "--mirror", server.url]) == 0
    assert "already complete" in capsys.readouterr().out  # the cheap check cannot see it ...
    assert main(["data", "fetch", "lai2022", "--dir", str(data), "--mirror", server.url, "--verify"]) == 0
    assert "1 changed since fetched, downloaded again: data/outputs/BART.ppl.txt" in capsys.readouterr().out
    assert target.read_bytes() == text  # ... --verify does, and repairs it


# -- system names ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name, said", [
    ("re\u202ewrite", "U+202E RIGHT-TO-LEFT OVERRIDE"),
    ("re\u200bwrite", "U+200B ZERO WIDTH SPACE"),
    ("rewrite\u00a0", "U+00A0 NO-BREAK SPACE"),
])
def test_look_alike_system_names_are_refused(tmp_path, capsys, name, said):
    table = tmp_path / "t.tsv"
    table.write_text(EXAMPLE_HEADER + "1\trewrite\ta:b\ts\to\tr\n" + f"1\t{name}\ta:b\ts\to\tr\n", encoding="utf-8")
    assert main(["score", "--input", str(table), "-m", "bleu", "--bootstrap", "0"]) == 2
    err = _err(capsys)
    assert f"{table}:3: system name" in err and said in err


def test_nfd_and_nfc_names_are_one_system_everywhere(tmp_path):
    """An output table with the NFD form and human judgments with the NFC form of 'café': one system, matched."""
    nfd, nfc = unicodedata.normalize("NFD", "café"), "café"
    assert nfd != nfc
    table = tmp_path / "t.tsv"
    table.write_text(EXAMPLE_HEADER + "".join(f"{i}\t{nfd}\ta:b\tsource {i}\toutput {i}\toutput {i}\n"
                                              for i in range(1, 4)) +
                     "".join(f"{i}\tplain\ta:b\tsource {i}\tother {i}\toutput {i}\n" for i in range(1, 4)),
                     encoding="utf-8")
    scores = tmp_path / "s.json"
    assert main(["score", "--input", str(table), "-m", "bleu", "--bootstrap", "0", "--json", str(scores)]) == 0
    assert list(dict.fromkeys(r["system"] for r in json.loads(scores.read_text())["corpus"])) == [nfc, "plain"]
    human = tmp_path / "h.csv"
    human.write_text("system,segment,annotator,aspect,score\n" + "".join(
        f"{s},{i},a,content,{v}\n" for s, v in ((nfc, 5), ("plain", 1)) for i in range(1, 4)), encoding="utf-8")
    assert main(["meta", "--human", str(human), "--scores", str(scores), "--aspect", "content", "--level",
                 "system", "--method", "pearson"]) == 0


# -- benchmark.json ---------------------------------------------------------------------------------------------
def _user_set(tmp_path: Path, manifest: object) -> Path:
    folder = tmp_path / "myset"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "outputs.tsv").write_text(EXAMPLE_HEADER + "".join(
        f"{i}\t{s}\ta:b\tsource {i}\t{s} {i}\tref {i}\n" for s in ("copy", "tidy") for i in range(1, 4)),
        encoding="utf-8")
    (folder / "human.csv").write_text("system,segment,annotator,aspect,score\n" + "".join(
        f"{s},{i},a,meaning,{v}\n" for s, v in (("copy", 1), ("tidy", 4)) for i in range(1, 4)), encoding="utf-8")
    (folder / "benchmark.json").write_text(manifest if isinstance(manifest, str) else json.dumps(manifest),
                                           encoding="utf-8")
    return folder


BASE = {"aspects": {"meaning": "content"}}


@pytest.mark.parametrize("manifest, said", [
    ({**BASE, "exlude": ["copy"]}, 'unknown key "exlude"; did you mean "exclude"?'),
    ({**BASE, "exclude": "copy"}, 'key "exclude" must be a list of system names, not \'copy\' (write [\'copy\'])'),
    ({**BASE, "exclude": ["cpy"]}, 'key "exclude": no system is named \'cpy\'; did you mean \'copy\'?'),
    ({**BASE, "scale": [1]}, 'key "scale" must be a list of two numbers [low, high], low below high, not [1]'),
    ({**BASE, "scale": ["a", "b"]}, 'key "scale" must be a list of two numbers'),
    ({**BASE, "scale": "1-5"}, "not '1-5' (e.g. [1, 5]"),
    ('{"aspects": {"meaning": "content"}, "scale": [1, NaN]}', 'key "scale" must be a list of two numbers'),
    ({**BASE, "scale": [5, 1]}, 'key "scale" must be a list of two numbers'),
    ({**BASE, "convention": 3}, 'key "convention" must be a convention name or a list of them, not 3'),
    ({**BASE, "convention": ["pearson", "nope"]}, "unknown convention 'nope'"),
    ({**BASE, "repeated_ratings": 2}, 'key "repeated_ratings" must be a name of how several ratings'),
    ({"aspects": {"meaning": "meaning"}}, 'key "aspects": the kind of \'meaning\' must be one of style, content'),
    ([1, 2], 'expected an object with "aspects"'),
])
def test_benchmark_json_schema_errors_name_the_key(tmp_path, capsys, manifest, said):
    folder = _user_set(tmp_path, manifest)
    assert main(["benchmark", "--set", f"mine={folder}", "--sets", "", "-m", "bleu", "--ci", "0",
                 "--permutations", "0"]) == 2
    err = _err(capsys)
    assert err.startswith(f"styleval: error: {folder / 'benchmark.json'}: ") and said in err


@pytest.mark.parametrize("extra", [{"convention": "pearson"}, {"convention": ["pearson"]},
                                   {"repeated_ratings": "mean"}, {"scale": [1, 5], "exclude": ["copy"]}])
def test_benchmark_json_accepts_both_shapes_of_convention_and_repeated_ratings(tmp_path, extra):
    from styleval.benchmark.manifest_schema import check_manifest
    from styleval.benchmark.sets import CONVENTIONS, KINDS

    data = {**BASE, **extra}
    assert check_manifest(data, tmp_path / "benchmark.json", kinds=KINDS, conventions=CONVENTIONS) is data


# -- data fetch --dir, --mirror ---------------------------------------------------------------------------------
def test_fetch_dir_naming_a_file_is_one_clear_error(tmp_path, capsys):
    regular = tmp_path / "notes.txt"
    regular.write_text("mine", encoding="utf-8")
    assert main(["data", "fetch", "lai2022", "--dir", str(regular), "--mirror", "http://127.0.0.1:9/"]) == 2
    assert "the data folder is a file, not a folder" in _err(capsys) and regular.read_text() == "mine"


@pytest.mark.shared_data
def test_a_mirror_password_is_never_printed(shared_data, tmp_path, capsys):
    with Mirror(shared_data) as server:
        url = server.url.replace("http://", "http://me:hunter2secret@")
        assert main(["data", "fetch", "mir2019", "--dir", str(tmp_path), "--mirror", url, "--retries", "0"]) == 2
    err = _err(capsys)
    assert "hunter2secret" not in err and "me:" not in err


def test_shown_url_scrubs_every_kind_of_secret():
    from styleval.urls import shown_url

    assert shown_url("https://me:pw@h.example:8443/v1?code=abc&x=1") == "https://h.example:8443/v1?code=***&x=1"
    assert shown_url("http://127.0.0.1/v1/sk-proj-abcdef0123/chat") == "http://127.0.0.1/v1/***/chat"
    assert shown_url("https://h/v1/deployments/a1b2c3d4e5f6a7b8c9d0e1f2a3b4") == "https://h/v1/deployments/***"
    assert shown_url("https://h/v1?api-key=z&sig=y") == "https://h/v1?api-key=***&sig=***"
    assert shown_url("https://h/v1/gpt-4o-mini") == "https://h/v1/gpt-4o-mini"


# -- --cache naming a file that is not a styleval cache ------------------------------------------------------------
def test_cache_naming_the_input_file_is_refused_and_untouched(tmp_path, capsys):
    table = tmp_path / "t.tsv"
    table.write_text(EXAMPLE_HEADER + "1\tA\ta:b\ts\to\tr\n", encoding="utf-8")
    before = table.read_bytes()
    assert main(["score", "--input", str(table), "-m", "bleu", "--stream", "--cache", str(table)]) == 2
    err = _err(capsys)
    assert "not a SQLite file, so not a styleval cache" in err and "nothing was written" in err
    assert "only a cache" not in err and "delete" not in err and table.read_bytes() == before
    assert not Path(f"{table}-wal").exists()


def test_cache_naming_another_programs_database_is_refused_and_untouched(tmp_path, capsys):
    app = tmp_path / "app.sqlite"
    with sqlite3.connect(app) as db:
        db.execute("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)")
        db.execute("INSERT INTO users VALUES (1, 'ann')")
    db.close()
    before = app.read_bytes()
    table = tmp_path / "t.tsv"
    table.write_text(EXAMPLE_HEADER + "1\tA\ta:b\ts\to\tr\n", encoding="utf-8")
    assert main(["score", "--input", str(table), "-m", "bleu", "--stream", "--cache", str(app)]) == 2
    err = _err(capsys)
    assert "another program's SQLite database (tables users)" in err and "only a cache" not in err
    assert app.read_bytes() == before and not Path(f"{app}-wal").exists()


# -- meta --scale --------------------------------------------------------------------------------------------------
def test_meta_scale_refuses_a_judgment_outside_naming_file_and_line(tmp_path, capsys):
    human = tmp_path / "h.csv"
    human.write_text("system,segment,annotator,aspect,score\nA,1,a,content,50\nA,2,a,content,-500\n"
                     "B,1,a,content,1e9\nB,2,a,content,20\n", encoding="utf-8")
    scores = tmp_path / "s.csv"
    scores.write_text("system,segment,metric,score\nA,1,m,1\nA,2,m,2\nB,1,m,3\nB,2,m,4\n", encoding="utf-8")
    assert main(["meta", "--human", str(human), "--scores", str(scores), "--scale", "0,100"]) == 2
    assert f"{human}:3: score -500 is outside the scale 0..100 (--scale)" in _err(capsys)
    for bad in ("100", "5,1", "a,b", "0,nan"):
        with pytest.raises(SystemExit):
            main(["meta", "--human", str(human), "--scores", str(scores), "--scale", bad])
        assert "--scale: expected" in capsys.readouterr().err


# -- every case above through the CLI: stderr never holds a traceback ------------------------------------------------
def test_no_case_ends_in_a_traceback(tmp_path, capsys):
    """The CLI cases of the issue that need no server or shared data, run in one go: each exits 2 with one line."""
    regular = tmp_path / "file"
    regular.write_text("x", encoding="utf-8")
    table = tmp_path / "t.tsv"
    table.write_text(EXAMPLE_HEADER + "1\tre\u200bwrite\ta:b\ts\to\tr\n", encoding="utf-8")
    cases = [["data", "fetch", "lai2022", "--dir", str(regular)],
             ["score", "--input", str(table), "-m", "bleu"],
             ["score", "--input", str(regular), "-m", "bleu", "--stream", "--cache", str(regular)]]
    for manifest in ({**BASE, "scale": [1]}, {**BASE, "scale": ["a", "b"]}, {**BASE, "scale": "1-5"},
                     '{"aspects": {"meaning": "content"}, "scale": [1, NaN]}', {**BASE, "exclude": "copy"},
                     {**BASE, "exlude": []}):
        folder = _user_set(tmp_path / str(len(cases)), manifest)
        cases.append(["benchmark", "--set", f"mine={folder}", "--sets", "", "-m", "bleu"])
    for args in cases:
        capsys.readouterr()
        assert main(args) == 2, args
        _err(capsys)
