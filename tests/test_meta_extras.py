"""styleval.meta: joining, edge cases, CIs, significance, curves, direction splits, number of references."""
from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from styleval import Record
from styleval.errors import InputError
from styleval.meta import Judgments, MetaRunOptions, MetaTask, run
from styleval.meta.analysis import curves_frame, expand_tasks, results_frame, run_tasks
from styleval.meta.references import correlation_by_reference_count, score_with_k_references
from styleval.meta.scores import (lower_is_better_from_registry, metric_table_from_result, read_metric_file,
                                  read_metric_table)
from styleval.report.tables import latex_escape, latex_table, text_table
from styleval.stats import top_n_correlations, williams_test

SYSTEMS = ["s1", "s2", "s3", "s4", "s5"]
RNG = np.random.default_rng(1)
HUMAN = RNG.uniform(0, 100, size=(5, 8))
GOOD = HUMAN / 100 + RNG.normal(0, 0.15, HUMAN.shape)
POOR = HUMAN / 100 + RNG.normal(0, 0.6, HUMAN.shape)


def _judgments(human=HUMAN, systems=SYSTEMS):
    recs = []
    for si, s in enumerate(systems):
        for k in range(human.shape[1]):
            d = "a->b" if k < human.shape[1] // 2 else "b->a"
            for a, off in (("r1", 1.0), ("r2", -1.0)):
                recs.append({"system": s, "segment": k, "annotator": a, "aspect": "content",
                             "score": float(human[si, k] + off), "direction": d})
    return Judgments.from_records(recs)


def _table(**metrics):
    rows = [(s, str(k), name, float(v[si, k])) for name, v in metrics.items()
            for si, s in enumerate(SYSTEMS[:v.shape[0]]) for k in range(v.shape[1])]
    return pd.DataFrame(rows, columns=["system", "segment", "metric", "score"])


SYS = MetaTask("content", level="system", method="pearson")


# ---------------------------------------------------------------------------------------------- joining
def test_unmatched_rows_are_an_error_naming_counts_and_examples():
    table = _table(good=GOOD)
    table.loc[table["segment"] == "3", "segment"] = "03"
    extra = pd.DataFrame([("zz", "0", "good", 0.5)], columns=table.columns)
    with pytest.raises(InputError) as err:
        run(SYS, _judgments(), pd.concat([table, extra]))
    msg = str(err.value)
    assert "6 of 41 metric score row(s)" in msg and "good: 6" in msg
    assert "'zz'" in msg and "segment='03'" in msg and "leading zeros" in msg
    res = run(SYS, _judgments(), pd.concat([table, extra]), options=MetaRunOptions(unmatched="report"))
    assert res.options["metrics"]["good"]["n_unmatched"] == 6
    assert any("without a human score" in n for n in res.notes["good"])


def test_excluded_systems_are_not_unmatched():
    j = _judgments().filter(systems=SYSTEMS[:4])
    with pytest.raises(InputError, match="systems without human scores: 's5'"):
        run(SYS, j, _table(good=GOOD))
    assert run(SYS.with_(exclude=("s5",)), j, _table(good=GOOD)).results["good"].n == 4


def test_nan_scores_are_dropped_and_counted_or_raise():
    table = _table(good=GOOD)
    table.loc[[0, 7], "score"] = np.nan
    res = run(MetaTask("content", method="pearson"), _judgments(), table)
    assert res["good"].n == 38 and res.options["metrics"]["good"]["n_nan_dropped"] == 2
    assert "2 missing (NaN) metric score(s) left out" in res.notes["good"]
    with pytest.raises(InputError, match="2 missing"):
        run(MetaTask("content"), _judgments(), table, options=MetaRunOptions(nan="raise"))


# ---------------------------------------------------------------------------------------------- edge cases
def test_constant_metric_gives_nan_with_a_note():
    res = run(SYS, _judgments(), _table(flat=np.ones_like(GOOD), good=GOOD),
              options=MetaRunOptions(significance="williams"))
    assert math.isnan(res.statistic("flat")) and "constant" in res.notes["flat"][0]
    assert res.best == "good"


def test_all_human_ties_segment_level():
    human = np.repeat(np.arange(8.0)[None, :], 5, axis=0)  # every system equal on every input
    task = MetaTask("content", method="kendall_tau_like", average_by="item")
    res = run(task, _judgments(human), _table(good=GOOD))
    assert math.isnan(res.statistic("good")) and "undefined for all 8 groups" in res.notes["good"][0]


