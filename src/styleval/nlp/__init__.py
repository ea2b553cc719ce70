"""Shared linguistic analysis (spaCy): tokens, lemmas, parts of speech, entities, sentences, parsed once per text."""
from .parse import ParsedText, Token, EntitySpan, parse, parse_many, clear_cache

__all__ = ["ParsedText", "Token", "EntitySpan", "parse", "parse_many", "clear_cache"]
