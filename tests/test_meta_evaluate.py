"""MetaTask naming and run() on small synthetic tables."""
from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from styleval.errors import InputError
from styleval.meta import Judgments, MetaTask, inter_rater_pearson, merge_with_entity_score, run, run_many

SYSTEMS = ["s1", "s2", "s3", "ref"]
RNG = np.random.default_rng(0)
HUMAN = RNG.uniform(0, 100, size=(4, 6))           # (system, item)
DIST = 5 - HUMAN / 25 + RNG.normal(0, 0.5, (4, 6))  # a distance: lower is better
SIM = HUMAN / 100 + RNG.normal(0, 0.1, (4, 6))


def _judgments():
    recs = []
    for si, s in enumerate(SYSTEMS):
        for k in range(6):
            d = "a->b" if k < 3 else "b->a"
            recs.append({"system": s, "segment": k, "annotator": "r1", "aspect": "content",
                         "score": HUMAN[si, k] + 1, "direction": d})
            recs.append({"system": s, "segment": k, "annotator": "r2", "aspect": "content",
                         "score": HUMAN[si, k] - 1, "direction": d})
    return Judgments.from_records(recs)


def _metrics():
    rows = []
    for si, s in enumerate(SYSTEMS):
        for k in range(6):
            rows.append((s, str(k), "dist", DIST[si, k]))
            rows.append((s, str(k), "sim", SIM[si, k]))
    return pd.DataFrame(rows, columns=["system", "segment", "metric", "score"])


def test_task_name_round_trip_and_frozen():
    t = MetaTask("content", level="segment", method="kendall_tau_like", average_by="item", exclude=("ref",),
                 direction="informal -> formal", threshold=0.5)
    assert t.direction == "informal->formal"
    assert MetaTask.from_name(t.name) == t
    for choice in ("aspect=content", "level=segment", "method=kendall_tau_like", "average_by=item",
                   "threshold=0.5", "human_ties=skip", "metric_ties=discordant", "orientation=abs",
                   "systems=*", "exclude=ref", "human=mean"):
        assert choice in t.name
    with pytest.raises(dataclasses.FrozenInstanceError):
        t.aspect = "style"  # type: ignore[misc]
    assert MetaTask.from_name(MetaTask("x", systems=("a", "b")).name).systems == ("a", "b")


@pytest.mark.parametrize("bad", [dict(level="corpus"), dict(method="r2"), dict(average_by="x"),
                                 dict(orientation="neg"), dict(human="median"),
                                 dict(level="system", average_by="item")])
def test_task_validation(bad):
    with pytest.raises(ValueError):
        MetaTask("content", **bad)


def test_system_level_pearson_matches_scipy_and_orientation():
    j, m = _judgments(), _metrics()
    t = MetaTask("content", level="system", method="pearson", exclude=("ref",))
    res = run(t, j, m, lower_is_better={"dist"})
    expected = stats.pearsonr(SIM[:3].mean(1), HUMAN[:3].mean(1))[0]
    assert res.statistic("sim") == pytest.approx(expected)
    signed = run(t.with_(orientation="signed"), j, m, lower_is_better={"dist"})
    assert res.statistic("dist") == pytest.approx(-signed.statistic("dist"))
    assert res.statistic("dist") > 0 > signed.statistic("dist")
    assert res.options["metrics"]["dist"]["negated"] and res.options["systems"] == ["s1", "s2", "s3"]


def test_segment_level_pooled_and_per_item():
    j, m = _judgments(), _metrics()
    pooled = run(MetaTask("content", method="spearman"), j, m)
    assert pooled.statistic("sim") == pytest.approx(stats.spearmanr(SIM.ravel(), HUMAN.ravel())[0])
    per_item = run(MetaTask("content", method="kendall_tau_like", average_by="item"), j, m, metrics=["sim"])
    taus = []
    for k in range(6):
        c = d = 0
        for a in range(4):
            for b in range(a + 1, 4):
                dh, dm = HUMAN[a, k] - HUMAN[b, k], SIM[a, k] - SIM[b, k]
                if dh == 0:
                    continue
                c, d = (c + 1, d) if dh * dm > 0 else (c, d + 1)
        taus.append((c - d) / (c + d))
    assert per_item.statistic("sim") == pytest.approx(np.mean(taus))
    assert list(per_item.results) == ["sim"]


def test_direction_filter_and_human_z():
    j, m = _judgments(), _metrics()
    t = MetaTask("content", method="pearson", direction="a->b")
    res = run(t, j, m)
    assert res.statistic("sim") == pytest.approx(stats.pearsonr(SIM[:, :3].ravel(), HUMAN[:, :3].ravel())[0])
    z = run(t.with_(human="z"), j, m)
    assert np.isfinite(z.statistic("sim"))


def test_to_frame_and_run_many():
    j, m = _judgments(), _metrics()
    tasks = [MetaTask("content"), MetaTask("content", level="system")]
    frame = run_many(tasks, j, m)
    assert len(frame) == 4
    assert {"metric", "statistic", "pvalue", "n", "method", "task", "level"} <= set(frame.columns)
    assert frame["task"].nunique() == 2


def test_errors():
    j, m = _judgments(), _metrics()
    with pytest.raises(InputError):
        run(MetaTask("content"), j, m, metrics=["nope"])
    with pytest.raises(InputError):
        run(MetaTask("fluency"), j, m)


def test_inter_rater_pearson():
    j = _judgments()
    r = inter_rater_pearson(j, "content")
    assert r.statistic == pytest.approx(1.0) and r.n == 24


def test_merge_with_entity_score():
    out = merge_with_entity_score([0.5, 0.2, np.nan], [1.0, 0.0, 1.0], [0.5, 0.0, 0.3])
    assert out[0] == pytest.approx(0.75) and out[1] == pytest.approx(0.2) and np.isnan(out[2])
    with pytest.raises(ValueError):
        merge_with_entity_score([1.0], [1.0], [1.5])


def test_group_combination_and_pairwise_accuracy_choices():
    j, m = _judgments(), _metrics()
    base = MetaTask("content", method="kendall_tau_like", average_by="item")
    mean = run(base, j, m, metrics=["sim"])["sim"]
    pooled = run(base.with_(aggregate="pooled"), j, m, metrics=["sim"])["sim"]
    assert pooled.options["aggregate"] == "pooled" and mean.options["aggregate"] == "mean"
    assert -1 <= pooled.statistic <= 1
    acc = run(base.with_(method="pairwise_accuracy", human_ties="match"), j, m, metrics=["sim"])
    assert 0 <= acc.statistic("sim") <= 1
    assert MetaTask.from_name(base.with_(aggregate="pooled", undefined="zero", tie_rule="lt").name) == \
        base.with_(aggregate="pooled", undefined="zero", tie_rule="lt")
    assert MetaTask("content", method="kendall_like").method == "kendall_tau_like"
    with pytest.raises(ValueError):
        MetaTask("content", method="pearson", average_by="item", aggregate="pooled")
    with pytest.raises(ValueError):
        MetaTask("content", metric_ties="random")
