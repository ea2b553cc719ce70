"""Meta-evaluation: human judgments, their aggregation, published datasets, and metric-human correlations."""
from __future__ import annotations

from .aggregate import (mean_scores, rao_tetreault_average_rank, segment_scores, standardise, system_scores,
                        z_scores)
from .entity_merge import merge_with_entity_score
from .evaluate import MetaResult, MetaTask, inter_rater_pearson, run, run_many
from .judgments import Judgments

__all__ = ["Judgments", "mean_scores", "z_scores", "standardise", "segment_scores", "system_scores",
           "rao_tetreault_average_rank", "MetaTask", "MetaResult", "run", "run_many", "inter_rater_pearson",
           "merge_with_entity_score"]
