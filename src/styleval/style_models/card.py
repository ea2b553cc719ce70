"""Held-out evaluation of style models and their model cards (JSON for tools, README.md for people)."""
from __future__ import annotations

from typing import Sequence

import numpy as np


def classifier_scores(labels: Sequence[str], true: Sequence[str], proba: np.ndarray) -> dict[str, float]:
    """Accuracy, macro F1, and ROC AUC of ``labels[1]`` for two labels."""
    from sklearn.metrics import f1_score, roc_auc_score

    pred = [labels[i] for i in np.argmax(proba, axis=1)]
    true = [str(t) for t in true]
    out = {"accuracy": float(np.mean([p == t for p, t in zip(pred, true)])),
           "macro_f1": float(f1_score(true, pred, labels=list(labels), average="macro", zero_division=0)),
           "n": len(true)}
    if len(labels) == 2 and len(set(true)) == 2:
        out["roc_auc"] = float(roc_auc_score([t == labels[1] for t in true], proba[:, 1]))
    return out


def regressor_scores(true: Sequence[float], pred: np.ndarray) -> dict[str, float]:
    """Spearman, Pearson and RMSE of predicted against gold scores."""
    from scipy.stats import pearsonr, spearmanr

    y = np.asarray(true, dtype=float)
    p = np.asarray(pred, dtype=float)
    return {"spearman": float(spearmanr(y, p)[0]), "pearson": float(pearsonr(y, p)[0]),
            "rmse": float(np.sqrt(np.mean((y - p) ** 2))), "n": int(len(y))}
