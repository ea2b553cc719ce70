"""Training of style models: feature blocks, a linear head chosen on a selection set, held-out scores, card."""
from __future__ import annotations

import datetime as _dt
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from ..errors import InputError
from ..progress import Progress, given_or_active
from ..signature import library_version
from ..style_models.card import classifier_scores, regressor_scores
from ..style_models.data import LabelledData, split_data
from ..style_models.features import Block, make_block
from ..style_models.model import CLASSIFIER, REGRESSOR, StyleModel, preprocess
from .options import CardText, HeadOptions, StyleTarget

DEFAULT_GRID = {CLASSIFIER: [0.25, 1.0, 4.0, 16.0], REGRESSOR: [0.3, 1.0, 3.0, 10.0, 30.0]}
#: more distinct whole-number labels than this read as scores, not classes
MAX_NUMERIC_CLASSES = 10
FEATURE_SETS = {"tfidf": ("tfidf",), "embedding": ("embedding",), "tfidf+embedding": ("tfidf", "embedding"),
                "tfidf+hand": ("tfidf", "hand"), "embedding+hand": ("embedding", "hand"),
                "all": ("tfidf", "embedding", "hand")}


def _blocks(features: str | Sequence[str], options: Mapping[str, Mapping[str, Any]]) -> list[Block]:
    kinds = FEATURE_SETS.get(features, None) if isinstance(features, str) else tuple(features)
    if kinds is None:
        kinds = tuple(f.strip() for f in str(features).split("+") if f.strip())
    return [make_block(k, **options.get(k, {})) for k in kinds]


def _fit_head(kind: str, x, y, value: float, n_labels: int):
    if kind == CLASSIFIER:
        from sklearn.linear_model import LogisticRegression

        solver = "liblinear" if n_labels == 2 else "lbfgs"
        head = LogisticRegression(C=value, solver=solver, max_iter=3000)
    else:
        from sklearn.linear_model import Ridge

        head = Ridge(alpha=value)
    head.fit(x, y)
    return head


def _score(kind: str, labels: list[str], head, x, y, metric: str = "accuracy") -> float:
    if kind == CLASSIFIER and metric == "roc_auc":
        from sklearn.metrics import roc_auc_score

        return float(roc_auc_score(np.asarray(y) == labels[1], head.decision_function(x)))
    if kind == CLASSIFIER:
        return float(np.mean(head.predict(x) == np.asarray(y)))
    from scipy.stats import spearmanr

    return float(spearmanr(y, head.predict(x))[0])


def prepare_targets(train: LabelledData, selection: LabelledData | None, kind: str, poles: tuple[str, str],
                    seed: int) -> tuple[LabelledData, LabelledData, list[str], list[Any], list[Any]]:
    """Check the training data and split off the selection part (10% of ``train`` when ``selection`` is None).

    Returns ``(fit_part, sel_part, labels, y_fit, y_sel)``: string targets for a classifier, floats for a
    regressor (whose labels are ``poles``); bad input is a clear error naming the data.
    """
    if kind not in (CLASSIFIER, REGRESSOR):
        raise InputError(f"kind must be {CLASSIFIER!r} or {REGRESSOR!r}, not {kind!r}")
    if len(train) < 4:
        raise InputError(f"need at least 4 training texts, got {len(train)}", train.origin or None)
    fit_part, sel_part = split_data(train, 0.1, seed=seed) if selection is None else (train, selection)
    if kind == CLASSIFIER:
        refuse_numeric_labels(train)
        y_fit: list[Any] = [str(v) for v in fit_part.labels]
        labels = sorted(set(y_fit))
        if len(labels) < 2:
            raise InputError(f"a classifier needs at least two labels, found {labels}", train.origin or None)
        only_selected = sorted(set(str(v) for v in train.labels) - set(labels)) if selection is None else []
        if only_selected:
            raise InputError(f"label(s) {', '.join(map(repr, only_selected))} fell entirely into the 10% set aside "
                             "to choose the regularisation: give more examples of them, or a selection table",
                             train.origin or None)
        y_sel: list[Any] = [str(v) for v in sel_part.labels]
    else:
        try:
            y_fit = [float(v) for v in fit_part.labels]
            y_sel = [float(v) for v in sel_part.labels]
        except (TypeError, ValueError):
            raise InputError("a regressor needs numeric labels", train.origin or None) from None
        labels = list(poles)
    return fit_part, sel_part, labels, y_fit, y_sel


