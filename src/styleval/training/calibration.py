"""Fitting a calibration of a two-style model (see :mod:`styleval.style_models.calibration` for what is stored and
how a model decides with it): the probability map (Platt or isotonic), the decision threshold, and the before/after
figures (balanced accuracy with bootstrap intervals, cross-validated) that go into the card.
"""
from __future__ import annotations

import datetime as _dt
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from ..errors import InputError
from ..style_models.calibration import METHODS, THRESHOLD_RULES, Calibration, balanced_accuracy, sigmoid
from .options import CalibrationOptions

_EPS = 1e-6  # a threshold just above the highest score when every text is negative

def fit_platt(scores: np.ndarray, truth: np.ndarray) -> tuple[float, float]:
    """``(a, b)`` minimising the class-balanced log loss of ``sigmoid(a * score + b)`` (Newton's method)."""
    s, y = np.asarray(scores, float), np.asarray(truth, float)
    n_pos, n_neg = y.sum(), len(y) - y.sum()
    w = np.where(y > 0, len(y) / (2 * n_pos), len(y) / (2 * n_neg))
    x = np.column_stack([s, np.ones_like(s)])
    theta = np.zeros(2)
    for _ in range(100):
        p = sigmoid(x @ theta)
        grad = x.T @ (w * (p - y))
        hess = (x * (w * p * (1 - p))[:, None]).T @ x + 1e-9 * np.eye(2)
        step = np.linalg.solve(hess, grad)
        theta -= step
        if np.max(np.abs(step)) < 1e-10:
            break
    return float(theta[0]), float(theta[1])


def fit_isotonic(scores: np.ndarray, truth: np.ndarray) -> tuple[list[float], list[float]]:
    """Breakpoints ``(x, y)`` of the class-balanced isotonic fit of truth on score (pool-adjacent-violators)."""
    from sklearn.isotonic import IsotonicRegression

    s, y = np.asarray(scores, float), np.asarray(truth, float)
    n_pos, n_neg = y.sum(), len(y) - y.sum()
    w = np.where(y > 0, len(y) / (2 * n_pos), len(y) / (2 * n_neg))
    iso = IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip").fit(s, y, sample_weight=w)
    return [float(v) for v in iso.X_thresholds_], [float(v) for v in iso.y_thresholds_]


