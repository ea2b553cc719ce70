"""``styleval train-transfer``: train a neural transfer baseline (NMT, NMT with copy, or a LoRA-tuned SmolLM2)."""
from __future__ import annotations

import argparse
import shlex
import sys

from .direction_help import METAVAR, direction_help
from .encoding import add_encoding_argument
from .help_format import DefaultsFormatter


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("train-transfer", formatter_class=DefaultsFormatter,
                       help="train a neural transfer baseline on parallel style data",
                       description="Train an encoder-decoder NMT baseline (--kind nmt), NMT with a copy gate "
                                   "(nmt-copy) or SmolLM2-135M-Instruct with LoRA (lora) on parallel style data: "
                                   "plain parallel files, the GYAFC layout, or ParaDetox. Apply it with "
                                   "`styleval transfer --model DIR`. See docs/transfer.md.")
    p.add_argument("--kind", choices=("nmt", "nmt-copy", "lora"), required=True,
                   help="nmt: encoder-decoder; nmt-copy: with a copy gate; lora: SmolLM2 with LoRA adapters")
    p.add_argument("--out", "-o", required=True, help="output model folder (must not exist or be empty)")
    d = p.add_argument_group("data (one of: --train-src/--train-tgt, --gyafc, --paradetox)")
    d.add_argument("--train-src", help="training sources, one per line")
    d.add_argument("--train-tgt", action="append", default=[], metavar="FILE",
                   help="training rewrites, line-aligned with --train-src (repeatable for several rewrites)")
    d.add_argument("--dev-src", help="selection sources (default: 5%% of the training sources held out)")
    d.add_argument("--dev-tgt", action="append", default=[], metavar="FILE",
                   help="selection rewrites, line-aligned with --dev-src (repeatable)")
    d.add_argument("--gyafc", metavar="ROOT", help="GYAFC release folder: train and tune splits of --direction")
    d.add_argument("--domain", help="GYAFC domain (default: both)")
    d.add_argument("--paradetox", metavar="DIR", help="ParaDetox data folder (toxic->neutral, split by toxic "
                                                       "source: 80/10/10 with --seed; trains on 80, selects on 10)")
    p.add_argument("--direction", metavar=METAVAR,
                   help=direction_help("informal:formal") + "; default toxic:neutral with --paradetox")
    p.add_argument("--preprocess", choices=("none", "rules-formal", "rules-informal"), default="none",
                   help="rewrite the sources with Rao & Tetreault's rules first (also at transfer time)")
    t = p.add_argument_group("training (CPU-friendly defaults)")
    t.add_argument("--max-minutes", type=float, default=20.0, help="wall-clock training budget (default 20)")
    t.add_argument("--epochs", type=float, help="epochs (default: nmt 30 within the budget, lora 1)")
    t.add_argument("--max-steps", type=int, help="lora: stop after this many steps")
    t.add_argument("--batch-size", type=int, help="pairs per step (default: nmt 32, lora 8)")
    t.add_argument("--lr", type=float, help="learning rate (default: nmt 1e-3, lora 5e-4)")
    t.add_argument("--max-train", type=int, help="use only the first N training sources (after the split)")
    t.add_argument("--threads", type=int, default=2, help="torch threads (default 2)")
    t.add_argument("--seed", type=int, default=13, help="data split and training seed (default 13)")
    p.add_argument("--no-progress", action="store_true", help="no progress display")
    add_encoding_argument(p)
    p.set_defaults(run=run)


def _data(args: argparse.Namespace):
    from ..errors import InputError
    from ..datasets import gyafc, paradetox
    from ..training.transfer.neural.data import ParallelData, holdout, read_parallel_files

    chosen = [bool(args.train_src), bool(args.gyafc), bool(args.paradetox)]
    if sum(chosen) != 1:
        raise InputError("give exactly one of --train-src/--train-tgt, --gyafc ROOT or --paradetox DIR")
    direction = args.direction
    if args.paradetox:
        parts = paradetox.parallel_splits(args.paradetox, seed=args.seed)
        train, dev, direction = parts["train"], parts["dev"], direction or "toxic->neutral"
    elif args.gyafc:
        if not direction:
            raise InputError("--gyafc needs --direction informal:formal or formal:informal")
        train = gyafc.parallel(args.gyafc, direction, domain=args.domain, split="train")
        dev = gyafc.parallel(args.gyafc, direction, domain=args.domain, split="tune")
    else:
        if not args.train_tgt:
            raise InputError("--train-src needs at least one --train-tgt")
        if not direction:
            raise InputError("plain parallel files need --direction SRC:TGT (e.g. informal:formal)")
        train = read_parallel_files(args.train_src, args.train_tgt)
        if args.dev_src:
            if not args.dev_tgt:
                raise InputError("--dev-src needs --dev-tgt")
            dev = read_parallel_files(args.dev_src, args.dev_tgt)
        else:
            train, dev = holdout(train, 0.05, seed=args.seed)
    if args.max_train:
        train = ParallelData(train.groups[: args.max_train], train.origin,
                             f"{train.split}; first {args.max_train} sources".lstrip("; "))
    return train, dev, direction


def run(args: argparse.Namespace) -> int:
    from ..training import require

    require("train-transfer")
    from ..training.transfer.neural.model import TransferOptions, train_transfer_model
    from .progress import make

    train, dev, direction = _data(args)
    settings = {"seed": args.seed, "max_minutes": args.max_minutes}
    for key in ("epochs", "max_steps", "batch_size", "lr"):
        value = getattr(args, key)
        if value is not None:
            settings[key] = int(value) if key == "epochs" and args.kind != "lora" else value
    command = "styleval " + " ".join(shlex.quote(a) for a in sys.argv[1:]) if sys.argv[1:2] == ["train-transfer"] \
        else ""
    with make(not args.no_progress) as bar:
        options = TransferOptions(preprocess=args.preprocess, threads=args.threads, settings=settings, command=command)
        card = train_transfer_model(args.kind, train, dev, args.out, direction=direction, options=options,
                                    progress=bar)
    tr = card["training"]
    sys.stdout.write(f"{args.out}: {card['kind']} trained on {tr['data']['pairs']} pairs in {tr['wall_minutes']} min "
                     f"({tr['log'].get('stopped_by')})\n")
    return 0
