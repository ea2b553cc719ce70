"""The human ceiling, one rater against the rest and agreement strata of a meta-evaluation task, on synthetic raters
of known noise (rounded to a 1-5 scale, so the humans tie often, as real raters do) and on Lai et al. (2022), whose
release keeps each rater's score; and every fault the issue lists."""
from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from styleval.cli.main import main as cli_main
from styleval.errors import InputError
from styleval.meta import Judgments, MetaTask, run
from styleval.meta.ceiling import agreement_strata, rating_cube, task_ceiling
from styleval.meta.conventions import LAI2022_SEGMENT
from styleval.meta.planning import PlanOptions, study_plan
from styleval.stats import segment_level


def synthetic(n_systems: int = 8, n_items: int = 120, k: int = 3, sd: float = 0.8, seed: int = 0,
              aspect: str = "content") -> tuple[Judgments, pd.DataFrame]:
    """Raters score truth + noise, rounded and clipped to 1..5; the truth itself is the metric ``oracle``."""
    rng = np.random.default_rng(seed)
    truth = 3 + rng.normal(size=(n_systems, n_items))
    rows, metric = [], []
    for s in range(n_systems):
        for i in range(n_items):
            for r in rng.choice(6, size=k, replace=False):
                score = float(np.clip(np.round(truth[s, i] + rng.normal(scale=sd)), 1, 5))
                rows.append({"system": f"s{s}", "segment": str(i), "annotator": f"r{r}", "aspect": aspect,
                             "score": score})
            metric.append({"system": f"s{s}", "segment": str(i), "metric": "oracle", "score": truth[s, i]})
    return Judgments.from_records(rows), pd.DataFrame(metric)


@pytest.mark.parametrize("convention", ["lai2022", "pooled pearson"])
def test_a_perfect_metric_reaches_the_ceiling_on_tied_ratings(convention):
    human, metric = synthetic()
    task = MetaTask("content", **LAI2022_SEGMENT) if convention == "lai2022" else MetaTask("content")
    oracle = run(task, human, metric).statistic("oracle")
    ceiling = task_ceiling(task, human, ci=100)
    low, high = ceiling.interval("ceiling")
    assert low <= oracle <= high, (oracle, low, high)
    assert abs(ceiling.ceiling - oracle) < 0.04
    assert 0.95 < ceiling.share(oracle) < 1.06
    assert ceiling.one_rater < ceiling.ceiling  # one rater is a worse "metric" than the truth


def test_a_perfect_metric_reaches_the_ceiling_of_a_pooled_kendall():
    """WMT's pooled tau-like over every pair of cells (human ties skipped): the pooled pairwise ceiling."""
    human, metric = synthetic(n_items=50, seed=4)
    task = MetaTask("content", method="kendall_tau_like", average_by="none")
    oracle = run(task, human, metric).statistic("oracle")
    ceiling = task_ceiling(task, human, ci=50)
    low, high = ceiling.interval("ceiling")
    assert low <= oracle <= high and abs(ceiling.ceiling - oracle) < 0.04, (oracle, ceiling.ceiling, low, high)


def test_lai2022_one_rater_figure_is_each_rater_against_the_other(shared_data):
    from styleval.meta.datasets import load_lai2022

    human = load_lai2022(shared_data, source="txt").judgments
    task = MetaTask("content", exclude=("ref",), **LAI2022_SEGMENT)
    got = task_ceiling(task, human, ci=0)
    cube = rating_cube(task, human)
    assert cube.cube.shape == (8, 80, 8) and (cube.per_cell == 2).all()  # 4 surveys x 2 raters, 2 per cell
    figures, weights = [], []
    for j in range(8):
        mine = cube.cube[:, :, j]
        other = np.nansum(np.delete(cube.cube, j, axis=2), axis=2)
        other = np.where(np.isnan(mine), np.nan, other)
        figures.append(segment_level(mine, other, method="kendall_tau_like", average_by="item", nan_policy="omit",
                                     human_ties="skip", metric_ties="discordant").statistic)
        weights.append(int((~np.isnan(mine)).sum()))
    assert got.one_rater == pytest.approx(np.average(figures, weights=weights), abs=1e-12)
    assert 0.3 < got.one_rater < got.ceiling < 1
    assert got.to_dict()["raters"][0]["rater"] == "survey1/rater1"


def test_one_score_per_item_says_so():
    human, _ = synthetic(k=1)
    mean_only = Judgments.from_records([{**r, "annotator": "mean3"} for r in human.frame.to_dict("records")])
    got = task_ceiling(MetaTask("content"), mean_only)
    assert got.single and math.isnan(got.ceiling)
    assert "one score per item" in got.describe()[0] and got.to_dict()["available"] is False


def test_faults_each_get_a_clear_result():
    human, metric = synthetic(n_items=40, k=2)
    frame = human.frame
    # a rater who judged a single cell, which nobody else judged: no figure, a note; the rest stands
    lonely = {"system": "s0", "segment": "0", "annotator": "solo", "aspect": "content", "score": 3.0}
    # items with one rater among items with several
    cut = frame[~((frame["segment"].isin(["1", "2", "3"])) & (frame["annotator"] == frame.groupby(
        ["system", "segment"])["annotator"].transform("first")))]
    # a constant rater
    constant = cut.assign(score=np.where(cut["annotator"] == "r5", 4.0, cut["score"]))
    mixed = Judgments.from_frame(pd.concat([constant, pd.DataFrame([lonely])], ignore_index=True))
    got = task_ceiling(MetaTask("content"), mixed, ci=50)
    text = " ".join(got.notes)
    assert "have one rating: left out of the split halves" in text
    assert "rater r5: constant scores: no figure" in text
    assert "rater solo: judged a single cell that another rater judged too: no correlation: no figure" in text
    assert not math.isnan(got.ceiling) and not math.isnan(got.one_rater)
    # ties everywhere: every rating equal: no ceiling, said so
    tied = Judgments.from_frame(frame.assign(score=3.0))
    everything_tied = task_ceiling(MetaTask("content", **LAI2022_SEGMENT), tied, ci=20)
    assert math.isnan(everything_tied.ceiling)
    assert "undefined" in " ".join(everything_tied.notes)


