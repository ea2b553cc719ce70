"""The scoring engine and its result object: corpus scores, intervals, paired tests, serialisation."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest
import sacrebleu

import styleval
from styleval import InputError, Record, UnknownNameError
from styleval.examples import get as get_example
from styleval.readers import read_system_dir
from styleval.engine.options import StatisticsOptions

NO_CI = StatisticsOptions(bootstrap=0)  # no intervals: these tests look at scores


@pytest.fixture(scope="module")
def example_records():
    ex = get_example("formality")
    return read_system_dir(ex.systems_dir, ex.source, list(ex.references), direction=ex.direction)


def test_bleu_against_both_sides_equals_sacrebleu(example_records):
    result = styleval.score(example_records, ["bleu"], options=NO_CI)
    assert result.metrics == ["bleu/src", "bleu/ref"]
    rewrite = [r for r in example_records if r.system == "rewrite"]
    hyps = [r.output for r in rewrite]
    refs = [[r.references[k] for r in rewrite] for k in range(2)]
    expected_ref = sacrebleu.corpus_bleu(hyps, refs).score
    expected_src = sacrebleu.corpus_bleu(hyps, [[r.source for r in rewrite]]).score
    assert result.get("bleu/ref", "rewrite").corpus_score == pytest.approx(expected_ref, abs=1e-9)
    assert result.get("bleu/src", "rewrite").corpus_score == pytest.approx(expected_src, abs=1e-9)
    # the copy system reproduces its source exactly
    assert result.get("bleu/src", "copy").corpus_score == pytest.approx(100.0)
    assert "nrefs:2" in str(result.get("bleu/ref", "rewrite").signature)
    assert "nrefs:1" in str(result.get("bleu/src", "rewrite").signature)


def test_bootstrap_interval_contains_score_and_is_reproducible(example_records):
    options = StatisticsOptions(bootstrap=200, seed=7)
    a = styleval.score(example_records, ["chrf"], against=["references"], options=options)
    b = styleval.score(example_records, ["chrf"], against=["references"], options=options)
    for ra, rb in zip(a, b):
        assert ra.ci == rb.ci
        low, high = ra.ci
        assert low <= ra.corpus_score <= high
        assert high - low > 0


def test_paired_significance_finds_the_obvious_difference(example_records):
    result = styleval.score(example_records, ["bleu"], against=["references"],
                            options=StatisticsOptions(bootstrap=100, significance="paired-bootstrap", baseline="copy"))
    comps = {c.system: c for c in result.comparisons}
    assert set(comps) == {"tidy", "rewrite"}
    assert comps["rewrite"].delta > 0 and comps["rewrite"].p_value < 0.05
    expected = result.get("bleu/ref", "rewrite").corpus_score - result.get("bleu/ref", "copy").corpus_score
    assert comps["rewrite"].delta == pytest.approx(expected)


def test_empty_output_is_scored_and_flagged():
    recs = [Record("1", "hi there", "", ["Hello there."], system="S"),
            Record("2", "thx a lot", "Thanks a lot.", ["Thank you very much."], system="S")]
    result = styleval.score(recs, ["bleu"], against=["references"], options=NO_CI)
    r = result.get("bleu/ref", "S")
    assert len(r.segment_scores) == 2
    assert r.segment_scores[0] == 0.0
    assert r.flags["empty_output"] == ["1"]
    seg = result.to_dataframe("segment")
    assert seg["empty_output"].tolist() == [True, False]


def test_references_metric_skipped_without_references_and_error_when_forced():
    recs = [Record("1", "hi there", "Hello there.", system="S")]
    result = styleval.score(recs, ["bleu"], options=NO_CI)
    assert result.metrics == ["bleu/src"]
    with pytest.raises(InputError, match="needs references"):
        styleval.score(recs, ["bleu:against=references"], options=NO_CI)


def test_unknown_metric_lists_available():
    recs = [Record("1", "a", "b", system="S")]
    with pytest.raises(UnknownNameError) as err:
        styleval.score(recs, ["bleuu"])
    assert "bleu" in str(err.value) and "available" in str(err.value)


def test_unknown_parameter_is_named():
    recs = [Record("1", "a", "b", system="S")]
    with pytest.raises(InputError, match="no parameter"):
        styleval.score(recs, ["bleu:smoothness=3"])


def test_json_round_trip_keeps_every_segment(tmp_path, example_records):
    result = styleval.score(example_records, ["bleu", "chrf"], options=StatisticsOptions(bootstrap=50))
    path = tmp_path / "scores.json"
    result.write_json(path)
    data = json.loads(path.read_text())
    assert len(data["corpus"]) == 3 * 4
    for block in data["segments"]:
        assert len(block["scores"]) == 30
    first = data["corpus"][0]
    assert first["signature"]["metric"] in ("bleu", "chrf")
    assert first["signature_string"].startswith(first["signature"]["metric"])
    table = result.corpus_table()
    labels = ["bleu/src", "bleu/ref", "chrf/src", "chrf/ref"]
    assert list(table.columns) == [c for m in labels for c in (m, f"{m} low", f"{m} high")]
    assert table.shape == (3, 12) and list(table.index) == result.systems
    assert not math.isnan(float(np.asarray(table.values).sum()))
    long = result.to_dataframe("corpus").set_index(["system", "metric"])
    for system in result.systems:
        for m in labels:
            assert table.loc[system, m] == long.loc[(system, m), "score"]
            assert (table.loc[system, f"{m} low"], table.loc[system, f"{m} high"]) == result.get(m, system).ci
            assert table.loc[system, f"{m} low"] <= table.loc[system, m] <= table.loc[system, f"{m} high"]
    assert list(result.corpus_table(intervals=False).columns) == labels
    assert list(styleval.score(example_records, ["bleu"], bootstrap=0).corpus_table().columns) == ["bleu/src",
                                                                                                     "bleu/ref"]


def test_the_package_api_shows_real_signatures_and_stays_light():
    import inspect
    import pydoc
    import subprocess
    import sys

    from styleval.engine.stream import score_stream
    from styleval.scoring import score

    assert styleval.score is score and styleval.score_stream is score_stream
    assert list(inspect.signature(styleval.score).parameters)[:2] == ["records", "metrics"]
    page = pydoc.render_doc(styleval.score, renderer=pydoc.plaintext)
    assert "score(records" in page and "Score records (from any reader)" in page
    assert "Score TSV/CSV/JSONL tables" in pydoc.render_doc(styleval.score_stream, renderer=pydoc.plaintext)
    assert {"score", "score_stream", "StatisticsOptions"} <= set(dir(styleval))
    code = ("import sys, styleval; heavy = [m for m in ('pandas', 'numpy', 'styleval.scoring', 'styleval.engine') "
            "if m in sys.modules]; print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_a_10000_word_output_is_scored_whole():
    long_output = " ".join(["word"] * 10_000)
    recs = [Record("1", "word word", long_output, ["word word"], system="S")]
    result = styleval.score(recs, ["bleu", "chrf", "levenshtein"], against=["references"], options=NO_CI)
    expected = sacrebleu.sentence_bleu(long_output, ["word word"]).score
    assert result.get("bleu/ref", "S").segment_scores[0] == pytest.approx(expected)
    # the distance counts every character of the long line: nothing was truncated
    assert result.get("levenshtein/ref", "S").segment_scores[0] == len(long_output) - len("word word")


def test_statistics_options_object_and_keywords(example_records):
    """One options object for intervals and tests; its fields as keywords give the same run."""
    options = StatisticsOptions(bootstrap=80, seed=3, significance="paired-bootstrap", baseline="copy")
    a = styleval.score(example_records, ["chrf"], options=options)
    b = styleval.score(example_records, ["chrf"], bootstrap=80, seed=3, significance="paired-bootstrap",
                       baseline="copy")
    assert a.settings == b.settings and a.settings["bootstrap"] == 80 and a.settings["baseline"] == "copy"
    assert [r.ci for r in a] == [r.ci for r in b] and a.comparisons == b.comparisons
    with pytest.raises(InputError, match="significance must be one of"):
        StatisticsOptions(significance="t-test")
    with pytest.raises(TypeError, match="bootstrapp"):
        styleval.score(example_records, ["chrf"], bootstrapp=10)


def test_engine_modules_do_not_import_each_other():
    """Worker and driver are modules of their own; the stream engine, the Ray engine and the two CLI commands do
    not import each other in a cycle, and nothing in the engine reaches into styleval.scoring."""
    import ast
    from pathlib import Path

    root = Path(styleval.__file__).parent

    def imports(rel: str) -> set[str]:
        tree = ast.parse((root / rel).read_text(encoding="utf-8"))
        return {(n.module or "") for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)} | \
               {a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and not n.module for a in n.names}

    assert "stream" not in imports("engine/ray_engine.py") and ".stream" not in imports("engine/ray_engine.py")
    assert "score_cmd" not in imports("cli/stream_cmd.py") and ".score_cmd" not in imports("cli/stream_cmd.py")
    for module in (root / "engine").glob("*.py"):
        assert not any(m.endswith("scoring") for m in imports(f"engine/{module.name}")), module.name
