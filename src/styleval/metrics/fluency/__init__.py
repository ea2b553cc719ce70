"""Fluency metrics; importing this package registers them."""
from . import naturalness, ngram, perplexity  # noqa: F401
