"""``styleval meta`` end to end: inputs, task options, output files, errors, and a Lai et al. figure."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from styleval import Record, score
from styleval.cli import main as cli_main
from styleval.cli import meta_cmd
from styleval.meta import Judgments, MetaTask, run

SYSTEMS = ["s1", "s2", "s3", "s4", "ref"]
RNG = np.random.default_rng(7)
HUMAN = RNG.uniform(0, 100, size=(5, 6))
SIM = HUMAN / 100 + RNG.normal(0, 0.2, HUMAN.shape)
DIST = 3 - HUMAN / 50 + RNG.normal(0, 0.5, HUMAN.shape)


@pytest.fixture(autouse=True)
def _meta_verb(monkeypatch):
    """Register the verb for these tests whether or not cli/main.py lists it yet."""
    if meta_cmd not in cli_main.VERBS:
        monkeypatch.setattr(cli_main, "VERBS", cli_main.VERBS + (meta_cmd,))


def _judgments() -> Judgments:
    recs = [{"system": s, "segment": k, "annotator": a, "aspect": "content", "score": HUMAN[i, k] + off,
             "direction": "informal->formal" if k < 3 else "formal->informal"}
            for i, s in enumerate(SYSTEMS) for k in range(6) for a, off in (("r1", 2.0), ("r2", -2.0))]
    return Judgments.from_records(recs)


@pytest.fixture()
def small(tmp_path):
    human = tmp_path / "human.csv"
    _judgments().write(human)
    rows = [(s, k, name, v[i, k]) for name, v in (("sim", SIM), ("dist", DIST))
            for i, s in enumerate(SYSTEMS) for k in range(6)]
    scores = tmp_path / "scores.csv"
    pd.DataFrame(rows, columns=["system", "id", "metric", "score"]).to_csv(scores, index=False)
    return human, scores


def test_small_table_all_outputs(small, tmp_path, capsys):
    human, scores = small
    out = {k: tmp_path / f"o.{k}" for k in ("json", "csv", "tex")}
    code = cli_main.main(["meta", "--human", str(human), "--scores", str(scores), "--lower-is-better", "dist",
                          "--exclude", "ref", "--segment-method", "pearson", "--ci", "30", "--top-n",
                          "--json", str(out["json"]), "--csv", str(out["csv"]), "--latex", str(out["tex"])])
    assert code == 0
    printed = capsys.readouterr().out
    assert "task: aspect=content;level=segment;method=pearson" in printed and "dist (negated)" in printed
    assert "top-N systems by human score" in printed and "summary:" in printed
    task = MetaTask("content", level="system", method="pearson", exclude=("ref",))
    expected = run(task, _judgments(), pd.read_csv(scores, dtype={"id": str}).rename(columns={"id": "segment"}),
                   lower_is_better={"dist"})
    data = json.loads(out["json"].read_text(encoding="utf-8"))
    system = next(r for r in data["results"] if r["choices"]["level"] == "system")
    assert system["task"] == task.name
    assert system["metrics"]["dist"]["statistic"] == pytest.approx(expected.statistic("dist"))
    assert system["metrics"]["sim"]["ci"]["n_resamples"] == 30 and "curves" in system["metrics"]["sim"]
    assert data["inputs"]["lower_is_better"] == ["dist"]
    frame = pd.read_csv(out["csv"])
    assert len(frame) == 4 and set(frame["level"]) == {"segment", "system"}
    row = frame[(frame["level"] == "system") & (frame["metric"] == "dist")].iloc[0]
    assert row["statistic"] == pytest.approx(expected.statistic("dist")) and row["exclude"] == "ref"
    tex = out["tex"].read_text(encoding="utf-8")
    assert r"\begin{tabular}{lrr}" in tex and f"{expected.statistic('dist'):.3f}" in tex and r"\textbf{" in tex


def test_directions_task_names_and_signed(small, tmp_path, capsys):
    human, scores = small
    out = tmp_path / "o.csv"
    assert cli_main.main(["meta", "--human", str(human), "--scores", str(scores), "--exclude", "ref",
                          "--direction", "all", "--level", "system", "--orientation", "signed",
                          "--significance", "none", "--csv", str(out), "-q"]) == 0
    frame = pd.read_csv(out)
    assert sorted(set(frame["direction"])) == ["both", "formal->informal", "informal->formal"]
    assert (frame.loc[frame["metric"] == "dist", "statistic"] < 0).all() and set(frame["orientation"]) == {"signed"}
    name = frame["task"].iloc[0]
    assert cli_main.main(["meta", "--human", str(human), "--scores", str(scores), "--task", name, "-q",
                          "--csv", str(out)]) == 0
    assert list(pd.read_csv(out)["task"].unique()) == [name]


def test_score_json_input(tmp_path, capsys):
    outs = {"s1": ["I love it.", "That is great.", "No way."], "s2": ["luv it", "great", "no"],
            "s3": ["I love it", "That is great", "No way"]}
    refs = ["I love it.", "That is great.", "No way."]
    recs = [Record(str(i), f"src {i}", o, [refs[i]], system=s) for s, texts in outs.items()
            for i, o in enumerate(texts)]
    path = tmp_path / "scores.json"
    score(recs, ["bleu", "ter"], against=["references"], bootstrap=0).write_json(path)
    human = tmp_path / "h.jsonl"
    Judgments.from_records([{"system": s, "segment": i, "annotator": "a", "aspect": "content",
                             "score": {"s1": 90, "s2": 20, "s3": 70}[s] + i} for s in outs for i in range(3)]
                           ).write(human)
    out = tmp_path / "o.json"
    assert cli_main.main(["meta", "--human", str(human), "--scores", str(path), "--level", "segment",
                          "--segment-method", "spearman", "--json", str(out)]) == 0
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["inputs"]["lower_is_better"] == ["ter/ref"]
    metrics = data["results"][0]["metrics"]
    assert metrics["ter/ref"]["options"]["n_omitted"] == 0 and metrics["bleu/ref"]["statistic"] > 0
    assert "ter/ref (negated)" in capsys.readouterr().out


def test_mismatched_ids_are_a_clear_error(small, tmp_path, capsys):
    human, scores = small
    frame = pd.read_csv(scores)
    frame["id"] = frame["id"].map(lambda k: f"{k:02d}")
    bad = tmp_path / "bad.csv"
    frame.to_csv(bad, index=False)
    assert cli_main.main(["meta", "--human", str(human), "--scores", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "60 of 60 metric score row(s) match no human judgment" in err
    assert "sim: 30" in err and "segment='00'" in err and "leading zeros" in err
    extra = pd.concat([pd.read_csv(scores), pd.DataFrame([{"system": "new", "id": 0, "metric": "sim",
                                                           "score": 0.1}])])
    extra.to_csv(bad, index=False)
    assert cli_main.main(["meta", "--human", str(human), "--scores", str(bad)]) == 2
    assert "systems without human scores: 'new'" in capsys.readouterr().err
    assert cli_main.main(["meta", "--human", str(human), "--scores", str(bad), "--allow-unmatched",
                          "--level", "system"]) == 0
    assert "1 metric row(s) without a human score left out" in capsys.readouterr().out


def test_bad_options_are_clear(small, capsys):
    human, scores = small
    assert cli_main.main(["meta", "--human", str(human), "--scores", str(scores), "--aspect", "style"]) == 2
    assert "no judgments for aspect 'style'" in capsys.readouterr().err
    assert cli_main.main(["meta", "--human", str(human), "--scores", str(scores), "--metrics", "nope"]) == 2
    assert "not in the metric table: nope" in capsys.readouterr().err
    assert cli_main.main(["meta", "--human", str(human), "--scores", str(scores), "--task", "aspect=x;bogus=1"]) == 2
    assert "--task" in capsys.readouterr().err


@pytest.mark.shared_data
def test_lai2022_bleu_figures_through_the_cli(shared_data, tmp_path):
    from styleval.meta.datasets import load_lai2022

    data = load_lai2022(shared_data, source="txt")
    human, scores, out = tmp_path / "lai.human.csv", tmp_path / "lai.scores.csv", tmp_path / "lai.json"
    data.judgments.write(human)
    table = data.metrics[data.metrics["metric"].isin(["src:bleu", "src:bleurt", "src:wmd"])]
    table.to_csv(scores, index=False)
    assert cli_main.main(["meta", "--human", str(human), "--scores", str(scores), "--preset", "lai2022",
                          "--lower-is-better", "src:wmd", "--json", str(out), "-q"]) == 0
    results = json.loads(out.read_text(encoding="utf-8"))["results"]
    seg = next(r for r in results if r["choices"]["level"] == "segment")
    sys_ = next(r for r in results if r["choices"]["level"] == "system")
    assert seg["metrics"]["src:bleu"]["statistic"] == pytest.approx(0.292, abs=0.002)
    assert sys_["metrics"]["src:bleu"]["statistic"] == pytest.approx(0.313, abs=0.002)
    assert seg["metrics"]["src:bleurt"]["statistic"] == pytest.approx(0.610, abs=0.002)
    assert sys_["best"] == "src:bleurt" and sys_["metrics"]["src:bleu"]["vs_best"]["williams"]["pvalue"] < 0.01
    assert "exclude=ref" in seg["task"] and "average_by=item" in seg["task"] and "metric_ties=discordant" in seg["task"]
