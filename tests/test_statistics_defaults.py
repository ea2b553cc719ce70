"""``--bootstrap 0`` with the paired bootstrap test that ``evaluate`` runs by default: the test has no resamples to
draw, so the default test is dropped with them; asking for it explicitly is one clear error (exit 2), and the
library's ``StatisticsOptions`` refuses the combination by name."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from styleval.cli.main import main
from styleval.engine.options import StatisticsOptions
from styleval.errors import InputError


@pytest.fixture(scope="module")
def example(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("example")
    assert main(["data", "example", "formality", str(folder)]) == 0
    return folder


def _argv(folder: Path, out: Path) -> list[str]:
    return ["evaluate", "--fast", "--systems-dir", str(folder / "systems"), "--source", str(folder / "source.txt"),
            "--reference", str(folder / "ref0.txt"), "--reference", str(folder / "ref1.txt"),
            "--direction", "informal:formal", "--no-progress", "--json", str(out)]


def test_bootstrap_zero_drops_the_default_paired_test(example, tmp_path, capsys):
    out = tmp_path / "ev.json"
    assert main(_argv(example, out) + ["--bootstrap", "0"]) == 0
    data = json.loads(out.read_text(encoding="utf-8"))
    score = data.get("score", data)
    assert score["settings"]["bootstrap"] == 0 and score["settings"]["significance"] == "none"
    assert not score.get("comparisons")
    assert len({row["system"] for row in score["corpus"]}) >= 3  # several systems, so a test would have run


def test_bootstrap_zero_with_an_explicit_paired_bootstrap_is_one_error(example, tmp_path, capsys):
    status = main(_argv(example, tmp_path / "ev.json") + ["--bootstrap", "0", "--significance", "paired-bootstrap"])
    err = capsys.readouterr().err
    assert status == 2 and "Traceback" not in err
    assert "paired bootstrap test draws the bootstrap's resamples" in err and len(err.strip().splitlines()) == 1


def test_options_refuse_a_paired_bootstrap_without_resamples():
    with pytest.raises(InputError, match="bootstrap is 0"):
        StatisticsOptions(bootstrap=0, significance="paired-bootstrap")
    evaluate_defaults = StatisticsOptions(significance="paired-bootstrap")
    assert StatisticsOptions.given(evaluate_defaults, bootstrap=0).significance == "none"
    with pytest.raises(InputError, match="bootstrap is 0"):
        StatisticsOptions.given(None, bootstrap=0, significance="paired-bootstrap")