def test_two_systems_and_one_system():
    j = _judgments()
    two = run(SYS.with_(systems=("s1", "s2")), j, _table(good=GOOD),
              options=MetaRunOptions(significance="williams", unmatched="report"))
    assert abs(two.statistic("good")) == pytest.approx(1.0)
    assert any("only 2 systems" in n for n in two.notes["good"])
    with pytest.raises(InputError, match="at least 2 systems"):
        run(SYS.with_(systems=("s1",)), j, _table(good=GOOD), options=MetaRunOptions(unmatched="report"))


def test_unknown_direction_is_a_clear_error():
    with pytest.raises(InputError, match="directions: a->b, b->a"):
        run(MetaTask("content", direction="x->y"), _judgments(), _table(good=GOOD))


# ---------------------------------------------------------------------------------------------- statistics
def test_williams_against_best_matches_the_formula():
    res = run(SYS, _judgments(), _table(good=GOOD, poor=POOR), options=MetaRunOptions(significance="williams"))
    assert res.best == "good"
    h, g, p = HUMAN.mean(1), GOOD.mean(1), POOR.mean(1)
    r12, r13, r23 = stats.pearsonr(h, g)[0], stats.pearsonr(h, p)[0], stats.pearsonr(g, p)[0]
    t, pval = williams_test(r12, r13, r23, 5)
    assert res.tests["poor"]["williams"]["pvalue"] == pytest.approx(pval)
    assert res.tests["poor"]["williams"]["t"] == pytest.approx(t)
    frame = res.to_frame()
    assert frame.set_index("metric").loc["good", "best"] and "williams_p" in frame


def test_permutation_and_ci_segment_level():
    task = MetaTask("content", method="kendall_tau_like", average_by="item")
    res = run(task, _judgments(), _table(good=GOOD, poor=POOR),
              options=MetaRunOptions(significance="both", n_permutations=50, ci=50))
    assert "not_applicable" in res.tests["poor"]["williams"]
    perm = res.tests["poor"]["permutation"]
    assert 0 <= perm["pvalue"] <= 1 and perm["delta"] == pytest.approx(res.statistic("good") -
                                                                       res.statistic("poor"))
    for metric in ("good", "poor"):
        ci = res.cis[metric]
        assert ci.low <= res.statistic(metric) <= ci.high and ci.n_resamples == 50
    d = json.loads(json.dumps(res.to_dict()))
    assert d["metrics"]["poor"]["vs_best"]["permutation"]["n_resamples"] == 50


def test_top_n_curves_match_stats():
    res = run(SYS, _judgments(), _table(good=GOOD), options=MetaRunOptions(curves=True))
    top, last = top_n_correlations(GOOD.mean(1), HUMAN.mean(1))
    for which, expected in (("top", top), ("last", last)):
        got = res.curves["good"][which]
        assert [n for n, _ in got] == [n for n, _ in expected] == [3, 4, 5]
        assert [r for _, r in got] == pytest.approx([r for _, r in expected])
    with pytest.raises(InputError, match="system-level"):
        run(MetaTask("content"), _judgments(), _table(good=GOOD), options=MetaRunOptions(curves=True))


def test_expand_tasks_and_direction_split():
    j = _judgments()
    tasks = expand_tasks(MetaTask("content", method="kendall_tau_like", average_by="item"), j,
                         levels=("segment", "system"), directions="all", system_method="pearson")
    assert [(t.level, t.direction) for t in tasks] == [("segment", "both"), ("segment", "a->b"),
                                                       ("segment", "b->a"), ("system", "both"),
                                                       ("system", "a->b"), ("system", "b->a")]
    assert tasks[3].method == "pearson" and tasks[3].average_by == "none"
    results = run_tasks(tasks, j, _table(good=GOOD), options=MetaRunOptions(curves=True))
    half = run(MetaTask("content", method="pearson", level="system", direction="a->b"), j, _table(good=GOOD))
    assert results[4].statistic("good") == pytest.approx(half.statistic("good"))
    assert results[4].statistic("good") == pytest.approx(stats.pearsonr(GOOD[:, :4].mean(1),
                                                                        HUMAN[:, :4].mean(1))[0])
    frame = results_frame(results)
    assert len(frame) == 6 and set(frame["direction"]) == {"both", "a->b", "b->a"}
    assert set(curves_frame(results)["which"]) == {"top", "last"}


