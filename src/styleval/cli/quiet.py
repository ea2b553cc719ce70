"""What a command prints besides its results: the output flags every verb takes, and silence from third-party
libraries (transformers' and huggingface_hub's bars and logs, Python warnings from torch, sentence-transformers,
scikit-learn, spaCy, the tokenizers' fork warning) unless ``--verbose``.

:func:`add_flags` gives a verb ``--quiet``, ``--verbose`` and, for verbs that report progress, ``--progress`` and
``--no-progress``; :func:`silenced` wraps the verb's run (:func:`styleval.cli.main.main`). Settings that the
libraries read when they are imported go through environment variables (they are imported lazily, inside the
run); loggers and warning filters are set directly. Everything is put back when the run ends.
"""
from __future__ import annotations

import argparse
import contextlib
import logging
import os
import sys
import warnings
from pathlib import Path
from typing import Any, Callable, Iterator

#: read by the libraries at import time; a value the user set is left alone
QUIET_ENVIRONMENT = {
    "TOKENIZERS_PARALLELISM": "false",  # the fork warning of Hugging Face tokenizers
    "TRANSFORMERS_VERBOSITY": "error",
    "TRANSFORMERS_NO_ADVISORY_WARNINGS": "1",
    "HF_HUB_VERBOSITY": "error",
    "HF_HUB_DISABLE_PROGRESS_BARS": "1",  # transformers' "Loading weights" bars go through huggingface_hub's
    "RAY_DATA_LOG_LEVEL": "ERROR",  # Ray Data's own logger (--engine ray); Ray's follows the "ray" logger's level
}
#: loggers of libraries that configure their own level; the others follow the root logger
LIBRARY_LOGGERS = ("transformers", "huggingface_hub", "sentence_transformers", "torch", "spacy", "peft",
                   "accelerate", "onnxruntime", "ray", "urllib3", "filelock", "matplotlib", "PIL", "numexpr")


def add_flags(parser: argparse.ArgumentParser, progress: bool) -> None:
    """Add the output flags a verb does not define itself."""
    have = set(parser._option_string_actions)
    group = parser.add_argument_group("output messages")
    if "--quiet" not in have:
        group.add_argument("--quiet", "-q", action="store_true",
                           help="no progress display, notes or warnings: only results and errors")
    if "--verbose" not in have:
        group.add_argument("--verbose", "-v", action="store_true",
                           help="let third-party libraries (transformers, torch, sentence-transformers, ...) print "
                                "their progress bars, logs and warnings")
    if progress and "--progress" not in have:
        group.add_argument("--progress", action="store_true",
                           help="show progress even where stderr is not a terminal (one line per stage)")
    if progress and "--no-progress" not in have:
        group.add_argument("--no-progress", action="store_true", help="no progress display")


@contextlib.contextmanager
def silenced(verbose: bool = False, quiet: bool = False) -> Iterator[None]:
    """Third-party libraries print nothing inside the block unless ``verbose``; styleval's own warnings show
    unless ``quiet``."""
    if verbose:
        from ..progress import library_output

        with library_output(True):
            yield
        return
    env_before = {name: os.environ.get(name) for name in QUIET_ENVIRONMENT}
    for name, value in QUIET_ENVIRONMENT.items():
        os.environ.setdefault(name, value)
    loggers = [logging.getLogger(), logging.getLogger("styleval"), *map(logging.getLogger, LIBRARY_LOGGERS)]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.ERROR)
    if not quiet:
        logging.getLogger("styleval").setLevel(logging.WARNING)
    hf_bars = _hf_progress_bars(enabled=False)
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore")
            if not quiet:  # styleval's own warnings (truncated texts ...); a library's deprecation stays hidden
                warnings.filterwarnings("default", category=UserWarning, module=r"styleval(\.|$)")
            # a library imported later may add filters of its own in front of these (Ray shows its deprecations):
            # the last word is where warnings are shown
            warnings.showwarning = _styleval_only(warnings.showwarning, quiet)
            yield
    finally:
        for lg, level in zip(loggers, levels):
            lg.setLevel(level)
        for name, before in env_before.items():
            if before is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = before
        if hf_bars:
            _hf_progress_bars(enabled=True)


def _styleval_only(show: Callable[..., None], quiet: bool) -> Callable[..., None]:
    """``show`` for styleval's own user warnings (raised in its source files), unless ``quiet``; nothing else."""
    package = Path(__file__).resolve().parents[1]

    def shown(message: Any, category: type[Warning], filename: str, lineno: int, file: Any = None,
              line: str | None = None) -> None:
        if quiet or not issubclass(category, UserWarning) or issubclass(category, DeprecationWarning):
            return
        if Path(filename).resolve().is_relative_to(package):
            show(message, category, filename, lineno, file, line)

    return shown


def _hf_progress_bars(enabled: bool) -> bool:
    """Switch huggingface_hub's progress bars (which transformers' follow) when it is already imported; True
    when they were on and are now off."""
    hub = sys.modules.get("huggingface_hub.utils")
    if hub is None:
        return False
    if enabled:
        hub.enable_progress_bars()
        return True
    was_on = not hub.are_progress_bars_disabled()
    if was_on:
        hub.disable_progress_bars()
    return was_on
