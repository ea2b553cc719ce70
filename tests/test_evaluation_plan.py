"""The evaluation plan is pure: facts and choices in, metrics, roles and reasons out, no model loaded."""
from __future__ import annotations

import pytest

from styleval.errors import InputError
from styleval.evaluation.plan import BatteryChoices, CorpusFacts, StyleModelFacts, plan_evaluation
from styleval.records import Record


def role_metric(plan, role: str):
    """The metric instance of ``plan`` that plays ``role``."""
    return next(m for m in plan.metrics if m.metric_id == plan.roles[role])

# A name no model folder has: planning that tried to load the style model would fail on it.
STYLE = StyleModelFacts(name="no-such-style-model", chosen=True, labels=("formal", "informal"),
                        feature_blocks="tfidf", calibration_note=" (calibration note)")


def corpus(n_refs: int, directions: tuple[str, ...] = ("informal->formal",)) -> CorpusFacts:
    records = [Record(id=str(i), source="hey u", output="Hello.", references=["Hello there."] * n_refs,
                      system=system, direction=direction)
               for i, direction in enumerate(directions) for system in ("A", "B")]
    return CorpusFacts.of(records)


def labels(ids) -> list[str]:
    return [i.label for i in ids]


def test_corpus_facts():
    facts = corpus(2, ("informal->formal", "formal->informal"))
    assert facts.directions == ("informal->formal", "formal->informal")
    assert facts.styles == {"formal", "informal"}
    assert (facts.n_systems, facts.n_records, facts.n_references, facts.has_references) == (2, 4, 2, True)
    with pytest.raises(InputError, match="no transfer direction"):
        CorpusFacts.of([Record(id="1", source="a", output="b")])
    with pytest.raises(InputError, match="no records"):
        CorpusFacts.of([])


def test_full_battery_with_references():
    plan = plan_evaluation(corpus(2), BatteryChoices(), STYLE)
    assert labels(plan.aspects["style"]) == ["style_accuracy", "style_emd"]
    assert labels(plan.aspects["content"]) == ["sentence_cosine/src", "bertscore/src", "bleu/src", "chrf/src",
                                               "meteor/src", "bleu/ref", "chrf/ref", "meteor/ref"]
    assert labels(plan.aspects["fluency"]) == ["acceptability", "perplexity"]
    assert {role: mid.label for role, mid in plan.roles.items()} == {
        "style": "style_accuracy", "content": "bleu/ref", "similarity": "sentence_cosine/src",
        "fluency": "acceptability"}
    assert role_metric(plan, "style").get_params()["model"] == "no-such-style-model"
    assert plan.content_note == "BLEU/ref ÷ 100"
    assert plan.rationale[0] == "direction: informal->formal; 2 systems × 1 segments, up to 2 reference(s) per segment."
    assert plan.settings["size"] == "2 systems × 1 segments"
    # specs rebuild the same metrics (the perplexity instance stands for itself)
    assert plan.specs[:4] == ["style_accuracy:model=no-such-style-model", "style_emd:model=no-such-style-model",
                              "sentence_cosine:against=source", "bertscore:against=source"]
    assert plan.specs[-2] is plan.metrics[-2] and plan.metrics[-2].name == "perplexity"
    assert plan.settings["fluency_threshold"] == 0.5


def test_roles_without_references_and_fast():
    plain = plan_evaluation(corpus(0), BatteryChoices(content_model="preservation", fluency="perplexity"), STYLE)
    assert plain.roles["content"] == plain.roles["similarity"]
    assert plain.roles["content"].label == "preservation/src"
    assert plain.roles["fluency"].label == "perplexity" and plain.settings["fluency_threshold"] == 200.0
    assert not any(mid.against == "references" for mid in plain.aspects["content"])

    fast = plan_evaluation(corpus(0), BatteryChoices(fast=True, naturalness="unigram"), STYLE)
    assert fast.roles["content"].label == fast.roles["similarity"].label == "chrf/src"
    assert "fluency" not in fast.roles
    assert labels(fast.aspects["fluency"]) == ["naturalness"]
    assert "naturalness:classifier=unigram,seed=12345" in fast.specs
    assert fast.settings["content_model"] is None and fast.settings["lm"] is None


def test_style_lms_named_in_the_reason():
    plan = plan_evaluation(corpus(1), BatteryChoices(style_lms={"formal": "/lm/formal"}), STYLE)
    assert role_metric(plan, "fluency").name == "acceptability"
    perplexity = next(m for m in plan.metrics if m.name == "perplexity")
    assert perplexity.get_params()["style_lms"] == "formal=/lm/formal"
    assert any(line.startswith("fluency: perplexity under the target-style LM(s) given (formal)")
               for line in plan.rationale)


@pytest.mark.parametrize("choice, message", [
    ({"content_model": "bleu"}, "content_model must be one of"),
    ({"fluency": "slor"}, "fluency must be one of"),
    ({"fluency_threshold": 0.0}, "fluency_threshold must be positive"),
    ({"naturalness": "bert"}, "naturalness must be one of"),
])
def test_choices_refused(choice, message):
    with pytest.raises(InputError, match=message):
        BatteryChoices(**choice)


def test_default_similarity_follows_the_written_rule():
    """The default content model is the similarity rule's choice (with its outside gate); its rationale names the
    rule and gives the figures of docs/results.md's table (issue #35)."""
    import re
    from pathlib import Path

    from styleval.evaluation.plan import DEFAULT_CONTENT_MODEL

    plan = plan_evaluation(corpus(0), BatteryChoices(), STYLE)
    assert DEFAULT_CONTENT_MODEL == "sentence_cosine" and plan.settings["content_model"] == "sentence_cosine"
    assert plan.roles["similarity"] == plan.roles["content"]
    assert role_metric(plan, "similarity").name == "sentence_cosine"
    line = next(r for r in plan.rationale if r.startswith("content: ") and "J's SIM" in r)
    assert "the similarity rule (studies/similarity_default/README.md)" in line
    assert "at least as good as plain cosine" in line and "not blind" in line
    root = Path(__file__).resolve().parents[1]
    assert (root / "studies/similarity_default/README.md").is_file()
    results = (root / "docs/results.md").read_text(encoding="utf-8")
    section = results[results.index("### Which similarity `evaluate` uses"):]
    section = section[:section.index("\n## ")]
    figures = re.findall(r"−?\.\d{3}\b", line)
    assert len(figures) >= 10 and all(f in section for f in figures)
    # asked for by name, the reason says it is not the default
    other = plan_evaluation(corpus(0), BatteryChoices(content_model="preservation"), STYLE)
    assert role_metric(other, "similarity").name == "preservation"
    assert any("as asked (content_model='preservation'" in r for r in other.rationale)


def test_corpus_size_counts_each_systems_segments():
    """3 systems of 500 segments are "3 systems × 500 segments", not 1,500 records (yelp-dualrl's Human2 has 499)."""
    def records(sizes):
        return [Record(id=str(i), source="s", output="o", system=system, direction="negative:positive")
                for system, n in sizes.items() for i in range(1, n + 1)]

    assert CorpusFacts.of(records({"A": 500, "B": 500, "C": 500})).size == "3 systems × 500 segments"
    assert CorpusFacts.of(records({"A": 500, "Human2": 499})).size == "2 systems (500, 499 segments)"
