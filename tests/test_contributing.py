"""Every Python block of CONTRIBUTING.md runs as written (its recipes end in worked examples with assertions)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from styleval.metrics import registry

GUIDE = Path(__file__).resolve().parents[1] / "CONTRIBUTING.md"
BLOCKS = re.findall(r"```python\n(.*?)```", GUIDE.read_text(encoding="utf-8"), flags=re.DOTALL)


def test_the_guide_has_its_worked_examples():
    assert len(BLOCKS) >= 3  # a metric, a dataset, a shipped model


@pytest.mark.parametrize("block", BLOCKS, ids=[f"block{i + 1}" for i in range(len(BLOCKS))])
def test_worked_example_runs(block):
    before = registry.available()  # loads the built-in metrics first, so restoring keeps them
    try:
        exec(compile(block, str(GUIDE), "exec"), {"__name__": "contributing_example"})
    finally:  # a metric registered by an example leaves the registry as it was
        registry._REGISTRY.clear()
        registry._REGISTRY.update(before)
    assert "length_ratio_example" not in registry.available()
