"""The streaming engine gives exactly the in-memory engine's numbers, and reads with the readers' checks."""
from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import styleval
from styleval.engine import StreamOptions, score_stream
from styleval.errors import InputError
from styleval.readers import read_table
from styleval.engine.options import StatisticsOptions

NO_CI = StatisticsOptions(bootstrap=0)  # no intervals: these tests look at scores

LEXICAL = ["bleu", "chrf", "chrf++", "ter", "rouge1", "rougeL", "meteor", "pinc", "levenshtein"]
WORDS = ("the food was great and the staff friendly but slow service never again i loved it "
         "we will come back terrible pizza cold fries nice place").split()


def _sentence(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 14)))


def write_table(path: Path, n: int, systems: int = 3, seed: int = 0) -> Path:
    """``n`` inputs, each rewritten by every system (one JSON line per record, systems interleaved by input)."""
    rng = random.Random(seed)
    with open(path, "w", encoding="utf-8") as fh:
        for i in range(n):
            src = _sentence(rng)
            refs = [_sentence(rng) for _ in range(rng.randint(1, 3))]
            for s in range(systems):
                out = src if rng.random() < 0.1 else ("" if rng.random() < 0.02 else _sentence(rng))
                fh.write(json.dumps({"id": f"s{i}", "system": f"sys{s}", "source": src, "output": out,
                                     "refs": refs}) + "\n")
    return path


def assert_same(mem, streamed) -> None:
    assert [(r.metric, r.system) for r in mem.results] == [(r.metric, r.system) for r in streamed.result.results]
    for a, b in zip(mem.results, streamed.result.results):
        assert a.corpus_score == b.corpus_score or (np.isnan(a.corpus_score) and np.isnan(b.corpus_score)), a.metric
        assert a.ci == b.ci, (a.metric, a.system)
        assert str(a.signature) == str(b.signature)
        assert a.flags == b.flags
        if len(b.stats):
            assert np.array_equal(a.stats, b.stats, equal_nan=True)
    assert [c.to_dict() for c in mem.comparisons] == [c.to_dict() for c in streamed.result.comparisons]
    assert mem.settings == streamed.result.settings


def segment_rows(path: Path) -> dict[tuple[str, str, str], tuple[float | None, bool]]:
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        out[(row["system"], row["metric"], row["id"])] = (row["score"], row["empty_output"])
    return out


@pytest.mark.parametrize("chunk_size", [1, 7, 250])
def test_lexical_battery_equals_in_memory(tmp_path, chunk_size):
    table = write_table(tmp_path / "t.jsonl", 60)
    options = StatisticsOptions(bootstrap=200, significance="paired-bootstrap")
    mem = styleval.score(read_table(table), LEXICAL, options=options)
    seg = tmp_path / "seg.jsonl"
    st = score_stream(table, LEXICAL, options=options,
                      stream=StreamOptions(chunk_size=chunk_size, segments=seg, keep_stats=True))
    assert_same(mem, st)
    # segment scores: the in-memory engine's, every one
    mem_seg = tmp_path / "mem.jsonl"
    mem.write_jsonl(mem_seg)
    assert segment_rows(seg) == segment_rows(mem_seg)
    assert st.n_records == 180 and st.counts == {"sys0": 60, "sys1": 60, "sys2": 60}


def test_approximate_randomization_baseline_and_parquet(tmp_path):
    pa = pytest.importorskip("pyarrow.parquet")
    table = write_table(tmp_path / "t.jsonl", 40, systems=3, seed=3)
    options = StatisticsOptions(bootstrap=100, significance="approx-randomization", baseline="sys1")
    mem = styleval.score(read_table(table), ["bleu", "ter"], options=options)
    st = score_stream(table, ["bleu", "ter"], options=options,
                      stream=StreamOptions(chunk_size=16, segments=tmp_path / "seg.parquet", keep_stats=True))
    assert_same(mem, st)
    frame = pa.read_table(tmp_path / "seg.parquet").to_pandas()
    assert len(frame) == 3 * 40 * 4
    got = frame[(frame.metric == "ter/ref") & (frame.system == "sys2")].score.to_numpy()
    assert np.array_equal(got, mem.get("ter/ref", "sys2").segment_scores)


def test_tsv_and_csv_inputs(tmp_path):
    rows = [("id", "system", "source", "output", "ref0", "ref1"),
            ("1", "A", 'he said "hi"', "he said hi", "he said hello", ""),
            ("2", "A", "it is , ok", "it's ok", "it is fine", "fine")]
    tsv = tmp_path / "t.tsv"
    tsv.write_text("\n".join("\t".join(r) for r in rows) + "\n", encoding="utf-8")
    csv_path = tmp_path / "t.csv"
    csv_path.write_text('id,system,source,output,ref0,ref1\r\n1,A,"multi\nline",multi line,a b,\r\n'
                        '2,A,"x, y",x y,x y z,x\r\n', encoding="utf-8")
    for path in (tsv, csv_path):
        mem = styleval.score(read_table(path), ["bleu", "chrf"], options=StatisticsOptions(bootstrap=50))
        assert_same(mem, score_stream(path, ["bleu", "chrf"], options=StatisticsOptions(bootstrap=50),
                                      stream=StreamOptions(chunk_size=1, keep_stats=True)))