def test_nan_and_anonymous_judgments_are_refused_with_file_and_line(tmp_path):
    path = tmp_path / "h.csv"
    path.write_text("system,segment,annotator,aspect,score\na,1,r1,content,3\na,1,r2,content,nan\n")
    with pytest.raises(InputError, match=r"h.csv:3: score .nan. is not a finite number"):
        Judgments.read(path)
    anonymous = tmp_path / "anon.csv"
    anonymous.write_text("system,segment,aspect,score\na,1,content,3\n")
    with pytest.raises(InputError, match="missing column 'annotator'"):
        Judgments.read(anonymous)


def test_strata_split_at_the_median_and_flag_a_rank_change():
    """Metric A follows the truth where the raters agree, B where they do not: their ranks swap."""
    human, metric = synthetic(n_items=60, k=2, seed=3)
    task = MetaTask("content", **LAI2022_SEGMENT)
    cube = rating_cube(task, human)
    spread = np.nanmean(np.where(cube.per_cell >= 2, np.nanstd(cube.cube, axis=2), np.nan), axis=0)
    agree = {seg for seg, d in zip(cube.segments, spread) if d <= np.median(spread)}
    truth = metric.set_index(["system", "segment"])["score"]
    rng = np.random.default_rng(1)
    rows = []
    for (system, segment), value in truth.items():
        noisy = value + rng.normal(scale=3.0)
        rows.append({"system": system, "segment": segment, "metric": "A",
                     "score": value if segment in agree else noisy})
        rows.append({"system": system, "segment": segment, "metric": "B",
                     "score": noisy if segment in agree else value})
    result = run(task, human, pd.DataFrame(rows))
    strata = agreement_strata(result, human, ci=50)
    assert strata.unit == "input" and strata.sizes == {"agree": len(agree), "disagree": 60 - len(agree)}
    assert strata.ranks["A"] == {"agree": 1, "disagree": 2} and strata.ranks["B"] == {"agree": 2, "disagree": 1}
    assert strata.rank_changes == ["A", "B"]
    a_agree = strata.figures["A"]["agree"]
    assert a_agree[1] <= a_agree[0] <= a_agree[2]
    assert any("RANK CHANGES" in line for line in strata.describe())
    with pytest.raises(InputError, match="system-level"):
        agreement_strata(run(task.with_(level="system", method="pearson", average_by="none"), human, metric), human)


def test_a_plan_from_a_synthetic_pilot_and_its_faults():
    human, _ = synthetic(n_systems=3, n_items=60, k=2, seed=5)
    options = PlanOptions(delta=0.5, items=(20, 80), raters=(1, 3), n_studies=200, n_resamples=200)
    plan = study_plan(human, "content", options)
    assert plan.power[(80, 3)] > plan.power[(20, 1)]
    best = plan.smallest
    assert best is not None and plan.power[best] >= 0.8
    assert any("smallest design" in line for line in plan.describe())
    assert plan.to_dict()["smallest_design"]["items"] == best[0]
    with pytest.raises(InputError, match="power of 1 needs infinitely many"):
        PlanOptions(delta=1.0, power=1.0)
    with pytest.raises(InputError, match="D of 0"):
        PlanOptions(delta=0.0)
    two = human.filter(segments=["0", "1"])
    with pytest.raises(InputError, match="pilot of 2 item"):
        study_plan(two, "content", options)


def test_meta_cli_ceiling_strata_and_plan(tmp_path, capsys):
    human, metric = synthetic(n_items=40, k=2, seed=7)
    hpath, spath = tmp_path / "h.csv", tmp_path / "s.csv"
    human.write(hpath)
    metric.to_csv(spath, index=False)
    out = tmp_path / "m.json"
    assert cli_main(["meta", "--human", str(hpath), "--scores", str(spath), "--preset", "lai2022", "--aspect",
                     "content", "--ceiling", "--strata", "--ci", "50", "--json", str(out), "--csv",
                     str(tmp_path / "m.csv"), "--latex", str(tmp_path / "m.tex")]) == 0
    text = capsys.readouterr().out
    assert "human ceiling" in text and "one rater vs the rest" in text and "share of the ceiling: oracle" in text
    assert "agreement strata (inputs" in text
    data = json.loads(out.read_text())
    seg = next(r for r in data["results"] if r["choices"]["level"] == "segment")
    assert seg["ceiling"]["available"] and seg["metrics"]["oracle"]["share_of_ceiling"] > 0.9
    assert seg["strata"]["sizes"]["agree"] + seg["strata"]["sizes"]["disagree"] == 40
    csv = pd.read_csv(tmp_path / "m.csv")
    assert {"ceiling", "one_rater", "share_of_ceiling"} <= set(csv.columns)
    assert "human ceiling" in (tmp_path / "m.tex").read_text()
    assert cli_main(["meta", "--human", str(hpath), "--plan", "--plan-delta", "0.5", "--plan-items", "20,60",
                     "--plan-raters", "1,2", "--plan-studies", "100"]) == 0
    plan = capsys.readouterr().out
    assert "power by items (rows) x raters per item" in plan and "assumptions:" in plan
    assert cli_main(["meta", "--human", str(hpath), "--plan"]) == 2
    assert "--plan needs --plan-delta" in capsys.readouterr().err
