"""Error analysis of metrics against human judgments: rank gaps and likely causes of content change."""
from .errors import (CONTENT_POS, DIRECTIONS, Diagnosis, ErrorAnalysis, SegmentError, analyze_errors, diagnose,
                     rank_gaps)
from .sentence_type import SENTENCE_TYPES, sentence_type, text_types

__all__ = ["CONTENT_POS", "DIRECTIONS", "Diagnosis", "ErrorAnalysis", "SegmentError", "analyze_errors", "diagnose",
           "rank_gaps", "SENTENCE_TYPES", "sentence_type", "text_types"]
