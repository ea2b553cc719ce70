"""Fitting the acceptability classifier and writing its model card.

:func:`fit_acceptability` takes the train / select / test
:class:`~styleval.training.acceptability_examples.Examples` and the LM
outputs of their normalised texts, and:

1. computes :data:`~styleval.acceptability.features.FEATURES` with the shipped unigram model;
2. fits a logistic regression (standardised features, degree 1 or 2) for each C of a grid, and keeps the one with
   the best ROC AUC on the selection split;
3. chooses the decision threshold on the selection split: the highest probability that still passes at least
   ``human_pass`` of the human-written sentences of every register; it is folded into the intercept, so the
   shipped score is >= 0.5 exactly when the text passes;
4. scores the test split once, for the card only (accuracy, ROC AUC, pass rate of human text per register and
   form, rejection rate of each corruption).
"""
from __future__ import annotations

import hashlib
from collections import Counter
from pathlib import Path
from typing import Any, Callable, Mapping

import numpy as np

from .acceptability_examples import Examples
from ..acceptability.features import FEATURES, token_features
from ..models.catalog import DEFAULT_CAUSAL_LM

GRID_C = (0.01, 0.1, 1.0, 10.0)
GRID_DEGREE = (1, 2)


def feature_matrix(ex: Examples, lm_out: Mapping[str, tuple[np.ndarray, np.ndarray, float]], unigram: Any
                   ) -> np.ndarray:
    table = unigram._table()
    rows = []
    for t in ex.texts:
        ids, lp, end = lm_out[t]
        rows.append(token_features(np.asarray(lp, float), table[np.asarray(ids, np.int64)], end, ids))
    return np.vstack(rows)


def _data_hash(texts: list[str]) -> str:
    return hashlib.sha256("\n".join(texts).encode("utf-8")).hexdigest()[:16]


def _pass_rates(p: np.ndarray, ex: Examples, cut: float = 0.5) -> dict[str, Any]:
    y = np.asarray(ex.labels)
    regs, forms, ops = np.asarray(ex.registers), np.asarray(ex.forms), np.asarray(ex.operations)
    out: dict[str, Any] = {"human_pass_by_register": {}, "human_pass_by_form": {}, "corrupted_rejected_by_op": {}}
    for r in sorted(set(regs)):
        m = (regs == r) & (y == 1)
        out["human_pass_by_register"][r] = round(float(np.mean(p[m] >= cut)), 4)
    for f in sorted(set(forms)):
        m = (forms == f) & (y == 1)
        out["human_pass_by_form"][f] = round(float(np.mean(p[m] >= cut)), 4)
    single = Counter(o for o in ops if o and "+" not in o)
    for o in sorted(single):
        m = ops == o
        out["corrupted_rejected_by_op"][o] = round(float(np.mean(p[m] < cut)), 4)
    m = (y == 0) & np.char.find(ops.astype(str), "+").__ge__(0)
    if m.any():
        out["corrupted_rejected_by_op"]["2-3 operations"] = round(float(np.mean(p[m] < cut)), 4)
    out["human_pass"] = round(float(np.mean(p[y == 1] >= cut)), 4)
    out["corrupted_rejected"] = round(float(np.mean(p[y == 0] < cut)), 4)
    out["accuracy"] = round(float(np.mean((p >= cut) == (y == 1))), 4)
    return out


