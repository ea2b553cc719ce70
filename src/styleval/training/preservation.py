"""Training a preservation model by a :class:`PreservationRecipe`: pair features, then a logistic head fitted to
soft targets, and optionally a cross-encoder.

The head minimises the weighted cross-entropy between its probability and each pair's score in [0, 1] (a
soft target: a half-kept meaning is 0.5), with an L2 penalty ``1 / (2C)·|w|²`` on standardised features; every
group of pairs has the same total weight (:meth:`PairData.group_weights`). ``C`` is chosen on selection data by
the mean over its groups of the Spearman correlation between predictions and scores.
"""
from __future__ import annotations

import datetime as _dt
import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from ..errors import InputError
from ..models import catalog as cat
from ..signature import library_version
from ..preservation.data import PairData
from ..preservation.features import FEATURE_SIGNS, FEATURES, PairFeaturizer
from ..progress import Progress
from ..preservation.cross_encoder import CrossEncoder
from ..preservation.lexical import TONE_WORDS
from ..preservation.model import LogisticHead, PairSetup, Part, PreservationModel, blend_parts

C_GRID = (0.001, 0.01, 0.1, 1.0, 10.0)


def default_style_words(min_valence: float = 1.0) -> list[str]:
    """Tone words (:data:`~styleval.preservation.lexical.TONE_WORDS`) plus the VADER lexicon's words whose mean
    valence is at least ``min_valence`` (of 4) in absolute value: sentiment and profanity, not content."""
    from ..sentiment.lexicon import vader_lexicon_path

    words = set(TONE_WORDS)
    with open(vader_lexicon_path(), encoding="utf-8") as fh:
        for line in fh:
            cols = line.rstrip("\r\n").split("\t")
            if len(cols) >= 2 and cols[0].isalpha():
                try:
                    if abs(float(cols[1])) >= min_valence:
                        words.add(cols[0].lower())
                except ValueError:
                    continue
    return sorted(words)


def fit_logistic(x: np.ndarray, y: np.ndarray, w: np.ndarray, c: float,
                 signs: Sequence[int] | None = None) -> tuple[np.ndarray, float]:
    """Weighted logistic regression on soft targets ``y`` in [0, 1] (L-BFGS-B); returns (coef, intercept).

    ``signs`` (one of +1, -1, 0 per feature) constrains coefficients to be non-negative, non-positive or free."""
    from scipy.optimize import minimize

    n, d = x.shape
    bounds = [(0.0, None) if s > 0 else (None, 0.0) if s < 0 else (None, None) for s in (signs or [0] * d)]
    wn = w / w.sum()

    def loss(theta: np.ndarray) -> tuple[float, np.ndarray]:
        coef, b = theta[:d], theta[d]
        z = x @ coef + b
        # log(1 + e^z) - y z, computed stably
        value = np.sum(wn * (np.logaddexp(0.0, z) - y * z)) + 0.5 / (c * n) * coef @ coef
        g = wn * (1.0 / (1.0 + np.exp(-z)) - y)
        grad = np.concatenate([x.T @ g + coef / (c * n), [g.sum()]])
        return float(value), grad

    res = minimize(loss, np.zeros(d + 1), jac=True, method="L-BFGS-B", bounds=[*bounds, (None, None)],
                   options={"maxiter": 2000})
    return res.x[:d].copy(), float(res.x[d])


def selection_score(pred: np.ndarray, data: PairData) -> float:
    """Mean over groups (with varying scores) of the Spearman correlation of predictions and scores."""
    from scipy.stats import spearmanr

    y = np.asarray(data.scores)
    groups = np.asarray(data.groups)
    values = []
    for g in dict.fromkeys(data.groups):
        m = groups == g
        if m.sum() > 2 and np.ptp(y[m]) > 0:
            values.append(float(spearmanr(pred[m], y[m])[0]))
    return float(np.mean(values)) if values else float("nan")


