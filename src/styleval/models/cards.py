"""Model cards, one module for every kind of model folder: where the card lies, how its JSON is written, and the
README.md rendered from it.

Each kind keeps the exact layout its shipped folders were written with (indent, ASCII escaping, final newline),
because the content hash of a model folder, which signatures carry, covers these files:

=============== ====================== ====== ============ =========== =========
kind            card file              indent non-ASCII    final \\n   README.md
=============== ====================== ====== ============ =========== =========
style           model_card.json        2      kept         yes         yes
preservation    model_card.json        2      escaped      yes         yes
acceptability   model_card.json        1      escaped      no          yes
transfer        transfer-card.json     1      kept         no          yes
lm              styleval-lm.json       1      escaped      no          no
=============== ====================== ====== ============ =========== =========
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

from ..errors import InputError

STYLE = "style"
PRESERVATION = "preservation"
ACCEPTABILITY = "acceptability"
TRANSFER = "transfer"
LM = "lm"


@dataclass(frozen=True)
class CardFormat:
    """How one kind's card is stored: file name, JSON layout, and its README renderer (``None``: no README)."""

    file: str
    indent: int
    ensure_ascii: bool
    final_newline: bool
    render: Callable[[Mapping[str, Any]], str] | None
    skip_empty: bool = False  # an empty card writes nothing (acceptability models trained without one)

    def dumps(self, card: Mapping[str, Any]) -> str:
        text = json.dumps(card, indent=self.indent, ensure_ascii=self.ensure_ascii)
        return text + "\n" if self.final_newline else text


def write_card(folder: str | Path, kind: str, card: Mapping[str, Any]) -> None:
    """Write ``card`` into a model folder as ``kind`` stores it, with its README.md where the kind has one."""
    fmt = FORMATS[kind]
    if fmt.skip_empty and not card:
        return
    folder = Path(folder)
    (folder / fmt.file).write_text(fmt.dumps(card), encoding="utf-8")
    if fmt.render is not None:
        (folder / "README.md").write_text(fmt.render(card), encoding="utf-8")


def read_card(folder: str | Path, kind: str, *, required: bool | None = None) -> dict[str, Any]:
    """The card of a model folder; a missing card is empty, except for transfer models (or ``required=True``),
    where it is an error naming the folder."""
    fmt = FORMATS[kind]
    path = Path(folder) / fmt.file
    if not path.is_file():
        if required if required is not None else kind == TRANSFER:
            raise InputError(f"not a styleval {kind} model: {fmt.file} is missing", folder)
        return {}
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise InputError(f"unreadable {kind} model card: {exc.msg}", path, exc.lineno) from None


# -- figures on human judgments ---------------------------------------------------------------------
#: The card key of a model's correlations with public human judgments (``docs/results.md``).
HUMAN_JUDGMENTS = "human_judgments"


@dataclass(frozen=True)
class HumanFigure:
    """One figure of a model against human judgments: the data (and split), the human aspect, the statistic, its
    value, and the score it correlates (when not the model's plain score)."""

    data: str
    human: str
    statistic: str
    value: float
    split: str = "evaluation"
    scorer: str = ""  # the metric that gave the figure, as a spec, and what it scores
    ties: str = ""  # how ties count, for a statistic that has a convention for them (Kendall tau-like)

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> "HumanFigure":
        return cls(data=str(raw["data"]), human=str(raw["human"]), statistic=str(raw["statistic"]),
                   value=float(raw["value"]), split=str(raw.get("split", "evaluation")),
                   scorer=str(raw.get("scorer", "")), ties=str(raw.get("ties", "")))

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"data": self.data, "split": self.split, "human": self.human,
                               "statistic": self.statistic, "value": self.value}
        if self.scorer:
            out["scorer"] = self.scorer
        if self.ties:
            out["ties"] = self.ties
        return out


def human_figures(card: Mapping[str, Any]) -> list[HumanFigure]:
    """The figures of ``card``'s ``human_judgments`` section, in the card's order (none: an empty list)."""
    section = card.get(HUMAN_JUDGMENTS) or {}
    return [HumanFigure.from_dict(f) for f in section.get("figures", [])]


def figure_value(value: float) -> str:
    """A correlation as the docs write it: three decimals, no leading zero (``.480``, ``-.816``)."""
    text = f"{value:.3f}"
    return text.replace("0.", ".", 1) if text.startswith(("0.", "-0.")) else text


