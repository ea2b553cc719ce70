"""Every figure of the README's "Which metric?" table is traceable (issue #52, item 2): the test reads the README
itself, finds every figure in the table and checks that docs/results.md or a shipped model's card states it; each
cell with figures names the metric that gave them (a registered metric in backticks, or a stored score), and each
cell with a Kendall tau-like figure says how ties count."""
from __future__ import annotations

import re
from pathlib import Path

from styleval.metrics import registry
from styleval.models import cards
from styleval.models import registry as models

ROOT = Path(__file__).resolve().parents[1]
#: a figure as the README writes it: .308, −.816, 0.977, 95.7 % (counts such as 1,948 are not figures)
FIGURE = re.compile(r"(?<![\w.,])[−-]?\d*\.\d+(?:\s%)?(?![\w.])")


def which_metric_rows() -> list[list[str]]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Which metric?", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| ") and not line.startswith("|---")]
    return [[cell.strip() for cell in row.strip().strip("|").split("|")] for row in rows[1:]]  # header left out


def _sources() -> str:
    """docs/results.md and every shipped card's figures on human judgments and held-out headline, as one text."""
    parts = [(ROOT / "docs" / "results.md").read_text(encoding="utf-8")]
    for kind in models.SHIPPED:
        for name in models.shipped(kind):
            card = cards.read_card(models.resolve(kind, name), kind)
            parts += cards.human_figure_lines(card) + [cards.held_out_headline(card)]
    return "\n".join(parts).replace("−", "-")


def _stated(figure: str, sources: str) -> bool:
    """``figure`` appears in ``sources`` as a number of its own (.977 also as 0.977, 95.7 % also as 95.7%)."""
    value = figure.replace("−", "-").replace(" %", "")
    sign, digits = ("-", value[1:]) if value.startswith("-") else ("", value)
    body = re.escape(digits.lstrip("0") if digits.startswith("0.") else digits)
    pattern = rf"(?<![\w.]){re.escape(sign)}0?{body}(?:\s?%)?(?![\w])" if digits.startswith((".", "0.")) else \
        rf"(?<![\w.]){re.escape(sign)}{body}\s?%"
    return re.search(pattern, sources) is not None


def test_the_table_is_there():
    rows = which_metric_rows()
    assert [r[0] for r in rows] == ["style", "content", "fluency", "overall"]
    assert sum(len(FIGURE.findall(cell)) for row in rows for cell in row) >= 30


def test_every_figure_is_stated_in_results_or_a_card():
    sources = _sources()
    missing = [(row[0], figure) for row in which_metric_rows() for cell in row[2:] for figure in FIGURE.findall(cell)
               if not _stated(figure, sources)]
    assert not missing, f"README 'Which metric?' figures found in neither docs/results.md nor a card: {missing}"


def test_every_cell_with_figures_names_its_metric_and_kendall_its_ties():
    names = set(registry.available())
    for row in which_metric_rows():
        for cell in row[2:]:
            if not FIGURE.findall(cell):
                continue
            named = {n.split(":")[0] for n in re.findall(r"`([^`]+)`", cell)} & names
            assert named or "stored" in cell, (row[0], cell)
            if "Kendall" in cell:
                assert "tie" in cell, (row[0], cell)


def test_style_accuracy_is_not_credited_with_style_probabilitys_figures():
    """Lai 2022's .308 / .934 are the calibrated probability's (style_probability), as the cased card says; the
    0/1 decision's own figure under Lai's convention is the one that names its ties."""
    style = dict(zip(("aspect", "use", "why", "weakness"), which_metric_rows()[0]))["weakness"]
    for clause in re.split(r";\s", style):
        if ".308" in clause:
            assert "`style_probability`" in clause and "`style_accuracy`" not in clause, clause
        if "−.323" in clause:
            assert "`style_accuracy`" in clause and "ties" in clause, clause
    cased = cards.read_card(models.resolve(models.STYLE, "formality-classifier-pt16-cased"), models.STYLE)
    line = next(line for line in cards.human_figure_lines(cased) if "both directions" in line)
    assert "style_probability" in line and ".308" in line and "metric ties discordant" in line


def test_the_check_finds_a_figure_nobody_states():
    assert not _stated(".123", "a .1234 and 0.1235 but not the one")
    assert _stated(".977", "accuracy 0.977 (0.9768)") and _stated("−.816", "Pearson -.816")
    assert _stated("95.7 %", "pass 95.7 % of") and not _stated("95.7 %", "pass 95.71 %")


def test_every_card_figure_names_its_metric_and_kendall_its_ties():
    """What `styleval metrics NAME`, `styleval models` and the evaluate rationale quote from the cards."""
    names = set(registry.available())
    seen = 0
    for kind in models.SHIPPED:
        for name in models.shipped(kind):
            for fig in cards.human_figures(cards.read_card(models.resolve(kind, name), kind)):
                seen += 1
                assert fig.scorer.split(":")[0] in names, (name, fig)
                assert ("Kendall" in fig.statistic) == bool(fig.ties), (name, fig)
    assert seen >= 40
