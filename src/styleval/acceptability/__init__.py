"""Fluency resources: text normalisation, unigram models for SLOR, and the shipped acceptability classifier."""
