"""Dashboard figures: progress, time per item, quality control, agreement and per-system scores."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from styleval.meta.aggregate import rao_tetreault_average_rank, system_scores
from styleval.stats.agreement import krippendorff_alpha

from ..protocols import Protocol, get_protocol
from ..protocols.answers import slot_value
from ..quality import AnnotatorQuality, quality_report
from ..storage import CampaignInfo, JudgedRow, Store
from .export import judgments

_LEVEL = {"scale": "interval", "rank": "ordinal", "choice": "nominal"}


#: fewer units rated by two or more annotators leave Krippendorff's alpha undefined: with one unit the expected
#: disagreement is computed from that unit's own ratings, so alpha is 0 (or 0/0) whatever the annotators did
MIN_ALPHA_UNITS = 2


@dataclass(frozen=True)
class AgreementRow:
    aspect: str
    level: str
    alpha: float  # NaN when undefined (see ``note``)
    units: int  # texts rated by at least two annotators

    @property
    def note(self) -> str:
        """Why alpha is undefined ("" when it is defined)."""
        if self.units < MIN_ALPHA_UNITS:
            return (f"undefined: {self.units} unit(s) rated by two or more annotators, at least "
                    f"{MIN_ALPHA_UNITS} needed")
        if math.isnan(self.alpha):
            return "undefined: every rating has the same value (no expected disagreement)"
        return ""


@dataclass(frozen=True)
class SystemScoreRow:
    aspect: str
    system: str
    mean: float
    z: float
    n_segments: int
    average_rank: float | None = None


@dataclass(frozen=True)
class Dashboard:
    campaign: CampaignInfo
    protocol: Protocol
    progress: dict[str, tuple[int, int]]
    quality: list[AnnotatorQuality]
    agreement: list[AgreementRow]
    systems: list[SystemScoreRow]
    n_judgments: int

    @property
    def done(self) -> int:
        return sum(d for d, _ in self.progress.values())

    @property
    def total(self) -> int:
        return sum(t for _, t in self.progress.values())


def agreement(protocol: Protocol, rows: list[JudgedRow]) -> list[AgreementRow]:
    """Krippendorff's alpha per aspect over normal items (one unit per item and candidate)."""
    normal = [r for r in rows if r.kind == "normal"]
    names = sorted({r.annotator for r in normal})
    out = []
    for aspect in protocol.aspects:
        units: dict[tuple[str, int], dict[str, float]] = {}
        for r in normal:
            slots = range(len(r.systems)) if aspect.per_candidate else [0]
            for s in slots:
                units.setdefault((r.item_key, s), {})[r.annotator] = slot_value(aspect, r.answers[aspect.name], s)
        data = np.full((len(names), len(units)), np.nan)
        for u, ratings in enumerate(units.values()):
            for a, value in ratings.items():
                data[names.index(a), u] = value
        pairable = int(sum(len(v) >= 2 for v in units.values()))
        alpha = krippendorff_alpha(data, level=_LEVEL[aspect.kind]) \
            if len(names) >= 2 and pairable >= MIN_ALPHA_UNITS else math.nan
        out.append(AgreementRow(aspect.name, _LEVEL[aspect.kind], alpha, pairable))
    return out


def _system_rows(protocol: Protocol, store: Store, campaign_id: int) -> list[SystemScoreRow]:
    j = judgments(store, campaign_id)
    if len(j) == 0:
        return []
    rows = []
    for aspect in protocol.aspects:
        if aspect.name not in j.aspects:
            continue
        raw = system_scores(j, aspect.name, human="mean").set_index("system")
        z = system_scores(j, aspect.name, human="z").set_index("system")
        ranks: dict[str, Any] = {}
        if aspect.kind == "rank":
            ranks = rao_tetreault_average_rank(j, aspect.name).set_index("system")["average_rank"].to_dict()
        for system in raw.index:
            rows.append(SystemScoreRow(aspect.name, str(system), float(raw.loc[system, "score"]),
                                       float(z.loc[system, "score"]), int(raw.loc[system, "n_segments"]),
                                       ranks.get(system)))
    return rows


def dashboard(store: Store, campaign: int | str) -> Dashboard:
    """Everything the dashboard page shows for one campaign."""
    info = store.campaign(campaign)
    protocol = get_protocol(info.protocol)
    rows = store.judged_rows(info.id)
    progress = store.assignment_counts(info.id)
    return Dashboard(info, protocol, progress, quality_report(protocol, rows, list(progress)),
                     agreement(protocol, rows), _system_rows(protocol, store, info.id), len(rows))
