"""The settings of the training functions, grouped (frozen dataclasses, like the engine's ``StatisticsOptions``):
what a style model predicts (:class:`StyleTarget`), how its card describes it (:class:`CardText`), how a linear head
is fitted over feature blocks (:class:`HeadOptions`), how an encoder is fine-tuned with adapters
(:class:`FinetuneOptions`), how a causal LM is adapted to a style (:class:`LMAdapterOptions`) and how a style
model's raw score is calibrated (:class:`CalibrationOptions`). Those with rules check their values when made, so a
bad setting fails before any training."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from ..errors import InputError
from ..models.catalog import DEFAULT_CAUSAL_LM
from ..models.lora import DEFAULT_TARGETS
from ..style_models.model import CLASSIFIER, REGRESSOR

if TYPE_CHECKING:
    from ..style_models.features import Block


@dataclass(frozen=True)
class StyleTarget:
    """What a style model predicts: a ``classifier`` of string labels or a ``regressor`` whose ``poles`` name the
    low and high styles; ``aliases`` map more style names to labels (``non-toxic`` -> ``neutral``)."""

    kind: str = CLASSIFIER
    poles: tuple[str, str] = ("low", "high")
    aliases: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.kind not in (CLASSIFIER, REGRESSOR):
            raise InputError(f"kind must be {CLASSIFIER!r} or {REGRESSOR!r}, not {self.kind!r}")
        if len(self.poles) != 2:
            raise InputError(f"poles must name two styles (low, high), got {self.poles!r}")
        object.__setattr__(self, "poles", tuple(self.poles))
        object.__setattr__(self, "aliases", dict(self.aliases))


@dataclass(frozen=True)
class CardText:
    """How a trained model's card names and describes it: ``command`` rebuilds it, ``notes`` say how it came
    about."""

    name: str = "style-model"
    version: str = "1"
    description: str = ""
    command: str = ""
    notes: Sequence[str] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "notes", tuple(self.notes))


@dataclass(frozen=True)
class HeadOptions:
    """A linear head (logistic regression or ridge) over feature blocks.

    ``features``: block names (``"tfidf+hand"`` or a list) with ``feature_options`` per block; ``fitted_blocks``:
    blocks trained elsewhere, put first and used as they are; ``grid``: the regularisation values tried on the
    selection data (None: the kind's default grid), ranked by ``selection_metric`` (None: accuracy for classifiers,
    Spearman for regressors); ``text_norm``: the normalisation before every feature; ``seed``: the 10% selection
    split when no selection data is given."""

    features: str | Sequence[str] = "tfidf"
    feature_options: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    fitted_blocks: Sequence["Block"] = ()
    grid: Sequence[float] | None = None
    selection_metric: str | None = None
    text_norm: str = "html.unescape"
    seed: int = 13

    def __post_init__(self) -> None:
        object.__setattr__(self, "fitted_blocks", tuple(self.fitted_blocks))
        if self.grid is not None:
            object.__setattr__(self, "grid", tuple(self.grid))


@dataclass(frozen=True)
class FinetuneOptions:
    """Low-rank adapters of an encoder (``model``) and a linear head trained together: adapter ``rank``, ``alpha``
    and ``targets`` (the adapted layers), ``epochs`` (the best on the selection data is kept), learning rates of the
    adapters (``lr``) and the head (``head_lr``), ``batch_size``, ``max_length`` in tokens, ``weight_decay``,
    adapter ``dropout``, the ``warmup`` share of the steps, the torch ``device`` (None: CUDA when there is one)
    and the ``seed``."""

    model: str = "minilm"
    rank: int = 8
    alpha: float = 16.0
    targets: Sequence[str] = DEFAULT_TARGETS
    epochs: int = 4
    lr: float = 5e-4
    head_lr: float = 2e-3
    batch_size: int = 32
    max_length: int = 128
    weight_decay: float = 0.01
    dropout: float = 0.1
    warmup: float = 0.06
    device: str | None = None
    seed: int = 13

    def __post_init__(self) -> None:
        object.__setattr__(self, "targets", tuple(self.targets))
        for name in ("rank", "epochs", "batch_size", "max_length"):
            if not getattr(self, name) >= 1:
                raise InputError(f"{name} must be at least 1, got {getattr(self, name)!r}")
        if not 0.0 <= self.warmup < 1.0 or not 0.0 <= self.dropout < 1.0:
            raise InputError(f"warmup and dropout must be in [0, 1), got {self.warmup!r} and {self.dropout!r}")


@dataclass(frozen=True)
class LMAdapterOptions:
    """A LoRA adapter of a causal LM (``base``) trained on one style's sentences: ``epochs`` over them, or exactly
    ``max_steps`` steps when given, of ``batch_size`` sentences cut to ``max_tokens`` tokens, at learning rate
    ``lr``, adapter ``rank`` and ``alpha``, with ``seed``."""

    base: str = DEFAULT_CAUSAL_LM
    epochs: float = 1.0
    max_steps: int | None = None
    batch_size: int = 16
    lr: float = 5e-4
    rank: int = 8
    alpha: int = 16
    max_tokens: int = 64
    seed: int = 0


@dataclass(frozen=True)
class CalibrationOptions:
    """How a raw style score is calibrated: ``method`` (``platt`` or ``isotonic``) and the ``threshold_rule`` that
    places the decision; the figures use ``folds``-fold stratified cross-validation and ``n_boot`` bootstrap draws,
    both seeded with ``seed``."""

    method: str = "platt"
    threshold_rule: str = "probability"
    folds: int = 5
    n_boot: int = 1000
    seed: int = 13


@dataclass(frozen=True)
class AdapterFit:
    """The loop that trains adapters and a head: ``epochs`` over the pairs in batches of ``batch_size``, learning
    rate ``lr`` (AdamW, linear warm-up and decay), batches shuffled with ``seed``."""

    epochs: int = 2
    lr: float = 5e-4
    batch_size: int = 32
    seed: int = 13


@dataclass(frozen=True)
class CrossEncoderOptions:
    """A LoRA cross-encoder: adapter ``rank`` and ``alpha``, pairs cut to ``max_length`` tokens, trained on
    ``device`` with the loop ``fit``."""

    rank: int = 16
    alpha: float = 32.0
    max_length: int = 128
    device: str = "cpu"
    fit: AdapterFit = AdapterFit()
