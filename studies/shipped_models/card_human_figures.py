#!/usr/bin/env python
"""Write each shipped model's figures on public human judgments into its card (section ``human_judgments``).

The figures are those `docs/results.md` reports for the shipped models, each computed by the command named with
it; this script records them where `styleval metrics NAME`, `styleval models` and the `evaluate` rationale read
them (the card), through `styleval.models.cards.write_card`, so the card keeps its byte layout and its README
gains a section "Figures on human judgments". A model without such figures (the toxicity classifier: no human
toxicity judgments in ../shared/data) gets no section.

    .venv/bin/python studies/shipped_models/card_human_figures.py [--check] [--style-json FILE]

``--check`` writes nothing and exits 1 when a card differs from what the script would write. ``--style-json``: the
output of ``studies/figures/style_figures.py --only lai mir --out FILE``; the style models' figures are then
taken from it (and must round to the recorded ones), not from the table below.

A card's bytes are part of the model's content hash (signatures carry it): rewriting a card changes that hash,
not the model's weights, version or scores.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "src"))

from styleval.models import cards, registry  # noqa: E402

LAI = "Lai et al. 2022, 8 systems"
MIR = "Mir et al. 2019, Yelp"
KENDALL, PEARSON = "per-input Kendall tau-like", "system Pearson"
STYLE_CMD = ".venv/bin/python studies/figures/style_figures.py --only lai mir --out style_figures.json"
CASE_CMD = ".venv/bin/python studies/figures/case_figures.py"
PRESERVATION_CMD = ".venv/bin/python studies/preservation/preservation_results.py --cache DIR --json out.json"
FLUENCY_CMD = ("STYLEVAL_THREADS=1 .venv/bin/python studies/figures/fluency_judgment_figures.py --stage lm, "
               "then --stage figures --only lai,mir")
EVALUATION = ("Evaluation data: public human judgments no fit of this model used, seen during development (not a "
              "blind test); docs/results.md.")
FORMALITY = (EVALUATION + " Its calibration (the classifier's selection too) used other rewrites of Lai's inputs "
             "(xformal fr.80.ref1-3), never Lai's outputs.")
HELD_OUT = ("Held-out data: the odd input rows of Lai 2022 and Mir 2019 (training used the even rows), SGDD-TST "
            "(never read in training or selection) and the style-shift test; docs/results.md. The Lai and Mir "
            "figures of version 3 prompted version 4's cosine weight, so those two sets are not blind for it.")


#: the metric behind the acceptability model's figures (its default normalisation)
ACCEPTABILITY = "acceptability: P(acceptable), normalize=auto"
#: the tie convention of every per-input Kendall tau-like figure here (Lai et al. 2022's, docs/meta-conventions.md)
LAI_TIES = "human ties skipped, metric ties discordant, as Lai et al. count them"


def _fig(data: str, human: str, statistic: str, value: float, split: str = "evaluation",
         scorer: str = "") -> dict[str, Any]:
    ties = LAI_TIES if statistic == KENDALL else ""
    return cards.HumanFigure(data, human, statistic, value, split, scorer, ties).to_dict()


def _lai_style(both: tuple[float, float], inf_for: tuple[float, float], for_inf: tuple[float, float],
               scorer: str) -> list[dict[str, Any]]:
    out = []
    for direction, (kendall, pearson) in (("both directions", both), ("informal->formal", inf_for),
                                          ("formal->informal", for_inf)):
        out += [_fig(f"{LAI}, {direction}", "style", KENDALL, kendall, scorer=scorer),
                _fig(f"{LAI}, {direction}", "style", PEARSON, pearson, scorer=scorer)]
    return out


def _preservation(kendall: float, pearson: float, lai_all: float, mir_pearson: float, mir_all: float,
                  sgdd: float, shift: float, scorer: str) -> list[dict[str, Any]]:
    lai, mir = "Lai et al. 2022, odd input rows", "Mir et al. 2019, odd input rows"
    return [_fig(lai, "content", KENDALL, kendall, "test", scorer), _fig(lai, "content", PEARSON, pearson, "test",
                                                                         scorer),
            _fig(lai, "content", "Spearman over all 360 pairs", lai_all, "test", scorer),
            _fig(mir, "content", "Pearson over all rated outputs", mir_pearson, "test", scorer),
            _fig(mir, "content", "Spearman over all 1,464 pairs", mir_all, "test", scorer),
            _fig("SGDD-TST, 10,287 pairs", "content", "Spearman", sgdd, "test", scorer),
            _fig("style-shift test, 839 items", "content",
                 "agreement (a human style rewrite above an automatic meaning change)", shift, "test", scorer)]


#: model -> (kind, note, command, figures); the figures of docs/results.md.
FIGURES: dict[str, tuple[str, str, str, list[dict[str, Any]]]] = {
    "formality-classifier-pt16": (registry.STYLE, FORMALITY, STYLE_CMD, _lai_style(
        (0.009, -0.816), (0.151, 0.903), (-0.133, -0.715), "style_probability: calibrated P(target style)")),
    "formality-classifier-pt16-cased": (registry.STYLE, FORMALITY + " Lai's release is cased, so case=auto gives "
                                        "it to this model.", CASE_CMD, _lai_style(
        (0.308, 0.934), (0.690, 0.987), (-0.073, -0.469), "style_probability: calibrated P(target style), as written")),
    "formality-regressor-pt16": (registry.STYLE, FORMALITY, STYLE_CMD, _lai_style(
        (0.303, -0.154), (0.645, 0.993), (-0.039, -0.515), "style_regression: score oriented to the target") + [
        _fig(f"{LAI}, both directions", "style", KENDALL, 0.303,
             scorer="style_regression:scale=probability: calibrated probability"),
        _fig(f"{LAI}, both directions", "style", PEARSON, 0.408,
             scorer="style_regression:scale=probability: calibrated probability")]),
    "sentiment-classifier-yelp": (registry.STYLE, EVALUATION, STYLE_CMD, [
        _fig(f"{MIR}, {model} settings pooled", "style transfer intensity", "Pearson", value,
             scorer="style_emd: direction-corrected EMD")
        for model, value in (("ARAE", 0.531), ("CAAE", 0.606), ("DAR", 0.567))]),
    "preservation-minilm": (registry.PRESERVATION, HELD_OUT, PRESERVATION_CMD,
                            _preservation(0.480, 0.959, 0.659, 0.523, 0.523, 0.552, 0.783,
                                          "preservation:against=source")),
    "preservation-minilm-fast": (registry.PRESERVATION, HELD_OUT, PRESERVATION_CMD,
                                 _preservation(0.428, 0.958, 0.608, 0.527, 0.537, 0.445, 0.570,
                                               "preservation:model=preservation-minilm-fast;against=source")),
    "acceptability-smollm2": (registry.ACCEPTABILITY, EVALUATION + " Texts normalised as the metric's default "
                              "(normalize=auto, decided per text).", FLUENCY_CMD, [
        _fig(f"{LAI}, both directions", "fluency", KENDALL, 0.355, scorer=ACCEPTABILITY),
        _fig(f"{LAI}, both directions", "fluency", PEARSON, 0.944, scorer=ACCEPTABILITY),
        _fig(f"{LAI}, informal->formal", "fluency", KENDALL, 0.357, scorer=ACCEPTABILITY),
        _fig(f"{LAI}, informal->formal", "fluency", PEARSON, 0.995, scorer=ACCEPTABILITY),
        _fig(f"{LAI}, formal->informal", "fluency", KENDALL, 0.352, scorer=ACCEPTABILITY),
        _fig(f"{LAI}, formal->informal", "fluency", PEARSON, 0.918, scorer=ACCEPTABILITY),
        _fig(f"{MIR}, 9 settings x 244 outputs", "naturalness", "Pearson over all outputs", 0.347,
             scorer=ACCEPTABILITY),
        _fig(f"{MIR}, 9 settings x 244 outputs", "naturalness", "Spearman over all outputs", 0.414,
             scorer=ACCEPTABILITY),
        _fig(f"{MIR}, 1,956 A/B choices", "naturalness", "agreement with relative judgments", 0.670,
             scorer=ACCEPTABILITY)]),
}

#: style_figures.py --only lai: the metric label of each shipped style model's row and its scorer.
STYLE_LABELS = {"formality-classifier-pt16": "ours:classifier-pt16", "formality-regressor-pt16": "ours:regressor-pt16"}


def check_style_json(path: Path) -> None:
    """The recorded Lai and Mir style figures must be those ``style_figures.py`` computes, to three decimals."""
    data = json.loads(path.read_text(encoding="utf-8"))
    for name, label in STYLE_LABELS.items():
        for fig in FIGURES[name][3]:
            if "scale=probability" in fig.get("scorer", ""):
                key = f"{label} (calibrated probability)"
            else:
                key = label
            direction = fig["data"].rsplit(", ", 1)[1].replace("both directions", "both")
            stat = "kendall" if fig["statistic"] == KENDALL else "system_pearson"
            got = data["lai"][f"{stat} [{direction}]"][key]
            if abs(got - fig["value"]) > 5e-4:
                raise SystemExit(f"{name}: {fig['data']} {fig['statistic']}: computed {got}, recorded {fig['value']}")
    for fig in FIGURES["sentiment-classifier-yelp"][3]:
        model = fig["data"].split(", ")[2].split()[0]
        got = data["mir"][model]["style_intensity"]["emd:ours-yelp"]
        if abs(got - fig["value"]) > 5e-4:
            raise SystemExit(f"sentiment-classifier-yelp: Mir {model}: computed {got}, recorded {fig['value']}")


def updated(card: dict[str, Any], note: str, command: str, figures: list[dict[str, Any]]) -> dict[str, Any]:
    """``card`` with its human-judgment section set, as its last key."""
    section = {"note": note, "command": command, "figures": figures}
    out: dict[str, Any] = {}
    for key, value in card.items():
        if key != cards.HUMAN_JUDGMENTS:
            out[key] = value
    out[cards.HUMAN_JUDGMENTS] = section
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="write nothing; exit 1 when a card is out of date")
    ap.add_argument("--style-json", type=Path, help="style_figures.py output to check the style figures against")
    args = ap.parse_args(argv)
    if args.style_json:
        check_style_json(args.style_json)
    stale = []
    for name, (kind, note, command, figures) in FIGURES.items():
        folder = registry.resolve(kind, name)
        card = cards.read_card(folder, kind, required=True)
        new = updated(card, note, command, figures)
        if new == card:
            continue
        stale.append(name)
        if not args.check:
            cards.write_card(folder, kind, new)
            print(f"updated {folder}", file=sys.stderr)
    if args.check and stale:
        print(f"out of date: {', '.join(stale)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
