"""Every corpus score, interval and p-value of the bundled formality example, as exact floats, for refactors.

Run it before and after a change that must not alter behaviour and compare the two files byte for byte::

    .venv/bin/python studies/behaviour_snapshot.py > before.json   # on the old commit
    .venv/bin/python studies/behaviour_snapshot.py > after.json    # on the new one
    cmp before.json after.json

It runs ``styleval evaluate --example formality`` and ``styleval score --example formality`` with every metric that
needs no optional checkpoint (BLEURT and COMET need one), both with paired bootstrap tests, through the CLI, and
prints the JSON files' numbers (floats written with ``repr``, so equality is bit-for-bit).
"""
from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

#: Metrics that need a checkpoint the offline install does not provide, or an argument no default can fill.
#: (ngram-perplexity needs an ARPA file; naturalness trains classifiers per run and is scored by evaluate tests.)
NEEDS_CHECKPOINT = {"bleurt", "comet", "ngram-perplexity", "naturalness"}
#: Composites, which score from their components' statistics (joint bootstrap).
COMPOSITES = ["hm:style=style_accuracy;content=bleu/ref", "gm:style=style_accuracy;content=chrf/src"]


def styleval(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "styleval.cli.main", *args], check=True, stdout=subprocess.DEVNULL)


def metric_names() -> list[str]:
    from styleval.metrics.registry import available

    return [name for name, cls in available().items()
            if name not in NEEDS_CHECKPOINT and getattr(cls, "aspect", "") != "overall"]


def numbers(node: Any, path: str = "") -> list[tuple[str, str]]:
    """Every number (and None) in a JSON tree with its path, signatures and timings left out."""
    if isinstance(node, dict):
        out = []
        for key in sorted(node):
            if key in {"signature", "signatures", "elapsed", "seconds", "timing", "run_facts", "versions", "created"}:
                continue
            out += numbers(node[key], f"{path}/{key}")
        return out
    if isinstance(node, list):
        return [item for i, child in enumerate(node) for item in numbers(child, f"{path}[{i}]")]
    if isinstance(node, float):
        return [(path, repr(node))]
    if isinstance(node, int) and not isinstance(node, bool):
        return [(path, str(node))]
    if node is None:
        return [(path, "None")]
    return []


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        evaluation, scores = Path(tmp, "evaluate.json"), Path(tmp, "score.json")
        styleval("evaluate", "--example", "formality", "--significance", "paired-bootstrap", "--json", str(evaluation),
                 "--quiet")
        styleval("score", "--example", "formality", "-m", ",".join(metric_names() + COMPOSITES), "--significance",
                 "paired-bootstrap", "--json", str(scores), "--quiet")
        snapshot = {name: numbers(json.loads(path.read_text())) for name, path in
                    (("evaluate", evaluation), ("score", scores))}
    for name, rows in snapshot.items():
        for path, value in rows:
            print(f"{name}{path}\t{value}")


if __name__ == "__main__":
    main()
