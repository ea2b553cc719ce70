"""Text normalisation, in the two directions the models need.

``lower_tokens``: cased, detokenized text -> lower-cased Penn-Treebank-style tokens, so a style model gives a
release and its lower-cased tokenized copy the same features. ``readable``: lower-cased tokenized text ->
detokenized, true-cased sentences, so a language model reads a release as ordinary text (and the check that tells
whether a release was lower-cased or tokenized at all).
"""
