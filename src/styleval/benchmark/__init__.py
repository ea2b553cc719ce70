"""Which metric, which judge: score metrics on every human-judgment set and meta-evaluate each task with the set's
published convention, with significance clusters per task and averages per aspect (``styleval benchmark``)."""
from __future__ import annotations

from .clusters import Clusters, assign_ranks, significance_clusters
from .run import BenchmarkResult, Row, Summary, TaskResult, benchmark, dry_run, plan_sets, recommended_metrics
from .sets import BUILTIN, BenchSet, BenchTask, builtin_set, first_inputs, user_set, with_metric_ties

__all__ = ["benchmark", "dry_run", "recommended_metrics", "BenchmarkResult", "TaskResult", "Row", "Summary", "Clusters",
           "significance_clusters", "assign_ranks", "BenchSet", "BenchTask", "BUILTIN", "builtin_set", "user_set",
           "plan_sets", "first_inputs", "with_metric_ties"]
