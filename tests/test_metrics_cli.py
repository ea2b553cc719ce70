"""``styleval metrics`` and ``styleval metrics NAME`` (issue #36, item 4): a table that fits a terminal with the
recommended default of each aspect marked as evaluate uses it, one metric in full, a one-line error for an unknown
name, and a quiet exit when the reader of the pipe goes away."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from styleval.cli import main as cli_main
from styleval.cli.metrics_cmd import signature_format
from styleval.evaluation.plan import RECOMMENDED, BatteryChoices, CorpusFacts, StyleModelFacts, plan_evaluation
from styleval.metrics import registry
from styleval.metrics.guide import parameters, reference
from styleval.models import cards
from styleval.models import registry as models
from styleval.records import Record


def role_metric(plan, role: str):
    """The metric instance of ``plan`` that plays ``role``."""
    return next(m for m in plan.metrics if m.metric_id == plan.roles[role])

SRC = str(Path(__file__).resolve().parents[1] / "src")


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    code = cli_main.main(["metrics", *argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("width", [100, 120])
def test_table_fits_and_lists_every_metric(capsys, width):
    code, out, _ = _run(capsys, "--width", str(width))
    assert code == 0
    lines = out.splitlines()
    assert max(map(len, lines)) <= width
    names = {line.split()[0] for line in lines[1:] if line and not line.startswith(" ")}
    assert set(registry.available()) <= names
    starred = {line.split()[0]: line.split()[2] for line in lines if line.split()[1:2] == ["*"]}
    assert starred == {name: aspect for aspect, (name, _) in RECOMMENDED.items()}


def test_recommended_defaults_are_what_evaluate_uses():
    corpus = CorpusFacts.of([Record(id="1", source="hey", output="Hello.", system="A", direction="informal->formal")])
    style = StyleModelFacts(name="formality-classifier-pt16", chosen=True, labels=("formal", "informal"),
                            feature_blocks="embedding", calibration_note="")
    plan = plan_evaluation(corpus, BatteryChoices(), style)
    roles = {role: role_metric(plan, role).name for role in ("style", "similarity", "fluency")}
    assert roles == {"style": RECOMMENDED["style"][0], "similarity": RECOMMENDED["content"][0],
                     "fluency": RECOMMENDED["fluency"][0]}
    assert RECOMMENDED["overall"][0] == "j"


def test_every_shipped_parameter_has_a_meaning_and_lexical_metrics_a_reference():
    for name, cls in registry.available().items():
        if not cls.__module__.startswith("styleval.metrics"):
            continue  # a plugin or an example registered by another test
        missing = [p.name for p in parameters(cls) if not p.meaning]
        assert not missing, (name, missing)
    for name in ("bleu", "chrf", "chrf++", "ter", "rouge1", "meteor", "bertscore"):
        assert reference(registry.metric_class(name))


def test_help_and_capabilities_are_read_from_the_class(capsys):
    from styleval.metrics.content.chrf import CHRF
    from styleval.metrics.guide import parameter_help

    class Sharper(CHRF):  # a subclass (a plugin, say) overrides one meaning and inherits the others
        parameter_help = {"beta": "how much more recall counts"}
        reference = "nothing but itself"

    assert parameter_help(Sharper, "beta") == "how much more recall counts"
    assert parameter_help(Sharper, "char_order") == CHRF.parameter_help["char_order"]
    assert parameter_help(Sharper, "lowercase") == "lower-case both texts first"  # the shared meaning
    assert reference(Sharper) == "nothing but itself"
    chunks = "scored in chunks (score --stream, --cache):"
    assert f"{chunks} yes" in _run(capsys, "bleu", "--width", "200")[1]
    out = _run(capsys, "naturalness", "--width", "200")[1]
    assert f"{chunks} no (its classifiers are fitted on the run's own sources and outputs)" in out
    assert "with idf=true it weights words by idf" in _run(capsys, "bertscore", "--width", "200")[1]


def test_preservation_in_full(capsys):
    code, out, _ = _run(capsys, "preservation")
    assert code == 0
    assert out.startswith("preservation: content metric, higher is better, range 0..1, metric version 3\n")
    assert "recommended default" not in out  # evaluate's similarity is sentence cosine (issue #35's gate)
    assert "recommended default for content" in _run(capsys, "sentence_cosine")[1]
    flat = " ".join(out.split())
    for p in parameters(registry.metric_class("preservation")):
        assert f"{p.name} (default {p.default!r}): {' '.join(p.meaning.split())}" in flat
    card = cards.read_card(models.resolve(models.PRESERVATION), models.PRESERVATION)
    assert f"model preservation-minilm (preservation, model version {card['version']}, the default)" in out
    for line in cards.human_figure_lines(card):  # every figure of the card, as the card states it
        assert " ".join(line.split()) in flat
    assert "preservation.v3|against:references|nrefs:N|backend:auto|model:preservation-minilm|" in out


def test_style_accuracy_shows_each_auto_candidate_and_its_weak_figures(capsys):
    _, out, _ = _run(capsys, "style_accuracy")
    for name in ("formality-classifier-pt16", "sentiment-classifier-yelp", "toxicity-classifier-paradetox"):
        assert f"model {name} (style, model version 1)" in out
    flat = " ".join(out.split())
    assert "per-input Kendall tau-like .009, system Pearson -.816" in flat  # weak, and shown
    assert "toxicity-classifier-paradetox" in flat and "none recorded in its card" in flat
    assert "held out: shared/data/pt16/test.csv (n = 2983): accuracy 0.489, ROC AUC 0.655" in flat


def test_signature_format_is_the_real_signature(capsys):
    import styleval

    records = [Record(id="1", source="u r gr8", output="You are great.", references=["You are great."], system="A")]
    real = styleval.score(records, ["bleu"], against=["references"], bootstrap=0).get("bleu/ref", "A").signature
    assert signature_format(registry.metric_class("bleu")).replace("nrefs:N", "nrefs:1") == str(real)
    _, out, _ = _run(capsys, "bleu")
    assert "reference implementation: sacrebleu BLEU" in out
    assert "tokenize (default '13a'): sacrebleu tokenizer" in out
    assert max(map(len, out.splitlines())) <= 120


def test_unknown_name_is_one_line_with_close_matches(capsys):
    code, out, err = _run(capsys, "bleuu")
    assert code == 2 and out == ""
    assert err.strip() == ("styleval: error: unknown metric 'bleuu'; did you mean bleu, bleurt? (`styleval metrics` "
                           "lists them all)")
    assert _run(capsys, "BLEU")[0] == 0  # case does not matter


@pytest.mark.parametrize("argv", [["metrics"], ["metrics", "preservation"]])
def test_a_closed_pipe_is_a_quiet_exit(argv):
    """The reader goes away before anything is written: exit 0, nothing on stderr (no BrokenPipeError)."""
    env = {**os.environ, "PYTHONPATH": SRC}
    proc = subprocess.Popen([sys.executable, "-m", "styleval.cli.main", *argv], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait() == 0 and err == ""
    shell = subprocess.run(f"'{sys.executable}' -m styleval.cli.main {' '.join(argv)} | head -n 1", shell=True,
                           capture_output=True, text=True, env=env)
    assert shell.returncode == 0 and len(shell.stdout.splitlines()) == 1 and "Traceback" not in shell.stderr


def test_readme_which_metric_agrees_with_evaluate_and_results():
    """README "Which metric?": one row per aspect naming the metric evaluate relies on, every figure one
    docs/results.md reports."""
    import re

    root = Path(__file__).resolve().parents[1]
    readme = (root / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## Which metric?"):]
    section = section[:section.index("\n## ", 1)]
    rows = [line for line in section.splitlines() if line.startswith("| ") and not line.startswith("| aspect")]
    named = {cells[1].strip(): re.search(r"`([^`]+)`", cells[2]).group(1)
             for cells in (row.split("|") for row in rows)}
    assert named == {aspect: name for aspect, (name, _) in RECOMMENDED.items()}
    results = (root / "docs" / "results.md").read_text(encoding="utf-8")
    figures = re.findall(r"−?\.\d{3}\b|\d+\.\d %", section)
    assert len(figures) >= 20
    assert [f for f in figures if f not in results] == []


def test_docs_name_preservation_with_the_versions_of_code_and_card():
    """The metric version (code) and the model version (card) of the learned content metric, as the docs state them;
    evaluate's similarity default is named as the plan has it."""
    from styleval.evaluation.plan import CONTENT_MODELS, DEFAULT_CONTENT_MODEL

    root = Path(__file__).resolve().parents[1]
    report_doc = " ".join((root / "docs/evaluate-report.md").read_text(encoding="utf-8").split())
    assert f"`{CONTENT_MODELS[DEFAULT_CONTENT_MODEL]}:against=source`" in report_doc
    metric = registry.metric_class("preservation").version
    model = cards.read_card(models.resolve(models.PRESERVATION), models.PRESERVATION)["version"]
    assert models.default(models.PRESERVATION) == "preservation-minilm"
    for doc, phrases in (("docs/preservation.md", [f"`preservation.v{metric}`", f"`preservation-minilm` is version "
                                                   f"{model}", f"the `preservation` metric (version {metric}) with the "
                                                   f"model `preservation-minilm` (version {model})"]),
                         ("docs/metrics.md", [f"model version {model}, metric version {metric}"])):
        text = " ".join((root / doc).read_text(encoding="utf-8").split())
        for phrase in phrases:
            assert phrase in text, (doc, phrase)
