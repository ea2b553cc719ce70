"""Statistics layer: correlations, significance tests and inter-annotator agreement (pure numpy functions).

See :mod:`styleval.stats.correlation`, :mod:`styleval.stats.significance` and :mod:`styleval.stats.agreement`.
"""
from __future__ import annotations

from ._results import ConfidenceInterval
from .agreement import cohen_kappa, fleiss_kappa, krippendorff_alpha, pairwise_pearson
from .correlation import (
    CorrelationResult,
    SegmentStatistic,
    bootstrap_correlation_ci,
    kendall,
    kendall_tau_like,
    orient,
    pairwise_accuracy,
    pearson,
    segment_level,
    spearman,
    system_level,
    top_n_correlations,
)
from .significance import (
    PairedTestResult,
    PermutationTestResult,
    approximate_randomization,
    bootstrap_ci,
    paired_bootstrap,
    permutation_test_correlation_difference,
    sacrebleu_ci,
    williams_test,
)

__all__ = [
    "ConfidenceInterval", "CorrelationResult", "PairedTestResult", "PermutationTestResult",
    "pearson", "spearman", "kendall", "kendall_tau_like", "pairwise_accuracy", "segment_level", "SegmentStatistic",
    "system_level",
    "bootstrap_correlation_ci", "top_n_correlations", "orient",
    "williams_test", "permutation_test_correlation_difference", "paired_bootstrap", "approximate_randomization",
    "bootstrap_ci", "sacrebleu_ci",
    "pairwise_pearson", "cohen_kappa", "fleiss_kappa", "krippendorff_alpha",
]
