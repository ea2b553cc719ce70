"""Human judgments and stored metric scores of a meta-evaluation dataset, as plain rows.

:mod:`styleval.meta.datasets` turns them into :class:`~styleval.meta.judgments.Judgments` and a metric table;
the dataset modules stay below the meta layer and only parse.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

#: one stored metric score: (system, segment, metric, score, direction)
MetricRow = tuple[str, str, str, float, Optional[str]]


@dataclass
class JudgmentTables:
    """``human``: dicts with system, segment, annotator, aspect, score, direction; ``metrics``: :data:`MetricRow`
    s; ``source``: the file or folder they came from; ``extra``: what else the dataset holds."""

    human: list[dict[str, Any]]
    metrics: list[MetricRow]
    source: Path
    extra: dict[str, Any] = field(default_factory=dict)
