"""Fluency metrics; importing this package registers them."""
from . import ngram, perplexity  # noqa: F401
