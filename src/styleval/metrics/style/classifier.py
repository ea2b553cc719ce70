"""Style metrics from a style classifier: target-style accuracy, target-style probability, and Mir et al.'s
(2019) direction-corrected Earth Mover's Distance between the style distributions of source and output.

The classifier is a styleval style model or a transformers sequence classifier (``model=DIR`` or a hub id; see
:mod:`styleval.style_models.transformers_model` for how its labels, more than two of them, or a single output,
give the target style's probability)."""
from __future__ import annotations

from typing import ClassVar

import numpy as np

from ...style_models.distance import direction_corrected_emd, parse_ground
from ...style_models.transformers_model import TransformersStyleModel
from ..base import Batch, SegmentStats
from ..registry import register
from ._model import (AUTO, CLASSIFIER_HELP, StyleModelMetric, check_case, check_classifier_params,
                     truncation_flags)


class _TargetDecisionMetric(StyleModelMetric):
    """Shared by the two metrics that read the classifier's decision on each output."""

    calibrated: bool

    def __init__(self, *, model: str = AUTO, calibrated: bool = True, case: str = AUTO, labels: str | None = None,
                 threshold: float | None = None, batch_size: int = 32) -> None:
        self.model = model
        self.calibrated = bool(calibrated)
        self.case = check_case(case)
        check_classifier_params(self.name, labels, threshold, batch_size)
        self.labels, self.threshold, self.batch_size = labels, threshold, batch_size

    def target_decisions(self, batch: Batch) -> tuple[np.ndarray, np.ndarray, dict[str, list[int]]]:
        """Per output: 1.0 where the model decides for the target style, its probability of the target, and the
        rows a transformers classifier truncated."""
        choice = self.case_choice(batch)
        clf = self.load(batch, choice)
        t = self.target_index(clf, batch.directions)
        texts = self.seen(clf, batch.outputs, choice)
        if isinstance(clf, TransformersStyleModel):
            correct, p, truncated = clf.target_decisions(texts, t, self.target_index(clf, batch.directions, "source"))
            return correct, p, truncation_flags(truncated)
        label, probs = clf.decide(texts, calibrated=self.calibrated)
        return (label == t).astype(float), probs[np.arange(len(t)), t], {}


@register
class StyleAccuracy(_TargetDecisionMetric):
    """Share of outputs the classifier assigns to the target style. With ``calibrated`` (the default) a model whose
    card holds a calibration decides with its fitted threshold and reports its calibrated probability (the
    signature's ``style_calibration`` names it); otherwise the label of highest probability. ``case``: ``auto``,
    ``sensitive`` or ``blind`` (see :mod:`styleval.metrics.style._model`). Statistics: ``[correct, p_target]``."""

    name = "style_accuracy"
    parameter_help: ClassVar[dict[str, str]] = {
        "model": "the style classifier: auto (the shipped one covering the direction's styles), a shipped "
                 "name, a `train-style` folder, a transformers classifier folder, or a hub id with "
                 "STYLEVAL_ALLOW_HUB=1",
        **CLASSIFIER_HELP,
    }
    n_stats = 2
    description = "target-style accuracy of a style classifier (shipped name, model folder, or auto), calibrated"

    def segment_stats(self, batch: Batch) -> SegmentStats:
        correct, p, flags = self.target_decisions(batch)
        return SegmentStats(values=np.column_stack([correct, p]), flags=flags)


@register
class StyleProbability(_TargetDecisionMetric):
    """Mean probability of the target style: the calibrated probability when the model's card holds a calibration
    with a probability map and ``calibrated`` (the default). ``case`` as for ``style_accuracy``.
    Statistics: ``[p_target]``."""

    name = "style_probability"
    parameter_help: ClassVar[dict[str, str]] = {
        "model": "the style classifier: auto, a shipped name, a folder (styleval or transformers) or a hub id",
        **CLASSIFIER_HELP,
    }
    description = "mean target-style probability of a style classifier (calibrated when the card says how)"

    def segment_stats(self, batch: Batch) -> SegmentStats:
        _, p, flags = self.target_decisions(batch)
        return SegmentStats(values=p[:, None], flags=flags)


@register
class StyleEMD(StyleModelMetric):
    """Direction-corrected EMD (Mir et al. 2019, §4.2): EMD between the classifier's distributions of source and
    output, negated when the output gives the target style less probability than the source.
    ``ground``: ``unit`` (Mir et al.), ``ordinal`` or a matrix ``"0 1; 1 0"``. ``case`` as for ``style_accuracy``
    (source and output are seen alike). Statistics: ``[score, p_target(source), p_target(output)]``."""

    name = "style_emd"
    parameter_help: ClassVar[dict[str, str]] = {
        "model": "the style classifier: auto, a shipped name, a folder (styleval or transformers) or a hub id",
        "ground": "ground distance between labels: unit (Mir et al.), ordinal (cost |i - j| over the model's labels "
                  "in its own order, which train-style sorts by name, e.g. high<low<mid, and a transformers model "
                  "gives in id2label order; the signature names it as ordinal_order), or a matrix '0 1; 1 0' over "
                  "that order",
        **CLASSIFIER_HELP,
    }
    reference = ("Mir et al. 2019's direction-corrected EMD: their stored TextCNN figures reproduce "
                 "(tests/test_meta_reproduction.py)")
    n_stats = 3
    description = "direction-corrected Earth Mover's Distance between source and output style distributions"
    needs: ClassVar[frozenset[str]] = frozenset({"source", "target_style"})
    value_range = (-1.0, 1.0)

    def __init__(self, *, model: str = AUTO, ground: str = "unit", case: str = AUTO, labels: str | None = None,
                 threshold: float | None = None, batch_size: int = 32) -> None:
        self.model = model
        self.ground = ground
        self.case = check_case(case)
        check_classifier_params(self.name, labels, threshold, batch_size)
        self.labels, self.threshold, self.batch_size = labels, threshold, batch_size

    def compute(self, batch: Batch) -> SegmentStats:
        """As every style metric, and with ``ground=ordinal`` the label order it ranks (the model's own label
        order, which ``train-style`` writes sorted by name: ``high<low<mid``) among the signature's resources."""
        out = super().compute(batch)
        if self.ground == "ordinal":
            out.resources["ordinal_order"] = "<".join(self.load(batch, self.case_choice(batch)).labels)
        return out

    def segment_stats(self, batch: Batch) -> SegmentStats:
        choice = self.case_choice(batch)
        clf = self.load(batch, choice)
        t = self.target_index(clf, batch.directions)
        ground = parse_ground(self.ground, len(clf.labels))
        flags: dict[str, list[int]] = {}
        if isinstance(clf, TransformersStyleModel):
            ps, source_cut = clf.distribution(self.seen(clf, batch.sources, choice))
            po, output_cut = clf.distribution(self.seen(clf, batch.outputs, choice))
            flags = truncation_flags(output_cut, source_cut)
        else:
            ps = clf.predict_proba(self.seen(clf, batch.sources, choice))
            po = clf.predict_proba(self.seen(clf, batch.outputs, choice))
        rows = np.arange(len(t))
        return SegmentStats(values=np.column_stack([direction_corrected_emd(ps, po, t, ground), ps[rows, t],
                                                    po[rows, t]]), flags=flags)
