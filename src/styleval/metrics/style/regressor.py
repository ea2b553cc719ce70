"""Style metrics from a style regressor (formality score), oriented by the transfer direction, and the
Heylighen & Dewaele formality F-score (no training)."""
from __future__ import annotations

from typing import ClassVar

import numpy as np

from ...errors import InputError
from ...style_models.model import REGRESSOR, StyleModel
from ..base import Aspect, Batch, Metric
from ..registry import register
from ._model import AUTO, StyleModelMetric, check_case


@register
class StyleRegression(StyleModelMetric):
    """The regressor's score of the output, negated when the target is the model's low pole (formal->informal
    flips the sign), so higher is always further toward the target. ``relative=True`` subtracts the source's
    oriented score (the change made). Statistics: ``[oriented score, raw output score]``, plus the raw source
    score when ``relative``. ``case`` as for ``style_accuracy`` (blind: the text is normalised before the model)."""

    name = "style_regression"
    parameter_help: ClassVar[dict[str, str]] = {
        "model": "the style regressor: shipped name or folder",
        "relative": "subtract the source's score (the change made, not the output's level)",
        "scale": "score: the regressor's score from its decision point; probability: the calibrated "
                 "probability of the target style (both directions on one axis)",
    }
    description = "style regressor score oriented by the direction (default: PT16 formality regressor)"
    model_kind = REGRESSOR
    value_range = (-float("inf"), float("inf"))

    def __init__(self, *, model: str = "formality-regressor-pt16", relative: bool = False,
                 calibrated: bool = True, scale: str = "score", case: str = AUTO) -> None:
        if scale not in ("score", "probability"):
            raise InputError(f"scale must be 'score' or 'probability', not {scale!r}")
        self.model = model
        self.relative = bool(relative)
        self.calibrated = bool(calibrated)
        self.scale = scale
        self.case = check_case(case)

    @property
    def needs(self) -> frozenset[str]:  # type: ignore[override]
        return frozenset({"target_style", "source"} if self.relative else {"target_style"})

    @property
    def n_stats(self) -> int:
        return 3 if self.relative else 2

    def segment_stats(self, batch: Batch) -> np.ndarray:
        choice = self.case_choice(batch)
        reg = self.load(batch, choice)
        if not isinstance(reg, StyleModel):  # a transformers classifier: its kind is checked in load()
            raise InputError(f"metric {self.name!r} reads a styleval regressor, not {reg.name!r}")
        outputs = self.seen(reg, batch.outputs, choice)
        sources = self.seen(reg, batch.sources, choice) if self.relative else []
        sign = np.where(self.target_index(reg, batch.directions) == 1, 1.0, -1.0)
        cal = reg.calibration if self.calibrated else None
        if self.scale == "probability":
            return self._probability_stats(reg, cal, outputs, sources, sign)
        centre = 0.0
        if cal is not None:  # the threshold is on the raw score toward cal.positive
            centre = cal.threshold if reg.style_index(cal.positive) == 1 else -cal.threshold
        out = reg.regress(outputs)
        if not self.relative:
            return np.column_stack([sign * (out - centre), out])
        src = reg.regress(sources)
        return np.column_stack([sign * (out - src), out, src])

    def _probability_stats(self, reg, cal, outputs: list[str], sources: list[str], sign: np.ndarray) -> np.ndarray:
        """The calibrated probability of the target style (0..1): both directions on one bounded axis."""
        if cal is None:
            raise InputError(f"scale='probability' needs a calibrated model; {reg.name!r} has no calibration in "
                             "its card (styleval calibrate-style), or calibrated=false was given")
        flip = 1.0 if reg.style_index(cal.positive) == 1 else -1.0  # raw score toward cal.positive
        p_high = cal.probability(flip * reg.regress(outputs))
        p_high = p_high if flip > 0 else 1.0 - p_high
        p_target = np.where(sign > 0, p_high, 1.0 - p_high)
        if not self.relative:
            return np.column_stack([p_target, p_high])
        s_high = cal.probability(flip * reg.regress(sources))
        s_high = s_high if flip > 0 else 1.0 - s_high
        return np.column_stack([p_target - np.where(sign > 0, s_high, 1.0 - s_high), p_high, s_high])


@register
class FormalityFScore(Metric):
    """Heylighen & Dewaele's F-score of the output from spaCy part-of-speech tags (0-100, higher = more formal),
    turned into ``100 - F`` for informal targets when ``oriented`` (so higher is always toward the target).
    Texts without words score NaN and are left out of the mean. Statistics: ``[score, F]``."""

    name = "formality_fscore"
    parameter_help: ClassVar[dict[str, str]] = {
        "pipeline": "the spaCy pipeline (catalog name) whose part-of-speech tags count",
        "oriented": "sign flipped for formal->informal, so higher is always toward the target",
    }
    reference = "Heylighen & Dewaele 1999's formula over spaCy part-of-speech tags"
    n_stats = 2
    aspect = Aspect.STYLE
    description = "Heylighen & Dewaele formality F-score from POS frequencies (spaCy), oriented by direction"
    libraries: ClassVar[tuple[str, ...]] = ("spacy",)
    value_range = (0.0, 100.0)

    def __init__(self, *, pipeline: str = "spacy-en-sm", oriented: bool = True) -> None:
        self.pipeline = pipeline
        self.oriented = bool(oriented)

    @property
    def needs(self) -> frozenset[str]:  # type: ignore[override]
        return frozenset({"target_style"}) if self.oriented else frozenset()

    def resources(self) -> dict[str, str]:
        from ...models.spec import model_spec

        ident = model_spec(self.pipeline).identity()
        return {"spacy_model": ident["model"], "spacy_model_hash": ident["model_hash"]}

    def segment_stats(self, batch: Batch) -> np.ndarray:
        from ...style_models.fscore import fscores

        f = fscores(batch.outputs, self.pipeline)
        if not self.oriented:
            return np.column_stack([f, f])
        score = np.empty(len(f))
        for i, d in enumerate(batch.directions):
            target = (d.target_style if d is not None else "").lower()
            if target not in ("formal", "informal"):
                raise InputError(f"metric {self.name!r} orients by formality: target style must be 'formal' or "
                                 f"'informal', got {target!r} (segment {batch.ids[i]!r}); use oriented=false")
            score[i] = f[i] if target == "formal" else 100.0 - f[i]
        return np.column_stack([score, f])

    def aggregate(self, stats: np.ndarray) -> float:
        s = self.scores_from_stats(stats)
        s = s[~np.isnan(s)]
        return float(np.mean(s)) if len(s) else float("nan")
