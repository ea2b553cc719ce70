"""The help text of every option that takes a transfer direction: the shell-safe colon form first."""
from __future__ import annotations

METAVAR = "SRC:TGT"


def direction_help(example: str = "informal:formal", lead: str = "transfer direction") -> str:
    """``lead``, an example in the colon form, and a word that the quoted arrow form is read the same."""
    arrow = example.replace(":", "->")
    return f"{lead}, e.g. {example} (or, quoted, '{arrow}': an unquoted > is a shell redirect)"
