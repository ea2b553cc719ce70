"""Meta-evaluation: human judgments, their aggregation, published datasets, and metric-human correlations."""
from __future__ import annotations

from .aggregate import (mean_scores, rao_tetreault_average_rank, segment_scores, standardise, system_scores,
                        z_scores)
from .analysis import curves_frame, expand_tasks, results_dict, results_frame, run_tasks
from .entity_merge import merge_with_entity_score
from .evaluate import MetaResult, MetaRunOptions, MetaTask, inter_rater_pearson, run, run_many
from .judgments import Judgments
from .references import correlation_by_reference_count, score_with_k_references
from .scores import metric_table_from_result, read_metric_file, read_metric_table

__all__ = ["Judgments", "mean_scores", "z_scores", "standardise", "segment_scores", "system_scores",
           "rao_tetreault_average_rank", "MetaTask", "MetaResult", "MetaRunOptions", "run", "run_many",
           "inter_rater_pearson",
           "merge_with_entity_score", "expand_tasks", "run_tasks", "results_frame", "results_dict", "curves_frame",
           "read_metric_table", "read_metric_file", "metric_table_from_result", "score_with_k_references",
           "correlation_by_reference_count"]
