"""Line-by-line text filters for verbs that rewrite sentences (transfer, lexicon apply)."""
from __future__ import annotations

import sys
from typing import Callable


def map_lines(source: str, output: str | None, rewrite: Callable[[str], str]) -> None:
    """Apply ``rewrite`` to every line of ``source`` ('-': standard input), writing to ``output`` or stdout."""
    from ..readers.text import read_lines

    lines = sys.stdin.read().splitlines() if source == "-" else read_lines(source)
    text = "".join(rewrite(line) + "\n" for line in lines)
    if output:
        with open(output, "w", encoding="utf-8") as fh:
            fh.write(text)
    else:
        sys.stdout.write(text)
