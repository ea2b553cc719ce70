"""A preservation model: pair features of a frozen encoder and a parse, and a logistic head over them; optionally
a cross-encoder (:mod:`styleval.content.cross_encoder`) and a bi-encoder (:mod:`styleval.content.bi_encoder`)
whose scores are averaged with the head's. The head's weight is what the other two leave; at weight 0 the
features (and spaCy) are not computed at all. Optionally, that average is itself averaged with the plain cosine of
the frozen encoder's sentence embeddings (``cosine_weight``, clipped to 0-1): the learned parts separate kept from
changed meaning, the cosine grades how close two similar texts are.

Folder format (all plain files; nothing pickled): ``model.json`` (format, featurizer settings, feature names, and
the cross-encoder's file and weight when there is one), ``weights.npz`` (feature means and scales, head
coefficients, intercept and ceiling), ``cross.npz`` (the cross-encoder's adapters and head, format 2 only),
``bi.npz`` (the bi-encoder's, format 3 and later) or ``late.npz`` (a late-interaction encoder in the bi-encoder's
place, :mod:`styleval.content.late_encoder`, format 5), ``vocab.json`` (the style words set aside from content words),
``model_card.json`` and ``README.md``. A model without a bi-encoder is saved in format 2, one with a cosine weight
in format 4 (``model.json`` then holds ``cosine_weight``), one with a late-interaction encoder in format 5, so an
older styleval refuses it instead of scoring it without the cosine or with the wrong kind of encoder.

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
from .bi_encoder import BiEncoder
from .cross_encoder import CrossEncoder
from .features import FEATURES, IDENTITY, PairFeaturizer
from .late_encoder import LateEncoder
from ..progress import Progress

FORMAT = "styleval-preservation/2"
#: Written when the model has a bi-encoder.
FORMAT_BI = "styleval-preservation/3"
#: Written when the model averages in the plain cosine.
FORMAT_COSINE = "styleval-preservation/4"
#: Written when the bi-encoder's place holds a late-interaction encoder.
FORMAT_LATE = "styleval-preservation/5"
#: Formats this styleval reads: 1 (feature head only), 2 (optionally with a cross-encoder), 3 (and a bi-encoder),
#: 4 (and a cosine weight), 5 (a late-interaction encoder in the bi-encoder's place).
READABLE = ("styleval-preservation/1", FORMAT, FORMAT_BI, FORMAT_COSINE, FORMAT_LATE)
#: The classes that can take the bi-encoder's place, by the ``kind`` of its entry in ``model.json``.
ONE_PASS_KINDS: dict[str, type[BiEncoder] | type[LateEncoder]] = {"bi": BiEncoder, "late": LateEncoder}


class PreservationModel:
    def __init__(self, *, encoder: str = cat.DEFAULT_ENCODER, spacy_model: str = cat.DEFAULT_SPACY,
                 style_words: Sequence[str] = (), mean: np.ndarray, scale: np.ndarray, coef: np.ndarray,
                 intercept: float, ceiling: float = 1.0, max_length: int = 128, features: Sequence[str] = FEATURES,
                 card: dict[str, Any] | None = None, folder: Path | None = None, backend: str = "auto",
                 cross: CrossEncoder | None = None, cross_weight: float = 0.0,
                 bi: BiEncoder | LateEncoder | None = None,
                 bi_weight: float = 0.0, cosine_weight: float = 0.0) -> None:
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
        if bi is not None and not 0.0 < bi_weight <= 1.0:
            raise InputError(f"bi_weight must be in (0, 1] with a bi-encoder, got {bi_weight}")
        self.bi = bi
        self.bi_weight = float(bi_weight) if bi is not None else 0.0
        if self.cross_weight + self.bi_weight > 1.0 + 1e-9:
            raise InputError(f"cross_weight + bi_weight must be at most 1, got {self.cross_weight + self.bi_weight}")
        if not 0.0 <= cosine_weight < 1.0:
            raise InputError(f"cosine_weight must be in [0, 1), got {cosine_weight}")
        self.cosine_weight = float(cosine_weight)

    @property
    def head_weight(self) -> float:
        """The feature head's share of the score: what the cross- and bi-encoder leave."""
        return max(0.0, 1.0 - self.cross_weight - self.bi_weight)

    @property
    def uses_features(self) -> bool:
        """Whether scoring runs the pair features (the frozen encoder and the spaCy parse)."""
        return self.head_weight > 1e-12

    # -- scoring --------------------------------------------------------------------------------
    def from_features(self, feats: np.ndarray) -> np.ndarray:
        """The feature head's score (without the cross- or bi-encoder) of precomputed pair features."""
        z = (np.asarray(feats, dtype=np.float64) - self.mean) / self.scale
        p = 1.0 / (1.0 + np.exp(-(z @ self.coef + self.intercept)))
        return np.minimum(p / self.ceiling, 1.0)

    @staticmethod
    def identity_features() -> np.ndarray:
        return np.asarray(IDENTITY, dtype=np.float64)

    def score(self, comparisons: Sequence[str], outputs: Sequence[str], progress: Progress | None = None, *,
              features: np.ndarray | None = None) -> np.ndarray:
        """Probability (0-1) that each output keeps the meaning of its comparison text: the feature head's, averaged
        with the cross-encoder's (weight ``cross_weight``) and the bi-encoder's (``bi_weight``) when there are, and
        that average with the plain sentence cosine when ``cosine_weight > 0``.
        ``features``: the pairs' features computed before (e.g. kept on disk), instead of computing them here."""
        cosine = None
        if not self.uses_features:
            head = np.zeros(len(outputs))
            if self.cosine_weight > 0:
                cosine = self.featurizer.sentence_cosines(comparisons, outputs, progress)
        else:
            feats = features if features is not None else self.featurizer.features(comparisons, outputs, progress)
            head, cosine = self.from_features(feats), np.asarray(feats)[:, 0]
        cross = self.cross.score(comparisons, outputs, progress) if self.cross is not None else None
        bi = self.bi.score(comparisons, outputs, progress) if self.bi is not None else None
        return self.combine(head, cross, bi, cosine)

    def combine(self, head: np.ndarray, cross: np.ndarray | None = None, bi: np.ndarray | None = None,
                cosine: np.ndarray | None = None) -> np.ndarray:
        """The model's score from its parts' scores (``cross`` / ``bi`` / ``cosine``, the plain sentence cosine,
        are needed when the model has that part)."""
        out = self.head_weight * np.asarray(head, dtype=np.float64)
        for part, weight, values in (("cross-encoder", self.cross_weight, cross), ("bi-encoder", self.bi_weight, bi)):
            if weight > 0:
                if values is None:
                    raise InputError(f"this preservation model has a {part}: its scores are needed")
                out = out + weight * np.asarray(values, dtype=np.float64)
        if self.cosine_weight > 0:
            if cosine is None:
                raise InputError("this preservation model averages in the sentence cosine: it is needed")
            out = (1.0 - self.cosine_weight) * out + self.cosine_weight * np.clip(np.asarray(cosine, np.float64), 0, 1)
        return out

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
        if self.bi is not None:
            out[f"{self.bi.kind}_encoder_hash"] = self.bi.file_hash[:12]
        if self.uses_features:
            nlp = resolve(self.spacy_model).identity()
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
        from ..style.card import write_readme

        path = Path(folder)
        path.mkdir(parents=True, exist_ok=True)
        config: dict[str, Any] = {"format": FORMAT, "encoder": self.encoder, "spacy_model": self.spacy_model,
                                  "max_length": self.max_length, "features": list(FEATURES), "head": "logistic"}
        if self.cross is not None:
            self.cross.save(path / "cross.npz")
            config["cross_encoder"] = {"file": "cross.npz", "weight": self.cross_weight, "rank": self.cross.rank}
        if self.bi is not None:
            file = f"{self.bi.kind}.npz"
            self.bi.save(path / file)
            config["format"] = FORMAT_BI
            config["bi_encoder"] = {"file": file, "weight": self.bi_weight, "rank": self.bi.rank}
            if self.bi.kind != "bi":  # absent for a bi-encoder, as in the formats before 5
                config["bi_encoder"]["kind"] = self.bi.kind
        if self.cosine_weight > 0:
            config["format"] = FORMAT_COSINE
            config["cosine_weight"] = self.cosine_weight
        if self.bi is not None and self.bi.kind == "late":
            config["format"] = FORMAT_LATE
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
        parts: dict[str, Any] = {}
        for key in ("cross_encoder", "bi_encoder"):
            spec = config.get(key)
            if spec:
                try:
                    kind: Any = CrossEncoder if key == "cross_encoder" else ONE_PASS_KINDS[spec.get("kind", "bi")]
                except KeyError:
                    raise InputError(f"bi_encoder kind must be one of {', '.join(ONE_PASS_KINDS)}, got "
                                     f"{spec.get('kind')!r}", cfg_path) from None
                try:
                    weight = float(spec["weight"])
                    part = kind.load(path / str(spec["file"]), config["encoder"],
                                     max_length=config.get("max_length", 128), backend=backend)
                except (KeyError, TypeError, ValueError):
                    raise InputError(f"{key} needs a file and a numeric weight", cfg_path) from None
                parts[key] = (part, weight)
        cross, weight = parts.get("cross_encoder", (None, 0.0))
        bi, bi_weight = parts.get("bi_encoder", (None, 0.0))
        try:
            cosine_weight = float(config.get("cosine_weight", 0.0))
        except (TypeError, ValueError):
            raise InputError(f"cosine_weight must be a number, got {config.get('cosine_weight')!r}", cfg_path) from None
        return cls(encoder=config["encoder"], spacy_model=config["spacy_model"], style_words=vocab["style_words"],
                   mean=w["mean"], scale=w["scale"], coef=w["coef"], intercept=float(w["intercept"][0]),
                   ceiling=float(w["ceiling"][0]) if "ceiling" in w.files else 1.0,
                   max_length=config.get("max_length", 128), features=config["features"], card=card,
                   folder=path.resolve(), backend=backend, cross=cross, cross_weight=weight, bi=bi,
                   bi_weight=bi_weight, cosine_weight=cosine_weight)
