"""``styleval train-content``: train a content-preservation model (the ``preservation`` metric) on pair files."""
from __future__ import annotations

import argparse
import shlex
import sys

from .encoding import add_encoding_argument
from .help_format import DefaultsFormatter


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("train-content", formatter_class=DefaultsFormatter,
                       help="train a content-preservation model on (source, output, score) pairs",
                       description="Train a preservation model: frozen encoder and spaCy pair features with a "
                       "logistic head, optionally averaged with a LoRA cross-encoder and the plain sentence "
                       "cosine. Pair files are .tsv/.csv/.jsonl with columns source, output, score (0-1: how "
                       "much meaning the output keeps) and optionally group and weight; see docs/preservation.md.")
    p.add_argument("train", nargs="+", help="pair file(s) to train on")
    p.add_argument("--output", "-o", required=True, help="model folder to write")
    p.add_argument("--selection", help="pair file to choose the penalty on (default: 20%% of the training pairs)")
    p.add_argument("--negatives", type=int, default=0, metavar="N",
                   help="add up to N automatic meaning changes of the training outputs (score 0.15, group "
                   "'changed'), made with spaCy from the training texts (default 0: none)")
    p.add_argument("--style-words", help="file of words (one per line) set aside as style, not content "
                   "(default: styleval's tone words and the VADER sentiment lexicon)")
    p.add_argument("--encoder", default="minilm", help="sentence encoder (catalog name or local folder)")
    p.add_argument("--name", help="model name (default: the output folder's name)")
    p.add_argument("--description", default="", help="a sentence on the model for its card")
    p.add_argument("--cross-epochs", type=int, default=0, metavar="N",
                   help="also train a cross-encoder (LoRA on the encoder) for N epochs and average its score with "
                        "the feature head's (about 6 minutes per epoch and 10,000 pairs on 2 CPU cores)")
    p.add_argument("--cross-rank", type=int, default=16, help="LoRA rank of the cross-encoder (default 16)")
    p.add_argument("--cross-weight", type=float, default=0.5,
                   help="weight of the cross-encoder in the average with the head, in (0, 1) (default 0.5)")
    p.add_argument("--device", default="cpu",
                   help="where the cross-encoder trains: cpu (default), cuda[:N], or auto (a GPU if torch sees "
                        "one); pair features are computed on the CPU either way")
    p.add_argument("--cosine-weight", type=float, default=0.0, metavar="A",
                   help="average the learned score with the frozen encoder's plain sentence cosine at this weight "
                        "(0 <= A < 1, default 0; docs/preservation.md): finer grading of similar pairs")
    p.add_argument("--seed", type=int, default=13, help="seed of the selection split, negatives and training")
    p.add_argument("--no-progress", action="store_true", help="no progress display")
    add_encoding_argument(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ..training import require

    require("train-content")
    import random
    from pathlib import Path

    from ..preservation import PairData, read_pairs
    from ..training.preservation import PreservationRecipe, train_preservation_model
    from ..errors import InputError
    from .progress import make as make_progress

    parts = [read_pairs(path) for path in args.train]
    data = PairData.concat(parts, origin=" + ".join(args.train))
    if args.negatives < 0:
        raise InputError(f"--negatives must be 0 or more, got {args.negatives}")
    words = None
    if args.style_words:
        path = Path(args.style_words)
        if not path.is_file():
            raise InputError("style-word file not found", path)
        words = [w.strip() for w in path.read_text(encoding="utf-8").splitlines() if w.strip()]
    recipe = PreservationRecipe(
        encoder=args.encoder, style_words=None if words is None else tuple(words), seed=args.seed,
        cross_epochs=args.cross_epochs, cross_rank=args.cross_rank, cross_weight=args.cross_weight,
        cosine_weight=args.cosine_weight, device=args.device, name=args.name or Path(args.output).name,
        description=args.description, command="styleval " + " ".join(shlex.quote(a) for a in sys.argv[1:]))
    recipe.check()  # before the negatives and the features
    if args.negatives:
        from ..training.negatives import DonorPool, corrupt
        from ..nlp import parse_many

        rng = random.Random(args.seed)
        kept = [i for i, y in enumerate(data.scores) if y >= 0.5]
        rng.shuffle(kept)
        texts = list(dict.fromkeys(t for i in kept for t in (data.sources[i], data.outputs[i])))
        parsed = dict(zip(texts, parse_many(texts)))
        pool = DonorPool.build(list(parsed.values()))
        extra = PairData([], [], [], [], [])
        for i in kept[:args.negatives]:
            got = corrupt(parsed[data.outputs[i]], pool, rng)
            if got is not None:
                extra.sources.append(data.sources[i])
                extra.outputs.append(got[1])
                extra.scores.append(0.15)
                extra.groups.append("changed")
                extra.weights.append(1.0)
        data = PairData.concat([data, extra], origin=data.origin + f" + {len(extra)} automatic meaning changes")
    with make_progress(not args.no_progress) as bar:
        model = train_preservation_model(data, recipe, progress=bar,
                                         selection=read_pairs(args.selection) if args.selection else None)
    folder = model.save(args.output)
    chosen = model.card["selection"]["chosen"]
    sys.stdout.write(f"wrote {folder} ({len(data)} pairs; chosen {chosen}; score with "
                     f"-m preservation:model={folder})\n")
    return 0
