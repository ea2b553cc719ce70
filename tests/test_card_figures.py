"""Shipped models' figures on human judgments: kept in their cards, equal to docs/results.md, quoted by the evaluate
rationale from the cards (issue #36, item 5)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path


from styleval.evaluation.battery import card_facts, shipped_model_cards
from styleval.evaluation.plan import BatteryChoices, CorpusFacts, ModelCardFacts, StyleModelFacts, plan_evaluation
from styleval.models import cards, registry
from styleval.records import Record


def role_metric(plan, role: str):
    """The metric instance of ``plan`` that plays ``role``."""
    return next(m for m in plan.metrics if m.metric_id == plan.roles[role])

ROOT = Path(__file__).resolve().parents[1]
#: shipped model -> a figure docs/results.md gives for it (as the card must state it)
EXPECTED = {"formality-classifier-pt16": "system Pearson -.816", "formality-regressor-pt16": "system Pearson -.154",
            "sentiment-classifier-yelp": "Pearson .606", "preservation-minilm": "Spearman .552",
            "preservation-minilm-fast": "Spearman .445", "acceptability-smollm2": "system Pearson .944"}


def _card(name: str) -> dict:
    kind = next(k for k in registry.SHIPPED if name in registry.shipped(k))
    return cards.read_card(registry.resolve(kind, name), kind)


def test_cards_hold_the_figures_of_docs_results():
    results = (ROOT / "docs" / "results.md").read_text(encoding="utf-8")
    for name, figure in EXPECTED.items():
        card = _card(name)
        assert any(figure in line for line in cards.human_figure_lines(card)), name
        assert "## Figures on human judgments" in (registry.resolve(
            next(k for k in registry.SHIPPED if name in registry.shipped(k)), name) / "README.md").read_text()
        for fig in cards.human_figures(card):  # every value the card states is one docs/results.md reports
            assert cards.figure_value(fig.value).replace("-", "−") in results, (name, fig)
    assert cards.human_figures(_card("toxicity-classifier-paradetox")) == []  # no human toxicity judgments here


def test_the_card_script_is_what_the_cards_hold():
    """studies/shipped_models/card_human_figures.py --check: the cards are what the script writes."""
    done = subprocess.run([sys.executable, str(ROOT / "studies/shipped_models/card_human_figures.py"), "--check"],
                          capture_output=True, text=True, env={"PYTHONPATH": str(ROOT / "src"), "PATH": ""})
    assert done.returncode == 0, done.stderr


def test_figure_helpers(tmp_path):
    card = {"name": "m", "version": "2", "human_judgments": {"note": "n", "command": "c", "figures": [
        {"data": "D", "split": "test", "human": "content", "statistic": "Spearman", "value": 0.5521},
        {"data": "D", "split": "test", "human": "content", "statistic": "Pearson", "value": -0.0404},
        {"data": "E", "human": "style", "statistic": "Kendall", "value": 1.0, "scorer": "P(target)"}]}}
    assert cards.human_figure_lines(card) == ["D (test), human content: Spearman .552, Pearson -.040",
                                              "E (evaluation), human style, P(target): Kendall 1.000"]
    assert cards.held_out_headline(card) == "D, human content: Spearman .552"
    cards.write_card(tmp_path, cards.PRESERVATION, card)
    readme = (tmp_path / "README.md").read_text(encoding="utf-8")
    assert "| D | test | content | the model score | Spearman | .552 |" in readme and "Command: `c`" in readme
    assert cards.read_card(tmp_path, cards.PRESERVATION) == card
    assert card_facts(card) == ModelCardFacts("2", tuple(cards.human_figure_lines(card)))


def _corpus() -> CorpusFacts:
    return CorpusFacts.of([Record(id="1", source="hey u", output="Hello.", system="A", direction="informal->formal")])


def test_rationale_quotes_each_default_models_card():
    """Style, content and fluency: the rationale quotes the model's card, version and every figure line, as read
    from the card files (no figure is written in the code)."""
    facts = shipped_model_cards()
    style = StyleModelFacts(name="formality-classifier-pt16", chosen=True, labels=("formal", "informal"),
                            feature_blocks="embedding, hand", calibration_note="",
                            card=facts["formality-classifier-pt16"])
    plan = plan_evaluation(_corpus(), BatteryChoices(content_model="preservation"), style, facts)
    for aspect, name in (("style", "formality-classifier-pt16"), ("content", "preservation-minilm"),
                         ("fluency", "acceptability-smollm2")):
        card = _card(name)
        line = next(r for r in plan.rationale if r.startswith(f"{aspect}: '{name}' (model version {card['version']})"
                                                              " against human judgments"))
        assert all(fig in line for fig in cards.human_figure_lines(card)) and EXPECTED[name] in line
    fast = plan_evaluation(_corpus(), BatteryChoices(content_model="preservation-fast"), style, facts)
    assert any(r.startswith("content: 'preservation-minilm-fast' (model version 1)") for r in fast.rationale)
    cosine = plan_evaluation(_corpus(), BatteryChoices(), style, facts)  # the default
    assert role_metric(cosine, "similarity").name == "sentence_cosine"
    assert not any("'minilm'" in r for r in cosine.rationale)  # an installed encoder has no card to quote
    toxic = StyleModelFacts(name="toxicity-classifier-paradetox", chosen=True, labels=("neutral", "toxic"),
                            feature_blocks="tfidf", calibration_note="", card=facts["toxicity-classifier-paradetox"])
    line = next(r for r in plan_evaluation(_corpus(), BatteryChoices(fast=True), toxic, facts).rationale
                if "toxicity-classifier-paradetox' (model" in r)
    assert "has no figures on human judgments in its model card" in line


def test_style_model_facts_read_the_card():
    from styleval.evaluation.battery import style_model_facts

    facts = style_model_facts("auto", frozenset({"formal", "informal"}))
    assert facts.name == "formality-classifier-pt16" and facts.card is not None
    assert any("per-input Kendall tau-like .009, system Pearson -.816" in line for line in facts.card.figures)
