"""Calibration of two-style models: a decision threshold and a probability map fitted on labelled in-domain text.

A model's *raw score* of a text is one number that grows with the ``positive`` style: the logit of the classifier's
probability of that label, or the regressor's score (its high pole). A :class:`Calibration` holds

* ``threshold``: the decision point on the raw score (a text is ``positive`` when its score >= threshold);
* a monotone probability map from raw score to P(positive): ``platt`` (``sigmoid(a * score + b)``, fitted with
  class-balanced weights, so it assumes equal priors) or ``isotonic`` (a step function from pool-adjacent-violators,
  stored as its breakpoints), or none (``threshold`` method);
* the identity of the data it was fitted on, and balanced accuracy before and after (in-sample and cross-validated).

The default threshold rule (``probability``) puts the threshold where the fitted map crosses 0.5; ``balanced``
puts it at the score that maximises balanced accuracy on the calibration sample (midway between neighbours).
Stored in the model card under ``calibration`` (plain JSON numbers), so it changes the model's content hash and
therefore every signature made with it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import InputError

METHODS = ("platt", "isotonic", "threshold")
THRESHOLD_RULES = ("probability", "balanced")


def sigmoid(z: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.clip(z, -500, 500)))


def balanced_accuracy(truth: np.ndarray, pred: np.ndarray) -> float:
    """Mean of the recall of each class (``truth`` and ``pred`` booleans); NaN when a class is absent."""
    truth, pred = np.asarray(truth, bool), np.asarray(pred, bool)
    if truth.all() or not truth.any():
        return float("nan")
    return float(0.5 * (np.mean(pred[truth]) + np.mean(~pred[~truth])))


@dataclass
class Calibration:
    """A fitted decision threshold and probability map of one model (see the module docstring)."""

    method: str
    positive: str
    negative: str
    threshold: float
    threshold_rule: str = "probability"
    platt: tuple[float, float] | None = None
    isotonic: tuple[list[float], list[float]] | None = None
    data: dict[str, Any] = field(default_factory=dict)
    scores: dict[str, Any] = field(default_factory=dict)
    created: str = ""

    # -- applying it ---------------------------------------------------------------------------------
    def probability(self, raw: np.ndarray) -> np.ndarray:
        """Calibrated P(positive) of raw scores; for ``threshold`` calibrations, a logistic of the distance to the
        threshold (0.5 at it), so that the decision and the probability agree."""
        raw = np.asarray(raw, float)
        if self.method == "platt" and self.platt is not None:
            return sigmoid(self.platt[0] * raw + self.platt[1])
        if self.method == "isotonic" and self.isotonic is not None:
            return np.interp(raw, self.isotonic[0], self.isotonic[1])
        return sigmoid(raw - self.threshold)

    def decide(self, raw: np.ndarray) -> np.ndarray:
        """True where a text is judged ``positive``."""
        return np.asarray(raw, float) >= self.threshold

    @property
    def probability_threshold(self) -> float:
        return float(self.probability(np.array([self.threshold]))[0])

    def identity(self) -> str:
        """Short identity for signatures: method, threshold and the calibration data's hash."""
        digest = str(self.data.get("data_hash", ""))[:12]
        return f"{self.method}:{self.threshold_rule}:t={self.threshold:.6g}:data={digest}"

    # -- storage -------------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"method": self.method, "positive": self.positive, "negative": self.negative,
                               "threshold": self.threshold, "threshold_rule": self.threshold_rule,
                               "probability_threshold": self.probability_threshold,
                               "raw_score": "logit of P(positive)" if self.data.get("kind") != "regressor"
                               else "regressor score",
                               "data": self.data, "scores": self.scores, "created": self.created}
        if self.platt is not None:
            out["platt"] = {"a": self.platt[0], "b": self.platt[1]}
        if self.isotonic is not None:
            out["isotonic"] = {"x": self.isotonic[0], "y": self.isotonic[1]}
        return out

    @classmethod
    def from_dict(cls, d: dict[str, Any], where: Any = None) -> "Calibration":
        try:
            method = d["method"]
            if method not in METHODS:
                raise InputError(f"unknown calibration method {method!r} (known: {', '.join(METHODS)})", where)
            platt = (float(d["platt"]["a"]), float(d["platt"]["b"])) if d.get("platt") else None
            iso = d.get("isotonic")
            isotonic = ([float(v) for v in iso["x"]], [float(v) for v in iso["y"]]) if iso else None
            if method == "platt" and platt is None or method == "isotonic" and isotonic is None:
                raise InputError(f"calibration method {method!r} has no fitted map", where)
            return cls(method=method, positive=str(d["positive"]), negative=str(d["negative"]),
                       threshold=float(d["threshold"]), threshold_rule=str(d.get("threshold_rule", "probability")),
                       platt=platt, isotonic=isotonic, data=dict(d.get("data", {})),
                       scores=dict(d.get("scores", {})), created=str(d.get("created", "")))
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(f"malformed calibration in the model card ({exc!r})", where) from None
