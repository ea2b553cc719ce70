"""The ``styleval`` command: one module per verb, thin over the Python API."""
from __future__ import annotations

import argparse
import sys
from typing import Sequence

from .. import __version__
from ..errors import StyleEvalError
from . import (campaign_cmd, errors_cmd, evaluate_cmd, lexicon_cmd, meta_cmd, metrics_cmd, models_cmd, report_cmd,
               score_cmd, serve_cmd, setup_cmd, train_lm_cmd, train_style_cmd, transfer_cmd)

VERBS = (evaluate_cmd, report_cmd, score_cmd, meta_cmd, metrics_cmd, models_cmd, train_style_cmd, train_lm_cmd,
         lexicon_cmd, errors_cmd, transfer_cmd, campaign_cmd, serve_cmd, setup_cmd)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="styleval", description="Evaluate text style transfer systems.")
    parser.add_argument("--version", action="version", version=f"styleval {__version__}")
    sub = parser.add_subparsers(dest="verb", metavar="VERB")
    sub.required = True
    for verb in VERBS:
        verb.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.run(args) or 0)
    except StyleEvalError as exc:
        print(f"styleval: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("styleval: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