def balanced_threshold(scores: np.ndarray, truth: np.ndarray) -> float:
    """The score threshold maximising balanced accuracy (midway between neighbouring scores; ties: the middle one)."""
    s, y = np.asarray(scores, float), np.asarray(truth, bool)
    cand = np.unique(s)
    cuts = np.concatenate([[cand[0] - 1.0], (cand[:-1] + cand[1:]) / 2, [cand[-1] + 1.0]])
    ba = np.array([balanced_accuracy(y, s >= c) for c in cuts])
    best = np.flatnonzero(ba >= np.nanmax(ba) - 1e-12)
    return float(cuts[best[len(best) // 2]])


def _fit(method: str, rule: str, raw: np.ndarray, truth: np.ndarray
         ) -> tuple[float, tuple[float, float] | None, tuple[list[float], list[float]] | None]:
    platt = fit_platt(raw, truth) if method == "platt" else None
    iso = fit_isotonic(raw, truth) if method == "isotonic" else None
    if rule == "balanced" or method == "threshold":
        return balanced_threshold(raw, truth), platt, iso
    if platt is not None:
        a, b = platt
        if a <= 0:
            raise InputError("the calibration sample ranks the styles backwards (Platt slope <= 0): check which "
                             "file or label is which style")
        return -b / a, platt, iso
    if iso is None:
        raise InputError("calibration: neither a Platt nor an isotonic map to take the threshold from")
    xs, ys = np.asarray(iso[0]), np.asarray(iso[1])  # where the interpolated step function reaches 0.5
    above = np.flatnonzero(ys >= 0.5)
    if not len(above):
        return float(xs[-1]) + _EPS, platt, iso
    i = above[0]
    if i == 0:
        return float(xs[0]), platt, iso
    frac = (0.5 - ys[i - 1]) / (ys[i] - ys[i - 1])
    return float(xs[i - 1] + frac * (xs[i] - xs[i - 1])), platt, iso


def fit_calibration(raw: np.ndarray, truth: np.ndarray, *, positive: str, negative: str,
                    default_threshold: float = 0.0, data: dict[str, Any] | None = None,
                    options: CalibrationOptions | None = None,
                    progress: Callable[[str, int, int], None] | None = None) -> Calibration:
    """Fit a calibration of raw scores ``raw`` to booleans ``truth`` (True = ``positive``), as ``options`` say.

    ``default_threshold`` is the model's own decision point on the raw score (0 for a classifier's logit), used for
    the *before* figures. Scores: balanced accuracy before, after in-sample, and after cross-validated
    (``folds``-fold, stratified, seed ``seed``: each fold decided by a calibration fitted on the others), each with a
    95 % percentile bootstrap interval over texts (``n_boot`` draws), and the AUC of the raw score.
    """
    o = options or CalibrationOptions()
    method, threshold_rule, folds, n_boot, seed = o.method, o.threshold_rule, o.folds, o.n_boot, o.seed
    if method not in METHODS:
        raise InputError(f"unknown calibration method {method!r} (known: {', '.join(METHODS)})")
    if threshold_rule not in THRESHOLD_RULES:
        raise InputError(f"unknown threshold rule {threshold_rule!r} (known: {', '.join(THRESHOLD_RULES)})")
    raw, truth = np.asarray(raw, float), np.asarray(truth, bool)
    if raw.shape != truth.shape or raw.ndim != 1:
        raise InputError("calibration needs one raw score per labelled text")
    if not np.all(np.isfinite(raw)):
        raise InputError("the model gave a non-finite score to a calibration text")
    n_pos, n_neg = int(truth.sum()), int((~truth).sum())
    if min(n_pos, n_neg) < 5:
        raise InputError(f"calibration needs at least 5 texts of each style; got {n_pos} {positive!r} and "
                         f"{n_neg} {negative!r}")
    threshold, platt, iso = _fit(method, threshold_rule, raw, truth)
    # cross-validated decisions: each fold decided by a calibration fitted without it
    rng = np.random.default_rng(seed)
    fold = np.empty(len(raw), int)
    for cls_mask in (truth, ~truth):
        idx = np.flatnonzero(cls_mask)
        fold[rng.permutation(idx)] = np.arange(len(idx)) % folds
    cv_pred = np.empty(len(raw), bool)
    k = min(folds, n_pos, n_neg)
    fold %= k
    for f in range(k):
        train = fold != f
        t, _, _ = _fit(method, threshold_rule, raw[train], truth[train])
        cv_pred[~train] = raw[~train] >= t
        if progress is not None:
            progress("cross-validating the calibration", f + 1, k)
    preds = {"before": raw >= default_threshold, "after_in_sample": raw >= threshold, "after_cross_validated": cv_pred}
    scores: dict[str, Any] = {}
    boot = rng.integers(0, len(raw), size=(n_boot, len(raw)))
    for name, pred in preds.items():
        est = balanced_accuracy(truth, pred)
        draws = np.array([balanced_accuracy(truth[b], pred[b]) for b in boot])
        draws = draws[np.isfinite(draws)]
        lo, hi = (np.percentile(draws, [2.5, 97.5]) if len(draws) else (float("nan"), float("nan")))
        scores[name] = {"balanced_accuracy": est, "ci95": [float(lo), float(hi)],
                        f"share_{positive}": float(np.mean(pred))}
    from sklearn.metrics import roc_auc_score

    scores["auc_raw_score"] = float(roc_auc_score(truth, raw))
    scores["bootstrap"] = {"draws": n_boot, "seed": seed, "unit": "text", "interval": "percentile 95%"}
    scores["cross_validation"] = {"folds": k, "stratified": True, "seed": seed}
    d = dict(data or {})
    d.setdefault("n", len(raw))
    d["label_counts"] = {positive: n_pos, negative: n_neg}
    return Calibration(method=method, positive=positive, negative=negative, threshold=float(threshold),
                       threshold_rule=threshold_rule, platt=platt, isotonic=iso, data=d, scores=scores,
                       created=_dt.date.today().isoformat())


def calibrate_style_model(model: "StyleModel", data: "LabelledData", *, positive: str | None = None,
                          name: str | None = None, note: str = "", options: CalibrationOptions | None = None,
                          progress: Callable[[str, int, int], None] | None = None) -> "StyleModel":
    """A copy of ``model`` whose card holds a calibration fitted on ``data`` (texts labelled with the model's two
    styles, names matched through its aliases). ``positive`` is the style the raw score grows with (default: the
    model's second label, the high pole of a regressor). The model's features and head are unchanged."""
    import copy
    import dataclasses

    from ..models.hashing import content_hash

    if len(model.labels) != 2:
        raise InputError(f"model {model.name!r} has {len(model.labels)} labels; calibration needs a two-style model")
    where = data.origin or None
    found = sorted({str(y) for y in data.labels})
    index: dict[str, int] = {}
    for lab in found:
        try:
            index[lab] = model.style_index(lab)
        except InputError:
            raise InputError(f"label {lab!r} of the calibration data is not a style of model {model.name!r} "
                             f"({', '.join(model.labels)})", where) from None
    if len(set(index.values())) < 2:
        raise InputError(f"the calibration data holds one style only ({', '.join(found)}); give texts of both "
                         f"{model.labels[0]!r} and {model.labels[1]!r}", where)
    pos = 1 if positive is None else model.style_index(positive)
    pos_label, neg_label = model.labels[pos], model.labels[1 - pos]
    truth = np.array([index[str(y)] == pos for y in data.labels])
    if progress is not None:
        progress("scoring the calibration texts", 0, 1)
    raw = model.raw_score(data.texts, pos_label)
    if progress is not None:
        progress("scoring the calibration texts", 1, 1)
    # the model's own decision point on the raw score: a classifier's logit 0 (P = 0.5), a regressor's 0 (the middle
    # of PT16's -3..3 scale; for other regressors the "before" figures assume the same)
    default = 0.0
    info = {"data": data.origin, "n": len(data), "data_hash": data.data_hash(), "kind": model.kind}
    if note:
        info["note"] = note
    cal = fit_calibration(raw, truth, positive=pos_label, negative=neg_label, default_threshold=default, data=info,
                          options=options, progress=progress)
    card = copy.deepcopy(model.card)
    base = {"name": model.name}
    if model.path is not None:
        base["hash"] = content_hash(model.path)[:12]
    previous = card.get("calibration")
    card["calibrated_from"] = base
    if previous:
        fitted_on = previous.get("data", {}).get("data")
        card.setdefault("notes", []).append(f"replaces the calibration fitted on {fitted_on}")
    if name:
        card["name"] = name
    out = dataclasses.replace(model, card=card, path=None)
    out.set_calibration(cal)
    return out


if TYPE_CHECKING:
    from ..style_models.data import LabelledData
    from ..style_models.model import StyleModel