def refuse_numeric_labels(data: LabelledData) -> None:
    """A clear error when a classifier's labels are scores (every label a number, and fractional or many
    distinct values, as PT16's formality scores): each value would otherwise become a class of its own."""
    try:
        values = sorted({float(v) for v in data.labels})
    except (TypeError, ValueError):
        return
    if len(values) <= MAX_NUMERIC_CLASSES and all(v.is_integer() for v in values):
        return  # a few whole numbers (0/1, 1..5) are class codes
    examples = ", ".join(list(dict.fromkeys(str(v) for v in data.labels))[:3])
    raise InputError(f"the labels look numeric ({len(values)} distinct values from {values[0]:g} to {values[-1]:g}, "
                     f"e.g. {examples}): a classifier would make each value a class of its own; train a regressor "
                     "instead (kind='regressor'; on the command line: --kind regressor --poles LOW,HIGH)",
                     data.origin or None)


def check_aliases(aliases: dict[str, str], labels: Sequence[str], origin: str = "") -> None:
    """Every alias must name one of the model's labels (a regressor's poles)."""
    lowered = {lab.lower() for lab in labels}
    for style, label in aliases.items():
        if not style or label.lower() not in lowered:
            raise InputError(f"alias {style!r} -> {label!r}: {label!r} is not one of the model's labels "
                             f"({', '.join(labels)})", origin or None)


def held_out_entry(model: StyleModel, held_out: LabelledData,
                   extra: Callable[[StyleModel], dict[str, float]] | None = None) -> dict[str, Any]:
    """The card's ``held_out`` section: the data's identity and the model's scores on it (plus ``extra``)."""
    scores = evaluate(model, held_out)
    if extra is not None:
        scores.update(extra(model))
    return {"data": held_out.origin, "n": len(held_out), "data_hash": held_out.data_hash(), "scores": scores}


