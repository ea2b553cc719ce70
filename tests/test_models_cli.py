"""``styleval models`` lists the shipped style, preservation and acceptability models with the catalog assets
(issue #36, item 6): name, kind, size, content hash, what each is for, a held-out figure, whether it loads."""
from __future__ import annotations

import json

from styleval.cli import main as cli_main
from styleval.models import cards, registry
from styleval.models.hashing import content_hash


def test_json_rows_cover_every_shipped_model(capsys):
    assert cli_main.main(["models", "--no-load", "--json"]) == 0
    rows = {r["name"]: r for r in map(json.loads, capsys.readouterr().out.splitlines())}
    for kind in registry.SHIPPED:
        for name, folder in registry.shipped(kind).items():
            row = rows[name]
            card = cards.read_card(folder, kind)
            assert (row["kind"], row["source"], row["version"]) == (kind, "shipped", str(card["version"]))
            assert row["sha256"] == content_hash(folder)[:12] and row["size"].endswith("B")
            assert row["held_out"] == cards.held_out_headline(card) != ""
            assert row["human_judgments"] == cards.human_figure_lines(card)
    assert rows["preservation-minilm"]["for"] == "preservation (its default model)"
    assert rows["acceptability-smollm2"]["for"] == "acceptability (its default model)"
    assert rows["formality-regressor-pt16"]["for"] == "style_regression (its default model)"
    assert rows["toxicity-classifier-paradetox"]["for"].endswith("model=auto for neutral/toxic")
    assert rows["preservation-minilm"]["held_out"] == "SGDD-TST, 10,287 pairs, human content: Spearman .552"
    assert "accuracy 0.977" in rows["toxicity-classifier-paradetox"]["held_out"]
    assert {"glove-6b-50d", "minilm", "smollm2-135m", "spacy-en-sm"} <= set(rows)


def test_table_names_the_shipped_models_and_loads_them(capsys):
    assert cli_main.main(["models", "--no-hash"]) == 0
    out = capsys.readouterr().out
    assert "shipped inside the package" in out
    for kind in registry.SHIPPED:
        for name in registry.shipped(kind):
            line = next(line for line in out.splitlines() if line.startswith(name + " "))
            assert " no:" not in line and "yes (" in line, line
    assert "yes (classifier: formal, informal)" in out and "    held out: test split (n = 650): ROC AUC 0.822" in out
