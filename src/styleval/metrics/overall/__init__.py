"""Overall scores; importing this package registers ``hm``, ``gm``, ``j`` and ``rt_combined``.

:mod:`.composite` defines them as metrics over other metrics' statistics (joint bootstrap, paired tests, signatures
as for any metric); :mod:`.combine` holds the formulas they apply, as functions over arrays.
"""
from .combine import (RT_SCALES, geometric_mean, harmonic_mean, indicator, joint_score,  # noqa: F401
                      joint_segments, rao_tetreault_combined, recalibrate)
from .composite import CompositeMetric, GeometricMean, HarmonicMean, JointScore, RaoTetreaultCombined  # noqa: F401
