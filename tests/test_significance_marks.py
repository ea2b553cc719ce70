"""Significance marks: against a baseline they show the direction (▲ better, ▼ worse, as the metric counts better);
all pairs name the systems beaten; one legend explains both, under every table that can carry marks."""
from __future__ import annotations

import pytest

import styleval
from styleval.cli.main import main
from styleval.cli.score_table import format_table, significance_marks, table_legend
from styleval.engine.options import StatisticsOptions
from styleval.evaluation.summary import BETTER, WORSE, aspect_rows, baseline_mark, legend
from styleval.examples import get
from styleval.readers import read_system_dir


def _comp(metric: str, delta: float, p: float) -> dict:
    return {"metric": metric, "system": "B", "baseline": "A", "delta": delta, "p_value": p}


@pytest.mark.parametrize("delta,higher_is_better,mark", [(2.0, True, BETTER), (-2.0, True, WORSE),
                                                         (-2.0, False, BETTER), (2.0, False, WORSE)])
def test_baseline_mark_follows_the_metric_direction(delta, higher_is_better, mark):
    assert baseline_mark([_comp("m", delta, 0.01)], "m", "B", higher_is_better) == mark
    assert baseline_mark([_comp("m", delta, 0.2)], "m", "B", higher_is_better) == ""  # not significant
    assert baseline_mark([_comp("m", delta, 0.01)], "other", "B", higher_is_better) == ""


@pytest.fixture(scope="module")
def records():
    ex = get("formality")
    return read_system_dir(ex.systems_dir, ex.source, ex.references, direction=ex.direction)


def test_score_table_against_a_baseline(records):
    result = styleval.score(records, ["bleu:against=references", "ter", "pinc"],
                            options=StatisticsOptions(bootstrap=100, significance="paired-bootstrap",
                                                      baseline="copy"))
    marks = significance_marks(result)
    # rewrite moves far from the copy: closer to the references (BLEU up, TER/ref down: both better) and further
    # from the source (TER/src up: worse, as TER counts it; PINC up: better)
    assert result.get("ter/ref", "rewrite").corpus_score < result.get("ter/ref", "copy").corpus_score
    assert marks[("bleu/ref", "rewrite")] == BETTER and marks[("ter/ref", "rewrite")] == BETTER
    assert marks[("ter/src", "rewrite")] == WORSE and marks[("pinc/src", "rewrite")] == BETTER
    assert not any(system == "copy" for _, system in marks)
    table = format_table(result)
    assert f"{BETTER}" in table and f"{WORSE}" in table and "*" not in table
    text = table_legend(result)
    assert "▲/▼: significantly better/worse than the baseline 'copy'" in text and "^ac" in text
    assert "lower for ↓" in text and "±: half-width of the 95% bootstrap CI" in text


def test_all_pairs_legend_explains_both_marks(records, capsys):
    assert main(["score", "--example", "formality", "-m", "bleu", "--against", "references", "--bootstrap", "100",
                 "--significance", "paired-bootstrap", "--no-progress"]) == 0
    out = capsys.readouterr().out
    row = out.splitlines()[1]
    assert row.startswith("bleu/ref") and "^ac" in row  # rewrite (b) beats copy (a) and tidy (c) on BLEU/ref
    legend_lines = [line for line in out.splitlines() if line.startswith("^ac: significantly better")]
    assert len(legend_lines) == 1 and "▲/▼ (with --baseline)" in legend_lines[0]


def test_stream_prints_the_legend_too(tmp_path, capsys):
    table = tmp_path / "t.tsv"
    table.write_text("system\tid\tsource\toutput\n" + "".join(
        f"{s}\t{i}\tgonna go now {i}\t{o} {i}\n" for s, o in (("A", "gonna go now"), ("B", "I am going to leave now"))
        for i in range(12)), encoding="utf-8")
    assert main(["score", "--stream", "--input", str(table), "-m", "pinc", "--bootstrap", "50",
                 "--significance", "paired-bootstrap", "--baseline", "A", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert f"{BETTER}" in out and "▲/▼: significantly better/worse than the baseline 'A'" in out


def _evaluation_data(baseline: str | None, delta: float) -> dict:
    corpus = [{"metric": "ter/src", "system": s, "score": v, "ci": None, "higher_is_better": False}
              for s, v in (("A", 40.0), ("B", 40.0 + delta))]
    comparisons = [{"metric": "ter/src", "system": "B", "baseline": "A", "delta": delta, "p_value": 0.001}]
    return {"score": {"corpus": corpus, "comparisons": comparisons,
                      "settings": {"systems": ["A", "B"], "significance": "paired-bootstrap", "baseline": baseline,
                                   "bootstrap": 0}},
            "aspects": {"content": ["ter/src"]}, "overall": []}


@pytest.mark.parametrize("delta,mark", [(-10.0, BETTER), (10.0, WORSE)])
def test_evaluation_tables_mark_direction_against_a_baseline(delta, mark):
    data = _evaluation_data("A", delta)
    (row,) = aspect_rows(data, "content")
    assert row["cells"]["B"]["marks"] == mark and row["cells"]["B"]["text"].endswith(f" {mark}")
    assert row["cells"]["A"]["marks"] == ""
    assert "▲/▼: significantly better/worse than the baseline 'A'" in legend(data)


def test_evaluation_tables_name_the_beaten_systems_for_all_pairs():
    data = _evaluation_data(None, -10.0)
    (row,) = aspect_rows(data, "content")
    assert row["cells"]["B"]["marks"] == "^a" and row["cells"]["A"]["marks"] == ""
    assert legend(data).startswith("^ac: significantly better than the systems in columns a and c")
