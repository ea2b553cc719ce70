"""Metric identity, unique names, output destinations and composite overall metrics (issue #19)."""
from __future__ import annotations

import errno
import json
import os

import numpy as np
import pandas as pd
import pytest
import sacrebleu

import styleval
from styleval.cli.main import main
from styleval.errors import InputError, OutputError
from styleval.examples import get
from styleval.metrics import registry
from styleval.metrics.identity import MetricId, assign_labels
from styleval.outputs import atomic_writer, check_destinations, write_text
from styleval.readers import read_system_dir
from styleval.records import Record
from styleval.engine.options import StatisticsOptions

NO_CI = StatisticsOptions(bootstrap=0)  # no intervals: these tests look at scores


@pytest.fixture(scope="module")
def example():
    ex = get("formality")
    return ex, read_system_dir(ex.systems_dir, ex.source, ex.references, direction=ex.direction)


def _refs_by_system(records):
    systems: dict[str, list[Record]] = {}
    for r in records:
        systems.setdefault(r.system, []).append(r)
    return systems


# -- names that cannot collide ------------------------------------------------------------------------------
def test_two_parameterisations_get_two_named_columns_in_table_csv_and_json(example, tmp_path, capsys):
    ex, records = example
    out_json, out_csv, seg_csv = tmp_path / "s.json", tmp_path / "c.csv", tmp_path / "seg.csv"
    rc = main(["score", "--example", "formality", "-m", "chrf,chrf:beta=1", "--against", "references",
               "--bootstrap", "0", "--no-progress", "--json", str(out_json), "--csv", str(out_csv),
               "--segments-csv", str(seg_csv)])
    assert rc == 0
    table = capsys.readouterr().out
    assert "chrf[beta=2]/ref" in table and "chrf[beta=1]/ref" in table
    data = json.loads(out_json.read_text())
    labels = {c["metric"] for c in data["corpus"]}
    assert labels == {"chrf[beta=2]/ref", "chrf[beta=1]/ref"}
    corpus = pd.read_csv(out_csv)
    assert set(corpus["metric"]) == labels and len(corpus) == 2 * 3
    seg = pd.read_csv(seg_csv)
    n_segments = len(records) // 3
    assert len(seg) == 2 * 3 * n_segments  # one row per (metric, system, segment): nothing merged
    # each column equals sacrebleu's chrF with that beta (a reference implementation side by side)
    for system, recs in _refs_by_system(records).items():
        hyps = [r.output for r in recs]
        refs = [list(x) for x in zip(*[r.references for r in recs])]
        for beta in (2, 1):
            want = sacrebleu.metrics.CHRF(beta=beta).corpus_score(hyps, refs).score
            got = next(c["score"] for c in data["corpus"]
                       if c["metric"] == f"chrf[beta={beta}]/ref" and c["system"] == system)
            assert got == pytest.approx(want, abs=1e-9)
        entry = next(c for c in data["corpus"] if c["metric"] == "chrf[beta=1]/ref" and c["system"] == system)
        assert entry["metric_id"]["params"]["beta"] == "1" and entry["metric_id"]["against"] == "references"


def test_labels_show_only_what_tells_metrics_apart():
    bleu = registry.create("bleu", against="source")
    lower = registry.create("bleu", against="source", lowercase=True)
    chrf = registry.create("chrf", against="source")
    ids = assign_labels([bleu.metric_id, lower.metric_id, chrf.metric_id])
    assert [i.label for i in ids] == ["bleu[lowercase=false]/src", "bleu[lowercase=true]/src", "chrf/src"]
    alone = assign_labels([bleu.metric_id])
    assert alone[0].label == "bleu/src"  # no collision: the short name every existing table uses


def test_the_same_metric_twice_is_an_error_naming_both_specs():
    recs = [Record("1", "i luv it", "I love it.", ["I love it."], system="A")]
    with pytest.raises(InputError, match=r"chrf:beta=2"):
        styleval.score(recs, ["chrf", "chrf:beta=2"], options=NO_CI)


