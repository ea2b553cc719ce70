"""``styleval lexicon``: build a style lexicon from labelled text, or apply one (mask / remove) to text."""
from __future__ import annotations

import argparse
import sys

from .encoding import add_encoding_argument
from .lines import map_lines


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("lexicon", help="build a style lexicon (Mir et al. 2019) or mask/remove its words")
    verbs = p.add_subparsers(dest="lexicon_verb", required=True)
    b = verbs.add_parser("build", help="logistic regression on labelled text; keep the most weighted words")
    b.add_argument("data", help="table (.tsv/.csv/.jsonl) with a text and a label column")
    b.add_argument("--output", "-o", required=True, help="lexicon JSON to write")
    b.add_argument("--text-col", default="text")
    b.add_argument("--label-col", default="label")
    b.add_argument("--C", type=float, default=3.0, help="inverse regularisation (Mir et al.: 3)")
    b.add_argument("--penalty", choices=["l1", "l2"], default="l1")
    b.add_argument("--n-std", type=float, default=2.0, help="keep weights beyond mean +- N standard deviations")
    b.add_argument("--top-k", type=int, help="keep the K largest absolute weights instead")
    b.add_argument("--layout", choices=["styleval", "mir"], default="styleval")
    add_encoding_argument(b)
    a = verbs.add_parser("apply", help="mask or remove lexicon words in text, one sentence per line")
    a.add_argument("lexicon")
    a.add_argument("input", help="text file ('-' for standard input)")
    a.add_argument("--mode", choices=["mask", "remove"], default="mask")
    a.add_argument("--placeholder", default="customstyle")
    a.add_argument("--output", "-o")
    add_encoding_argument(a)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ..style_models.lexicon import build_lexicon, load_lexicon, mask_style_words, remove_style_words, write_lexicon

    if args.lexicon_verb == "build":
        from ..outputs import check_destinations
        from ..style_models import read_labelled

        check_destinations(("--output", args.output), inputs=[("data", args.data)])
        data = read_labelled(args.data, text_col=args.text_col, label_col=args.label_col)
        lex = build_lexicon(data.texts, data.labels, C=args.C, penalty=args.penalty, n_std=args.n_std,
                            top_k=args.top_k, origin=str(args.data))
        write_lexicon(lex, args.output, layout=args.layout)
        sys.stdout.write(f"wrote {args.output}: {len(lex)} words\n")
        return 0
    words = load_lexicon(args.lexicon).words
    edit = (lambda t: mask_style_words(t, words, args.placeholder)) if args.mode == "mask" else \
        (lambda t: remove_style_words(t, words))
    map_lines(args.input, args.output, edit, inputs=[("lexicon", args.lexicon)])
    return 0
