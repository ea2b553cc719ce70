"""Per-annotator quality control: control items, repeated items and the degraded-item test."""
from __future__ import annotations

from .checks import AnnotatorQuality, degraded_pairs, paired_degradation_test, quality_report

__all__ = ["AnnotatorQuality", "quality_report", "degraded_pairs", "paired_degradation_test"]
