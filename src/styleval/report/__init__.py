"""Presentation: plain-text and LaTeX tables (no I/O beyond returning strings)."""
from __future__ import annotations

from .tables import latex_table, text_table

__all__ = ["text_table", "latex_table"]
