"""A preservation model: a fixed-weight average of scoring parts, each giving the probability (0-1) that an
output keeps the meaning of its comparison text (a source or a reference).

The parts, by their ``kind`` in ``model.json``:

- ``head``: a logistic head over pair features of a frozen encoder and a spaCy parse
  (:mod:`styleval.preservation.features`). Its score is the head's probability divided by the probability of an
  identical pair (the *ceiling*; coefficients are sign-constrained so no pair goes higher), so an identical pair
  scores 1. File ``weights.npz`` (feature means and scales, coefficients, intercept, ceiling); the style words
  set aside from content words are in ``vocab.json``. Every model has the head, first.
- ``cross_encoder``: a LoRA-tuned encoder that reads both texts as one sequence
  (:mod:`styleval.preservation.cross_encoder`); file ``cross.npz``. Its probability has no ceiling: with it, an
  identical pair scores a little below 1 (.92-.97 on the shipped model's test sentences).
- ``cosine``: the plain cosine of the frozen encoder's sentence embeddings (the head's first feature), clipped
  to 0-1; no file. The learned parts separate kept from changed meaning, the cosine grades how close two similar
  texts are.

The weights are positive and add up to 1; the score is ``sum(weight * part score)``, accumulated in list order
as a running mean (each part is blended into the mean of the parts before it at ``weight / (sum of the weights
so far)``). That is the arithmetic the earlier formats used, so their models score bit for bit the same after
:func:`upgrade_model_folder`.

Folder format :data:`FORMAT` (plain files; nothing pickled): ``model.json`` (format, encoder, spaCy pipeline,
length limit, feature names and ``parts``: a list of ``{"kind", "file", "weight"}``), the parts' files,
``vocab.json``, ``model_card.json`` and ``README.md``.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from ..errors import InputError
from ..models import catalog as cat
from ..models.registry import MANIFEST, read_manifest
from ..progress import Progress
from .cross_encoder import CrossEncoder
from .features import FEATURES, IDENTITY, PairFeaturizer

FORMAT = "styleval-preservation/6"
#: The kinds of part, in the order a model lists them, and the file each is saved to.
PART_FILES: dict[str, str | None] = {"head": "weights.npz", "cross_encoder": "cross.npz", "cosine": None}
#: Formats of earlier styleval that :func:`upgrade_config` converts (3 and 5 held parts that left the package).
UPGRADABLE = ("styleval-preservation/1", "styleval-preservation/2", "styleval-preservation/4")


@dataclass(frozen=True)
class Part:
    """One part of a model's average: its kind (a key of :data:`PART_FILES`), weight, and file in the folder."""

    kind: str
    weight: float
    file: str | None = None

    def entry(self) -> dict[str, Any]:
        """The part as ``model.json`` lists it."""
        file = self.file or PART_FILES[self.kind]
        return {"kind": self.kind, **({"file": file} if file else {}), "weight": self.weight}


def check_parts(parts: Sequence[Part], *, has_cross: bool) -> tuple[Part, ...]:
    """``parts`` if they make a model: known kinds, each once, in :data:`PART_FILES` order with the head first,
    positive weights adding up to 1, and a cross-encoder part exactly when there is a cross-encoder."""
    kinds = [p.kind for p in parts]
    unknown = sorted(set(kinds) - set(PART_FILES))
    if unknown:
        raise InputError(f"unknown preservation-model part kind(s) {unknown}; known: {', '.join(PART_FILES)}")
    if kinds != [k for k in PART_FILES if k in kinds] or not kinds or kinds[0] != "head":
        raise InputError(f"parts must be the head, then optionally cross_encoder and cosine, each once; got {kinds}")
    if any(not (math.isfinite(p.weight) and p.weight > 0) for p in parts):
        raise InputError(f"part weights must be positive numbers, got {[p.weight for p in parts]}")
    total = sum(p.weight for p in parts)
    if abs(total - 1.0) > 1e-6:
        raise InputError(f"part weights must add up to 1, got {total:g}")
    if ("cross_encoder" in kinds) != has_cross:
        raise InputError("a cross_encoder part needs a cross-encoder, and a cross-encoder needs a cross_encoder part")
    return tuple(parts)