def test_metric_id_equality_ignores_display_choices():
    a = MetricId("bleu", (("lowercase", "false"),), "source")
    b = MetricId("bleu", (("lowercase", "false"),), "source", shown=("lowercase",))
    assert a == b and hash(a) == hash(b) and a.label != b.label


def test_two_systems_with_one_name_are_an_error_naming_both_files(example, capsys):
    ex, _ = example
    files = sorted(p for p in ex.systems_dir.iterdir() if p.is_file())
    rc = main(["score", "--source", str(ex.source), "--system", f"A={files[0]}", "--system", f"A={files[1]}",
               "-m", "bleu", "--bootstrap", "0", "--no-progress"])
    err = capsys.readouterr().err
    assert rc == 2 and files[0].name in err and files[1].name in err and "'A'" in err


def test_engine_refuses_a_segment_id_twice_in_one_system():
    recs = [Record("1", "a b", "a b", system="A"), Record("1", "c d", "c d", system="A")]
    with pytest.raises(InputError, match="segment id '1' twice"):
        styleval.score(recs, ["bleu"], options=NO_CI)


def test_one_segment_id_check_names_both_places_in_memory_and_streaming(tmp_path):
    """``score`` (before any model runs) and ``score_stream`` (after the reduction) go through the same check: the
    second place is the error's location, the first is in the message."""
    from styleval.engine import StreamOptions, score_stream

    recs = [Record(i, "a b", "a b", system=s) for i, s in (("1", "A"), ("1", "B"), ("2", "A"), ("1", "A"))]
    with pytest.raises(InputError) as err:
        styleval.score(recs, ["bleu"], options=NO_CI)
    assert (err.value.path, err.value.line) == ("records", 4)
    assert "system 'A' has segment id '1' twice (first on records:1)" in str(err.value)
    table = tmp_path / "dup.tsv"
    table.write_text("id\tsystem\tsource\toutput\n" + "".join(f"{r.id}\t{r.system}\ta b\ta b\n" for r in recs),
                     encoding="utf-8")
    with pytest.raises(InputError) as err:
        score_stream(table, ["bleu"], against=["source"], options=NO_CI, stream=StreamOptions(chunk_size=2))
    assert (err.value.path, err.value.line) == (str(table), 5)
    assert f"system 'A' has a segment id twice (first on {table}:2)" in str(err.value)


# -- output destinations --------------------------------------------------------------------------------------
def test_bad_destinations_fail_before_any_scoring(tmp_path, monkeypatch, capsys):
    import styleval.cli.score_cmd as score_cmd

    def no_scoring(*a, **k):
        raise AssertionError("scoring started before the destinations were checked")

    monkeypatch.setattr(score_cmd, "score", no_scoring)
    for bad, why in ((tmp_path / "missing" / "x.json", "does not exist"), (tmp_path, "is a folder")):
        rc = main(["score", "--example", "formality", "-m", "bleu", "--json", str(bad), "--no-progress"])
        err = capsys.readouterr().err
        assert rc == 2 and why in err and "Traceback" not in err


def test_two_outputs_to_one_file_are_refused(tmp_path):
    with pytest.raises(OutputError, match="two outputs"):
        check_destinations(tmp_path / "a.csv", tmp_path / "a.csv")


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    target = tmp_path / "scores.json"
    target.write_text("old", encoding="utf-8")

    def full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(OutputError, match="No space left"):
        write_text(target, "new " * 1000)
    assert target.read_text(encoding="utf-8") == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["scores.json"]


def test_atomic_writer_replaces_only_on_success(tmp_path):
    target = tmp_path / "t.txt"
    with pytest.raises(RuntimeError):
        with atomic_writer(target) as fh:
            fh.write("partial")
            raise RuntimeError("interrupted")
    assert not target.exists() and list(tmp_path.iterdir()) == []
    with atomic_writer(target) as fh:
        fh.write("whole")
    assert target.read_text() == "whole"


