"""Style masking (Mir et al. 2019): hide style-bearing words so that content is judged apart from style."""
from __future__ import annotations

import re
from typing import Iterable

MASK = "[\u2026]"

#: A small built-in list of sentiment and formality markers; campaigns may give their own list.
DEFAULT_STYLE_WORDS = frozenset("""
good great excellent amazing awesome wonderful fantastic lovely best nice delicious friendly perfect love loved
loves enjoy enjoyed happy glad pleasant fresh tasty superb bad terrible awful horrible worst poor rude disgusting
hate hated hates boring bland stale dirty slow sad angry disappointing disappointed mediocre gross cold
gonna wanna gotta kinda ya u ur lol omg btw dunno cool yeah yep nope stuff guys hey totally really super
sir madam kindly therefore however furthermore regards sincerely certainly indeed appreciate
""".split())

_WORD = re.compile(r"[A-Za-z']+")


def mask_style(text: str, words: Iterable[str] | None = None) -> str:
    """``text`` with every word in ``words`` (case-insensitive; default :data:`DEFAULT_STYLE_WORDS`) masked."""
    vocab = DEFAULT_STYLE_WORDS if words is None else frozenset(w.lower() for w in words)
    return _WORD.sub(lambda m: MASK if m.group(0).lower() in vocab else m.group(0), text)