def fit_acceptability(examples: Mapping[str, Examples], lm_out: Mapping[str, Any], *, out: Path | None = None,
                      human_pass: float = 0.90, data_note: str = "", command: str = "",
                      log: Callable[[str], None] = lambda m: None) -> dict[str, Any]:
    """Fit, select, calibrate, test and save the model (see the module doc); returns its card."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import roc_auc_score

    from ..signature import library_version
    from ..acceptability.model import DEFAULT_ACCEPTABILITY, PRETRAINED_DIR, AcceptabilityModel, expand
    from ..acceptability.unigram import DEFAULT_UNIGRAM, load_unigram

    unigram = load_unigram(DEFAULT_UNIGRAM)
    X = {k: feature_matrix(v, lm_out, unigram) for k, v in examples.items()}
    y = {k: np.asarray(v.labels) for k, v in examples.items()}
    for k in X:  # examples have at least one word, so every row has features
        if not np.isfinite(X[k]).all():
            raise ValueError(f"{k}: {int((~np.isfinite(X[k]).all(axis=1)).sum())} example(s) without features")
    candidates = []
    best: tuple[float, Any] | None = None
    for degree in GRID_DEGREE:
        tr = expand(X["train"], degree)
        mean, scale = tr.mean(axis=0), tr.std(axis=0) + 1e-9
        for c in GRID_C:
            clf = LogisticRegression(C=c, max_iter=5000).fit((tr - mean) / scale, y["train"])
            sel = clf.decision_function((expand(X["select"], degree) - mean) / scale)
            auc = float(roc_auc_score(y["select"], sel))
            candidates.append({"degree": degree, "C": c, "selection_roc_auc": round(auc, 4)})
            log(f"degree {degree}, C {c}: selection ROC AUC {auc:.4f}")
            if best is None or auc > best[0]:
                best = (auc, (degree, c, clf, mean, scale))
    assert best is not None
    auc, (degree, c, clf, mean, scale) = best
    config = {"name": DEFAULT_ACCEPTABILITY, "features": list(FEATURES), "degree": degree,
              "lm": DEFAULT_CAUSAL_LM, "unigram": DEFAULT_UNIGRAM, "normalize": "detok+truecase", "version": "1"}
    model = AcceptabilityModel(mean=mean, scale=scale, coef=clf.coef_[0].astype(float),
                               intercept=float(clf.intercept_[0]), config=config)
    # threshold on the selection split: every register's human sentences pass at >= human_pass
    p_sel = model.predict_features(X["select"])
    sel_ex = examples["select"]
    regs = np.asarray(sel_ex.registers)
    cut = min(float(np.quantile(p_sel[(regs == r) & (y["select"] == 1)], 1 - human_pass, method="lower"))
              for r in set(regs))
    model.intercept -= float(np.log(cut / (1 - cut)))
    log(f"chosen degree {degree}, C {c}; threshold {cut:.4f} folded into the intercept")
    p_sel = model.predict_features(X["select"])
    p_test = model.predict_features(X["test"])
    test = _pass_rates(p_test, examples["test"])
    test["roc_auc"] = round(float(roc_auc_score(y["test"], p_test)), 4)
    test["n"] = len(p_test)
    selection = _pass_rates(p_sel, sel_ex)
    selection["roc_auc"] = round(float(roc_auc_score(y["select"], p_sel)), 4)
    ops = Counter(o for o in examples["train"].operations if o)
    card = {
        "name": DEFAULT_ACCEPTABILITY, "version": config["version"], "kind": "logistic regression on LM features",
        "description": "P(acceptable English) from SmolLM2-135M token statistics (after detok+truecase) and a "
                       "unigram model; acceptable when the score is >= 0.5",
        "features": list(FEATURES), "config": config,
        "training": {"data": data_note.strip().splitlines()[0] if data_note else "",
                     "n": len(examples["train"]), "data_hash": _data_hash(examples["train"].texts),
                     "label_counts": {"human": int(y["train"].sum()), "corrupted": int((y["train"] == 0).sum())},
                     "registers": dict(Counter(examples["train"].registers)),
                     "forms": dict(Counter(examples["train"].forms)), "corruptions": dict(ops)},
        "selection": {"n": len(sel_ex), "data_hash": _data_hash(sel_ex.texts), "metric": "ROC AUC",
                      "grid": candidates, "chosen": {"degree": degree, "C": c},
                      "threshold_rule": f"highest P that passes >= {human_pass:.0%} of every register's human "
                                        "sentences", "threshold": round(cut, 4), "at_threshold": selection},
        "test": test,
        "libraries": {"scikit-learn": library_version("scikit-learn"), "torch": library_version("torch")},
        "data_notes": data_note.strip(), "command": command or
        "STYLEVAL_THREADS=1 .venv/bin/python studies/shipped_models/train_acceptability.py "
        "--work /tmp/styleval-acceptability",
    }
    model.card = card
    model.save(out or PRETRAINED_DIR / DEFAULT_ACCEPTABILITY)
    return card
