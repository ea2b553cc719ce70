"""The statistics options of a run (intervals and paired tests), one object shared by ``score``, ``score_stream``,
``evaluate`` and the CLI."""
from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from ..errors import InputError

SIGNIFICANCE_METHODS = ("none", "paired-bootstrap", "approx-randomization")


@dataclass(frozen=True)
class StatisticsOptions:
    """Bootstrap intervals and paired tests between systems, stored with the result.

    ``bootstrap``: resamples for confidence intervals (0: none); ``confidence``: their level; ``significance``: the
    paired test (one of :data:`SIGNIFICANCE_METHODS`); ``baseline``: the system every other one is compared with
    (None: all pairs); ``n_trials``: trials of approximate randomization; ``seed``: of every resampling.
    """

    bootstrap: int = 1000
    confidence: float = 0.95
    significance: str = "none"
    baseline: str | None = None
    n_trials: int = 10000
    seed: int = 12345

    def __post_init__(self) -> None:
        if self.significance not in SIGNIFICANCE_METHODS:
            raise InputError(f"significance must be one of {', '.join(SIGNIFICANCE_METHODS)}, "
                             f"got {self.significance!r}")
        if self.significance == "paired-bootstrap" and self.bootstrap < 1:
            raise InputError(f"the paired bootstrap test draws the bootstrap's resamples, and bootstrap is "
                             f"{self.bootstrap}: give bootstrap > 0, or significance 'none' or 'approx-randomization'")

    @classmethod
    def given(cls, options: "StatisticsOptions | None", **overrides: Any) -> "StatisticsOptions":
        """``options`` (the defaults when None) with the named fields replaced: how ``score(..., bootstrap=0)``
        keeps working beside ``score(..., options=...)``. ``bootstrap=0`` without a ``significance`` also turns a
        paired bootstrap test off (it would have no resamples to draw)."""
        names = {f.name for f in fields(cls)}
        unknown = sorted(set(overrides) - names)
        if unknown:
            raise TypeError(f"unexpected keyword argument(s): {', '.join(unknown)}")
        base = options if options is not None else cls()
        if not overrides:
            return base
        merged = {**{n: getattr(base, n) for n in names}, **overrides}
        paired_bootstrap = merged["significance"] == "paired-bootstrap"
        if merged["bootstrap"] == 0 and "significance" not in overrides and paired_bootstrap:
            merged["significance"] = "none"  # no resamples asked for: the default paired bootstrap goes with them
        return cls(**merged)

    def settings(self) -> dict[str, Any]:
        """The options as a result records them."""
        return {"bootstrap": self.bootstrap, "confidence": self.confidence, "seed": self.seed,
                "significance": self.significance, "baseline": self.baseline,
                "n_trials": self.n_trials if self.significance == "approx-randomization" else None}