@dataclass(frozen=True)
class LogisticHead:
    """The learned head over pair features: ``sigmoid(((x - mean) / scale) @ coef + intercept) / ceiling``, capped
    at 1 (``ceiling``: the head's score of an identical pair, so that one scores 1)."""

    mean: np.ndarray
    scale: np.ndarray
    coef: np.ndarray
    intercept: float
    ceiling: float = 1.0

    def __post_init__(self) -> None:
        if not 0.0 < self.ceiling <= 1.0:
            raise InputError(f"ceiling must be in (0, 1], got {self.ceiling}")


@dataclass(frozen=True)
class PairSetup:
    """How a model's pair features are computed: the sentence ``encoder`` and spaCy pipeline, the ``style_words``
    left out of the content-word features, the encoder's ``max_length`` in tokens and its ``backend``."""

    encoder: str = cat.DEFAULT_ENCODER
    spacy_model: str = cat.DEFAULT_SPACY
    style_words: Sequence[str] = ()
    max_length: int = 128
    backend: str = "auto"


class PreservationModel:
    """A learned content metric: ``parts`` (the logistic ``head`` over pair features computed as ``pairs`` says,
    an optional ``cross`` encoder, the plain cosine) averaged with their weights."""

    def __init__(self, *, head: LogisticHead, pairs: PairSetup | None = None, features: Sequence[str] = FEATURES,
                 card: dict[str, Any] | None = None, folder: Path | None = None, cross: CrossEncoder | None = None,
                 parts: Sequence[Part] = (Part("head", 1.0),)) -> None:
        if tuple(features) != FEATURES:
            raise InputError(f"model features {list(features)} differ from this styleval's {list(FEATURES)}")
        pairs = pairs or PairSetup()
        self.encoder = pairs.encoder
        self.spacy_model = pairs.spacy_model
        self.style_words = sorted(set(pairs.style_words))
        self.mean = np.asarray(head.mean, dtype=np.float64)
        self.scale = np.asarray(head.scale, dtype=np.float64)
        self.coef = np.asarray(head.coef, dtype=np.float64)
        self.intercept = float(head.intercept)
        self.ceiling = float(head.ceiling)
        self.max_length = int(pairs.max_length)
        self.card = dict(card or {})
        self.folder = folder
        self.featurizer = PairFeaturizer(model=self.encoder, spacy_model=self.spacy_model,
                                         style_words=self.style_words, max_length=self.max_length,
                                         backend=pairs.backend)
        self.parts = check_parts(parts, has_cross=cross is not None)
        self.cross = cross

    def weight(self, kind: str) -> float:
        """The weight of the part of that kind in the score (0 when the model has no such part)."""
        return next((p.weight for p in self.parts if p.kind == kind), 0.0)

    # -- scoring --------------------------------------------------------------------------------
    def from_features(self, feats: np.ndarray) -> np.ndarray:
        """The head's score of precomputed pair features."""
        z = (np.asarray(feats, dtype=np.float64) - self.mean) / self.scale
        p = 1.0 / (1.0 + np.exp(-(z @ self.coef + self.intercept)))
        return np.minimum(p / self.ceiling, 1.0)

    @staticmethod
    def identity_features() -> np.ndarray:
        return np.asarray(IDENTITY, dtype=np.float64)

    def score(self, comparisons: Sequence[str], outputs: Sequence[str], progress: Progress | None = None, *,
              features: np.ndarray | None = None) -> np.ndarray:
        """Probability (0-1) that each output keeps the meaning of its comparison text: the weighted average of
        the parts' scores. ``features``: the pairs' features computed before (e.g. kept on disk)."""
        feats = np.asarray(features if features is not None else
                           self.featurizer.features(comparisons, outputs, progress))
        values = {"head": self.from_features(feats), "cosine": feats[:, 0]}
        if self.cross is not None:
            values["cross_encoder"] = self.cross.score(comparisons, outputs, progress)
        return self.combine(values)

    def combine(self, values: Mapping[str, np.ndarray]) -> np.ndarray:
        """The model's score from its parts' scores by kind (``cosine``: the plain sentence cosine, clipped here)."""
        out = np.zeros(0)
        total = 0.0
        for part in self.parts:
            if part.kind not in values:
                raise InputError(f"this preservation model has a {part.kind} part: its scores are needed")
            value = np.asarray(values[part.kind], dtype=np.float64)
            if part.kind == "cosine":
                value = np.clip(value, 0, 1)
            total += part.weight
            if part is self.parts[0]:
                out = value
            else:
                share = part.weight / total
                out = (1.0 - share) * out + share * value
        return out

    # -- identity -------------------------------------------------------------------------------
    def resources(self) -> dict[str, str]:
        from ..models.hashing import content_hash
        from ..models.spec import model_spec

        out: dict[str, str] = {}
        if self.folder is not None:
            out["preservation_model"] = self.card.get("name", self.folder.name)
            out["preservation_model_hash"] = content_hash(self.folder)[:12]
        enc = model_spec(self.encoder).identity()
        out["encoder"], out["encoder_hash"] = enc["model"], enc["model_hash"]
        out["encoder_backend"] = self.backend_identity()
        if self.cross is not None:
            out["cross_encoder_hash"] = self.cross.file_hash[:12]
        nlp = model_spec(self.spacy_model).identity()
        out["spacy_model"], out["spacy_model_hash"] = nlp["model"], nlp["model_hash"]
        return out

    def backend_identity(self) -> str:
        """What runs the encoder, with its version (ONNX Runtime's outputs differ from torch's by ~1e-5)."""
        from importlib.metadata import version

        if self.featurizer.backend == "onnx":
            return f"onnxruntime-{version('onnxruntime')}"
        return f"torch-{version('torch')}"

    # -- storage --------------------------------------------------------------------------------
    def save(self, folder: str | Path) -> Path:
        from ..models.cards import PRESERVATION, write_card

        path = Path(folder)
        path.mkdir(parents=True, exist_ok=True)
        parts = [Part(p.kind, p.weight) for p in self.parts]  # saved under the standard file names
        config = {"format": FORMAT, "encoder": self.encoder, "spacy_model": self.spacy_model,
                  "max_length": self.max_length, "features": list(FEATURES), "parts": [p.entry() for p in parts]}
        if self.cross is not None:
            self.cross.save(path / str(PART_FILES["cross_encoder"]))
        (path / MANIFEST).write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
        np.savez(path / str(PART_FILES["head"]), mean=self.mean, scale=self.scale, coef=self.coef,
                 intercept=np.asarray([self.intercept]), ceiling=np.asarray([self.ceiling]))
        (path / "vocab.json").write_text(json.dumps({"style_words": self.style_words}, indent=0) + "\n",
                                         encoding="utf-8")
        write_card(path, PRESERVATION, self.card)
        self.folder = path.resolve()
        self.parts = tuple(parts)
        return path

    @classmethod
    def load(cls, folder: str | Path, backend: str = "auto") -> "PreservationModel":
        path = Path(folder)
        config, cfg_path = read_config(path)
        if config.get("format") != FORMAT:
            if config.get("format") in UPGRADABLE:
                raise InputError(f"format {config.get('format')!r} is an older preservation-model format; convert "
                                 f"the folder once with styleval.preservation.upgrade_model_folder({str(path)!r})",
                                 cfg_path)
            raise InputError(f"format {config.get('format')!r} is not {FORMAT!r}", cfg_path)
        try:
            parts = [Part(str(p["kind"]), float(p["weight"]), str(p.get("file") or "") or None)
                     for p in config["parts"]]
        except (KeyError, TypeError, ValueError):
            raise InputError("parts must be a list of {kind, file, weight} with numeric weights", cfg_path) from None
        files = {p.kind: p.file or str(PART_FILES[p.kind]) for p in parts if PART_FILES.get(p.kind)}
        for name in ("vocab.json", files.get("head", "weights.npz")):
            if not (path / name).is_file():
                raise InputError(f"missing {name}", path)
        w = np.load(path / files.get("head", "weights.npz"), allow_pickle=False)
        vocab = json.loads((path / "vocab.json").read_text(encoding="utf-8"))
        from ..models.cards import PRESERVATION, read_card

        card = read_card(path, PRESERVATION)
        cross = None
        if "cross_encoder" in files:
            cross = CrossEncoder.load(path / files["cross_encoder"], config["encoder"],
                                      max_length=config.get("max_length", 128), backend=backend)
        try:
            head = LogisticHead(mean=w["mean"], scale=w["scale"], coef=w["coef"], intercept=float(w["intercept"][0]),
                                ceiling=float(w["ceiling"][0]) if "ceiling" in w.files else 1.0)
            pairs = PairSetup(encoder=config["encoder"], spacy_model=config["spacy_model"],
                              style_words=vocab["style_words"], max_length=config.get("max_length", 128),
                              backend=backend)
            return cls(head=head, pairs=pairs, features=config["features"], card=card, folder=path.resolve(),
                       cross=cross, parts=parts)
        except InputError as exc:
            raise InputError(exc.problem, cfg_path) from None


