"""Fluency metrics; importing this package registers them."""
from . import acceptability, naturalness, ngram, perplexity, slor  # noqa: F401
