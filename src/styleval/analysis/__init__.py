"""Error analysis of metrics against human judgments: rank gaps, likely causes of content change, base rates."""
from .error_analysis import (CONTENT_POS, DIRECTIONS, NO_CAUSE, CauseRate, Diagnosis, ErrorAnalysis,
                             ErrorAnalysisOptions, SegmentError, analyze_errors, cause_label_counts, cause_rates,
                             diagnose, rank_gaps)
from .sentence_type import SENTENCE_TYPES, sentence_type, text_types

__all__ = ["CONTENT_POS", "DIRECTIONS", "NO_CAUSE", "CauseRate", "Diagnosis", "ErrorAnalysis", "ErrorAnalysisOptions",
           "SegmentError",
           "analyze_errors", "cause_label_counts", "cause_rates", "diagnose", "rank_gaps", "SENTENCE_TYPES",
           "sentence_type", "text_types"]
