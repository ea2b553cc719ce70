"""``styleval train-style``: train a style classifier or regressor from labelled text into a model folder."""
from __future__ import annotations

import argparse
import shlex
import sys

from .encoding import add_encoding_argument
from .help_format import DefaultsFormatter


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("train-style", help="train a style classifier or regressor from labelled text",
                       formatter_class=DefaultsFormatter,
                       description="Train a style model from a table of labelled texts into a model folder that "
                                   "`styleval score -m style_accuracy:model=DIR` and `evaluate --style-model DIR` "
                                   "load. String labels (formal, informal) train a classifier; numeric scores "
                                   "(PT16's formality from -3 to 3) train a regressor: --kind regressor --poles "
                                   "informal,formal.",
                       epilog="example (PT16's formality scores): styleval train-style ../shared/data/pt16/train.csv "
                              "--text-col sentence --kind regressor --poles informal,formal --held-out "
                              "../shared/data/pt16/test.csv -o my-formality")
    p.add_argument("train", help="training table (.tsv/.csv/.jsonl) with a text and a label column")
    p.add_argument("--output", "-o", required=True, help="model folder to write")
    p.add_argument("--kind", choices=["classifier", "regressor"], default="classifier",
                   help="classifier: one class per distinct label; regressor: numeric labels, a ridge regression "
                        "whose low and high ends are --poles")
    p.add_argument("--features", default="tfidf",
                   help="feature blocks joined by '+': tfidf, embedding, hand (default: tfidf); or 'finetune' to "
                   "fine-tune the encoder with low-rank adapters and a linear head")
    p.add_argument("--encoder", default="minilm", help="sentence encoder for the embedding block or fine-tuning "
                   "(catalog name or local transformers folder)")
    ft = p.add_argument_group("fine-tuning (--features finetune)")
    ft.add_argument("--epochs", type=int, default=4, help="epochs; the best on the selection data is kept")
    ft.add_argument("--lr", type=float, default=5e-4, help="learning rate of the adapters")
    ft.add_argument("--rank", type=int, default=8, help="rank of the low-rank adapters")
    ft.add_argument("--batch-size", type=int, default=32, help="texts per training step")
    ft.add_argument("--device", default=None, help="torch device, e.g. cuda or cpu (default: cuda if available)")
    p.add_argument("--seed", type=int, default=13, help="seed of the 10%% selection split and of fine-tuning")
    p.add_argument("--no-progress", action="store_true", help="no progress display")
    p.add_argument("--text-col", default="text", help="column (JSONL: field) holding the texts")
    p.add_argument("--label-col", default="label", help="column (JSONL: field) holding the labels")
    p.add_argument("--selection", help="table to choose the regularisation on (default: 10%% of the training data)")
    p.add_argument("--held-out", help="table scored once after training; its scores go into the model card")
    p.add_argument("--poles", default="low,high", help="regressor: the styles of low and high scores, e.g. "
                   "informal,formal")
    p.add_argument("--alias", action="append", default=[], metavar="STYLE=LABEL",
                   help="another name for one of the model's labels (a regressor's poles), so that directions "
                        "written with that name find it: --alias non-toxic=neutral lets a model trained on the "
                        "labels toxic and neutral score the direction toxic->non-toxic, and --alias "
                        "formality=formal lets 'formality' stand for the label formal. Matched case-insensitively, "
                        "stored in model.json; repeatable")
    p.add_argument("--name", help="model name (default: the output folder's name)")
    p.add_argument("--description", default="", help="a sentence on the model for its card")
    add_encoding_argument(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ..training import require

    require("train-style")
    from pathlib import Path

    from ..errors import InputError
    from ..style_models import read_labelled
    from ..training.style_finetune import finetune_style_model
    from ..training.options import CardText, FinetuneOptions, HeadOptions, StyleTarget
    from ..training.style import train_style_model
    from .progress import make as make_progress

    numeric = args.kind == "regressor"

    def read(path: str):
        return read_labelled(path, text_col=args.text_col, label_col=args.label_col, numeric=numeric)

    aliases = {}
    for item in args.alias:
        style, sep, label = item.partition("=")
        if not sep:
            raise InputError(f"--alias must be STYLE=LABEL, got {item!r}")
        aliases[style.strip()] = label.strip()
    poles = tuple(s.strip() for s in args.poles.split(","))
    if len(poles) != 2:
        raise InputError(f"--poles needs two styles, got {args.poles!r}")
    selection = read(args.selection) if args.selection else None
    held_out = read(args.held_out) if args.held_out else None
    target = StyleTarget(kind=args.kind, poles=(poles[0], poles[1]), aliases=aliases)
    card = CardText(name=args.name or Path(args.output).name, description=args.description,
                    command="styleval " + " ".join(shlex.quote(a) for a in sys.argv[1:]))
    with make_progress(not args.no_progress) as bar:
        if args.features == "finetune":
            tuning = FinetuneOptions(model=args.encoder, epochs=args.epochs, lr=args.lr, rank=args.rank,
                                     alpha=2.0 * args.rank, batch_size=args.batch_size, device=args.device,
                                     seed=args.seed)
            model = finetune_style_model(read(args.train), selection=selection, held_out=held_out, target=target,
                                         tuning=tuning, card=card, progress=bar)
        else:
            head = HeadOptions(features=args.features, feature_options={"embedding": {"model": args.encoder}},
                               seed=args.seed)
            model = train_style_model(read(args.train), selection=selection, held_out=held_out, target=target,
                                      head=head, card=card, progress=bar)
        folder = model.save(args.output)
    held = model.card.get("held_out", {}).get("scores")
    sys.stdout.write(f"wrote {folder}\n" + (f"held-out: {held}\n" if held else ""))
    return 0
