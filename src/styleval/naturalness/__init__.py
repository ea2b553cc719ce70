"""Naturalness of outputs judged by classifiers that tell human texts from system outputs (Mir et al. 2019)."""
from .adversarial import AdversarialResult, adversarial_scores, agreement

__all__ = ["AdversarialResult", "adversarial_scores", "agreement"]