# -- significance marks ------------------------------------------------------------------------------------
def test_all_pairs_marks_name_every_system_beaten(example):
    from styleval.cli.score_table import format_table, significance_marks

    _, records = example
    result = styleval.score(records, ["bleu:against=references"],
                            options=StatisticsOptions(bootstrap=200, significance="paired-bootstrap"))
    marks = significance_marks(result)
    # rewrite (b) is far above copy (a) and tidy (c) on BLEU/ref; the mark names both, not only the last pair
    assert marks[("bleu/ref", "rewrite")] == "^ac"
    for c in result.comparisons:
        assert c.p_value < 0.05
    assert "rewrite (b)" in format_table(result)


# -- composite overall metrics -------------------------------------------------------------------------------
def test_hm_gm_j_from_component_statistics(example):
    _, records = example
    res = styleval.score(records, ["pinc", "bleu:against=references", "chrf:against=source",
                                   "hm:style=pinc,content=bleu/ref", "gm:style=pinc,content=bleu/ref",
                                   "j:style=pinc,similarity=chrf/src,fluency=none"], options=NO_CI)
    for system in res.systems:
        s = res.get("pinc/src", system).corpus_score
        c = res.get("bleu/ref", system).corpus_score / 100.0
        assert res.get("hm", system).corpus_score == pytest.approx(2 * s * c / (s + c))
        assert res.get("gm", system).corpus_score == pytest.approx(np.sqrt(s * c))
        sta = np.clip(res.get("pinc/src", system).segment_scores, 0, 1)
        sim = np.clip(res.get("chrf/src", system).segment_scores / 100.0, 0, 1)
        assert res.get("j", system).corpus_score == pytest.approx(float(np.mean(sta * sim)))
        np.testing.assert_allclose(res.get("j", system).segment_scores, sta * sim)


def test_composite_alone_equals_composite_beside_its_components(example):
    _, records = example
    alone = styleval.score(records, ["hm:style=pinc,content=bleu/ref"], options=StatisticsOptions(bootstrap=300))
    beside = styleval.score(records, ["pinc", "bleu:against=references", "hm:style=pinc,content=bleu/ref"],
                            options=StatisticsOptions(bootstrap=300))
    for system in alone.systems:
        a, b = alone.get("hm", system), beside.get("hm", system)
        assert a.corpus_score == pytest.approx(b.corpus_score)
        assert a.ci == pytest.approx(b.ci)
        assert "content:bleu:" in str(a.signature) and "against=references" in str(a.signature)


def test_overall_scale_comes_from_the_declared_range():
    bleu = registry.create("bleu", against="source")
    cos = registry.metric_class("sentence_cosine")
    np.testing.assert_allclose(bleu.to_unit([50.0, 120.0]), [0.5, 1.0])
    assert cos.unit_range == (0.0, 1.0)
    with pytest.raises(InputError, match="no map to"):
        registry.create("ter", against="source").to_unit([10.0])


def test_rt_combined_refuses_components_off_the_paper_scales():
    m = registry.create("rt_combined", formality="pinc", fluency="pinc", meaning="pinc")
    recs = [Record("1", "a b c", "a b d", system="A")]
    with pytest.raises(InputError, match="paper's formality scale"):
        styleval.score(recs, [m], options=NO_CI)


# -- optional dependencies -------------------------------------------------------------------------------------
def test_missing_optional_package_is_one_line_naming_the_extra(monkeypatch, capsys):
    import styleval.cli.metrics_cmd as metrics_cmd

    def missing(args):
        raise ModuleNotFoundError("No module named 'spacy'", name="spacy")

    monkeypatch.setattr(metrics_cmd, "run", missing)
    rc = main(["metrics"])
    err = capsys.readouterr().err
    assert rc == 2 and "styleval[nlp]" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
