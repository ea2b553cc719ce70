"""Adversarial naturalness (Mir et al. 2019) as a metric: the share of outputs that look more human than their input.

Per system (one batch), :func:`styleval.naturalness.adversarial_scores` cross-fits a classifier that tells the inputs
(human-written) from the system's outputs; each segment is 1 when the classifier finds its output more likely
human-written than its input, else 0 (a tie is 0). Statistics per segment: ``[more_natural, p_output, p_input]``;
the corpus score is the mean of the first column.

The classifiers are fitted once on the whole batch; resampling (bootstrap intervals, paired tests) draws segments
with their out-of-fold decisions and does not refit them, so an interval reflects which segments were drawn, not
the variance of the classifier's training. A score depends on the batch it was fitted on: compare systems scored
with the same ``folds`` and ``seed``, and on the same inputs.
"""
from __future__ import annotations

from typing import ClassVar

import numpy as np

from ...errors import InputError
from ..content._common import check_number
from ..base import Aspect, Batch, Metric
from ..registry import register


@register
class Naturalness(Metric):
    """Share of outputs that a cross-fitted input-vs-output classifier finds more human-like than their input."""

    name = "naturalness"
    parameter_help: ClassVar[dict[str, str]] = {
        "classifier": "the adversarial classifier: unigram (bag of words) or embedding (MiniLM)",
        "folds": "cross-fitting folds: each output is judged by a classifier not trained on it",
        "seed": "seed of the folds and the classifier",
        "encoder": "the encoder of the embedding classifier",
    }
    reference = "Mir et al. 2019's adversarial classifiers, refitted per run"
    n_stats = 3
    version = "1"
    aspect = Aspect.FLUENCY
    needs = frozenset({"source"})
    higher_is_better = True
    value_range = (0.0, 1.0)
    description = ("adversarial naturalness (Mir et al. 2019): share of outputs judged more human-like than their "
                   "input by a cross-fitted classifier (classifier=unigram|embedding)")
    libraries = ("scikit-learn",)
    batch_independent = False
    batch_dependence = "its classifiers are fitted on the run's own sources and outputs"

    def __init__(self, *, classifier: str = "unigram", folds: int = 5, seed: int = 0, encoder: str = "minilm") -> None:
        from ...naturalness.adversarial import CLASSIFIERS

        if classifier not in CLASSIFIERS:
            raise InputError(f"naturalness: classifier must be one of {', '.join(CLASSIFIERS)}, not {classifier!r}")
        check_number(self.name, "folds", folds, low=2, integer=True)
        check_number(self.name, "seed", seed, low=0, integer=True)
        self.classifier = classifier
        self.folds = int(folds)
        self.seed = int(seed)
        self.encoder = encoder

    def get_params(self) -> dict[str, object]:
        params = super().get_params()
        if self.classifier != "embedding":
            params.pop("encoder")  # unused by the unigram classifier
        return params

    def segment_stats(self, batch: Batch) -> np.ndarray:
        from ...naturalness import adversarial_scores

        res = adversarial_scores(batch.sources, batch.outputs, classifier=self.classifier, folds=self.folds,
                                 seed=self.seed, encoder=self.encoder)
        more = (res.p_output > res.p_input).astype(float)
        return np.column_stack([more, res.p_output, res.p_input])

    def resources(self) -> dict[str, str]:
        if self.classifier != "embedding":
            return {}
        from ...models.spec import model_spec

        return model_spec(self.encoder).facts("encoder")