def read_config(folder: Path) -> tuple[dict[str, Any], Path]:
    """A model folder's ``model.json``, parsed, and its path."""
    return read_manifest(folder, "preservation model")


def blend_parts(cross_weight: float | None, cosine_weight: float, *, cross_file: str | None = None) -> list[Part]:
    """The parts of a model that averages the head with a cross-encoder (``cross_weight`` of that average; None: no
    cross-encoder) and blends the plain cosine over the result at ``cosine_weight``: final shares
    ``(1-c)(1-a)``, ``c(1-a)`` and ``a``."""
    c, a = cross_weight or 0.0, cosine_weight
    if not (0.0 <= c < 1.0 and 0.0 <= a < 1.0) or (cross_weight is not None and c == 0.0):
        raise InputError(f"the cross-encoder's weight must be in (0, 1) and the cosine's in [0, 1) (the head keeps "
                         f"the rest), got {cross_weight} and {cosine_weight}")
    parts = [Part("head", (1.0 - c) * (1.0 - a))]
    if cross_weight is not None:
        parts.append(Part("cross_encoder", c * (1.0 - a), cross_file))
    if a > 0:
        parts.append(Part("cosine", a))
    return parts


def upgrade_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """An earlier ``model.json`` (formats 1, 2 and 4: the head, a cross-encoder entry and a ``cosine_weight``) in
    :data:`FORMAT`, scoring the same: the head kept ``1 - cross weight`` of the learned average and the cosine was
    blended over that, so the final shares are ``(1-c)(1-a)``, ``c(1-a)`` and ``a``."""
    fmt = config.get("format")
    if fmt not in UPGRADABLE:
        raise InputError(f"format {fmt!r} cannot be converted to {FORMAT!r} (convertible: {', '.join(UPGRADABLE)}; "
                         "bi-encoder and late-interaction models left styleval)")
    try:
        cross = config.get("cross_encoder") or {}
        c = float(cross["weight"]) if cross else 0.0
        a = float(config.get("cosine_weight", 0.0)) if fmt == "styleval-preservation/4" else 0.0
    except (KeyError, TypeError, ValueError):
        raise InputError("cross_encoder needs a numeric weight and cosine_weight must be a number") from None
    parts = blend_parts(c if cross else None, a, cross_file=str(cross.get("file", "cross.npz")) if cross else None)
    kept = {k: v for k, v in config.items() if k not in ("format", "head", "cross_encoder", "cosine_weight")}
    return {"format": FORMAT, **kept, "parts": [p.entry() for p in parts]}


def upgrade_model_folder(folder: str | Path) -> Path:
    """Rewrite an earlier model folder's ``model.json`` in :data:`FORMAT` (:func:`upgrade_config`), in place; the
    other files stay as they are. Returns the path of ``model.json``."""
    config, cfg_path = read_config(Path(folder))
    try:
        new = upgrade_config(config)
    except InputError as exc:
        raise InputError(exc.problem, cfg_path) from None
    cfg_path.write_text(json.dumps(new, indent=2) + "\n", encoding="utf-8")
    return cfg_path
