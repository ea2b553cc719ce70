"""``--encoding``: the encoding of the text files a verb reads (UTF-8 by default).

Every verb that reads users' text files takes the option; ``main`` reads the verb's files inside
:func:`styleval.readers.inputs_encoded`, so every reader the verb reaches decodes with it. JSON files (``--scores
s.json``, evaluation files) and the public datasets stay UTF-8.
"""
from __future__ import annotations

import argparse

from ..errors import InputError
from ..readers.text import check_encoding

HELP = ("encoding of the input text files (default: utf-8), e.g. latin-1 or cp1252; or convert a file first: "
        "iconv -f latin1 -t utf-8 IN > OUT")


def _encoding(name: str) -> str:
    try:
        return check_encoding(name)
    except InputError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_encoding_argument(p: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """Add ``--encoding NAME`` (checked against Python's codecs when parsed)."""
    p.add_argument("--encoding", type=_encoding, metavar="NAME", help=HELP)
