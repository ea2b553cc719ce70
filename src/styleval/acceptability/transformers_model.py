"""A transformers sequence classifier read as an acceptability model (a CoLA-style classifier: folder or hub id).

P(acceptable) is the softmax probability of the label that means acceptable: the ``id2label`` name ``acceptable``
(without regard to case), or the one ``acceptable_label=`` names (a label name such as ``LABEL_1``, or its index).
A model with more labels reads the same way (the probability of that label among all). A single-output head is
refused: which side of its score is acceptable is not known. An empty (or blank) text scores 0 without running
the model, as with the shipped classifier; a text longer than the model reads is truncated and flagged.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from ..errors import InputError
from ..models.classifier import SequenceClassifier

ACCEPTABLE = "acceptable"


def acceptable_index(classifier: SequenceClassifier, acceptable_label: str | int | None) -> int:
    """The output of ``classifier`` that means acceptable (see the module doc); one error listing the labels and
    the parameter to set otherwise."""
    labels = list(classifier.labels)
    if len(labels) < 2:
        raise InputError(f"acceptability needs a classification head with an acceptable label; model "
                         f"{classifier.name!r} has a single output (a score)")
    lowered = [label.lower() for label in labels]
    if acceptable_label is None:
        if ACCEPTABLE in lowered:
            return lowered.index(ACCEPTABLE)
        raise InputError(f"model {classifier.name!r} has no label {ACCEPTABLE!r} (its labels: {', '.join(labels)}); "
                         "say which one means acceptable with acceptable_label= (a label or its index)")
    key = str(acceptable_label).strip().lower()
    if key in lowered:
        return lowered.index(key)
    if key.isdigit() and int(key) < len(labels):
        return int(key)
    raise InputError(f"acceptable_label={acceptable_label!r} is not a label of model {classifier.name!r} (its "
                     f"labels: {', '.join(labels)}, or their index 0-{len(labels) - 1})")


def p_acceptable(classifier: SequenceClassifier, index: int, texts: Sequence[str],
                 batch_size: int) -> tuple[np.ndarray, np.ndarray]:
    """``(P(acceptable), truncated)`` of each text; blank texts score 0 and are not run."""
    p = np.zeros(len(texts))
    truncated = np.zeros(len(texts), dtype=bool)
    rows = [i for i, t in enumerate(texts) if t.strip()]
    if rows:
        z, cut = classifier.logits([texts[i] for i in rows], batch_size)
        z = z - z.max(axis=1, keepdims=True)
        e = np.exp(z)
        p[rows] = (e / e.sum(axis=1, keepdims=True))[:, index]
        truncated[rows] = cut
    return p, truncated
