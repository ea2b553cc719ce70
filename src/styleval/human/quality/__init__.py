"""Per-annotator quality control: control items, repeated items and the degraded-item test."""
from __future__ import annotations

from .checks import (AnnotatorQuality, QualityThresholds, degraded_pairs, paired_degradation_test, quality_report,
                     slider_defaults)

__all__ = ["AnnotatorQuality", "QualityThresholds", "slider_defaults", "quality_report", "degraded_pairs", "paired_degradation_test"]
