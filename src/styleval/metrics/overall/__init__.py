"""Overall metrics; importing this package registers them.

The combinations of style, content and fluency scores live in :mod:`.combine` (functions over arrays and a
helper over a ScoreResult).
"""
from .combine import (Column, Combined, combine_result, geometric_mean, harmonic_mean, joint_score,  # noqa: F401
                      joint_segments, rao_tetreault_combined)
