"""``styleval transfer``: the rule-based formality baseline (``--rules formality``) or a trained neural model
(``--model DIR``, from ``styleval train-transfer``)."""
from __future__ import annotations

import argparse
import sys

from .direction_help import METAVAR, direction_help
from .encoding import add_encoding_argument


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("transfer", help="rewrite sentences with the rule-based baseline (Rao & Tetreault 2018) or a "
                                        "model trained by train-transfer")
    p.add_argument("--rules", choices=["formality"], help="the rule-based formality baseline (needs --direction)")
    p.add_argument("--model", metavar="DIR", help="a model folder written by `styleval train-transfer`")
    p.add_argument("--direction", metavar=METAVAR,
                   help=direction_help(lead="with --rules: informal:formal or formal:informal"))
    p.add_argument("input", help="input sentences, one per line ('-' for standard input)")
    p.add_argument("--output", "-o", help="output file (default: standard output)")
    p.add_argument("--batch-size", type=int, default=16, help="sentences per batch with --model")
    p.add_argument("--threads", type=int, default=2, help="torch threads with --model (default 2)")
    p.add_argument("--no-progress", action="store_true")
    add_encoding_argument(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ..training import require

    require("transfer")
    from ..errors import InputError
    from ..records import Direction
    from .lines import map_lines

    if bool(args.rules) == bool(args.model):
        raise InputError("give exactly one of --rules formality or --model DIR")
    if args.model:
        return _run_model(args)
    from ..training.transfer import to_formal, to_informal

    direction = Direction.parse(args.direction) if args.direction else None
    if direction is None or {direction.source_style, direction.target_style} != {"formal", "informal"}:
        raise InputError(f"--direction must be informal:formal or formal:informal, got {args.direction!r}")
    rule = to_formal if direction.target_style == "formal" else to_informal
    map_lines(args.input, args.output, rule)
    return 0


def _run_model(args: argparse.Namespace) -> int:
    import torch

    from ..training.transfer.neural.model import load_transfer_model
    from .lines import input_lines
    from .progress import make

    from ..outputs import check_destinations, input_files, write_text

    check_destinations(("--output", args.output), inputs=input_files("input", args.input)
                       + input_files("--model", args.model))
    torch.set_num_threads(max(1, args.threads))
    lines = input_lines(args.input)
    with make(not args.no_progress) as bar:
        model = load_transfer_model(args.model, progress=bar)
        out = model.rewrite(lines, batch_size=args.batch_size, progress=bar)
    text = "".join(o.replace("\n", " ") + "\n" for o in out)
    if args.output:
        write_text(args.output, text)
    else:
        sys.stdout.write(text)
    return 0
