"""Signatures: how a score was made, stored with every score and printed by the CLI."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import metadata
from typing import Any


@lru_cache(maxsize=None)
def library_version(distribution: str) -> str:
    """Installed version of a distribution, or ``"absent"``."""
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "absent"


def format_value(value: Any, bools: tuple[str, str] = ("yes", "no")) -> str:
    """A parameter value as text: booleans as ``bools`` (true, false), floats with ``g``, sequences joined by
    commas; used by signatures and by metric labels (:mod:`styleval.metrics.identity`)."""
    if isinstance(value, bool):
        return bools[0] if value else bools[1]
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, (list, tuple)):
        return ",".join(format_value(v, bools) for v in value)
    return str(value)



@dataclass(frozen=True)
class Signature:
    """Metric identity, parameters, resources, library versions and number of references."""

    metric: str
    version: str
    against: str | None = None
    nrefs: int | None = None
    params: dict[str, Any] = field(default_factory=dict)
    resources: dict[str, str] = field(default_factory=dict)
    libraries: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "metric": self.metric,
            "version": self.version,
            "against": self.against,
            "nrefs": self.nrefs,
            "params": dict(sorted(self.params.items())),
            "resources": dict(sorted(self.resources.items())),
            "libraries": dict(sorted(self.libraries.items())),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Signature":
        return cls(**data)

    def __str__(self) -> str:
        parts = [f"{self.metric}.v{self.version}"]
        if self.against is not None:
            parts.append(f"against:{self.against}")
        if self.nrefs is not None:
            parts.append(f"nrefs:{self.nrefs}")
        parts += [f"{k}:{format_value(v)}" for k, v in sorted(self.params.items())]
        parts += [f"{k}:{format_value(v)}" for k, v in sorted(self.resources.items())]
        parts += [f"{k}:{v}" for k, v in sorted(self.libraries.items())]
        return "|".join(parts)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True)
