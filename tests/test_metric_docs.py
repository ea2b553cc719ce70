"""docs/metrics.md states the defaults the code has (what a signature shows)."""
from __future__ import annotations

import inspect
from pathlib import Path

from styleval.metrics.registry import metric_class

DOC = Path(__file__).resolve().parents[1] / "docs" / "metrics.md"


def test_bertscore_row_states_the_idf_and_rescaling_defaults():
    params = inspect.signature(metric_class("bertscore").__init__).parameters
    row = next(line for line in DOC.read_text(encoding="utf-8").splitlines() if line.startswith("| `bertscore`"))
    for name in ("idf", "rescale_with_baseline"):
        default = params[name].default
        assert isinstance(default, bool)
        assert f"`{name}={str(default).lower()}`" in row and f"`{name}:{'yes' if default else 'no'}`" in row
