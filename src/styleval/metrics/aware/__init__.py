"""Score-adjusting content modifiers: entity-aware (Babakov et al.) and sentiment-aware (Saadany et al., SAM)."""
from .entity import EntityAware
from .sentiment import SentimentAware

__all__ = ["EntityAware", "SentimentAware"]
