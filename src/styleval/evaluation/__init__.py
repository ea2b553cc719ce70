"""One-command evaluation: the metric battery recommended for a transfer direction, with overall scores."""
from __future__ import annotations

from .battery import Evaluation, evaluate, load_evaluation
from .summary import aspect_rows, format_cell, significance_letters, significance_mark

__all__ = ["Evaluation", "evaluate", "load_evaluation", "aspect_rows", "format_cell", "significance_letters",
           "significance_mark"]