def human_figure_lines(card: Mapping[str, Any]) -> list[str]:
    """One line per (data, human aspect, scorer) of the card's figures: ``Lai et al. 2022, both directions, human
    style: per-input Kendall tau-like .009, system Pearson -.816``."""
    groups: dict[tuple[str, str, str, str], list[HumanFigure]] = {}
    for f in human_figures(card):
        groups.setdefault((f.data, f.human, f.scorer, f.split), []).append(f)
    lines = []
    for (data, human, scorer, split), figures in groups.items():
        stats = ", ".join(f"{f.statistic} {figure_value(f.value)}" for f in figures)
        ties = "; ".join(dict.fromkeys(f"{f.statistic}: {f.ties}" for f in figures if f.ties))
        lines.append(f"{data} ({split}), human {human}" + (f", {scorer}" if scorer else "") + f": {stats}"
                     + (f" ({ties})" if ties else ""))
    return lines


#: The held-out scores a headline quotes, in this order, with their names.
_HEADLINE_SCORES = (("accuracy", "accuracy"), ("roc_auc", "ROC AUC"), ("spearman", "Spearman"),
                    ("pearson", "Pearson"), ("balanced_accuracy_calibrated", "balanced accuracy calibrated"))


def held_out_headline(card: Mapping[str, Any]) -> str:
    """The card's held-out figures in one phrase: a style model's ``held_out`` scores, an acceptability model's
    ``test`` split, else one test figure on human judgments (SGDD-TST's when there is one; ``''`` for none)."""
    held = card.get("held_out") or {}
    if held.get("scores"):
        scores = held["scores"]
        shown = [f"{label} {scores[key]:.3f}" for key, label in _HEADLINE_SCORES if key in scores]
        return f"{held.get('data')} (n = {held.get('n', scores.get('n'))}): {', '.join(shown)}"
    test = card.get("test") or {}
    if test:
        parts = [f"ROC AUC {test['roc_auc']:.3f}" if "roc_auc" in test else "",
                 f"human sentences passed {test['human_pass']:.3f}" if "human_pass" in test else "",
                 f"corrupted copies rejected {test['corrupted_rejected']:.3f}" if "corrupted_rejected" in test else ""]
        return f"test split (n = {test.get('n')}): {', '.join(p for p in parts if p)}"
    tests = [f for f in human_figures(card) if f.split == "test"]
    if not tests:
        return ""
    best = next((f for f in tests if f.data.startswith("SGDD")), tests[0])  # SGDD-TST: never read in training
    return f"{best.data}, human {best.human}: {best.statistic} {figure_value(best.value)}"


def _human_judgment_lines(card: Mapping[str, Any]) -> list[str]:
    """The README section of a card's figures on human judgments (nothing without them)."""
    section = card.get(HUMAN_JUDGMENTS)
    if not section:
        return []
    lines = ["## Figures on human judgments", ""]
    if section.get("note"):
        lines += [section["note"], ""]
    lines += ["| data | split | human | score | statistic | value |", "|---|---|---|---|---|---|"]
    lines += [f"| {f.data} | {f.split} | {f.human} | {f.scorer or 'the model score'} | {f.statistic}"
              + (f" ({f.ties})" if f.ties else "") + f" | {figure_value(f.value)} |" for f in human_figures(card)]
    lines.append("")
    if section.get("command"):
        lines += [f"Command: `{section['command']}`", ""]
    return lines


# -- README renderers -----------------------------------------------------------------------------
def _fmt(value: Any) -> str:
    return f"{value:.4f}" if isinstance(value, float) else str(value)


def render_style(card: Mapping[str, Any]) -> str:
    """The README of a style or preservation model card."""
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
        lines += [f"- chosen: {json.dumps(sel.get('chosen'))}"]
        cands = sel.get("candidates")
        if cands:  # a model chosen among candidate recipes by a rule written down beforehand
            lines.append(f"- candidates, by the rule: {cands.get('rule')}; chosen: {cands.get('chosen')}")
            lines += [f"  - {name}: " + ", ".join(f"{k} {_fmt(v)}" for k, v in figures.items())
                      for name, figures in cands.get("figures", {}).items()]
        lines.append("")
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
    lines += _human_judgment_lines(card)
    lines += ["## Parameters", "", "```json", json.dumps(card.get("parameters", {}), indent=2), "```", ""]
    if card.get("command"):
        lines += ["## Rebuild", "", "```", card["command"], "```", ""]
    if card.get("notes"):
        lines += ["## Notes", "", *[f"- {n}" for n in card["notes"]], ""]
    return "\n".join(lines)


