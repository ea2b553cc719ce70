"""A 0/1 metric against graded human judgments: most pairs are metric ties, and under metric_ties=discordant the
tau-like figure reads as anti-correlation. The result says so, with the counts and a tie-aware alternative."""
from __future__ import annotations

from itertools import combinations

import numpy as np
import pandas as pd

from styleval.cli.main import main
from styleval.meta import MetaTask, run

# one input, 14 outputs: humans give graded style scores, the 0/1 metric agrees on the two clear cases only
HUMAN = [10, 12, 15, 20, 22, 30, 35, 40, 45, 50, 60, 70, 80, 90]
METRIC = [0] * 12 + [1, 1]


def _tables() -> tuple[pd.DataFrame, pd.DataFrame]:
    systems = [f"s{k}" for k in range(len(HUMAN))]
    human = pd.DataFrame({"system": systems, "segment": "1", "score": HUMAN})
    metric = pd.DataFrame({"system": systems, "segment": "1", "metric": "style_accuracy", "score": METRIC})
    return human, metric


def _pairs() -> tuple[int, int, int]:
    """Concordant, discordant and metric-tied pairs among those the humans order, counted pair by pair."""
    conc = disc = tied = 0
    for i, j in combinations(range(len(HUMAN)), 2):
        dh, dm = HUMAN[i] - HUMAN[j], METRIC[i] - METRIC[j]
        if dh == 0:
            continue
        if dm == 0:
            tied += 1
        elif np.sign(dh) == np.sign(dm):
            conc += 1
        else:
            disc += 1
    return conc, disc, tied


def test_a_tie_dominated_figure_says_so() -> None:
    conc, disc, tied = _pairs()
    assert (conc, disc, tied) == (24, 0, 67)
    human, metric = _tables()
    task = MetaTask("style", level="segment", method="kendall_tau_like", average_by="item")
    result = run(task, human, metric)
    assert result.statistic("style_accuracy") == (conc - disc - tied) / (conc + disc + tied)  # -0.4725...
    (note,) = result.notes["style_accuracy"]
    assert note.startswith("67 of 91 pairs the humans order are metric ties (74%), each counted discordant "
                           "(metric_ties=discordant): the figure mostly measures how often the metric ties")
    assert "not anti-correlation" in note and "metric_ties=skip or half" in note and "acc-eq" in note
    skip = run(task.with_(metric_ties="skip"), human, metric)
    assert skip.statistic("style_accuracy") == 1.0 and skip.notes["style_accuracy"] == []
    pooled = run(task.with_(average_by="none"), human, metric)  # one group: the same counts, the same note
    assert pooled.notes["style_accuracy"] == [note]


def test_meta_prints_the_note(tmp_path, capsys) -> None:
    human, metric = _tables()
    judgments = human.assign(annotator="a", aspect="style")
    judgments.to_csv(tmp_path / "human.csv", index=False)
    metric.to_csv(tmp_path / "scores.csv", index=False)
    assert main(["meta", "--human", str(tmp_path / "human.csv"), "--scores", str(tmp_path / "scores.csv"),
                 "--level", "segment"]) == 0
    out = capsys.readouterr().out
    assert "67 of 91 pairs the humans order are metric ties (74%)" in out, out
