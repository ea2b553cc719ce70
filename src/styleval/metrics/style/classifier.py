"""Style metrics from a style classifier: target-style accuracy, target-style probability, and Mir et al.'s
(2019) direction-corrected Earth Mover's Distance between the style distributions of source and output."""
from __future__ import annotations

from typing import ClassVar

import numpy as np

from ...style_models.distance import direction_corrected_emd, parse_ground
from ..base import Batch, SegmentStats
from ..registry import register
from ._model import AUTO, StyleModelMetric, check_case


class _TargetDecisionMetric(StyleModelMetric):
    """Shared by the two metrics that read the classifier's decision on each output."""

    calibrated: bool

    def __init__(self, *, model: str = AUTO, calibrated: bool = True, case: str = AUTO) -> None:
        self.model = model
        self.calibrated = bool(calibrated)
        self.case = check_case(case)

    def target_decisions(self, batch: Batch) -> tuple[np.ndarray, np.ndarray]:
        """Per output: 1.0 where the model decides for the target style, and its probability of the target."""
        choice = self.case_choice(batch)
        clf = self.load(batch, choice)
        t = self.target_index(clf, batch.directions)
        label, p = clf.decide(self.seen(clf, batch.outputs, choice), calibrated=self.calibrated)
        return (label == t).astype(float), p[np.arange(len(t)), t]


@register
class StyleAccuracy(_TargetDecisionMetric):
    """Share of outputs the classifier assigns to the target style. With ``calibrated`` (the default) a model whose
    card holds a calibration decides with its fitted threshold and reports its calibrated probability (the
    signature's ``style_calibration`` names it); otherwise the label of highest probability. ``case``: ``auto``,
    ``sensitive`` or ``blind`` (see :mod:`styleval.metrics.style._model`). Statistics: ``[correct, p_target]``."""

    name = "style_accuracy"
    parameter_help: ClassVar[dict[str, str]] = {
        "model": "the style classifier: auto (the shipped one covering the direction's styles), a shipped "
                 "name or a `train-style` folder",
    }
    n_stats = 2
    description = "target-style accuracy of a style classifier (shipped name, model folder, or auto), calibrated"

    def segment_stats(self, batch: Batch) -> np.ndarray:
        return np.column_stack(self.target_decisions(batch))


@register
class StyleProbability(_TargetDecisionMetric):
    """Mean probability of the target style: the calibrated probability when the model's card holds a calibration
    with a probability map and ``calibrated`` (the default). ``case`` as for ``style_accuracy``.
    Statistics: ``[p_target]``."""

    name = "style_probability"
    parameter_help: ClassVar[dict[str, str]] = {
        "model": "the style classifier: auto, a shipped name or a folder",
    }
    description = "mean target-style probability of a style classifier (calibrated when the card says how)"

    def segment_stats(self, batch: Batch) -> np.ndarray:
        return self.target_decisions(batch)[1][:, None]


@register
class StyleEMD(StyleModelMetric):
    """Direction-corrected EMD (Mir et al. 2019, §4.2): EMD between the classifier's distributions of source and
    output, negated when the output gives the target style less probability than the source.
    ``ground``: ``unit`` (Mir et al.), ``ordinal`` or a matrix ``"0 1; 1 0"``. ``case`` as for ``style_accuracy``
    (source and output are seen alike). Statistics: ``[score, p_target(source), p_target(output)]``."""

    name = "style_emd"
    parameter_help: ClassVar[dict[str, str]] = {
        "model": "the style classifier: auto, a shipped name or a folder",
        "ground": "ground distance between labels: unit (Mir et al.), ordinal (cost |i - j| over the model's labels "
                  "in its own order, which train-style sorts by name, e.g. high<low<mid; the signature names it as "
                  "ordinal_order), or a matrix '0 1; 1 0' over that order",
    }
    reference = ("Mir et al. 2019's direction-corrected EMD: their stored TextCNN figures reproduce "
                 "(tests/test_meta_reproduction.py)")
    n_stats = 3
    description = "direction-corrected Earth Mover's Distance between source and output style distributions"
    needs: ClassVar[frozenset[str]] = frozenset({"source", "target_style"})
    value_range = (-1.0, 1.0)

    def __init__(self, *, model: str = AUTO, ground: str = "unit", case: str = AUTO) -> None:
        self.model = model
        self.ground = ground
        self.case = check_case(case)

    def compute(self, batch: Batch) -> SegmentStats:
        """As every style metric, and with ``ground=ordinal`` the label order it ranks (the model's own label
        order, which ``train-style`` writes sorted by name: ``high<low<mid``) among the signature's resources."""
        out = super().compute(batch)
        if self.ground == "ordinal":
            out.resources["ordinal_order"] = "<".join(self.load(batch, self.case_choice(batch)).labels)
        return out

    def segment_stats(self, batch: Batch) -> np.ndarray:
        choice = self.case_choice(batch)
        clf = self.load(batch, choice)
        t = self.target_index(clf, batch.directions)
        ground = parse_ground(self.ground, len(clf.labels))
        ps = clf.predict_proba(self.seen(clf, batch.sources, choice))
        po = clf.predict_proba(self.seen(clf, batch.outputs, choice))
        rows = np.arange(len(t))
        return np.column_stack([direction_corrected_emd(ps, po, t, ground), ps[rows, t], po[rows, t]])
