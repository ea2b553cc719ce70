"""A transformers sequence classifier read as a style model (``style_accuracy:model=DIR`` or a hub id).

The styles of the head's outputs come from ``config.id2label``, matched to a direction's styles without regard to
case; ``labels=`` renames them: ``"LABEL_0=informal,LABEL_1=formal"`` (the model's label, then the style; labels
left out keep their names) or ``"informal,formal"`` (one style per output, in index order).

* **Two or more labels**: the distribution is the softmax of the logits. The probability of the target style is
  taken *against the source style*: ``P(target) / (P(target) + P(source))``, which for two labels is P(target)
  itself; an output counts for the target when that probability beats the source's (a tie goes to the label of
  lower index, as an argmax does). ``style_emd`` reads the whole distribution.
* **One output** (a formality ranker or regressor): ``labels="LOW,HIGH"`` names the styles its score runs from and
  to, and ``threshold=`` is required: an output counts for HIGH when its score is at least the threshold, and
  P(HIGH) = sigmoid(score − threshold) (0.5 at the threshold; a logistic of the distance to it, as a
  ``threshold`` calibration maps a score), so the distribution is ``[1 − P(HIGH), P(HIGH)]``.

Such a model has no calibration (``style_calibration: none`` in the signature); its identity is the folder's
content hash or the hub id's resolved commit.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..errors import InputError
from ..models.classifier import SequenceClassifier
from .model import CLASSIFIER, match_style

LABELS_EXAMPLE = 'labels="LABEL_0=informal,LABEL_1=formal"'


def parse_labels(text: str | None, model_labels: Sequence[str], *, single: bool) -> tuple[str, ...]:
    """The style of each output of a head with ``model_labels`` (see the module doc); for a single-output head,
    the two poles ``(low, high)``."""
    if text is None or not str(text).strip():
        if single:
            raise InputError("a single-output (regression) head needs labels=\"LOW,HIGH\" naming the styles its score "
                             "runs from and to, and threshold= for its decision")
        return tuple(model_labels)
    items = [item.strip() for item in str(text).split(",") if item.strip()]
    if all("=" not in item for item in items):
        want = 2 if single else len(model_labels)
        if len(items) != want:
            raise InputError(f"labels={text!r} names {len(items)} style(s), but the model has "
                             + ("one output, whose two poles need LOW,HIGH" if single
                                else f"{want} labels ({', '.join(model_labels)})"))
        return tuple(items)
    if single:
        raise InputError(f"labels={text!r}: a single-output head takes its two poles as LOW,HIGH, not a mapping")
    lowered = [label.lower() for label in model_labels]
    styles = list(model_labels)
    for item in items:
        old, sep, new = item.partition("=")
        if not sep or not old.strip() or not new.strip():
            raise InputError(f"labels={text!r}: {item!r} is not MODEL_LABEL=STYLE")
        key = old.strip().lower()
        if key not in lowered:
            raise InputError(f"labels={text!r}: the model has no label {old.strip()!r} (its labels: "
                             f"{', '.join(model_labels)})")
        styles[lowered.index(key)] = new.strip()
    return tuple(styles)


@dataclass
class TransformersStyleModel:
    """A :class:`SequenceClassifier` with the styles of its outputs, read by the style metrics."""

    classifier: SequenceClassifier
    labels: list[str]  # the style of each output; (low, high) for a single-output head
    threshold: float | None = None  # single-output heads only
    batch_size: int = 32
    kind = CLASSIFIER
    calibration = None
    aliases: dict[str, str] | None = None

    @classmethod
    def of(cls, classifier: SequenceClassifier, labels: str | None = None, threshold: float | None = None,
           batch_size: int = 32) -> "TransformersStyleModel":
        single = classifier.n_outputs == 1
        styles = parse_labels(labels, classifier.labels, single=single)
        if single and threshold is None:
            raise InputError(f"model {classifier.name!r} has a single output (a score, not labels): give threshold= "
                             "(the score from which an output counts for the high style, "
                             f"{styles[1]!r})")
        if not single and threshold is not None:
            raise InputError(f"threshold= applies to a single-output head; model {classifier.name!r} has "
                             f"{classifier.n_outputs} labels ({', '.join(classifier.labels)})")
        return cls(classifier=classifier, labels=list(styles), threshold=threshold, batch_size=batch_size)

    @property
    def name(self) -> str:
        return self.classifier.name

    @property
    def cased(self) -> bool:
        return self.classifier.cased

    @property
    def single(self) -> bool:
        return self.classifier.n_outputs == 1

    def style_index(self, style: str) -> int:
        """Output (or pole: 0 low, 1 high) of a style name; one error naming the labels and ``labels=`` otherwise."""
        index = match_style(style, self.labels, {})
        if index is not None:
            return index
        shown = ", ".join(self.classifier.labels)
        mapped = "" if list(self.classifier.labels) == self.labels else f" (read as {', '.join(self.labels)})"
        raise InputError(f"style {style!r} is not among the labels of model {self.name!r}: {shown}{mapped}; map "
                         f"them to the direction's styles with {LABELS_EXAMPLE}" if not self.single else
                         f"style {style!r} is neither pole of model {self.name!r} ({', '.join(self.labels)}); name "
                         "the poles with labels=\"LOW,HIGH\"")

    def distribution(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """``(probabilities (n, k) over self.labels, truncated (n,))`` (see the module doc)."""
        z, truncated = self.classifier.logits(texts, self.batch_size)
        return self._probabilities(z), truncated

    def _probabilities(self, z: np.ndarray) -> np.ndarray:
        if self.single:
            high = 1.0 / (1.0 + np.exp(-(z[:, 0] - float(self.threshold or 0.0))))
            return np.column_stack([1.0 - high, high])
        z = z - z.max(axis=1, keepdims=True)
        e = np.exp(z)
        return e / e.sum(axis=1, keepdims=True)

    def target_decisions(self, texts: Sequence[str], target: np.ndarray,
                         source: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(1.0 where an output counts for its target, P(target) against the source, truncated)``."""
        rows = np.arange(len(target))
        z, truncated = self.classifier.logits(texts, self.batch_size)
        probs = self._probabilities(z)
        pt, ps = probs[rows, target], probs[rows, source]
        if self.single:
            high = z[:, 0] >= float(self.threshold or 0.0)
            return (high == (target == 1)).astype(float), pt, truncated
        p = pt if probs.shape[1] == 2 else pt / np.maximum(pt + ps, np.finfo(float).tiny)
        wins = np.where(pt == ps, target < source, pt > ps)
        return wins.astype(float), p, truncated

    def resources(self) -> dict[str, str]:
        ident = self.classifier.identity()
        out = {"style_model": ident["model"], "style_model_hash": ident["model_hash"],
               "style_labels": ",".join(self.labels), "style_calibration": "none"}
        if self.threshold is not None:
            out["style_threshold"] = f"{self.threshold:.6g}"
        return out
