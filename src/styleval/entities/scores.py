"""Entity scores between a source (or reference) and an output, and the share of entity tokens.

* ``coverage`` (SGDD-TST's "Jaccard"): the share of the source's entity mentions whose normalised form occurs
  among the output's entities; a mention repeated in the source counts each time.
* ``jaccard``: |S ∩ O| / |S ∪ O| over the sets of normalised entities.

Both are 0 when either side has no entity (as in SGDD-TST). With the merge ``M·(1−p) + NE·p`` this is harmless
when neither side has one (p = 0) and a penalty when entities were dropped or invented.
"""
from __future__ import annotations

from .extract import SHARE_RULES, TextEntities

NE_SCORES = ("coverage", "jaccard")


def entity_score(source: TextEntities, output: TextEntities, kind: str = "coverage") -> float:
    """Entity score of ``output`` against ``source``: ``coverage`` or ``jaccard`` (see the module notes)."""
    if kind not in NE_SCORES:
        raise ValueError(f"entity score must be one of {NE_SCORES}, got {kind!r}")
    src, out = source.norms, output.norms
    if not src or not out:
        return 0.0
    if kind == "coverage":
        found = set(out)
        return sum(1 for n in src if n in found) / len(src)
    s, o = set(src), set(out)
    return len(s & o) / len(s | o)


def entity_share(source: TextEntities, output: TextEntities, rule: str = "span") -> float:
    """p: entity word tokens of both texts over all word tokens of both texts (0 when both are empty)."""
    if rule not in SHARE_RULES:
        raise ValueError(f"share rule must be one of {SHARE_RULES}, got {rule!r}")
    total = source.n_words + output.n_words
    if total == 0:
        return 0.0
    return (source.n_entity_words(rule) + output.n_entity_words(rule)) / total
