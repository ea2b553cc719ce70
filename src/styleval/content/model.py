"""A preservation model: pair features of a frozen encoder and a parse, and a logistic head over them; optionally
a cross-encoder (:mod:`styleval.content.cross_encoder`) whose probability is averaged with the head's.

Folder format (all plain files; nothing pickled): ``model.json`` (format, featurizer settings, feature names, and
the cross-encoder's file and weight when there is one), ``weights.npz`` (feature means and scales, head
coefficients, intercept and ceiling), ``cross.npz`` (the cross-encoder's adapters and head, format 2 only),
``vocab.json`` (the style words set aside from content words), ``model_card.json`` and ``README.md``.

The head maps standardised features to the probability that the output keeps the comparison text's meaning; its
score is that probability divided by the probability of an identical pair (the *ceiling*; coefficients are
sign-constrained so no pair goes higher), so an identical pair scores 1 and the scale is 0-1 (clipped at 1
against rounding). The cross-encoder's probability has no such ceiling: with one, an identical pair scores a
little below 1 (.92-.97 on the shipped model's test sentences).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from ..errors import InputError
from ..models import catalog as cat
from .cross_encoder import CrossEncoder
from .features import FEATURES, IDENTITY, PairFeaturizer
from ..progress import Progress

FORMAT = "styleval-preservation/2"
#: Formats this styleval reads: 1 (feature head only) and 2 (optionally with a cross-encoder).
READABLE = ("styleval-preservation/1", FORMAT)


class PreservationModel:
    def __init__(self, *, encoder: str = cat.DEFAULT_ENCODER, spacy_model: str = cat.DEFAULT_SPACY,
                 style_words: Sequence[str] = (), mean: np.ndarray, scale: np.ndarray, coef: np.ndarray,
                 intercept: float, ceiling: float = 1.0, max_length: int = 128, features: Sequence[str] = FEATURES,
                 card: dict[str, Any] | None = None, folder: Path | None = None, backend: str = "auto",
                 cross: CrossEncoder | None = None, cross_weight: float = 0.0) -> None:
        if tuple(features) != FEATURES:
            raise InputError(f"model features {list(features)} differ from this styleval's {list(FEATURES)}")
        self.encoder = encoder
        self.spacy_model = spacy_model
        self.style_words = sorted(set(style_words))
        self.mean = np.asarray(mean, dtype=np.float64)
        self.scale = np.asarray(scale, dtype=np.float64)
        self.coef = np.asarray(coef, dtype=np.float64)
        self.intercept = float(intercept)
        if not 0.0 < ceiling <= 1.0:
            raise InputError(f"ceiling must be in (0, 1], got {ceiling}")
        self.ceiling = float(ceiling)
        self.max_length = int(max_length)
        self.card = dict(card or {})
        self.folder = folder
        self.featurizer = PairFeaturizer(model=encoder, spacy_model=spacy_model, style_words=self.style_words,
                                         max_length=max_length, backend=backend)
        if cross is not None and not 0.0 < cross_weight <= 1.0:
            raise InputError(f"cross_weight must be in (0, 1] with a cross-encoder, got {cross_weight}")
        self.cross = cross
        self.cross_weight = float(cross_weight) if cross is not None else 0.0

    # -- scoring --------------------------------------------------------------------------------
    def from_features(self, feats: np.ndarray) -> np.ndarray:
        """The feature head's score (without the cross-encoder) of precomputed pair features."""
        z = (np.asarray(feats, dtype=np.float64) - self.mean) / self.scale
        p = 1.0 / (1.0 + np.exp(-(z @ self.coef + self.intercept)))
        return np.minimum(p / self.ceiling, 1.0)

    @staticmethod
    def identity_features() -> np.ndarray:
        return np.asarray(IDENTITY, dtype=np.float64)

    def score(self, comparisons: Sequence[str], outputs: Sequence[str],
              progress: Progress | None = None) -> np.ndarray:
        """Probability (0-1) that each output keeps the meaning of its comparison text: the feature head's, averaged
        with the cross-encoder's (weight ``cross_weight``) when the model has one."""
        head = self.from_features(self.featurizer.features(comparisons, outputs, progress))
        if self.cross is None:
            return head
        return self.combine(head, self.cross.score(comparisons, outputs, progress))

    def combine(self, head: np.ndarray, cross: np.ndarray) -> np.ndarray:
        """The model's score from its two parts' scores."""
        return (1.0 - self.cross_weight) * np.asarray(head) + self.cross_weight * np.asarray(cross)

    # -- identity -------------------------------------------------------------------------------
    def resources(self) -> dict[str, str]:
        from ..models.hashing import content_hash
        from ..models.resolve import resolve

        out: dict[str, str] = {}
        if self.folder is not None:
            out["preservation_model"] = self.card.get("name", self.folder.name)
            out["preservation_model_hash"] = content_hash(self.folder)[:12]
        enc = resolve(self.encoder).identity()
        out["encoder"], out["encoder_hash"] = enc["model"], enc["model_hash"]
        out["encoder_backend"] = self.backend_identity()
        if self.cross is not None:
            out["cross_encoder_hash"] = self.cross.file_hash[:12]
        nlp = resolve(self.spacy_model).identity()
        out["spacy"], out["spacy_hash"] = nlp["model"], nlp["model_hash"]
        return out

    def backend_identity(self) -> str:
        """What runs the encoder, with its version (ONNX Runtime's outputs differ from torch's by ~1e-5)."""
        from importlib.metadata import version

        if self.featurizer.backend == "onnx":
            return f"onnxruntime-{version('onnxruntime')}"
        return f"torch-{version('torch')}"

    # -- storage --------------------------------------------------------------------------------
    def save(self, folder: str | Path) -> Path:
        from ..style.card import write_readme

        path = Path(folder)
        path.mkdir(parents=True, exist_ok=True)
        config: dict[str, Any] = {"format": FORMAT, "encoder": self.encoder, "spacy_model": self.spacy_model,
                                  "max_length": self.max_length, "features": list(FEATURES), "head": "logistic"}
        if self.cross is not None:
            self.cross.save(path / "cross.npz")
            config["cross_encoder"] = {"file": "cross.npz", "weight": self.cross_weight, "rank": self.cross.rank}
        (path / "model.json").write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
        np.savez(path / "weights.npz", mean=self.mean, scale=self.scale, coef=self.coef,
                 intercept=np.asarray([self.intercept]), ceiling=np.asarray([self.ceiling]))
        (path / "vocab.json").write_text(json.dumps({"style_words": self.style_words}, indent=0) + "\n",
                                         encoding="utf-8")
        (path / "model_card.json").write_text(json.dumps(self.card, indent=2) + "\n", encoding="utf-8")
        write_readme(self.card, path / "README.md")
        self.folder = path.resolve()
        return path

    @classmethod
    def load(cls, folder: str | Path, backend: str = "auto") -> "PreservationModel":
        path = Path(folder)
        cfg_path = path / "model.json"
        if not cfg_path.is_file():
            raise InputError("not a preservation model folder (no model.json)", path)
        try:
            config = json.loads(cfg_path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise InputError(f"not valid JSON: {exc.msg}", cfg_path, exc.lineno) from None
        if config.get("format") not in READABLE:
            raise InputError(f"format {config.get('format')!r} is not one of {', '.join(READABLE)}", cfg_path)
        for name in ("weights.npz", "vocab.json"):
            if not (path / name).is_file():
                raise InputError(f"missing {name}", path)
        w = np.load(path / "weights.npz", allow_pickle=False)
        vocab = json.loads((path / "vocab.json").read_text(encoding="utf-8"))
        card_path = path / "model_card.json"
        card = json.loads(card_path.read_text(encoding="utf-8")) if card_path.is_file() else {}
        cross, weight = None, 0.0
        spec = config.get("cross_encoder")
        if spec:
            try:
                weight = float(spec["weight"])
                cross = CrossEncoder.load(path / str(spec["file"]), config["encoder"],
                                          max_length=config.get("max_length", 128), backend=backend)
            except (KeyError, TypeError, ValueError):
                raise InputError("cross_encoder needs a file and a numeric weight", cfg_path) from None
        return cls(encoder=config["encoder"], spacy_model=config["spacy_model"], style_words=vocab["style_words"],
                   mean=w["mean"], scale=w["scale"], coef=w["coef"], intercept=float(w["intercept"][0]),
                   ceiling=float(w["ceiling"][0]) if "ceiling" in w.files else 1.0,
                   max_length=config.get("max_length", 128), features=config["features"], card=card,
                   folder=path.resolve(), backend=backend, cross=cross, cross_weight=weight)
