"""Named entities for content evaluation (Babakov et al., SGDD-TST): extraction, normalisation, scores."""
from .extract import SHARE_RULES, Entity, TextEntities, entities_of, extract_entities, normalize_tokens
from .numbers import digits_to_words, number_to_words
from .scores import NE_SCORES, entity_score, entity_share

__all__ = ["SHARE_RULES", "NE_SCORES", "Entity", "TextEntities", "entities_of", "extract_entities",
           "normalize_tokens", "digits_to_words", "number_to_words", "entity_score", "entity_share"]
