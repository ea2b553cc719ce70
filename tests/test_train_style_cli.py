"""train-style on numeric labels ends in one line that suggests a regressor; the training verbs' help shows every
default and explains --alias."""
from __future__ import annotations

import subprocess
import sys

import pytest

from styleval.cli.main import build_parser
from styleval.errors import InputError
from styleval.style_models import LabelledData
from styleval.training.options import HeadOptions, StyleTarget
from styleval.training.style import train_style_model

TRAINING_VERBS = ("train-style", "calibrate-style", "train-content", "train-lm", "train-transfer")
TEXTS = ["Kindly confirm receipt.", "I would be grateful for a reply.", "We regret the delay.", "lol u there",
         "gonna be late sry", "omg so cool", "Please find the report attached.", "haha nope"]


def test_pt16_as_shipped_ends_in_one_line_suggesting_a_regressor(shared_data, tmp_path) -> None:
    out = tmp_path / "model"
    proc = subprocess.run([sys.executable, "-m", "styleval.cli.main", "train-style",
                           str(shared_data / "pt16" / "train.csv"), "--text-col", "sentence", "-o", str(out)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2
    assert proc.stdout == "" and "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("styleval: error: ") and "pt16/train.csv" in lines[0]
    assert "labels look numeric" in lines[0] and "--kind regressor" in lines[0]
    assert not out.exists()


def test_numeric_labels_refused_but_class_codes_kept() -> None:
    scores = LabelledData(TEXTS, ["1.0", "0.8", "2.4", "-1.6", "-2.0", "-0.4", "1.2", "-3.0"], "scores.tsv")
    with pytest.raises(InputError, match=r"scores.tsv: the labels look numeric \(8 distinct values from -3 to 2.4"):
        train_style_model(scores, head=HeadOptions(grid=[1.0]))
    assert train_style_model(scores, target=StyleTarget(kind="regressor", poles=("informal", "formal")),
                             head=HeadOptions(grid=[1.0])).labels == \
        ["informal", "formal"]
    codes = LabelledData(TEXTS, ["1", "1", "1", "0", "0", "0", "1", "0"], "codes.tsv")  # 0/1 class codes
    assert train_style_model(codes, selection=codes, head=HeadOptions(grid=[1.0])).labels == ["0", "1"]


def test_aliases_name_a_label() -> None:
    data = LabelledData(TEXTS, ["formal"] * 3 + ["informal"] * 3 + ["formal", "informal"], "six.tsv")
    model = train_style_model(data, selection=data, target=StyleTarget(aliases={"formality": "formal"}),
                              head=HeadOptions(grid=[1.0]))
    assert model.style_index("Formality") == model.labels.index("formal")
    with pytest.raises(InputError, match=r"alias 'formality' -> 'formel': 'formel' is not one of the model's labels"):
        train_style_model(data, selection=data, target=StyleTarget(aliases={"formality": "formel"}),
                          head=HeadOptions(grid=[1.0]))


def _option_blocks(help_text: str) -> dict[str, str]:
    """Each option's help block, keyed by its first option string."""
    blocks: dict[str, str] = {}
    key = None
    for line in help_text.splitlines():
        stripped = line.strip()
        if line.startswith("  -"):
            key = stripped.split()[0].rstrip(",")
            blocks[key] = stripped
        elif key is not None and line.startswith("    "):
            blocks[key] += " " + stripped
        else:
            key = None
    return blocks


@pytest.mark.parametrize("verb", TRAINING_VERBS)
def test_training_help_shows_every_default(verb) -> None:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "verb").choices[verb]
    blocks = _option_blocks(sub.format_help())
    for action in sub._actions:
        default = action.default
        if not action.option_strings or default is None or default is False or default in ("", [], "==SUPPRESS=="):
            continue
        block = blocks[action.option_strings[0]]
        assert "default" in block, f"{verb} {action.option_strings[0]}: {block}"


def test_train_style_help_names_columns_and_explains_alias() -> None:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "verb").choices["train-style"]
    blocks = _option_blocks(sub.format_help())
    assert "(default: text)" in blocks["--text-col"] and "(default: label)" in blocks["--label-col"]
    alias = blocks["--alias"]
    assert "--alias non-toxic=neutral" in alias and "toxic->non-toxic" in alias and "formality=formal" in alias
