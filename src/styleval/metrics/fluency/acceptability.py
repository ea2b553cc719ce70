"""``acceptability``: the shipped classifier's probability that each output is acceptable English.

Segment score: P(acceptable) from :mod:`styleval.acceptability.model` (SmolLM2 token statistics of the output
after ``normalize``: by default ``auto``, which decides per text: a text with no capital letter is true-cased, one
showing tokenization spaces detokenized, so a score never depends on the other rows of its system; ``auto-corpus``
decides once per system, see :mod:`styleval.textnorm.readable`; a logistic regression trained on
detok+truecase human-written sentences of four registers against automatically corrupted copies). The model's
decision threshold is folded into it: an output is acceptable when its score is >= 0.5, and the corpus score is the
share of acceptable outputs (the FL of ParaDetox, Logacheva et al. 2022). Statistics ``[p, acceptable, truncated]``;
an empty output scores 0 and is flagged. The signature names the model (with its content hash), its LM and its
unigram model.

``model`` may also be a transformers sequence classifier (a CoLA-style folder, or a hub id with
``STYLEVAL_ALLOW_HUB=1``): P(acceptable) is then its softmax probability of the acceptable label (``id2label``'s
``acceptable``, or ``acceptable_label=``; :mod:`styleval.acceptability.transformers_model`), on the outputs after
``normalize`` as above, an output acceptable when P >= 0.5; the signature names the model with its content hash
(a hub id: its resolved commit).
"""
from __future__ import annotations

from typing import Any, Callable, ClassVar

import numpy as np

from ...errors import InputError
from ...models import catalog as cat
from ..base import Aspect, Batch, Metric, SegmentStats
from ..content._common import check_number
from ..registry import register
from .lm_shared import (CORPUS_NORMALISATION, applied_normalisation, normalisation_resources,
                        scored_texts)

P, ACCEPTABLE, TRUNC = 0, 1, 2
PASS = 0.5  # an output is acceptable when P >= PASS


@register
class Acceptability(Metric):
    """Share of outputs that the shipped acceptability classifier finds acceptable English (segment: P)."""

    name = "acceptability"
    parameter_help: ClassVar[dict[str, str]] = {
        "model": "the acceptability classifier: shipped name or model folder",
        "acceptable_label": "a transformers classifier's label (name or index) that means acceptable (default: the "
                            "id2label name 'acceptable')",
        "batch_size": "texts per batch of a transformers classifier, sorted by length (does not change scores)",
    }
    n_stats = 3
    version = "2"  # 2: normalize=auto decides per text (1: per system, now auto-corpus)
    aspect = Aspect.FLUENCY
    higher_is_better = True
    value_range = (0.0, 1.0)
    pass_threshold = PASS
    description = ("P(acceptable English) from a classifier on SmolLM2 token statistics (trained on human text vs "
                   "corrupted copies); corpus: share of outputs with P >= 0.5")
    libraries = ("torch", "sacremoses")

    def __init__(self, *, model: str = "acceptability-smollm2", normalize: str = "auto",
                 batch_tokens: int = 4096, acceptable_label: str | None = None, batch_size: int = 32) -> None:
        from ...acceptability.model import load_acceptability
        from ...models import registry
        from ...models.spec import model_spec
        from ...textnorm.readable import check_mode

        self.model = model
        self.normalize = check_mode(normalize)
        check_number(self.name, "batch_tokens", batch_tokens, low=1, integer=True)
        check_number(self.name, "batch_size", batch_size, low=1, integer=True)
        self.batch_tokens = int(batch_tokens)
        self.batch_size = int(batch_size)
        self.acceptable_label = None if acceptable_label is None else str(acceptable_label)
        self._spec = model_spec(model, shipped=registry.ACCEPTABILITY, expect=(cat.STYLEVAL, cat.TRANSFORMERS))
        self._model = None
        if self._spec.kind != cat.TRANSFORMERS:
            if acceptable_label is not None:
                raise InputError(f"acceptable_label= reads a transformers classifier; {model!r} is a styleval "
                                 "acceptability model")
            self._model = load_acceptability(model)
        self.progress: Callable[[str, int, int], None] | None = None

    batch_dependence = CORPUS_NORMALISATION

    @property
    def batch_independent(self) -> bool:  # type: ignore[override]
        return self.normalize != "auto-corpus"

    def get_params(self) -> dict[str, Any]:
        params = super().get_params()
        params.pop("batch_tokens", None)  # does not change scores
        params.pop("batch_size", None)
        if params.get("acceptable_label", 0) is None:  # transformers classifiers only
            params.pop("acceptable_label")
        return params

    def _classifier(self) -> tuple[Any, int]:
        """The transformers classifier (loaded once per process) and the index of its acceptable label."""
        from ...acceptability.transformers_model import acceptable_index
        from ...models.classifier import load_classifier

        clf = load_classifier(self._spec)
        return clf, acceptable_index(clf, self.acceptable_label)

    def segment_stats(self, batch: Batch) -> SegmentStats:
        backends: set[str] = set()
        mode, applied = applied_normalisation(self.normalize, batch.outputs)
        if self._model is None:
            return self._classifier_stats(batch, mode, applied)
        scored, _ = scored_texts(self._model.lm, batch.outputs, normalize=mode,
                                 batch_tokens=self.batch_tokens, progress=self.progress, backends=backends)
        p = self._model.predict_scored(scored)
        stats = np.column_stack([p, (p >= PASS).astype(float), scored.truncated.astype(float)])
        return SegmentStats(values=stats, flags={"truncated": [int(i) for i in np.flatnonzero(stats[:, TRUNC])]},
                            resources={**({"lm_backend": ",".join(sorted(backends))} if backends else {}),
                                       **applied})

    def _classifier_stats(self, batch: Batch, mode: str, applied: dict[str, str]) -> SegmentStats:
        """The statistics from a transformers classifier, on the outputs normalised as ``mode`` says."""
        from ...acceptability.transformers_model import p_acceptable
        from ...textnorm.readable import normalize_all

        clf, index = self._classifier()
        p, truncated = p_acceptable(clf, index, normalize_all(batch.outputs, mode), self.batch_size)
        stats = np.column_stack([p, (p >= PASS).astype(float), truncated.astype(float)])
        return SegmentStats(values=stats, flags={"truncated": [int(i) for i in np.flatnonzero(truncated)]},
                            resources=applied)

    def aggregate(self, stats: np.ndarray) -> float:
        stats = np.asarray(stats, dtype=float)
        return float(np.mean(stats[:, ACCEPTABLE])) if len(stats) else float("nan")

    def resources(self) -> dict[str, str]:
        from ...acceptability.unigram import load_unigram
        from ...lm.loading import resolve_causal_lm

        if self._model is None:
            clf, index = self._classifier()
            ident = clf.identity()
            return {"acceptability_model": ident["model"], "acceptability_hash": ident["model_hash"],
                    "acceptable_as": clf.labels[index]}
        out = dict(self._model.identity())
        out.update(resolve_causal_lm(self._model.lm).identity())
        out.update(load_unigram(self._model.unigram).identity())
        out["trained_on"] = f"normalize={self._model.normalize}"
        out.update(normalisation_resources(self.normalize))
        return out
