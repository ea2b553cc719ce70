"""``styleval evaluate`` on outputs with empty lines (issue #42): a table, the empty outputs flagged, no traceback.

Real systems emit empty lines; one among the example's outputs once ended the full evaluation in BERTScore's
tokenizer. The bundled example is written out, some output lines of one system emptied (one blank, one only
whitespace), and evaluated with and without ``--fast``.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from styleval.cli.main import main


@pytest.fixture(scope="module")
def emptied(tmp_path_factory) -> tuple[Path, str]:
    folder = tmp_path_factory.mktemp("example")
    assert main(["data", "example", "formality", str(folder)]) == 0
    system = sorted((folder / "systems").glob("*.txt"))[0]
    lines = system.read_text(encoding="utf-8").splitlines()
    lines[1], lines[3] = "", "   \t"
    system.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder, system.stem


@pytest.mark.parametrize("fast", [True, False], ids=["fast", "full"])
def test_evaluate_with_empty_output_lines_gives_a_table(emptied, fast, tmp_path, capsys):
    folder, system = emptied
    out = tmp_path / "ev.json"
    argv = ["evaluate", "--systems-dir", str(folder / "systems"), "--source", str(folder / "source.txt"),
            "--reference", str(folder / "ref0.txt"), "--reference", str(folder / "ref1.txt"),
            "--direction", "informal:formal", "--bootstrap", "50", "--no-progress", "--json", str(out)]
    assert main(argv + (["--fast"] if fast else [])) == 0
    printed = capsys.readouterr().out
    assert system in printed and "style_accuracy" in printed and "Traceback" not in printed
    data = json.loads(out.read_text(encoding="utf-8"))
    corpus = data["score"]["corpus"] if "score" in data else data["corpus"]
    rows = [row for row in corpus if row["system"] == system]
    assert rows, "the system with empty lines is missing from the table"
    for row in rows:  # every metric gave the system a corpus score (a number, or NaN written as null)
        assert "score" in row
    assert any(r["score"] is not None for r in rows)
    flagged = {r["metric"] for r in rows if r.get("flags", {}).get("empty_output") == ["2", "4"]}
    assert flagged, "the emptied lines 2 and 4 are flagged as empty outputs"
    if not fast:
        assert {"perplexity", "sentence_cosine/src"} <= {r["metric"] for r in rows}
