"""--encoding: users' files in another encoding are read when named, and a file that is not UTF-8 is an error that
names the file and line and says what to do; public datasets stay UTF-8 whatever the option."""
from __future__ import annotations

import json

import pandas as pd
import pytest

from styleval import InputError
from styleval.cli.main import main
from styleval.datasets import read_gyafc
from styleval.readers import inputs_encoded, read_parallel, read_table

SOURCES = ["le café est prêt", "où est la gare", "ça va"]
OUTPUTS = ["Le café est prêt.", "Où est la gare ?", "Ça va bien."]


def _write(path, lines, encoding):
    path.write_bytes("".join(line + "\n" for line in lines).encode(encoding))
    return path


def _plain(tmp_path, encoding):
    folder = tmp_path / encoding
    folder.mkdir()
    return _write(folder / "out.txt", OUTPUTS, encoding), _write(folder / "src.txt", SOURCES, encoding)


def test_a_latin1_file_is_an_error_naming_file_line_and_remedy(tmp_path, capsys):
    out, src = _plain(tmp_path, "latin-1")
    assert main(["score", "--system", f"A={out}", "--source", str(src), "-m", "bleu", "--bootstrap", "0"]) == 2
    err = capsys.readouterr().err
    assert f"{out}:1: not valid UTF-8: byte(s) e9" in err  # 'é' of "Le café", line 1
    # the encodings suggested are those that read the bad line as text, shown decoded
    assert "it reads as cp1252 or latin-1 or iso8859-15 (the line as cp1252: 'Le café est prêt.')" in err
    assert "--encoding cp1252" in err and f"iconv -f cp1252 -t utf-8 {out}" in err


GBK_LINE = "the décor was really beautiful"


def test_gbk_bytes_suggest_gbk_not_the_latin_encodings_that_decode_them_to_mojibake(tmp_path):
    """yelp-dualrl's Human2/test.0.tsf holds GBK bytes on line 29 (a8 a6 for é): latin-1 and cp1252 decode them
    without error to 'd¨¦cor', so only an encoding whose reading looks like text is suggested."""
    path = _write(tmp_path / "refs.txt", ["it was fine", GBK_LINE, "good food"], "gbk")
    assert b"\xa8\xa6" in path.read_bytes() and path.read_bytes().decode("latin-1").count("¨¦") == 1
    with pytest.raises(InputError) as caught:
        read_parallel(path, path)
    message = str(caught.value)
    assert f"{path}:2: not valid UTF-8: byte(s) a8" in message
    assert f"it reads as gbk (the line as gbk: {GBK_LINE!r}): give --encoding gbk" in message
    assert "latin-1" not in message and "cp1252" not in message
    assert [r.output for r in read_parallel(path, path, encoding="gbk")][1] == GBK_LINE


def test_the_published_gbk_reference_of_yelp_dualrl(tmp_path):
    from styleval.datasets.paths import dataset_dir

    try:
        human2 = dataset_dir(None, "yelp-dualrl") / "outputs" / "yelp" / "Human2" / "test.0.tsf"
    except InputError:
        pytest.skip("../shared/data/yelp-dualrl is absent")
    with pytest.raises(InputError) as caught:
        read_parallel(human2, human2)
    assert f"{human2}:29:" in str(caught.value) and "it reads as gbk (" in str(caught.value)
    assert read_parallel(human2, human2, encoding="gbk")[28].output == GBK_LINE


def test_suggestions_are_those_that_read_as_text():
    from styleval.readers.text import implausible_characters, plausible_encodings

    for text in ("Größe, Übermäßig, São Paulo", GBK_LINE, "naïve café", "x² + y³ ½ 25°C", "这是一个测试 with words"):
        assert implausible_characters(text) == 0, text
    for mojibake in ("the d¨¦cor", "the dšŠcor", "ïðèâåò", "It costs Ђ5", "⌠cheap■", "caf茅 ok"):
        assert implausible_characters(mojibake) > 0, mojibake
    assert [e for e, _ in plausible_encodings("привет мир\n".encode("cp1251"), "utf-8")][0] == "cp1251"
    assert plausible_encodings("这是一个测试\n".encode("gbk"), "utf-8")[0] == ("gbk", "这是一个测试")
    assert plausible_encodings(b"ok\n", "utf-8") == []  # nothing to suggest for a file that is not broken


def test_encoding_latin1_reads_what_utf8_reads(tmp_path, capsys):
    docs = {}
    for encoding in ("utf-8", "latin-1"):
        out, src = _plain(tmp_path, encoding)
        path = tmp_path / f"{encoding}.json"
        assert main(["score", "--system", f"A={out}", "--source", str(src), "-m", "bleu,chrf", "--bootstrap", "0",
                     "--encoding", encoding, "--quiet", "--json", str(path)]) == 0
        docs[encoding] = json.loads(path.read_text(encoding="utf-8"))
    assert docs["latin-1"]["corpus"][0]["score"] > 0
    strip = [{k: v for k, v in c.items() if k != "metric_id"} for c in docs["latin-1"]["corpus"]]
    assert strip == [{k: v for k, v in c.items() if k != "metric_id"} for c in docs["utf-8"]["corpus"]]
    assert docs["latin-1"]["segments"] == docs["utf-8"]["segments"]


