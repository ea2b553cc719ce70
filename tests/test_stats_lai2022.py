"""One real-data check of the statistic definitions: Lai et al. (2022) content-preservation correlations.

Published (HumEval 2022, 8 systems, 80 inputs, human = mean of the two annotators' content scores):
Kendall tau-like per input BLEURT .610, COMET .650, BLEU .292; system-level Pearson BLEURT .993, COMET .972,
BLEU .313.

What reproduces them: ``segment_level(metric, human, method="kendall_like", average_by="item")`` with the defaults
(``aggregate="mean"``: mean of per-input taus; ``human_ties="skip"``; ``metric_ties="discordant"``; inputs whose 8
outputs are all human ties skipped -- 1 of 80), human = (human_1 + human_2) / 2 raw (not z-scores), the "ref"
system excluded; system level = Pearson of per-system means. The published COMET is the ``COMET`` column of
``data/outputs/*.content.src.txt``; ``chatgpt/content.src.json``'s ``comet-20`` equals the ``COMET-w`` column of
those files and gives .634 per input (``comet-22``: .628), i.e. it does NOT reproduce the .650.
"""
from __future__ import annotations

import json

import numpy as np
import pytest

from styleval.stats import segment_level, system_level

pytestmark = pytest.mark.shared_data

SYSTEMS = ["bart", "high", "ibt", "luo", "niu", "rao", "yi", "zhou"]
# data/outputs/README.md: 16 leading fields, then COMET COMET-w BLEURT BERTScore METEOR W2V charF BLEU ROUGE-1/2/L
TXT_COLUMNS = {"comet": -11, "comet-w": -10, "bleurt": -9, "bleu": -4}


def _grids_txt(root):
    rows = {s: [line.rstrip("\n").split("\t")
                for line in (root / "data" / "outputs" / f"{s.upper()}.content.src.txt").open(encoding="utf-8")]
            for s in SYSTEMS}
    human = np.array([[(float(r[4]) + float(r[7])) / 2 for r in rows[s]] for s in SYSTEMS])
    metrics = {name: np.array([[float(r[col]) for r in rows[s]] for s in SYSTEMS]) for name, col in TXT_COLUMNS.items()}
    return human, metrics


def _grids_json(root):
    with (root / "chatgpt" / "content.src.json").open(encoding="utf-8") as fh:
        items = [json.loads(line) for line in fh if line.strip()]
    assert all(set(it["sys"]) == set(SYSTEMS) | {"ref"} for it in items)
    human = np.array([[(it["sys"][s]["human_1"] + it["sys"][s]["human_2"]) / 2 for it in items] for s in SYSTEMS])
    metrics = {m: np.array([[it["sys"][s][m] for it in items] for s in SYSTEMS])
               for m in ("bleu", "bleurt", "comet-20", "comet-22")}
    return human, metrics


def test_lai2022_content_correlations(shared_data):
    root = shared_data / "lai2022"
    if not root.is_dir():
        pytest.skip("lai2022 data not present")
    human, metrics = _grids_txt(root)
    assert human.shape == (8, 80)
    published = {"bleurt": (0.610, 0.993), "comet": (0.650, 0.972), "bleu": (0.292, 0.313)}
    for name, (seg_pub, sys_pub) in published.items():
        seg = segment_level(metrics[name], human, method="kendall_like", average_by="item")
        sysr = system_level(metrics[name].mean(axis=1), human.mean(axis=1), method="pearson")
        assert seg.statistic == pytest.approx(seg_pub, abs=0.001), name
        assert sysr.statistic == pytest.approx(sys_pub, abs=0.001), name
        assert seg.options["n_undefined"] == 1 and seg.n == 79

    # the JSON release: BLEU and BLEURT reproduce, COMET (comet-20 = the txt COMET-w column) does not
    jhuman, jmetrics = _grids_json(root)
    np.testing.assert_allclose(jhuman, human, atol=1e-9)
    got = {m: segment_level(v, jhuman, method="kendall_like", average_by="item").statistic
           for m, v in jmetrics.items()}
    assert got["bleu"] == pytest.approx(0.292, abs=0.001)
    assert got["bleurt"] == pytest.approx(0.610, abs=0.002)  # .6092: JSON scores are rounded to 3 decimals
    assert got["comet-20"] == pytest.approx(0.634, abs=0.001) and got["comet-22"] == pytest.approx(0.628, abs=0.001)
    assert system_level(jmetrics["comet-20"].mean(axis=1), jhuman.mean(axis=1)).statistic == pytest.approx(
        0.972, abs=0.001)
    # alternative conventions that do not reproduce (documented for the meta layer)
    pooled = segment_level(metrics["bleurt"], human, method="kendall_like", average_by="item", aggregate="pooled")
    assert abs(pooled.statistic - 0.610) > 0.01
    skip_mt = segment_level(metrics["bleurt"], human, method="kendall_like", average_by="item", metric_ties="skip")
    assert abs(skip_mt.statistic - 0.610) > 0.05
