"""The report's segment-score panels: they fit a 1300 px window, 0/1 metrics are bars of the mean with their
interval, and scores spanning orders of magnitude (perplexity) get a log axis."""
from __future__ import annotations

import struct

import numpy as np
import pytest

from styleval.report import plots
from styleval.report.html import CSS

pytest.importorskip("matplotlib")
from matplotlib.container import ErrorbarContainer  # noqa: E402

SYSTEMS = ["copy-with-a-long-system-name", "rewrite@0.5", "tidy", "another-system"]
RNG = np.random.default_rng(3)
VALUES = {"style_accuracy": lambda: RNG.integers(0, 2, 40).astype(float),
          "perplexity": lambda: np.exp(RNG.normal(4.5, 1.2, 40)),       # 10 to a few thousand, long upper tail
          "bleu/src": lambda: RNG.uniform(0.5, 100, 40),                 # positive, wide, but even: linear
          "pinc/src": lambda: np.r_[0.0, RNG.uniform(0, 1, 39)]}


def _data(metrics: list[str]) -> dict:
    segments, corpus = [], []
    for metric in metrics:
        for system in SYSTEMS:
            v = VALUES.get(metric, VALUES["bleu/src"])()
            segments.append({"metric": metric, "system": system, "scores": {str(i + 1): float(x)
                                                                            for i, x in enumerate(v)}})
            corpus.append({"metric": metric, "system": system, "score": float(v.mean()),
                           "ci": [float(v.mean()) - 0.08, float(v.mean()) + 0.05]})
    return {"score": {"settings": {"systems": SYSTEMS}, "segments": segments, "corpus": corpus}}


def test_scale_and_kind_of_each_panel():
    metrics = ["style_accuracy", "perplexity", "bleu/src", "pinc/src"]
    data = _data(metrics)
    fig = plots.distribution_figure(data, metrics)
    axes = dict(zip(metrics, fig.axes))
    assert axes["perplexity"].get_yscale() == "log"
    assert axes["bleu/src"].get_yscale() == "linear" and axes["pinc/src"].get_yscale() == "linear"
    bars = axes["style_accuracy"].patches
    means = [np.mean(list(s["scores"].values())) for s in data["score"]["segments"]
             if s["metric"] == "style_accuracy"]
    assert [b.get_height() for b in bars] == pytest.approx(means)
    (errors,) = [c for c in axes["style_accuracy"].containers if isinstance(c, ErrorbarContainer)]
    segments = errors.lines[2][0].get_segments()  # one vertical segment per bar: (x, low), (x, high)
    lows, highs = [seg[0][1] for seg in segments], [seg[1][1] for seg in segments]
    assert lows == pytest.approx([m - 0.08 for m in means]) and highs == pytest.approx([m + 0.05 for m in means])
    assert not axes["perplexity"].patches  # boxes are lines, not bars


def test_binary_and_log_rules():
    assert plots.is_binary([np.array([0.0, 1.0, 1.0]), np.array([1.0])])
    assert not plots.is_binary([np.array([0.0, 0.5])]) and not plots.is_binary([np.array([])])
    assert plots.needs_log_scale([np.array([12.0, 30.0, 45.0, 60.0, 80.0, 2500.0, 9000.0])])
    assert not plots.needs_log_scale([np.array([0.0, 30.0, 2500.0])])  # a zero: no log axis
    assert not plots.needs_log_scale([np.linspace(0.5, 100, 50)])      # even spread
    assert not plots.needs_log_scale([np.array([5.0, 6.0, 40.0])])       # one order of magnitude


def test_the_grid_fits_a_1300_px_window():
    metrics = ["style_accuracy", "perplexity", "bleu/src", "pinc/src", "m5", "m6", "m7"]
    png = plots.distribution_plot(_data(metrics), metrics)
    width, _ = struct.unpack(">II", png[16:24])
    # the page is centred, at most 1100 px wide less 2 x 16 px padding; images never exceed it
    assert width <= 1068
    assert "max-width:1100px" in CSS and "img{max-width:100%" in CSS
