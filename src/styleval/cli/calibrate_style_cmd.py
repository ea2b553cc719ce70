"""``styleval calibrate-style``: fit a style model's decision threshold and probability map on a small labelled
in-domain sample, write a copy of the model with the calibration in its card, and report balanced accuracy before
and after (with bootstrap intervals)."""
from __future__ import annotations

import argparse
import json
import os
import shlex
import sys

from .encoding import add_encoding_argument
from .help_format import DefaultsFormatter


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("calibrate-style", formatter_class=DefaultsFormatter,
                       help="calibrate a style model's threshold/probabilities on labelled "
                       "in-domain text")
    p.add_argument("model", help="shipped model name (styleval models) or a model folder")
    src = p.add_argument_group("calibration sample (one of)")
    src.add_argument("--texts", action="append", default=[], metavar="STYLE=FILE",
                     help="a plain text file of one style, one text per line (give one per style)")
    src.add_argument("--table", help="a .tsv/.csv/.jsonl table with a text and a label column")
    p.add_argument("--text-col", default="text", help="--table: column (JSONL: field) holding the texts")
    p.add_argument("--label-col", default="label", help="--table: column (JSONL: field) holding the styles")
    p.add_argument("--output", "-o", required=True, help="model folder to write (the calibrated copy)")
    p.add_argument("--method", choices=["platt", "isotonic", "threshold"], default="platt",
                   help="probability map (default platt; threshold: a decision threshold only)")
    p.add_argument("--threshold-rule", choices=["probability", "balanced"], default="probability",
                   help="where the decision threshold goes: where the calibrated probability is 0.5 (default), or "
                   "at the best balanced accuracy on the sample")
    p.add_argument("--positive", help="the style the model's raw score grows with (default: its second label)")
    p.add_argument("--name", help="name of the calibrated model (default: the output folder's name)")
    p.add_argument("--note", default="", help="a note on the sample for the card (e.g. what it may not be used for)")
    p.add_argument("--bootstrap", type=int, default=1000, help="bootstrap draws for the intervals (default 1000)")
    p.add_argument("--seed", type=int, default=13, help="seed of the bootstrap and cross-validation")
    p.add_argument("--json", action="store_true", help="print the calibration as JSON")
    p.add_argument("--no-progress", action="store_true", help="no progress display")
    add_encoding_argument(p)
    p.set_defaults(run=run)


def _fmt(entry: dict) -> str:
    lo, hi = entry["ci95"]
    return f"{entry['balanced_accuracy']:.3f} [{lo:.3f}, {hi:.3f}]"


def run(args: argparse.Namespace) -> int:
    from ..training import require

    require("calibrate-style")
    from pathlib import Path

    from ..errors import InputError
    from ..style_models import StyleModel, load_style_model, read_labelled
    from ..training.calibration import calibrate_style_model
    from ..training.options import CalibrationOptions
    from ..style_models.data import read_style_files
    from .progress import make as make_progress

    if bool(args.texts) == bool(args.table):
        raise InputError("give the calibration sample either as --texts STYLE=FILE (one per style) or as --table")
    if args.table:
        data = read_labelled(args.table, text_col=args.text_col, label_col=args.label_col, drop_empty=False)
    else:
        files: dict[str, str | os.PathLike[str]] = {}
        for item in args.texts:
            style, sep, path = item.partition("=")
            if not sep or not style.strip() or not path.strip():
                raise InputError(f"--texts must be STYLE=FILE, got {item!r}")
            if style.strip() in files:
                raise InputError(f"--texts names style {style.strip()!r} twice")
            files[style.strip()] = path.strip()
        data = read_style_files(files)
    if args.bootstrap < 1:
        raise InputError(f"--bootstrap must be at least 1, got {args.bootstrap}")
    with make_progress(not args.no_progress) as bar:
        model = load_style_model(args.model)
        if not isinstance(model, StyleModel):
            raise InputError(f"calibrate-style fits a styleval style model's calibration; {args.model!r} is a "
                             "transformers classifier (give it threshold= in the style metrics instead)")
        out = calibrate_style_model(model, data, positive=args.positive, name=args.name or Path(args.output).name,
                                    note=args.note, progress=bar,
                                    options=CalibrationOptions(method=args.method, threshold_rule=args.threshold_rule,
                                                               n_boot=args.bootstrap, seed=args.seed))
    cal = out.card["calibration"]
    cal["command"] = "styleval " + " ".join(shlex.quote(a) for a in sys.argv[1:])
    folder = out.save(args.output)
    if args.json:
        sys.stdout.write(json.dumps(cal, indent=2) + "\n")
        return 0
    s = cal["scores"]
    sys.stdout.write(
        f"wrote {folder}\n"
        f"calibration: {cal['method']} ({cal['threshold_rule']} threshold) of {model.name} on {len(data)} texts "
        f"({', '.join(f'{k} {v}' for k, v in cal['data']['label_counts'].items())})\n"
        f"threshold: raw score {cal['threshold']:.4f} = P({cal['positive']}) {cal['probability_threshold']:.4f}\n"
        f"balanced accuracy, 95% bootstrap intervals ({s['bootstrap']['draws']} draws over texts):\n"
        f"  before (model's own decision):  {_fmt(s['before'])}\n"
        f"  after, in-sample:               {_fmt(s['after_in_sample'])}\n"
        f"  after, {s['cross_validation']['folds']}-fold cross-validated:   {_fmt(s['after_cross_validated'])}\n"
        f"AUC of the raw score: {s['auc_raw_score']:.3f}\n")
    return 0