# ---------------------------------------------------------------------------------------------- reading tables
def test_read_metric_tables(tmp_path):
    csv = tmp_path / "m.csv"
    pd.DataFrame({"system": ["a", "a"], "id": [1, 2], "metric": ["ter", "ter"], "score": ["0.5", ""],
                  "higher_is_better": ["false", "false"]}).to_csv(csv, index=False)
    table, lower = read_metric_file(csv)
    assert list(table["segment"]) == ["1", "2"] and math.isnan(table["score"].iloc[1]) and lower == {"ter"}
    jsonl = tmp_path / "m.jsonl"
    jsonl.write_text('{"system": "a", "segment": 7, "metric": "x", "score": 1}\n', encoding="utf-8")
    assert read_metric_table(jsonl)["segment"].tolist() == ["7"]
    bad = tmp_path / "bad.csv"
    bad.write_text("system,segment,metric,score\na,1,x,high\n", encoding="utf-8")
    with pytest.raises(InputError, match="'high' is not a number"):
        read_metric_table(bad)
    dup = tmp_path / "dup.csv"
    dup.write_text("system,segment,metric,score\na,1,x,1\na,1,x,2\n", encoding="utf-8")
    with pytest.raises(InputError, match="repeat"):
        read_metric_table(dup)
    with pytest.raises(InputError, match="lacks column"):
        read_metric_table(tmp_path / "m.csv", format="tsv")
    assert lower_is_better_from_registry(["wmd/src", "bleu/ref", "ter", "unknown", "src:wmd", "ref:bleu"]) == {
        "wmd/src", "ter", "src:wmd"}


def _records(nrefs=2):
    outs = {"A": ["the cat sat on the mat", "a dog barks", "hello there friend"],
            "B": ["cat mat", "dog", "hi"]}
    refs = [["the cat sat on a mat", "a cat was on the mat"], ["a dog is barking", "the dog barks"],
            ["hello friend", "hello there my friend"]]
    return [Record(str(i), src, o, refs[i][:nrefs], system=s)
            for s, texts in outs.items() for i, (src, o) in enumerate(zip(["x y", "z w", "u v"], texts))]


def test_score_json_round_trip(tmp_path):
    from styleval import score

    result = score(_records(), ["bleu", "ter"], against=["references"], bootstrap=0)
    path = tmp_path / "s.json"
    result.write_json(path)
    table, lower = read_metric_file(path)
    assert lower == {"ter/ref"} and set(table["metric"]) == {"bleu/ref", "ter/ref"}
    pd.testing.assert_frame_equal(table.sort_values(["metric", "system", "segment"]).reset_index(drop=True),
                                  metric_table_from_result(result).sort_values(
                                      ["metric", "system", "segment"]).reset_index(drop=True))


def test_number_of_references():
    tables = score_with_k_references(_records(), ["bleu"], [1, 2])
    assert set(tables) == {1, 2} and set(tables[1]["metric"]) == {"bleu/ref"}
    assert not np.allclose(tables[1]["score"], tables[2]["score"])
    with pytest.raises(InputError, match="6 of 6 records have fewer than 3 references"):
        score_with_k_references(_records(), ["bleu"], [3])
    human = pd.DataFrame({"system": ["A"] * 3 + ["B"] * 3, "segment": ["0", "1", "2"] * 2,
                          "score": [90, 80, 85, 20, 10, 30.0]})
    frame = correlation_by_reference_count(MetaTask("content", method="pearson"), human, tables)
    assert list(frame["k"]) == [1, 2] and frame["statistic"].notna().all()


def test_report_tables():
    text = text_table(["metric", "r"], [["bleu", "0.292"], ["bertscore", "0.5"]])
    assert text.splitlines()[2].endswith("0.292")
    assert latex_escape("kendall_tau_like & 50%") == r"kendall\_tau\_like \& 50\%"
    tex = latex_table(["m", "r"], [["a_b", "0.1"]], caption="c", bold=[(0, 1)])
    assert r"a\_b & \textbf{0.1} \\" in tex and tex.count(r"\begin{tabular}{lr}") == 1
