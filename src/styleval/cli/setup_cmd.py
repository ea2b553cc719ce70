"""``styleval setup``: prepare offline resources (the NLTK WordNet folder built from Debian's files)."""
from __future__ import annotations

import argparse


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("setup", help="prepare offline resources (WordNet for METEOR)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ..resources import wordnet

    info = wordnet.ensure_wordnet()
    print(f"WordNet ready: {info}")
    return 0
