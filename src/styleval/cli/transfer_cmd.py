"""``styleval transfer --rules formality``: the rule-based formality baseline, either direction."""
from __future__ import annotations

import argparse

from ..errors import InputError
from .lines import map_lines


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("transfer", help="rule-based transfer baseline (Rao & Tetreault 2018)")
    p.add_argument("--rules", choices=["formality"], required=True)
    p.add_argument("--direction", required=True, help="informal->formal or formal->informal")
    p.add_argument("input", help="input sentences, one per line ('-' for standard input)")
    p.add_argument("--output", "-o", help="output file (default: standard output)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ..records import Direction
    from ..transfer import to_formal, to_informal

    direction = Direction.parse(args.direction)
    if direction is None or {direction.source_style, direction.target_style} != {"formal", "informal"}:
        raise InputError(f"--direction must be informal->formal or formal->informal, got {args.direction!r}")
    rule = to_formal if direction.target_style == "formal" else to_informal
    map_lines(args.input, args.output, rule)
    return 0
