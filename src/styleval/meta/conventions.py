"""Named meta-evaluation conventions, written once: what each published setup chooses (docs/meta-conventions.md).

Lai et al. (2022): system level, Pearson of metric and mean human scores; segment level, WMT's Kendall tau-like
computed per input over the systems' outputs and averaged, human ties skipped, metric ties discordant, threshold
0; lower-is-better metrics negated (``orientation="abs"``); the human references (system ``ref``) left out.
``styleval meta --preset lai2022`` and the evaluation report's correlations both take their choices from here.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .evaluate import MetaTask

#: MetaTask choices of Lai et al. (2022) at each level.
LAI2022_SYSTEM: dict[str, Any] = {"level": "system", "method": "pearson", "orientation": "abs", "human": "mean"}
LAI2022_SEGMENT: dict[str, Any] = {"level": "segment", "method": "kendall_tau_like", "average_by": "item",
                                   "aggregate": "mean", "undefined": "skip", "threshold": 0.0, "tie_rule": "le",
                                   "human_ties": "skip", "metric_ties": "discordant", "orientation": "abs",
                                   "human": "mean"}
#: the systems Lai et al. leave out of their correlations
LAI2022_EXCLUDE: tuple[str, ...] = ("ref",)


def lai2022_cli_preset() -> dict[str, Any]:
    """The same choices in the option names of ``styleval meta``."""
    seg = LAI2022_SEGMENT
    return {"segment_method": seg["method"], "system_method": LAI2022_SYSTEM["method"],
            "average_by": seg["average_by"], "aggregate": seg["aggregate"], "undefined": seg["undefined"],
            "human_ties": seg["human_ties"], "metric_ties": seg["metric_ties"], "threshold": seg["threshold"],
            "tie_rule": seg["tie_rule"], "exclude": ",".join(LAI2022_EXCLUDE), "human_aggregation": seg["human"],
            "orientation": seg["orientation"]}


def lai2022_tasks(aspect: str) -> tuple["MetaTask", "MetaTask"]:
    """Lai et al.'s (segment, system) tasks for one human aspect, both directions pooled (``task.with_(direction=
    "informal->formal")`` for one direction), the human references left out."""
    from .evaluate import MetaTask

    return (MetaTask(aspect, exclude=LAI2022_EXCLUDE, **LAI2022_SEGMENT),
            MetaTask(aspect, exclude=LAI2022_EXCLUDE, **LAI2022_SYSTEM))