def _calibration_lines(cal: Mapping[str, Any]) -> list[str]:
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


def render_acceptability(card: Mapping[str, Any]) -> str:
    """The README of an acceptability model card."""
    tr, sel, te = card.get("training", {}), card.get("selection", {}), card.get("test", {})
    lines = [f"# {card.get('name')}", "", card.get("description", ""), "",
             f"- kind: {card.get('kind')}; features: {', '.join(card.get('features', []))}"
             f" (degree {card.get('config', {}).get('degree')})",
             f"- libraries at training time: {json.dumps(card.get('libraries', {}))}", "",
             "## Training data", "", f"- {tr.get('data')}",
             f"- {tr.get('n')} texts (sha256 {tr.get('data_hash')}): {json.dumps(tr.get('label_counts'))}",
             f"- registers: {json.dumps(tr.get('registers'))}", f"- forms: {json.dumps(tr.get('forms'))}",
             f"- corruptions: {json.dumps(tr.get('corruptions'))}", "",
             "## Selection (model and threshold chosen here)", "",
             f"- {sel.get('n')} texts (sha256 {sel.get('data_hash')}), by {sel.get('metric')}",
             f"- grid: {json.dumps(sel.get('grid'))}", f"- chosen: {json.dumps(sel.get('chosen'))}",
             f"- threshold: {sel.get('threshold_rule')}: {sel.get('threshold')} (folded into the intercept)",
             f"- at the threshold: {json.dumps(sel.get('at_threshold'))}", "",
             "## Test (held out, reported only)", "", "| figure | value |", "|---|---|"]
    for k, v in te.items():
        lines.append(f"| {k} | {json.dumps(v) if isinstance(v, dict) else v} |")
    lines += ["", *_human_judgment_lines(card), "## Data", "", card.get("data_notes", ""), "", "## Rebuild", "", "```",
              card.get("command", ""), "```", ""]
    return "\n".join(lines)


def render_transfer(card: Mapping[str, Any]) -> str:
    """The README of a transfer model card."""
    tr = card.get("training", {})
    log = tr.get("log", {})
    lines = [f"# {card.get('name')}", "", f"{card.get('description')}.", "",
             f"- kind: {card.get('kind')}; direction: {card.get('direction')}; source preprocessing: "
             f"{card.get('preprocess')}",
             f"- libraries: {json.dumps(card.get('libraries', {}))}", "", "## Training", ""]
    for role in ("data", "selection"):
        d = tr.get(role, {})
        if d:
            lines.append(f"- {role}: {d.get('origin')} — {d.get('split')}; {d.get('sources')} sources, "
                         f"{d.get('pairs')} pairs, sha256 {d.get('sha256')}")
    lines += [f"- configuration: {json.dumps(card.get('config', {}))}",
              f"- wall time {tr.get('wall_minutes')} min on {tr.get('torch_threads')} torch threads "
              f"({tr.get('machine')}); stopped by: {log.get('stopped_by')}",
              f"- log: {json.dumps({k: v for k, v in log.items() if k != 'epochs'})}"]
    for e in log.get("epochs", []):
        lines.append(f"  - epoch {e['epoch']}: train loss {e['train_loss']}, selection NLL {e['dev_nll']}, "
                     f"{e['minutes']} min")
    if tr.get("command"):
        lines.append(f"- command: `{tr['command']}`")
    lines += ["", "## Evaluation", ""]
    if not card.get("evaluation"):
        lines.append("(none recorded)")
    for ev in card.get("evaluation", []):
        lines.append(f"- {ev.get('data')} ({ev.get('split')}): {json.dumps(ev.get('figures'))}")
        if ev.get("command"):
            lines.append(f"  command: `{ev['command']}`")
    return "\n".join(lines) + "\n"


FORMATS: dict[str, CardFormat] = {
    STYLE: CardFormat("model_card.json", 2, False, True, render_style),
    PRESERVATION: CardFormat("model_card.json", 2, True, True, render_style),
    ACCEPTABILITY: CardFormat("model_card.json", 1, True, False, render_acceptability, skip_empty=True),
    TRANSFER: CardFormat("transfer-card.json", 1, False, False, render_transfer),
    LM: CardFormat("styleval-lm.json", 1, True, False, None),
}
