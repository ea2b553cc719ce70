"""The acceptability classifier: P(acceptable English) of a sentence from SmolLM2 token statistics.

A logistic regression over :data:`styleval.acceptability.features.FEATURES` (optionally their degree-2 products),
computed on the text after ``detok+truecase`` normalisation, so lower-cased tokenized and ordinary text are scored
alike. It was trained on human-written sentences of several registers against automatically corrupted copies
(``studies/shipped_models/train_acceptability.py``, :mod:`styleval.training.acceptability`); its decision
threshold, chosen on held-out
selection data so that human text of every register passes, is folded into the intercept: a text is acceptable
when its score is at least 0.5. An empty text scores 0.

A model is a folder: ``model.json`` (features, LM, unigram model, normalisation, degree), ``weights.npz``
(``mean``, ``scale``, ``coef``, ``intercept``), ``model_card.json`` and ``README.md``.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from ..errors import InputError
from ..models import registry
from ..models.cards import ACCEPTABILITY, read_card
from ..models.catalog import DEFAULT_CAUSAL_LM
from .features import FEATURES

PRETRAINED_DIR = registry.shipped_dir(registry.ACCEPTABILITY)
DEFAULT_ACCEPTABILITY = str(registry.default(registry.ACCEPTABILITY))
FORMAT = "styleval-acceptability/1"


def expand(x: np.ndarray, degree: int) -> np.ndarray:
    """The features, plus every product of two of them (squares included) when ``degree`` is 2."""
    if degree == 1:
        return x
    i, j = np.triu_indices(x.shape[1])
    return np.hstack([x, x[:, i] * x[:, j]])


@dataclass
class AcceptabilityModel:
    mean: np.ndarray
    scale: np.ndarray
    coef: np.ndarray
    intercept: float
    config: dict[str, Any]
    card: dict[str, Any] = field(default_factory=dict)
    path: Path | None = None

    @property
    def name(self) -> str:
        return str(self.config.get("name", "acceptability"))

    @property
    def lm(self) -> str:
        return str(self.config.get("lm", DEFAULT_CAUSAL_LM))

    @property
    def normalize(self) -> str:
        return str(self.config.get("normalize", "detok+truecase"))

    @property
    def unigram(self) -> str:
        return str(self.config.get("unigram", "smollm2-mixed-public"))

    def decision(self, x: np.ndarray) -> np.ndarray:
        """Logit of each row of raw features (before expansion)."""
        z = (expand(np.asarray(x, dtype=float), int(self.config.get("degree", 1))) - self.mean) / self.scale
        return z @ self.coef + self.intercept

    def predict_features(self, x: np.ndarray) -> np.ndarray:
        """P(acceptable) of each row of :data:`FEATURES`; rows without features (empty texts) get 0."""
        x = np.asarray(x, dtype=float)
        ok = np.isfinite(x).all(axis=1)
        out = np.zeros(len(x))
        if ok.any():
            out[ok] = 1.0 / (1.0 + np.exp(-self.decision(x[ok])))
        return out

    def predict_scored(self, scored: Any) -> np.ndarray:
        """P(acceptable) from token log-probabilities already computed on the normalised texts."""
        from .features import features
        from .unigram import load_unigram

        return self.predict_features(features(scored, load_unigram(self.unigram)))

    def predict(self, texts: Sequence[str]) -> np.ndarray:
        """P(acceptable) of each text (loads the LM through the model pool)."""
        from ..lm.causal import token_logprobs
        from ..lm.loading import load_causal_lm
        from ..textnorm.readable import normalize_all

        lm = load_causal_lm(self.lm)
        return self.predict_scored(token_logprobs(lm, normalize_all(texts, self.normalize), with_end=True))

    def identity(self) -> dict[str, str]:
        from ..models.hashing import content_hash

        out = {"acceptability_model": self.name}
        if self.path is not None:
            out["acceptability_hash"] = content_hash(self.path)[:12]
        return out

    def save(self, folder: str | Path) -> Path:
        from ..models.cards import write_card

        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        np.savez(folder / "weights.npz", mean=self.mean, scale=self.scale, coef=self.coef,
                 intercept=np.array([self.intercept]))
        manifest = json.dumps({"format": FORMAT, **self.config}, indent=1)
        (folder / registry.MANIFEST).write_text(manifest, encoding="utf-8")
        write_card(folder, ACCEPTABILITY, self.card)
        return folder


def shipped_models() -> list[str]:
    return sorted(registry.shipped(registry.ACCEPTABILITY))


def load_acceptability(name_or_path: str | Path = DEFAULT_ACCEPTABILITY) -> AcceptabilityModel:
    """A shipped acceptability model by name, or a model folder."""
    folder = registry.resolve(registry.ACCEPTABILITY, name_or_path)
    config, manifest = registry.read_manifest(folder, "acceptability model")
    try:
        with np.load(folder / "weights.npz", allow_pickle=False) as z:
            arrays = {k: z[k] for k in ("mean", "scale", "coef", "intercept")}
    except (OSError, KeyError, ValueError) as exc:
        raise InputError(f"unreadable acceptability model: {exc}", folder) from None
    if config.get("format") != FORMAT or list(config.get("features", [])) != list(FEATURES):
        raise InputError(f"not a {FORMAT} model over the features {', '.join(FEATURES)}", manifest)
    card = read_card(folder, ACCEPTABILITY)
    return AcceptabilityModel(mean=arrays["mean"], scale=arrays["scale"], coef=arrays["coef"],
                              intercept=float(arrays["intercept"][0]), config=config, card=card,
                              path=folder.resolve())
