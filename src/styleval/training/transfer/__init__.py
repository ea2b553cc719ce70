"""Transfer baselines (rule-based formality transfer after Rao & Tetreault 2018)."""
from .rules import FormalityRules, to_formal, to_informal

__all__ = ["FormalityRules", "to_formal", "to_informal"]
