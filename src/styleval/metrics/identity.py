"""Metric identity: which metric, with which parameters, against what, through which modifiers.

A :class:`MetricId` is built from a metric instance (never parsed back from a display string) and renders the
label that names the metric's column in every table, CSV/JSON key and report. Labels are short by default
(``bleu/src``, ``bleu+ne/ref``); when two metrics of one run would share a label, :func:`assign_labels` shows the
parameters that tell them apart (``chrf[beta=2]/src`` and ``chrf[beta=1]/src``), and asking for the same metric
twice is an error naming both requests.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Sequence

from ..errors import InputError
from ..signature import format_value
from .spec import quote, render_token

Params = tuple[tuple[str, str], ...]


def render_value(value: Any) -> str:
    """A parameter value as it appears in labels (booleans as in specs: true/false); a metric given as a
    parameter (a composite's component) by its full spec."""
    if hasattr(value, "metric_id"):
        return value.metric_id.spec()
    return format_value(value, bools=("true", "false"))


def freeze_params(params: dict[str, Any]) -> Params:
    return tuple(sorted((k, render_value(v)) for k, v in params.items()))


def spec_tokens(params: dict[str, Any]) -> Params:
    """Parameters as :func:`~styleval.metrics.spec.parse_spec` reads them back (quoted where needed, floats in
    full); a parameter set to None is left out, so the class default (None) applies when the spec is read."""
    return tuple(sorted((k, render_token(v)) for k, v in params.items() if v is not None))


@dataclass(frozen=True)
class MetricId:
    """The identity of a configured metric.

    ``name``: the registered name of the (inner) metric; ``params``: every effective parameter but ``against``,
    rendered as strings; ``against``: ``"source"``/``"references"`` for content metrics, else None;
    ``modifiers``: the modifiers wrapped around it, innermost first, each as (suffix, its own parameters);
    ``shown``: the parameter names the label displays (set by :func:`assign_labels` to tell metrics apart);
    ``tokens``: the parameters written for :meth:`spec` (no part of the identity; ``params`` quoted when empty).
    """

    name: str
    params: Params = ()
    against: str | None = None
    modifiers: tuple[tuple[str, Params], ...] = ()
    shown: tuple[str, ...] = ()
    tokens: Params = field(default=(), compare=False)

    def identity(self) -> tuple[Any, ...]:
        """What makes two ids the same metric (the label's display choices excluded)."""
        return (self.name, self.params, self.against, self.modifiers)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, MetricId) and self.identity() == other.identity()

    def __hash__(self) -> int:
        return hash(self.identity())

    @property
    def label(self) -> str:
        """The display name: ``name[shown params]+modifier…/side``."""
        values = dict(self.params)
        text = self.name
        if self.shown:
            text += "[" + ",".join(f"{k}={values[k]}" for k in self.shown) + "]"
        text += "".join(f"+{suffix}" for suffix, _ in self.modifiers)
        if self.against is not None:
            text += "/" + ("src" if self.against == "source" else "ref")
        return text

    def spec(self, modifiers: bool = True) -> str:
        """The full identity as text: a spec that builds the metric again (``name:key=value;…``, values quoted
        where needed, parameters set to None left out), followed by its modifiers and their parameters
        (``+ne[ne_score=coverage]``). ``parse_spec`` reads the part before the modifiers back into the same metric
        and refuses a modifier by name; ``modifiers=False`` gives that part alone."""
        pairs = self.tokens or tuple((k, quote(v)) for k, v in self.params)
        params = ";".join(f"{k}={v}" for k, v in pairs)
        against = f"against={self.against}" if self.against else ""
        rest = ";".join(p for p in (params, against) if p)
        text = f"{self.name}:{rest}" if rest else self.name
        for suffix, mod_params in self.modifiers if modifiers else ():
            text += f"+{suffix}" + ("[" + ";".join(f"{k}={quote(v)}" for k, v in mod_params) + "]"
                                    if mod_params else "")
        return text

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "params": dict(self.params), "against": self.against,
                "modifiers": [{"modifier": s, "params": dict(p)} for s, p in self.modifiers], "label": self.label}


def assign_labels(ids: Sequence[MetricId], origins: Sequence[str] | None = None) -> list[MetricId]:
    """The ids with ``shown`` set so that every label is unique.

    Two ids equal in everything are the same metric asked for twice: an :class:`InputError` naming both requests
    (``origins``: how each was asked for, e.g. the spec strings; the labels otherwise).
    """
    names = list(origins) if origins is not None else [i.label for i in ids]
    first: dict[MetricId, int] = {}
    for k, mid in enumerate(ids):
        if mid in first:
            j = first[mid]
            raise InputError(f"metric {mid.label!r} is asked for twice ({names[j]!r} and {names[k]!r}); "
                             "remove one, or give them different parameters")
        first[mid] = k
    out = list(ids)
    groups: dict[str, list[int]] = {}
    for k, mid in enumerate(ids):
        groups.setdefault(mid.label, []).append(k)
    for members in groups.values():
        if len(members) < 2:
            continue
        keys = sorted({key for k in members for key, _ in ids[k].params})
        differing = tuple(key for key in keys
                          if len({dict(ids[k].params).get(key) for k in members}) > 1)
        for k in members:
            shown = tuple(key for key in differing if key in dict(ids[k].params))
            out[k] = replace(ids[k], shown=shown)
    labels = [m.label for m in out]
    if len(set(labels)) != len(labels):  # e.g. differing modifier parameters only: show those too
        dup = next(lab for lab in labels if labels.count(lab) > 1)
        raise InputError(f"two metrics would both be named {dup!r}; they differ only in modifier parameters, "
                         "which one run cannot show apart: score them in separate runs")
    return out