def test_readers_take_an_encoding_and_the_context_one(tmp_path):
    out, src = _plain(tmp_path, "cp1252")
    with pytest.raises(InputError, match="not valid UTF-8"):
        read_parallel(out, src)
    records = read_parallel(out, src, encoding="cp1252")
    assert [r.output for r in records] == OUTPUTS and [r.source for r in records] == SOURCES
    with inputs_encoded("cp1252"):
        assert read_parallel(out, src) == records
    table = tmp_path / "t.tsv"
    table.write_bytes(("source\toutput\n" + "".join(f"{s}\t{o}\n" for s, o in zip(SOURCES, OUTPUTS)))
                      .encode("latin-1"))
    assert [r.output for r in read_table(table, encoding="latin-1")] == OUTPUTS


def test_datasets_stay_utf8_while_the_users_outputs_follow_the_encoding(tmp_path):
    folder = tmp_path / "GYAFC" / "Family_Relationships" / "test"
    folder.mkdir(parents=True)
    _write(folder / "informal", ["the café is sooo good", "idk"], "utf-8")
    _write(folder / "formal", ["The café is good.", "I do not know."], "utf-8")
    for k in range(4):
        _write(folder / f"informal.ref{k}", ["The café is very good.", "I do not know."], "utf-8")
        _write(folder / f"formal.ref{k}", ["the café is good", "idk"], "utf-8")
    out = _write(tmp_path / "mine.txt", ["The café is so good.", "I do not know."], "latin-1")
    with inputs_encoded("latin-1"):
        records = read_gyafc(tmp_path / "GYAFC", "Family_Relationships", "informal:formal", outputs={"mine": out})
    assert records[0].source == "the café is sooo good" and records[0].output == "The café is so good."
    assert records[0].references[0] == "The café is very good."


def test_stream_reads_the_encoding_and_refuses_one_it_cannot_split(tmp_path, capsys):
    rows = "".join(f"{i}\t{s}\t{o}\n" for i, (s, o) in enumerate(zip(SOURCES, OUTPUTS), start=1))
    tables = {}
    for encoding in ("utf-8", "latin-1", "utf-16"):
        tables[encoding] = tmp_path / f"{encoding}.tsv"
        tables[encoding].write_bytes(("id\tsource\toutput\n" + rows).encode(encoding))
    docs = {}
    for encoding in ("utf-8", "latin-1"):
        path = tmp_path / f"{encoding}.json"
        assert main(["score", "--stream", "--input", str(tables[encoding]), "-m", "chrf", "--against", "source",
                     "--bootstrap", "0", "--encoding", encoding, "--quiet", "--json", str(path)]) == 0
        docs[encoding] = json.loads(path.read_text(encoding="utf-8"))
    assert [c["score"] for c in docs["latin-1"]["corpus"]] == [c["score"] for c in docs["utf-8"]["corpus"]]
    assert docs["utf-8"]["corpus"][0]["score"] > 0
    assert main(["score", "--stream", "--input", str(tables["latin-1"]), "-m", "chrf", "--bootstrap", "0",
                 "--quiet"]) == 2
    assert f"{tables['latin-1']}:2: not valid UTF-8" in capsys.readouterr().err
    assert main(["score", "--stream", "--input", str(tables["utf-16"]), "-m", "chrf", "--bootstrap", "0",
                 "--encoding", "utf-16", "--quiet"]) == 2
    assert "line by line" in capsys.readouterr().err
    # the in-memory reader decodes the whole file, so UTF-16 works there
    assert main(["score", "--input", str(tables["utf-16"]), "-m", "chrf", "--against", "source", "--bootstrap", "0",
                 "--encoding", "utf-16", "--quiet"]) == 0


def test_meta_and_errors_read_latin1_tables(tmp_path, capsys):
    human = pd.DataFrame([{"system": s, "segment": str(k), "annotator": "José", "aspect": "content",
                           "score": float((i + 1) * (k + 2) % 7), "direction": "informal:formal"}
                          for i, s in enumerate(("s1", "s2", "s3")) for k in range(4)])
    (tmp_path / "h.csv").write_bytes(human.to_csv(index=False).encode("latin-1"))
    scores = human.assign(metric="m", score=human["score"] * 2 + 1)[["system", "segment", "metric", "score"]]
    scores.to_csv(tmp_path / "s.csv", index=False)
    argv = ["meta", "--human", str(tmp_path / "h.csv"), "--scores", str(tmp_path / "s.csv"), "--level", "system",
            "--quiet"]
    assert main(argv) == 2
    assert f"{tmp_path / 'h.csv'}:2: not valid UTF-8" in capsys.readouterr().err
    assert main(argv + ["--encoding", "latin-1"]) == 0

    table = tmp_path / "t.tsv"
    table.write_bytes(("source\toutput\thuman\tm\n" + "".join(f"{s}\t{o}\t{k}\t{k % 2}\n" for k, (s, o) in
                                                               enumerate(zip(SOURCES, OUTPUTS))))
                      .encode("latin-1"))
    argv = ["errors", str(table), "-m", "m", "--no-base-rates", "--top", "2", "-q"]
    assert main(argv) == 2
    assert f"{table}:2: not valid UTF-8" in capsys.readouterr().err
    out = tmp_path / "e.json"
    assert main(argv + ["--encoding", "latin-1", "--json", str(out)]) == 0
    assert {s["source"] for s in json.loads(out.read_text(encoding="utf-8"))["segments"]} <= set(SOURCES)


def test_unknown_encoding_is_refused_by_the_parser(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["score", "--example", "formality", "--encoding", "klingon"])
    assert exc.value.code == 2 and "unknown encoding 'klingon'" in capsys.readouterr().err
