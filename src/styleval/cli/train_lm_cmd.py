"""``styleval train-lm --style formal --data FILE``: adapt the default LM (LoRA) or build an n-gram LM for a style."""
from __future__ import annotations

import argparse
import sys

from ..models.catalog import DEFAULT_CAUSAL_LM
from .encoding import add_encoding_argument
from .help_format import DefaultsFormatter


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("train-lm", formatter_class=DefaultsFormatter,
                       help="train a target-style LM for fluency (LoRA adapter or n-gram)")
    p.add_argument("--style", required=True, help="the style the LM models (formal, informal, positive, ...)")
    p.add_argument("--data", required=True, help="sentences of that style, one per line")
    p.add_argument("--kind", choices=["lora", "ngram"], default="lora",
                   help="lora: adapt the causal LM (default); ngram: modified Kneser-Ney ARPA file")
    p.add_argument("--out", "-o", help="output folder (lora) or .arpa file (ngram); default: lm-<style>[.arpa]")
    p.add_argument("--base", default=DEFAULT_CAUSAL_LM, help="causal LM to adapt (catalog name or folder)")
    p.add_argument("--epochs", type=float, default=1.0, help="lora: passes over the data")
    p.add_argument("--max-steps", type=int, default=None, help="stop after this many steps (overrides --epochs)")
    p.add_argument("--batch-size", type=int, default=16, help="lora: sentences per step")
    p.add_argument("--lr", type=float, default=5e-4, help="lora: learning rate")
    p.add_argument("--rank", type=int, default=8, help="lora: adapter rank")
    p.add_argument("--order", type=int, default=3, help="ngram: n-gram order")
    p.add_argument("--seed", type=int, default=0,
                   help="lora: seed of the adapter initialisation and data order (default 0)")
    p.add_argument("--no-progress", action="store_true", help="no progress display")
    add_encoding_argument(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ..training import require

    require("train-lm")
    from ..training.lm import train_ngram_lm, train_style_lm
    from ..training.options import LMAdapterOptions
    from ..readers.text import read_lines
    from .progress import make

    if args.kind == "ngram":
        from ..outputs import refuse_inputs

        arpa = args.out or f"lm-{args.style}.arpa"
        refuse_inputs(("--out", arpa), ("--out card", arpa + ".json"), inputs=[("--data", args.data)])
    sentences = read_lines(args.data)
    if args.kind == "ngram":
        out = train_ngram_lm(sentences, args.out or f"lm-{args.style}.arpa", style=args.style, order=args.order)
    else:
        with make(not args.no_progress) as bar:
            options = LMAdapterOptions(base=args.base, epochs=args.epochs, max_steps=args.max_steps,
                                       batch_size=args.batch_size, lr=args.lr, rank=args.rank, seed=args.seed)
            out = train_style_lm(sentences, args.out or f"lm-{args.style}", style=args.style, options=options,
                                 progress=bar)
    sys.stdout.write(f"{out}\n")
    return 0
