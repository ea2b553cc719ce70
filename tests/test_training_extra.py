"""Without the ``train`` extra the core still evaluates, and every training verb names the extra in one line.

The extra's packages are hidden from a fresh interpreter: the path finder is replaced by one that does not find
them (neither their modules nor their distribution metadata), so ``import peft`` fails and
``find_spec("accelerate")`` is None, as on a machine without the extra.
"""
from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from styleval.training import REQUIREMENTS

HIDE = textwrap.dedent(f"""
    import importlib.machinery, sys

    class WithoutTrainingExtra(importlib.machinery.PathFinder):
        @classmethod
        def find_spec(cls, name, path=None, target=None):
            if name.split(".")[0] in {sorted(REQUIREMENTS)!r}:
                return None
            return super().find_spec(name, path, target)

        @classmethod
        def find_distributions(cls, *args, **kwargs):  # what importlib.metadata sees installed
            return (d for d in super().find_distributions(*args, **kwargs)
                    if (d.metadata["Name"] or "").lower() not in {sorted(REQUIREMENTS.values())!r})

    sys.meta_path[:] = [WithoutTrainingExtra if f is importlib.machinery.PathFinder else f for f in sys.meta_path]
    from styleval.cli.main import main
    sys.exit(main(sys.argv[1:]))
""")

#: Each training verb with the arguments its parser requires (the files need not exist: the check comes first).
VERBS = [
    ["train-style", "data.tsv", "-o", "model"],
    ["calibrate-style", "formality-classifier-pt16", "--table", "cal.tsv", "-o", "model"],
    ["train-content", "pairs.tsv", "-o", "model"],
    ["train-lm", "--style", "formal", "--data", "formal.txt"],
    ["train-transfer", "--kind", "lora", "-o", "model"],
    ["transfer", "--rules", "formality", "input.txt"],
]


def run_without_extra(*args: str, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", HIDE, *args], capture_output=True, text=True, cwd=cwd, timeout=600)


@pytest.mark.parametrize("argv", VERBS, ids=[v[0] for v in VERBS])
def test_training_verb_names_the_extra_in_one_line(argv, tmp_path):
    done = run_without_extra(*argv, cwd=tmp_path)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1
    assert f"needed for styleval {argv[0]}" in lines[0] and "pip install 'styleval[train]'" in lines[0]
    assert list(tmp_path.iterdir()) == []  # nothing was written


def test_evaluate_works_without_the_training_extra(tmp_path):
    out = tmp_path / "ev.json"
    done = run_without_extra("evaluate", "--example", "formality", "--bootstrap", "0", "--significance", "none",
                             "--json", str(out), "--no-progress")
    assert done.returncode == 0, done.stderr
    assert "why these metrics:" in done.stdout and out.exists()
