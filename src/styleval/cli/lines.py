"""Line-by-line text filters for verbs that rewrite sentences (transfer, lexicon apply)."""
from __future__ import annotations

import sys
from typing import Callable, Sequence


def input_lines(source: str) -> list[str]:
    """The lines of ``source`` ('-': standard input), decoded as every input file is (``--encoding``)."""
    from ..readers.text import decode, input_encoding, read_lines, split_lines

    if source == "-":
        return split_lines(decode(sys.stdin.buffer.read(), "<stdin>", input_encoding()))
    return read_lines(source)


def map_lines(source: str, output: str | None, rewrite: Callable[[str], str],
              inputs: Sequence[tuple[str, str]] = ()) -> None:
    """Apply ``rewrite`` to every line of ``source`` ('-': standard input), writing to ``output`` or stdout.
    ``output`` is checked first (see :mod:`styleval.outputs`): it must not be ``source`` or one of ``inputs``."""
    from ..outputs import check_destinations, write_text

    check_destinations(("--output", output), inputs=[("input", source), *inputs])
    lines = input_lines(source)
    text = "".join(rewrite(line) + "\n" for line in lines)
    if output:
        write_text(output, text)
    else:
        sys.stdout.write(text)
