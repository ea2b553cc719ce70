"""Held-out evaluation of style models and their model cards (JSON for tools, README.md for people)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Sequence

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


def _fmt(value: Any) -> str:
    return f"{value:.4f}" if isinstance(value, float) else str(value)


def write_readme(card: dict[str, Any], path: str | Path) -> None:
    """A human-readable rendering of a model card."""
    lines = [f"# {card.get('name', 'style model')}", ""]
    if card.get("description"):
        lines += [card["description"], ""]
    libs = [f"{name} {card[key]}" for name, key in (("scikit-learn", "sklearn_version"), ("torch", "torch_version"),
                                                    ("transformers", "transformers_version")) if card.get(key)]
    lines += [f"- kind: {card.get('kind')}", f"- labels: {', '.join(card.get('labels', []))}",
              f"- model version: {card.get('version')}; styleval {card.get('styleval_version')}"
              + (f"; {', '.join(libs)} at training time" if libs else ""), ""]
    tr = card.get("training", {})
    if tr:
        lines += ["## Training data", "", f"- {tr.get('data')}", f"- {tr.get('n')} texts, sha256 {tr.get('data_hash')}"]
        if tr.get("label_counts"):
            lines.append(f"- label counts: {json.dumps(tr['label_counts'])}")
        lines.append("")
    sel = card.get("selection", {})
    if sel:
        lines += ["## Model selection", "", f"- on {sel.get('data')} ({sel.get('n')} texts), by {sel.get('metric')}"]
        if sel.get("grid") is not None:
            lines.append(f"- grid: {json.dumps(sel.get('grid'))}")
        for e in sel.get("epochs") or []:  # fine-tuned models: one line per epoch
            lines.append(f"- epoch {e['epoch']}: training loss {e['train_loss']:.4f}, {sel.get('metric')} "
                         f"{e['selection']:.4f}")
        lines += [f"- chosen: {json.dumps(sel.get('chosen'))}", ""]
    for key, title in (("held_out", "Held-out scores"),):
        ho = card.get(key, {})
        if ho:
            lines += [f"## {title}", "", f"Data: {ho.get('data')} ({ho.get('n')} texts, sha256 {ho.get('data_hash')})",
                      "", "| score | value |", "|---|---|"]
            lines += [f"| {k} | {_fmt(v)} |" for k, v in ho.get("scores", {}).items()]
            lines.append("")
            cs = ho.get("calibrated_sample")
            if cs:  # a large held-out split rescored on a random sample after calibration
                lines += [f"After calibration, on a random sample of {cs['n']} of its {cs['of']} texts (seed "
                          f"{cs['seed']}, sha256 {cs['data_hash']}):", "", "| score | value |", "|---|---|"]
                lines += [f"| {k} | {_fmt(v)} |" for k, v in cs.get("scores", {}).items()]
                lines.append("")
    cal = card.get("calibration")
    if cal:
        lines += _calibration_lines(cal)
    lines += ["## Parameters", "", "```json", json.dumps(card.get("parameters", {}), indent=2), "```", ""]
    if card.get("command"):
        lines += ["## Rebuild", "", "```", card["command"], "```", ""]
    if card.get("notes"):
        lines += ["## Notes", "", *[f"- {n}" for n in card["notes"]], ""]
    Path(path).write_text("\n".join(lines), encoding="utf-8")


def _calibration_lines(cal: dict[str, Any]) -> list[str]:
    """The README section of a calibration (see :mod:`styleval.style_models.calibration`)."""
    data = cal.get("data", {})
    lines = ["## Calibration", "",
             f"- method: {cal.get('method')} ({cal.get('threshold_rule')} threshold); raw score: "
             f"{cal.get('raw_score')} toward `{cal.get('positive')}`",
             f"- decision: `{cal.get('positive')}` when the raw score >= {cal.get('threshold'):.4f} "
             f"(calibrated P({cal.get('positive')}) {cal.get('probability_threshold'):.4f})",
             f"- fitted on: {data.get('data')} ({data.get('n')} texts, {json.dumps(data.get('label_counts'))}, "
             f"sha256 {data.get('data_hash')})"]
    if data.get("note"):
        lines.append(f"- note: {data['note']}")
    if cal.get("command"):
        lines.append(f"- command: `{cal['command']}`")
    if cal.get("platt"):
        lines.append(f"- Platt map: P = sigmoid({cal['platt']['a']:.4f} * score + {cal['platt']['b']:.4f})")
    scores = cal.get("scores", {})
    rows = [(k, scores[k]) for k in ("before", "after_in_sample", "after_cross_validated") if k in scores]
    if rows:
        lines += ["", "| balanced accuracy on the calibration sample | value | 95 % bootstrap interval |",
                  "|---|---|---|"]
        lines += [f"| {k.replace('_', ' ')} | {v['balanced_accuracy']:.4f} | {v['ci95'][0]:.4f}-{v['ci95'][1]:.4f} |"
                  for k, v in rows]
        if "auc_raw_score" in scores:
            lines.append(f"| AUC of the raw score | {scores['auc_raw_score']:.4f} | |")
    return lines + [""]