def test_errors_name_file_and_line_and_leave_no_segment_file(tmp_path):
    table = write_table(tmp_path / "t.jsonl", 30)
    lines = table.read_text(encoding="utf-8").splitlines()
    lines[57] = '{"id": "x", "source": "a", "output": '  # line 58, after the first chunks
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(lines) + "\n", encoding="utf-8")
    seg = tmp_path / "seg.jsonl"
    with pytest.raises(InputError) as err:
        score_stream(bad, ["bleu"], options=NO_CI, stream=StreamOptions(chunk_size=10, segments=seg))
    assert err.value.path == str(bad) and err.value.line == 58 and "not valid JSON" in str(err.value)
    assert not seg.exists() and not Path(str(seg) + ".partial").exists()

    tsv = tmp_path / "t.tsv"
    tsv.write_text("source\toutput\nA\tB\nC\tD\textra\n", encoding="utf-8")
    with pytest.raises(InputError) as err:
        score_stream(tsv, ["bleu"], options=NO_CI, against=["source"], stream=StreamOptions(chunk_size=1))
    assert err.value.line == 3 and "3 fields" in str(err.value)

    bad_utf8 = tmp_path / "u.tsv"
    bad_utf8.write_bytes(b"source\toutput\nok\tfine\nbad \xff\tx\n")
    with pytest.raises(InputError) as err:
        score_stream(bad_utf8, ["bleu"], options=NO_CI, against=["source"])
    assert err.value.line == 3 and "UTF-8" in str(err.value)

    dup = tmp_path / "dup.jsonl"
    dup.write_text("".join(json.dumps({"id": i, "source": "a b", "output": "a"}) + "\n" for i in ["1", "2", "3", "2"]),
                   encoding="utf-8")
    with pytest.raises(InputError) as err:
        score_stream(dup, ["bleu"], options=NO_CI, against=["source"], stream=StreamOptions(chunk_size=2))
    assert err.value.line == 4 and "dup.jsonl:2" in str(err.value)


def test_unaligned_systems_refused_for_paired_tests(tmp_path):
    path = tmp_path / "t.jsonl"
    recs = [{"id": i, "system": s, "source": "a b", "output": o}
            for i, s, o in (("1", "A", "a"), ("2", "A", "c"), ("2", "B", "c"), ("1", "B", "b"))]
    path.write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
    with pytest.raises(InputError, match="same segment ids in the same order"):
        score_stream(path, ["bleu"], against=["source"],
                     options=StatisticsOptions(significance="paired-bootstrap", bootstrap=10))


def test_real_data_yelp_dualrl(shared_data, tmp_path):
    from styleval.datasets import read_yelp_dualrl

    keep = {"DualRL", "DeleteRetrieve_Li", "Human0"}
    recs = [r for r in read_yelp_dualrl(shared_data / "yelp-dualrl") if r.system in keep]
    assert {r.system for r in recs} == keep
    table = tmp_path / "yelp.jsonl"
    with open(table, "w", encoding="utf-8") as fh:
        for r in recs:
            fh.write(json.dumps({"id": r.id, "system": r.system, "source": r.source, "output": r.output,
                                 "refs": r.references}) + "\n")
    mem = styleval.score(read_table(table), LEXICAL, options=StatisticsOptions(bootstrap=100))
    assert_same(mem, score_stream(table, LEXICAL, options=StatisticsOptions(bootstrap=100),
                                  stream=StreamOptions(chunk_size=333, keep_stats=True)))


def test_cli_stream(tmp_path):
    table = write_table(tmp_path / "t.jsonl", 25)
    seg, out = tmp_path / "seg.jsonl", tmp_path / "out.json"
    mem_out = tmp_path / "mem.json"
    base = [sys.executable, "-m", "styleval.cli.main", "score", "--input", str(table), "-m", "bleu,ter",
            "--bootstrap", "50", "--no-progress", "--quiet"]
    subprocess.run(base + ["--stream", "--chunk-size", "9", "--segments", str(seg), "--json", str(out)], check=True)
    subprocess.run(base + ["--json", str(mem_out)], check=True)
    got, want = json.loads(out.read_text()), json.loads(mem_out.read_text())
    for a, b in zip(got["corpus"], want["corpus"]):
        assert (a["metric"], a["system"], a["score"], a["ci"], a["signature_string"], a["n_segments"]) == \
               (b["metric"], b["system"], b["score"], b["ci"], b["signature_string"], b["n_segments"])
    assert len(seg.read_text().splitlines()) == 75 * 4
