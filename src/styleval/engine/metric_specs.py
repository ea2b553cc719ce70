"""The metrics of a run: specs (``name`` or ``name:key=value``) to instances, modifiers, unique labels."""
from __future__ import annotations

from typing import Callable, Iterable, Sequence

from ..metrics import registry
from ..metrics.base import Against, ContentMetric, Metric
from ..metrics.identity import MetricId, assign_labels

Modifier = Callable[[ContentMetric], "Metric | None"]
"""Builds a modified variant of a content metric (style masking, entity-aware, ...), or None where the
modifier does not apply to that metric."""


def build_metrics(specs: Iterable[str | Metric], against: Sequence[str | Against], has_references: bool
                  ) -> list[Metric]:
    """Instantiate metric specs (``name`` or ``name:key=value``), one instance per requested ``against``.

    A content metric asked to compare with references is skipped when no record has any, unless the
    spec names ``against`` itself (then the missing references are an error at scoring time). Two specs that
    build the same metric (``bleu`` and ``bleu:lowercase=false``) are an error naming both.
    """
    sides = [Against.parse(a) for a in against]
    metrics: list[Metric] = []
    origins: list[str] = []
    for spec in specs:
        if isinstance(spec, Metric):
            metrics.append(spec)
            origins.append(repr(spec))
            continue
        name, params = registry.parse_spec(spec)
        cls = registry.metric_class(name)
        if "against" in params or not registry.accepts_against(cls):
            metrics.append(registry.create(name, **params))
            origins.append(spec)
            continue
        allowed = getattr(cls, "allowed_against", tuple(Against))
        for side in sides:
            if side not in allowed or (side is Against.REFERENCES and not has_references):
                continue
            metrics.append(registry.create(name, against=side, **params))
            origins.append(f"{spec} (against {side.value})")
    assign_labels([m.metric_id for m in metrics], origins)  # refuses duplicates early, naming both specs
    return metrics


def with_modifiers(metrics: Sequence[Metric], modifiers: Sequence[Modifier]) -> list[Metric]:
    """Each metric followed by its modified variants; modifiers apply to content metrics only."""
    out: list[Metric] = []
    for metric in metrics:
        out.append(metric)
        if isinstance(metric, ContentMetric):
            out.extend(v for v in (modify(metric) for modify in modifiers) if v is not None)
    return out


def metric_labels(metrics: Sequence[Metric]) -> list[MetricId]:
    """The ids of one run's metrics, labelled so that every column name is unique (see
    :func:`styleval.metrics.identity.assign_labels`)."""
    return assign_labels([m.metric_id for m in metrics])
