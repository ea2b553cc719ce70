"""Babakov et al.'s merge of a content metric with a named-entity score.

``merged = M * (1 - p) + NE * p`` where ``p`` is the share of named-entity tokens in the source: the more of the
text is entities, the more the entity score counts. With SGDD-TST's stored columns (M = a metric column,
NE = ``scipy_ner``, p = ``scipy_proprotion``) this reproduces the paper's Table 4. The entity-aware metric itself
(computing NE and p from text) lives elsewhere; this is only the arithmetic.
"""
from __future__ import annotations

import numpy as np

from ..errors import InputError


def merge_with_entity_score(metric, ne_score, p):
    """Elementwise ``metric * (1 - p) + ne_score * p``; NaN in any input gives NaN. ``p`` must lie in [0, 1]."""
    m = np.asarray(metric, dtype=float)
    ne = np.asarray(ne_score, dtype=float)
    share = np.asarray(p, dtype=float)
    finite = share[~np.isnan(share)]
    if finite.size and (finite.min() < 0 or finite.max() > 1):
        raise InputError("p (named-entity share) must lie in [0, 1]")
    return m * (1.0 - share) + ne * share
