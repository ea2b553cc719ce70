"""``styleval metrics``: list metrics and what they need."""
from __future__ import annotations

import argparse

from ..metrics import registry


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("metrics", help="list available metrics and what they need")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    rows = []
    for name, cls in registry.available().items():
        if registry.accepts_against(cls):
            needs = "source or references"
        elif isinstance(cls.needs, frozenset):
            needs = ", ".join(sorted(cls.needs)) or "-"
        else:  # a content metric fixed to one side (PINC: the source)
            needs = "source"
        lo, hi = cls.value_range
        rows.append((name, f"v{cls.version}", cls.aspect.value, "higher" if cls.higher_is_better else "lower",
                     f"{lo:g}..{hi:g}", needs, ", ".join(cls.param_names()), cls.description))
    header = ("metric", "version", "aspect", "better", "range", "needs", "parameters", "description")
    widths = [max(len(str(r[i])) for r in rows + [header]) for i in range(len(header) - 1)]
    for row in [header] + rows:
        print("  ".join(str(c).ljust(w) for c, w in zip(row[:-1], widths)) + "  " + row[-1])
    return 0
