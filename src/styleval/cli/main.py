"""The ``styleval`` command: one module per verb, thin over the Python API."""
from __future__ import annotations

import argparse
import sys
from typing import Sequence

from .. import __version__
from ..errors import MissingDependencyError, StyleEvalError
from ..readers.text import inputs_encoded
from .pipes import quiet_broken_pipe
from . import progress, quiet
from . import (calibrate_style_cmd, campaign_cmd, errors_cmd, evaluate_cmd, lexicon_cmd, meta_cmd, metrics_cmd,
               models_cmd, report_cmd, score_cmd, serve_cmd, setup_cmd, train_content_cmd, train_lm_cmd,
               train_style_cmd, train_transfer_cmd, transfer_cmd)
from . import benchmark_cmd, data_cmd

VERBS = (evaluate_cmd, report_cmd, score_cmd, meta_cmd, metrics_cmd, models_cmd, train_style_cmd, calibrate_style_cmd,
         train_content_cmd, train_lm_cmd, lexicon_cmd, errors_cmd, train_transfer_cmd, transfer_cmd, campaign_cmd,
         serve_cmd, setup_cmd, data_cmd, benchmark_cmd)
#: verbs that report progress: they take --progress and --no-progress
PROGRESS_VERBS = ("evaluate", "score", "meta", "errors", "train-style", "calibrate-style", "train-content",
                  "train-lm", "train-transfer", "transfer", "benchmark")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="styleval", description="Evaluate text style transfer systems.")
    parser.add_argument("--version", action="version", version=f"styleval {__version__}")
    sub = parser.add_subparsers(dest="verb", metavar="VERB")
    sub.required = True
    for verb in VERBS:
        verb.add_parser(sub)
    for name, verb_parser in sub.choices.items():
        quiet.add_flags(verb_parser, progress=name in PROGRESS_VERBS)
    return parser


#: Top-level import name -> (distribution, the styleval extra that installs it).
OPTIONAL_MODULES: dict[str, tuple[str, str | None]] = {
    "torch": ("torch", "neural"), "sentence_transformers": ("sentence-transformers", "neural"),
    "bert_score": ("bert-score", "neural"), "ot": ("pot", "neural"), "pyarrow": ("pyarrow", "neural"),
    "spacy": ("spacy", "nlp"), "transformers": ("transformers", "lm"), "peft": ("peft", "train"),
    "gguf": ("gguf", "lm"), "accelerate": ("accelerate", "train"), "kenlm": ("ufal.kenlm", "lm"),
    "vaderSentiment": ("vadersentiment", "sentiment"), "fastapi": ("fastapi", "human"),
    "starlette": ("starlette", "human"), "uvicorn": ("uvicorn", "human"), "jinja2": ("Jinja2", "human"),
    "multipart": ("python-multipart", "human"), "python_multipart": ("python-multipart", "human"),
    "sqlalchemy": ("SQLAlchemy", "human"), "psycopg": ("psycopg", "human"), "sacremoses": ("sacremoses", None),
    "sklearn": ("scikit-learn", None), "matplotlib": ("matplotlib", None), "ray": ("ray", "ray"),
    "onnxruntime": ("onnxruntime", "fast"), "onnx": ("onnx", "fast"),
}


def missing_dependency(exc: ModuleNotFoundError) -> MissingDependencyError | None:
    """The error to show for a missing optional module, or None when the module is not a known dependency."""
    top = (exc.name or "").split(".")[0]
    if top not in OPTIONAL_MODULES:
        return None
    package, extra = OPTIONAL_MODULES[top]
    return MissingDependencyError(package, extra)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)  # the command as given, for a report's header
    progress.configure(force=getattr(args, "progress", False), off=getattr(args, "no_progress", False) or args.quiet)
    try:
        try:
            encoding = getattr(args, "encoding", None)  # --encoding of the verbs that read text files
            with inputs_encoded(encoding), quiet.silenced(verbose=args.verbose, quiet=args.quiet):
                status = int(args.run(args) or 0)
        finally:
            progress.close_all()  # the progress line goes before an error message is printed
            progress.configure()
        sys.stdout.flush()  # a closed pipe shows here, inside the handler, not at interpreter exit
        return status
    except BrokenPipeError:
        return quiet_broken_pipe()
    except StyleEvalError as exc:
        print(f"styleval: error: {exc}", file=sys.stderr)
        return 2
    except ModuleNotFoundError as exc:  # an optional extra that is not installed: one line, naming the extra
        missing = missing_dependency(exc)
        if missing is None:
            raise
        print(f"styleval: error: {missing}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("styleval: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
