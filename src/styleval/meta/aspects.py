"""Which human aspect each metric is correlated with.

A metric judges one aspect (its registered class says: style, content or fluency); human judgment files name
their aspects in their own words (Lai et al.: ``content``, ``style``, ``fluency``; Mir et al.:
``content_preservation``, ``style_transfer_intensity``, ``naturalness``). :func:`pair_aspects` matches the two:

* ``auto`` (the default of ``styleval meta``): each metric with the human aspect of its own kind, found by the
  metric registry (``bleu/src`` -> content, ``style_accuracy`` -> style, ``acceptability`` -> fluency) or by a
  part of its name that is an aspect of the file (``style:cls-xformal`` -> style); a metric of no known kind goes
  with the file's only aspect, else with ``content``, and the pairing says so;
* one or more aspects (``style,content``): every metric with each aspect asked (a name of the file's, or a metric
  aspect the file calls otherwise: ``style`` finds ``style_transfer_intensity``);
* ``all``: every metric with every aspect of the file.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterable, Sequence

from styleval.errors import InputError

AUTO = "auto"
ALL = "all"
#: The names human judgment files give each metric aspect, most usual first.
HUMAN_NAMES: dict[str, tuple[str, ...]] = {
    "style": ("style", "style_transfer_intensity", "style_intensity", "formality", "sentiment", "toxicity"),
    "content": ("content", "content_preservation", "meaning", "meaning_preservation", "similarity", "semantics"),
    "fluency": ("fluency", "naturalness", "grammaticality", "acceptability", "grammar"),
}
FALLBACK = "content"


@dataclass
class AspectPairing:
    """Human aspect -> the metrics correlated with it (in the order given), and one note per metric paired by a
    fallback rule rather than by its kind."""

    groups: dict[str, list[str]]
    how: dict[str, str] = field(default_factory=dict)  # metric -> why it went with its aspect (auto only)
    mode: str = AUTO

    def describe(self) -> list[str]:
        """One line per aspect: the metrics it judges and, under ``auto``, why."""
        lines = []
        for aspect, metrics in self.groups.items():
            why = {self.how[m] for m in metrics if m in self.how}
            lines.append(f"{aspect}: {', '.join(metrics)}" + (f" ({'; '.join(sorted(why))})" if why else ""))
        return lines


def metric_kind(name: str) -> str | None:
    """The aspect (style, content, fluency) of the registered metric a column is named after (``bleu/src``,
    ``chrf[beta=1]/ref``, ``src:wmd``), or None when no part of the name is a registered metric or it is an
    overall score."""
    from styleval.metrics import registry

    known = registry.available()
    for part in re.split(r"[/:\[\]]", str(name)):
        cls = known.get(part) or known.get(part.lower())
        if cls is not None:
            kind = cls.aspect.value
            return kind if kind in HUMAN_NAMES else None
    return None


def human_aspect(kind: str, present: Sequence[str]) -> str | None:
    """The aspect of ``present`` (a file's aspects) that judges metric aspect ``kind``, or None."""
    for name in HUMAN_NAMES.get(kind, ()):
        if name in present:
            return name
    return None


def resolve_asked(asked: str, present: Sequence[str]) -> str:
    """An aspect a user asked for, as the file names it: itself when present, else the file's name for that metric
    aspect (``style`` -> ``style_transfer_intensity``); :class:`InputError` listing the file's aspects otherwise."""
    if asked in present:
        return asked
    kind = asked if asked in HUMAN_NAMES else next((k for k, names in HUMAN_NAMES.items() if asked in names), None)
    found = human_aspect(kind, present) if kind else None
    if found is None:
        raise InputError(f"no judgments for aspect {asked!r} (the human file has: {', '.join(present) or 'none'})")
    return found


def pair_aspects(metrics: Iterable[str], present: Sequence[str], aspect: str = AUTO) -> AspectPairing:
    """Group ``metrics`` by the human aspect each is correlated with (see the module docstring); ``present``: the
    aspects of the human file, ``aspect``: ``auto``, ``all`` or a comma-separated list."""
    metrics = list(dict.fromkeys(metrics))
    present = list(present)
    if not present:
        raise InputError("the human judgments have no aspect")
    wanted = [a.strip() for a in str(aspect).split(",") if a.strip()] or [AUTO]
    if wanted == [ALL]:
        return AspectPairing({a: list(metrics) for a in present}, mode=ALL)
    if wanted != [AUTO]:
        if AUTO in wanted or ALL in wanted:
            raise InputError(f"--aspect {aspect!r}: 'auto' and 'all' stand alone, not in a list")
        resolved = list(dict.fromkeys(resolve_asked(a, present) for a in wanted))
        return AspectPairing({a: list(metrics) for a in resolved}, mode=",".join(resolved))
    groups: dict[str, list[str]] = {}
    how: dict[str, str] = {}
    for metric in metrics:
        kind = metric_kind(metric)
        target = human_aspect(kind, present) if kind else None
        if target is None:  # a part of the name that is an aspect of the file: style:cls-xformal, fluency:gpt2_ppl
            parts = re.split(r"[/:\[\]]", metric)
            target = next((p for p in parts if p in present), None)
        if target is None:
            if kind is not None:
                raise InputError(f"metric {metric!r} judges {kind}, but the human file has no {kind} aspect (it has "
                                 f"{', '.join(present)}): give --aspect to choose one")
            if len(present) == 1:
                target = present[0]
                how[metric] = "metric of no known kind: the file's only aspect"
            elif FALLBACK in present:
                target = FALLBACK
                how[metric] = "metric of no known kind: content by default; --aspect chooses"
            else:
                raise InputError(f"cannot tell which human aspect metric {metric!r} judges (the file has "
                                 f"{', '.join(present)}): give --aspect ASPECT[,ASPECT...] or --aspect all")
        groups.setdefault(target, []).append(metric)
    order = [a for a in present if a in groups]
    return AspectPairing({a: groups[a] for a in order}, how, mode=AUTO)
