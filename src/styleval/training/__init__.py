"""Training and calibration, at the edge of the core: everything that fits a model or rewrites text.

``style`` (classifiers and regressors from labelled text) and ``calibration`` (a two-style model's threshold and
probability map), ``acceptability`` (the fluency classifier, with ``corrupt`` and ``acceptability_examples``),
``preservation`` (the learned content metric, with ``negatives`` and ``preservation_corpus``), ``lm`` (target-style
LMs) and ``transfer`` (the rule-based and neural transfer baselines). The core (readers, metrics, engine, stats,
meta, evaluation, report and the model packages that load and score) never imports this package; the training
verbs of the CLI do, after :func:`require` has checked the ``train`` extra.
"""
from __future__ import annotations

from importlib.util import find_spec

from ..errors import MissingDependencyError

EXTRA = "train"
#: Import name -> distribution of what the ``train`` extra installs beyond the scoring extras.
REQUIREMENTS = {"peft": "peft", "accelerate": "accelerate"}


def installed(module: str) -> bool:
    """Whether ``module`` can be imported (found without importing it)."""
    try:
        return find_spec(module) is not None
    except (ImportError, ValueError):  # a finder that refuses it, or a module entry without a spec
        return False


def require(verb: str) -> None:
    """Raise a one-line :class:`MissingDependencyError` naming the extra when the training extra is missing."""
    for module, package in REQUIREMENTS.items():
        if not installed(module):
            raise MissingDependencyError(package, EXTRA, needed_for=f"styleval {verb}")