def held_back_split(n: int, seed: int) -> tuple[list[int], list[int]]:
    """Indices of the 20% of ``n`` training pairs held back to choose the penalty on, and of the other 80%."""
    order = np.random.default_rng(seed).permutation(n)
    cut = max(1, n // 5)
    return order[:cut].tolist(), order[cut:].tolist()


@dataclass(frozen=True)
class PreservationRecipe:
    """Everything that decides a preservation model, and what its card says about it.

    The head is always fitted: pair features of ``encoder`` and ``spacy_model`` (texts cut at ``max_length``
    tokens; ``style_words`` set aside from content words, :func:`default_style_words` when None), a logistic head
    whose penalty ``C`` is chosen from ``c_grid``. ``cross_epochs > 0`` also trains a cross-encoder (LoRA rank
    ``cross_rank``, :mod:`styleval.preservation.cross_encoder`) on ``device`` (``"cpu"``, ``"cuda[:N]"`` or
    ``"auto"``); the learned score is then ``(1 - cross_weight) * head + cross_weight * cross-encoder``.
    ``cosine_weight > 0`` blends the frozen encoder's plain sentence cosine over that:
    ``(1 - cosine_weight) * learned + cosine_weight * clip(cosine, 0, 1)``. ``seed`` fixes the held-back split
    and the cross-encoder's training. ``name``, ``version``, ``description``, ``command`` and ``notes`` go on the
    card."""

    encoder: str = cat.DEFAULT_ENCODER
    spacy_model: str = cat.DEFAULT_SPACY
    max_length: int = 128
    style_words: tuple[str, ...] | None = None
    c_grid: tuple[float, ...] = C_GRID
    seed: int = 13
    cross_epochs: int = 0
    cross_rank: int = 16
    cross_weight: float = 0.5
    cosine_weight: float = 0.0
    device: str = "cpu"
    name: str = "preservation-model"
    version: str = "1"
    description: str = ""
    command: str = ""
    notes: tuple[str, ...] = ()

    def parts(self, has_cross: bool) -> list[Part]:
        """The trained model's parts and weights (:func:`~styleval.preservation.model.blend_parts`)."""
        return blend_parts(self.cross_weight if has_cross else None, self.cosine_weight)

    def check(self) -> None:
        """Refuse a recipe that cannot make a model (before any pair is encoded)."""
        if self.cross_epochs < 0 or self.cross_rank < 1:
            raise InputError(f"cross-encoder epochs must be 0 or more and its rank at least 1, got "
                             f"{self.cross_epochs} and {self.cross_rank}")
        if not self.c_grid:
            raise InputError("the penalty grid is empty")
        self.parts(has_cross=self.cross_epochs > 0)  # the weights' ranges


def train_preservation_model(train: PairData, recipe: PreservationRecipe = PreservationRecipe(), *,
                             selection: PairData | None = None, encoder_train: PairData | None = None,
                             given_cross: tuple[CrossEncoder, dict[str, Any]] | None = None,
                             cache: str | Path | None = None, progress: Progress | None = None) -> PreservationModel:
    """Fit a preservation model on ``train`` by ``recipe``; ``C`` is chosen on ``selection`` (20% of the training
    pairs when not given) and the head is then refitted on all of ``train``.

    Coefficients are sign-constrained (:data:`~styleval.preservation.features.FEATURE_SIGNS`): more similarity never
    lowers the score, a mismatch never raises it, so an identical pair gets the highest score the head can give.
    ``cache``: a folder where pair features are kept (keyed by the data, encoder and style words), so that a
    second fit on the same data does not encode it again. Nothing about the cross-encoder is chosen on selection
    data.

    ``encoder_train``: the pairs the cross-encoder trains on, when not ``train`` (the head is fitted on ``train``).
    ``given_cross``: a cross-encoder already trained (say on a GPU machine by the same recipe) and its summary, used
    instead of training one here; the summary goes on the card."""
    recipe.check()
    if len(train) < 10:
        raise InputError(f"{len(train)} training pairs; a preservation model needs at least 10")
    y_all = np.asarray(train.scores, dtype=np.float64)
    if np.ptp(y_all) == 0:
        raise InputError(f"every training score is {y_all[0]}; the data must contain pairs that keep meaning "
                         "and pairs that do not")
    has_cross = recipe.cross_epochs > 0 or given_cross is not None
    parts = recipe.parts(has_cross)
    words = list(recipe.style_words) if recipe.style_words is not None else default_style_words()
    featurizer = PairFeaturizer(model=recipe.encoder, spacy_model=recipe.spacy_model, style_words=words,
                                max_length=recipe.max_length)
    held_back = selection is None
    if held_back:
        sel_index, fit_index = held_back_split(len(train), recipe.seed)
        selection, fit_part = train.subset(sel_index), train.subset(fit_index)
    else:
        fit_part = train
    assert selection is not None  # noqa: S101
    x_fit = _cached_features(featurizer, fit_part, cache, "fit", _stage(progress, "training pairs"))
    x_sel = _cached_features(featurizer, selection, cache, "selection", _stage(progress, "selection pairs"))
    mean, scale = x_fit.mean(0), x_fit.std(0)
    scale = np.where(scale > 1e-9, scale, 1.0)
    y, w = np.asarray(fit_part.scores), fit_part.group_weights()
    grid = []
    for k, c in enumerate(recipe.c_grid):
        coef, b = fit_logistic((x_fit - mean) / scale, y, w, c, FEATURE_SIGNS)
        pred = 1.0 / (1.0 + np.exp(-(((x_sel - mean) / scale) @ coef + b)))
        grid.append({"C": c, "selection": selection_score(pred, selection)})
        if progress is not None:
            progress("choosing the penalty", k + 1, len(recipe.c_grid))
    best = max(grid, key=lambda g: (np.nan_to_num(g["selection"], nan=-np.inf), -g["C"]))
    if held_back:  # refit on everything
        x_all = np.concatenate([x_fit, x_sel])
        final = PairData.concat([fit_part, selection], train.origin)
    else:
        x_all, final = x_fit, fit_part
    mean, scale = x_all.mean(0), x_all.std(0)
    scale = np.where(scale > 1e-9, scale, 1.0)
    coef, b = fit_logistic((x_all - mean) / scale, np.asarray(final.scores), final.group_weights(), best["C"],
                           FEATURE_SIGNS)
    identity = PreservationModel.identity_features()
    ceiling = float(1.0 / (1.0 + np.exp(-(((identity - mean) / scale) @ coef + b))))
    card: dict[str, Any] = {
        "name": recipe.name, "version": recipe.version, "description": recipe.description, "kind": "preservation",
        "labels": ["meaning changed (0)", "meaning kept (1)"], "styleval_version": library_version("styleval"),
        "torch_version": library_version("torch"), "transformers_version": library_version("transformers"),
        "spacy_version": library_version("spacy"), "created": _dt.date.today().isoformat(),
        "training": {"data": train.origin, "n": len(final), "data_hash": final.data_hash(),
                     "label_counts": final.group_counts()},
        "selection": {"data": f"20% of the training pairs (seed {recipe.seed})" if held_back else selection.origin,
                      "n": len(selection), "data_hash": selection.data_hash(),
                      "metric": "mean over groups of Spearman(prediction, score)", "grid": grid,
                      "chosen": {"C": best["C"]}, "refit_on_all_training_data": held_back},
        "parameters": {"encoder": recipe.encoder, "spacy_model": recipe.spacy_model, "max_length": recipe.max_length,
                       "features": list(FEATURES), "head": "logistic on standardised features, soft targets, "
                       "equal weight per group", "style_words": len(words),
                       "coefficients": {f: round(float(v), 4) for f, v in zip(FEATURES, coef)},
                       "intercept": round(b, 4), "identity_probability": round(ceiling, 4),
                       "output": "head probability divided by the probability of an identical pair, so an "
                                 "identical pair scores 1 (a monotone rescaling: rankings are unchanged)"},
        "command": recipe.command, "notes": list(recipe.notes),
    }
    cross = None
    if has_cross:
        enc_data = encoder_train if encoder_train is not None else final
        trained_on = "all training pairs (no selection)" if encoder_train is None else \
            {"data": enc_data.origin, "n": len(enc_data), "data_hash": enc_data.data_hash(),
             "label_counts": enc_data.group_counts()}
        if given_cross is not None:
            cross, summary = given_cross
        else:
            from .cross_encoder import train_cross_encoder
            from .options import AdapterFit, CrossEncoderOptions

            options = CrossEncoderOptions(rank=recipe.cross_rank, max_length=recipe.max_length, device=recipe.device,
                                          fit=AdapterFit(epochs=recipe.cross_epochs, seed=recipe.seed))
            cross, summary = train_cross_encoder(enc_data, encoder=recipe.encoder, options=options, progress=progress)
        cw = recipe.cross_weight
        card["parameters"]["cross_encoder"] = {
            **summary, "weight": cw, "trained_on": summary.get("trained_on", trained_on),
            "output": f"score = {1 - cw:g} * feature head + {cw:g} * cross-encoder probability"}
    if recipe.cosine_weight > 0:
        a = recipe.cosine_weight
        card["parameters"]["cosine"] = {
            "weight": a, "encoder": recipe.encoder,
            "output": f"score = {1 - a:g} * (the learned parts' average) + {a:g} * "
                      "clip(cosine of the frozen encoder's mean-pooled sentence embeddings, 0, 1)"}
    return PreservationModel(head=LogisticHead(mean=mean, scale=scale, coef=coef, intercept=b, ceiling=ceiling),
                             pairs=PairSetup(encoder=recipe.encoder, spacy_model=recipe.spacy_model,
                                             style_words=words, max_length=recipe.max_length),
                             card=card, cross=cross, parts=parts)


def _cached_features(featurizer: PairFeaturizer, data: PairData, cache: str | Path | None, part: str,
                     progress: Progress | None) -> np.ndarray:
    if cache is None:
        return featurizer.features(data.sources, data.outputs, progress)
    # keyed by the backend too: torch and ONNX Runtime features differ in the last bits
    key = hashlib.sha256("\0".join([data.data_hash(), featurizer.model, featurizer.spacy_model,
                                     str(featurizer.max_length), featurizer.backend, *sorted(featurizer.style_words),
                                     *FEATURES]).encode("utf-8")).hexdigest()[:16]
    path = Path(cache) / f"{part}-{key}.npy"
    if path.is_file():
        return np.load(path)
    x = featurizer.features(data.sources, data.outputs, progress)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.save(path, x)
    return x


def _stage(progress: Progress | None, what: str) -> Progress | None:
    if progress is None:
        return None
    return lambda _stage_name, done, total: progress(f"encoding {what}", done, total)