def train_style_model(train: LabelledData, *, selection: LabelledData | None = None,
                      held_out: LabelledData | None = None, target: StyleTarget | None = None,
                      head: HeadOptions | None = None, card: CardText | None = None,
                      extra_held_out: Callable[[StyleModel], dict[str, float]] | None = None,
                      progress: Progress | None = None) -> StyleModel:
    """Train a classifier (string labels) or regressor (numeric labels, ``target.poles`` = the low and high styles).

    The regularisation (``C`` of logistic regression, ``alpha`` of ridge) is chosen from ``head.grid`` on
    ``selection`` (10% of ``train`` when not given; the model is then refitted on all of ``train``).
    ``held_out`` is scored once, after selection, and recorded in the card (with ``extra_held_out``'s figures);
    it never influences training. ``head.selection_metric``: ``accuracy`` (classifiers' default), ``roc_auc`` (two
    labels: ranking only, for selection data from another domain whose threshold a calibration sets), ``spearman``
    (regressors). ``head.text_norm`` is the text normalisation applied before every feature
    (:func:`styleval.style_models.model.preprocess`). ``head.fitted_blocks`` are feature blocks trained elsewhere
    (e.g. the encoder of a fine-tuned model), put before the blocks named in ``head.features`` (which may then be
    empty) and used as they are.
    ``progress`` hears the stages (features, the choice of the regularisation, the refit, the held-out scores).
    """
    target, card = target or StyleTarget(), card or CardText()
    kind, poles, aliases = target.kind, target.poles, dict(target.aliases)
    head = head or HeadOptions()
    features, options, text_norm, seed = head.features, dict(head.feature_options), head.text_norm, head.seed
    name, version, description, command, notes = card.name, card.version, card.description, card.command, card.notes
    say = given_or_active(progress) or (lambda description, done, total: None)
    refit = selection is None
    fit_part, sel_part, labels, y_fit, y_sel = prepare_targets(train, selection, kind, poles, seed)
    check_aliases(dict(aliases or {}), labels, train.origin)
    own = _blocks(features, options) if features else []
    blocks = [*head.fitted_blocks, *own]
    if not blocks:
        raise InputError("no feature blocks: name some in features or give fitted_blocks")
    say(f"features of {len(fit_part):,} training and {len(sel_part):,} selection texts", 0, 1)
    for b in own:
        b.fit(preprocess(fit_part.texts, text_norm))
    model = StyleModel(kind, labels, blocks, np.zeros((1, 1)), np.zeros(1), dict(aliases or {}),
                       text_norm=text_norm)
    x_fit, x_sel = model.features(fit_part.texts), model.features(sel_part.texts)
    grid = list(head.grid or DEFAULT_GRID[kind])
    metric = head.selection_metric or ("accuracy" if kind == CLASSIFIER else "spearman")
    if metric not in ({"accuracy", "roc_auc"} if kind == CLASSIFIER else {"spearman"}):
        raise InputError(f"selection metric {metric!r} does not apply to a {kind}")
    if metric == "roc_auc" and len(labels) != 2:
        raise InputError("selection by roc_auc needs two labels")
    results: dict[str, float] = {}
    for k, v in enumerate(grid):
        say("choosing the regularisation on the selection texts [values]", k, len(grid))
        results[str(v)] = _score(kind, labels, _fit_head(kind, x_fit, y_fit, v, len(labels)), x_sel, y_sel, metric)
    best = max(grid, key=lambda v: results[str(v)])
    say(f"fitting the head on {len(train) if refit else len(fit_part):,} texts", 0, 1)
    if refit:
        for b in own:
            b.fit(preprocess(train.texts, text_norm))
        x_fit = model.features(train.texts)
        y_fit = [str(v) for v in train.labels] if kind == CLASSIFIER else [float(v) for v in train.labels]
    fitted = _fit_head(kind, x_fit, y_fit, best, len(labels))
    if kind == CLASSIFIER and list(fitted.classes_) != labels:
        raise RuntimeError("label order changed during training")
    model.coef = np.atleast_2d(np.asarray(fitted.coef_, dtype=np.float64))
    model.intercept = np.atleast_1d(np.asarray(fitted.intercept_, dtype=np.float64))
    # the stored head is float32: score with the rounded weights so the card matches a reload
    model.coef = model.coef.astype(np.float32).astype(np.float64)
    param = "C" if kind == CLASSIFIER else "alpha"
    counts = {str(k): int(v) for k, v in zip(*np.unique([str(v) for v in train.labels], return_counts=True))} \
        if kind == CLASSIFIER else None
    entries: dict[str, Any] = {
        "name": name, "version": version, "description": description, "kind": kind, "labels": labels,
        "aliases": dict(aliases or {}), "styleval_version": library_version("styleval"),
        "sklearn_version": library_version("scikit-learn"), "created": _dt.date.today().isoformat(),
        "training": {"data": train.origin, "n": len(train), "data_hash": train.data_hash(),
                     "label_counts": counts, "skipped_lines": len(train.skipped)},
        "selection": {"data": sel_part.origin if not refit else f"10% of training data (seed {seed})",
                      "n": len(sel_part), "data_hash": sel_part.data_hash(),
                      "metric": metric,
                      "grid": {param: grid, "scores": results}, "chosen": {param: best},
                      "refit_on_all_training_data": refit},
        "parameters": {"preprocess": text_norm, "features": [b.config() for b in blocks],
                       "head": {"type": "logistic_regression" if kind == CLASSIFIER else "ridge", param: best}},
        "command": command, "notes": list(notes),
    }
    model.card = entries
    if held_out is not None:
        say(f"scoring {len(held_out):,} held-out texts", 0, 1)
        entries["held_out"] = held_out_entry(model, held_out, extra_held_out)
    return model


def evaluate(model: StyleModel, data: LabelledData) -> dict[str, float]:
    """Held-out scores of a model on labelled data (classifier: accuracy, macro F1, AUC; regressor: Spearman...)."""
    if model.kind == CLASSIFIER:
        truth = [str(v) for v in data.labels]
        out = classifier_scores(model.labels, truth, model.predict_proba(data.texts))
        if model.calibration is not None:  # the calibrated decisions, as style_accuracy makes them
            from ..style_models.calibration import balanced_accuracy

            label, _ = model.decide(data.texts)
            pred = np.array([model.labels[i] for i in label])
            t = np.asarray(truth)
            out["accuracy_calibrated"] = float(np.mean(pred == t))
            if len(model.labels) == 2:
                out["balanced_accuracy_calibrated"] = balanced_accuracy(t == model.labels[1], pred == model.labels[1])
        return out
    return regressor_scores([float(v) for v in data.labels], model.regress(data.texts))
