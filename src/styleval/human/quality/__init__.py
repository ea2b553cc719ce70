"""Per-annotator quality control: control, repeated and degraded items, default answers, time per item."""
from __future__ import annotations

from .checks import (AnnotatorQuality, QualityThresholds, degraded_pairs, paired_degradation_test, quality_report,
                     slider_defaults)

__all__ = ["AnnotatorQuality", "QualityThresholds", "slider_defaults", "quality_report", "degraded_pairs",
           "paired_degradation_test"]
