"""Shared machinery of metrics built on a style model (shipped name, model folder, or ``auto``), and the ``case``
parameter every one of them takes.

``case`` says whether the model may see case:

* ``blind``: the text given to the model is normalised first (``lower-tokens``: lower-cased Penn-style tokens, see
  :mod:`styleval.textnorm.lower_tokens`), so casing and tokenization cannot move a score; a shipped pair's
  case-blind model is used;
* ``sensitive``: a cased model sees the text as written, so a lower-cased output counts against formality; a shipped
  pair (:data:`styleval.models.registry.CASED_SLOTS`) gives its cased slot; a model that is case-blind by
  construction is refused;
* ``auto`` (the default): decided once per corpus from its inputs (:mod:`styleval.textnorm.casing`): ``blind`` when
  the sources and references were lower-cased or tokenized by the release, else ``sensitive`` (with a case-blind
  model, and no cased slot, the model stays blind and the run facts say so).

A transformers sequence classifier (a folder with ``config.json``, or a hub id with ``STYLEVAL_ALLOW_HUB=1``) is a
style model too: ``labels`` maps its ``id2label`` names to styles, ``threshold`` decides for a single-output head,
``batch_size`` sets how many texts of similar length run together (no effect on scores); see
:mod:`styleval.style_models.transformers_model`. Texts longer than the model reads are truncated and flagged
(``truncated`` outputs, ``source_truncated`` sources).

The decision goes into the signature's resources (``case_as``) and, with the detector's shares, into the run facts
(``extra["case"]``). A batch holds one system's segments, whose sources and references all systems share, so in
``score`` and ``evaluate`` the decision is the same for every system. A chunk could decide otherwise than the whole
corpus, so ``case=auto`` makes the metric batch-dependent and ``score --stream`` refuses it: pass ``case=`` there.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Sequence

import numpy as np

from ...errors import InputError
from ...records import Direction
from ...style_models.model import CLASSIFIER
from ...style_models.pretrained import AUTO, AnyStyleModel, choose_shipped  # model="auto"; case="auto" the same
from ...textnorm.casing import BLIND, SENSITIVE, CaseEvidence, release_case
from ..base import Aspect, Batch, Metric, SegmentStats
from ..content._common import check_number

CASES = (AUTO, SENSITIVE, BLIND)
#: What the transformers classifier parameters mean (``styleval metrics NAME``).
CLASSIFIER_HELP: dict[str, str] = {
    "labels": "a transformers classifier's labels as styles: \"LABEL_0=informal,LABEL_1=formal\" or one style per "
              "output in order; for a single-output head LOW,HIGH (default: config.id2label)",
    "threshold": "a single-output (regression) head's decision: the score from which an output counts for the "
                 "high style; P(high) = sigmoid(score - threshold)",
    "batch_size": "texts per batch of a transformers classifier, sorted by length (does not change scores)",
}


def check_case(case: str) -> str:
    if case not in CASES:
        raise InputError(f"case must be one of {', '.join(CASES)}, not {case!r}")
    return case


def check_classifier_params(metric: str, labels: str | None, threshold: float | None, batch_size: int) -> None:
    """The transformers classifier parameters, refused at construction when malformed."""
    if labels is not None and (not isinstance(labels, str) or not labels.strip()):
        raise InputError(f"metric {metric!r}: labels must be text like \"LABEL_0=informal,LABEL_1=formal\", got "
                         f"{labels!r}")
    if threshold is not None:
        check_number(metric, "threshold", threshold)
    check_number(metric, "batch_size", batch_size, low=1, integer=True)


def truncation_flags(output: np.ndarray | None, source: np.ndarray | None = None) -> dict[str, list[int]]:
    """The rows whose output (``truncated``) or source (``source_truncated``) the classifier cut."""
    flags = {}
    for name, rows in (("truncated", output), ("source_truncated", source)):
        if rows is not None and np.any(rows):
            flags[name] = [int(i) for i in np.flatnonzero(rows)]
    return flags


@dataclass(frozen=True)
class CaseChoice:
    """How one batch is scored: the model folder's name, whether the model sees the text blind or as written, and
    why (``evidence``: the detector's shares under ``auto``)."""

    model: str
    case_as: str
    evidence: CaseEvidence | None
    note: str = ""

    def facts(self) -> dict[str, Any]:
        out: dict[str, Any] = {"case_as": self.case_as, "model": self.model}
        if self.evidence is not None:
            out.update(evidence=self.evidence.to_dict(), reason=self.evidence.reason())
        if self.note:
            out["note"] = self.note
        return out


def _styles(batch: Batch) -> set[str]:
    out: set[str] = set()
    for d in batch.directions:
        if d is not None:
            out.update({d.source_style, d.target_style})
    return out


class StyleModelMetric(Metric):
    """A style metric scoring outputs with a style model chosen by the ``model`` parameter."""

    aspect = Aspect.STYLE
    needs: ClassVar[frozenset[str]] = frozenset({"target_style"})
    libraries: ClassVar[tuple[str, ...]] = ("scikit-learn", "numpy")
    model_kind: ClassVar[str] = CLASSIFIER
    model: str
    case: str
    batch_dependence = ("case=auto decides case-blind or case-sensitive reading from each batch's sources and "
                        "references; give case=blind or case=sensitive to score in chunks")

    @property
    def batch_independent(self) -> bool:  # type: ignore[override]
        return self.case != AUTO

    def get_params(self) -> dict:
        params = super().get_params()
        params.pop("batch_size", None)
        for name in ("labels", "threshold"):  # transformers classifiers only: absent from other models' identity
            if params.get(name, 0) is None:
                params.pop(name)
        return params

    def style_model(self, name: str) -> AnyStyleModel:
        """The style model ``name``, read with this metric's classifier parameters."""
        from ...style_models.pretrained import load_style_model

        return load_style_model(name, labels=getattr(self, "labels", None), threshold=getattr(self, "threshold", None),
                                batch_size=int(getattr(self, "batch_size", 32)))

    def model_name(self, batch: Batch | None = None) -> str:
        """The style model this metric uses for ``batch``: ``model``, or the shipped one ``auto`` picks for the
        batch's styles."""
        if self.model != AUTO:
            return self.model
        if batch is None:
            raise InputError("model='auto' is resolved from the directions of a batch")
        return choose_shipped(self.model_kind, _styles(batch))

    def case_choice(self, batch: Batch) -> CaseChoice:
        """The model and casing this batch is scored with (see the module doc)."""
        from ...models import registry

        name = self.model_name(batch)
        evidence = release_case(batch.sources, batch.references) if self.case == AUTO else None
        wanted = evidence.decision if evidence is not None else self.case
        if wanted == BLIND:
            return CaseChoice(name, BLIND, evidence)
        slot = registry.cased_slot(registry.STYLE, name)
        if slot is not None:
            return CaseChoice(slot, SENSITIVE, evidence)
        if self.style_model(name).cased:
            return CaseChoice(name, SENSITIVE, evidence)
        if evidence is None:
            raise InputError(f"case=sensitive needs a cased model, but style model {name!r} is case-blind (it "
                             "lower-cases its input) and no cased model is shipped under its name; use case=blind "
                             "or a cased model")
        return CaseChoice(name, BLIND, evidence, note=f"style model {name!r} is case-blind and has no cased slot")

    def load(self, batch: Batch | None = None, choice: CaseChoice | None = None) -> AnyStyleModel:
        name = choice.model if choice is not None else self.model_name(batch)
        model = self.style_model(name)
        if model.kind != self.model_kind:
            raise InputError(f"metric {self.name!r} needs a {self.model_kind}, but model {name!r} is a {model.kind}")
        return model

    @staticmethod
    def seen(model: AnyStyleModel, texts: Sequence[str], choice: CaseChoice) -> list[str]:
        """The texts as ``model`` is given them: normalised (``lower-tokens``) for a cased model scoring blind, as
        written otherwise (a case-blind model normalises them itself)."""
        if choice.case_as == BLIND and model.cased:
            from ...textnorm.lower_tokens import normalise

            return normalise(texts, "lower-tokens")
        return list(texts)

    def compute(self, batch: Batch) -> SegmentStats:
        """The statistics, with the identity of the model that computed them and how it saw case among the resolved
        resources, and the casing decision with its evidence in the run facts (what ``auto`` chose is known only
        once a batch is seen)."""
        out = super().compute(batch)
        choice = self.case_choice(batch)
        out.resources.update(self._model_resources(choice.model))
        out.resources["case_as"] = choice.case_as
        out.extra["case"] = choice.facts()
        return out

    def resources(self) -> dict[str, str]:
        from ...models import registry

        if self.model == AUTO:
            return {"style_model": AUTO}
        slot = registry.cased_slot(registry.STYLE, self.model)
        if slot is not None and self.case == AUTO:  # which model of the pair is known per batch
            return {"style_model": self.model}
        return self._model_resources(slot if slot is not None and self.case == SENSITIVE else self.model)

    def _model_resources(self, name: str) -> dict[str, str]:
        res = self.style_model(name).resources()
        if not getattr(self, "calibrated", True) and "style_calibration" in res:
            res["style_calibration"] = "not used"
        return res

    @staticmethod
    def target_index(model: AnyStyleModel, directions: list[Direction | None], side: str = "target") -> np.ndarray:
        """Index of each segment's target style (``side="source"``: source style) among the model's labels (poles
        for a regressor)."""
        cache: dict[str, int] = {}
        out = []
        for d in directions:
            if d is None:
                raise InputError("a segment has no transfer direction")
            style = d.target_style if side == "target" else d.source_style
            if style not in cache:
                cache[style] = model.style_index(style)
                model.style_index(d.source_style if side == "target" else d.target_style)  # the other side too
            out.append(cache[style])
        return np.asarray(out, dtype=int)
