"""Evaluation protocols: the aspects annotators answer, their scales, and the guidelines with examples.

One generic item shape serves every protocol (no table per protocol): an item shows a source and one or more
candidate texts (``layout`` single, pair or multi); each :class:`Question` is answered per candidate (``scale``,
``rank``) or once per item (``choice`` between candidates).
"""
from __future__ import annotations

from .answers import AnswerError, answers_to_rows, control_passed, parse_answers, quality_values
from .base import Question, Example, Protocol
from .catalog import PROTOCOLS, get_protocol
from .masking import DEFAULT_STYLE_WORDS, mask_style

__all__ = ["Question", "Example", "Protocol", "PROTOCOLS", "get_protocol", "AnswerError", "parse_answers",
           "answers_to_rows", "quality_values", "control_passed", "mask_style", "DEFAULT_STYLE_WORDS"]
