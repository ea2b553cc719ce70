"""The number of TER edits of one hypothesis against one reference, exactly as sacrebleu counts them, faster.

sacrebleu (``sacrebleu.metrics.lib_ter``) searches shifts greedily, Tercom style: at each step it aligns the
hypothesis with the reference (a beam edit distance whose trace gives the alignment), tries every shift of a
matching word span, keeps the one that lowers the edit distance most (ties: longer span, earlier start, earlier
target), and stops when no shift helps or after 1,000 tried candidates. This module runs the same search with
the same tie-breaking and the same limits and returns the same count; it differs only in how it computes:

* words become one character each (a reference word its own code point, any hypothesis word absent from the
  reference one shared code point: edit distances and matches only ever compare a hypothesis word with a
  reference word), so a shifted hypothesis is a string slice;
* when sacrebleu's beam covers every cell of the edit-distance matrix (sentences up to ~25 words), a candidate's
  edit distance is the plain Levenshtein distance, computed by rapidfuzz (already a dependency) instead of a
  Python matrix; longer sentences run sacrebleu's beam recurrence on integer rows with the same prefix cache;
* the trace that gives the alignment (needed once per accepted shift, not per candidate) uses sacrebleu's
  preference order among equal-cost operations, so the alignment and hence every later choice are the same;
* matching spans are enumerated from each hypothesis word's positions in the reference instead of every pair
  of positions, in the same order.

``tests/test_lexical_metrics.py`` checks segment and corpus TER against sacrebleu on real data.
"""
from __future__ import annotations

import math
from functools import lru_cache

from rapidfuzz.distance import Levenshtein

# sacrebleu's (Tercom's) limits; changing any of them changes scores
MAX_SHIFT_SIZE = 10
MAX_SHIFT_DIST = 50
BEAM_WIDTH = 25
MAX_SHIFT_CANDIDATES = 1000
_INF = int(1e16)
_MAX_CACHE_ROWS = 10000

# trace operations, named as in sacrebleu (the trace rewrites the hypothesis into the reference)
_NOP, _SUB, _INS, _DEL = " ", "s", "i", "d"

_UNKNOWN = "\x00"  # a hypothesis word that occurs nowhere in the reference
_FIRST_CODE = 1
_SURROGATES = range(0xD800, 0xE000)


def encode(words_hyp: list[str], words_ref: list[str]) -> tuple[str, str] | None:
    """The two word sequences as strings with one character per word, or None if the reference has too many
    distinct words to give each a code point."""
    codes: dict[str, str] = {}
    next_code = _FIRST_CODE
    ref_chars = []
    for w in words_ref:
        c = codes.get(w)
        if c is None:
            if next_code in _SURROGATES:
                next_code = _SURROGATES.stop
            if next_code > 0x10FFFF:
                return None
            c = codes[w] = chr(next_code)
            next_code += 1
        ref_chars.append(c)
    return "".join(codes.get(w, _UNKNOWN) for w in words_hyp), "".join(ref_chars)


@lru_cache(maxsize=4096)
def _beam_bounds(n_h: int, n_r: int) -> tuple[tuple[tuple[int, int], ...], bool]:
    """sacrebleu's beam: the columns ``[min_j, max_j)`` computed in each row 1..n_h, and whether they cover
    the whole matrix (then the beam distance is the plain Levenshtein distance)."""
    ratio = n_r / n_h if n_h else 1
    beam = math.ceil(ratio / 2 + BEAM_WIDTH) if BEAM_WIDTH < ratio / 2 else BEAM_WIDTH
    bounds = []
    full = True
    for i in range(1, n_h + 1):
        diag = math.floor(i * ratio)
        lo = max(0, diag - beam)
        hi = n_r + 1 if i == n_h else min(n_r + 1, diag + beam)
        bounds.append((lo, hi))
        full = full and lo == 0 and hi == n_r + 1
    return tuple(bounds), full


class _BeamDistance:
    """Edit distances of hypotheses of one length against one reference, as sacrebleu's BeamEditDistance
    computes them (integer rows, a prefix trie of computed rows)."""

    def __init__(self, ref: str, n_h: int) -> None:
        self.ref = ref
        self.n_r = len(ref)
        self.bounds, self.full = _beam_bounds(n_h, self.n_r)
        self._initial = list(range(self.n_r + 1))
        self._trie: dict[str, tuple[dict, list[int]]] = {}
        self._rows = 0

    def distance(self, hyp: str) -> int:
        if self.full:
            return Levenshtein.distance(hyp, self.ref)
        node, row, start = self._trie, self._initial, 0
        for ch in hyp:
            hit = node.get(ch)
            if hit is None:
                break
            node, row = hit
            start += 1
        ref, bounds, n_r = self.ref, self.bounds, self.n_r
        for i in range(start, len(hyp)):
            ch = hyp[i]
            lo, hi = bounds[i]
            new = [_INF] * (n_r + 1)
            for j in range(lo, hi):
                if j == 0:
                    new[0] = row[0] + 1
                    continue
                best = row[j - 1] + (0 if ch == ref[j - 1] else 1)
                up = row[j] + 1
                if up < best:
                    best = up
                left = new[j - 1] + 1
                if left < best:
                    best = left
                if best < new[j]:
                    new[j] = best
            row = new
            if self._rows < _MAX_CACHE_ROWS:
                child: tuple[dict, list[int]] = ({}, row)
                node[ch] = child
                node = child[0]
                self._rows += 1
        return row[n_r]

    def trace(self, hyp: str) -> tuple[int, str]:
        """The distance and sacrebleu's trace of operations (same preference among equal costs: no-op or
        substitution, then deletion, then insertion)."""
        ref, n_r = self.ref, self.n_r
        cost = [list(range(n_r + 1))]
        ops = [_INS * (n_r + 1)]
        for i, ch in enumerate(hyp):
            lo, hi = self.bounds[i]
            prev = cost[-1]
            new = [_INF] * (n_r + 1)
            op_row = ["x"] * (n_r + 1)
            for j in range(lo, hi):
                if j == 0:
                    new[0], op_row[0] = prev[0] + 1, _DEL
                    continue
                if ch == ref[j - 1]:
                    best, op = prev[j - 1], _NOP
                else:
                    best, op = prev[j - 1] + 1, _SUB
                if prev[j] + 1 < best:
                    best, op = prev[j] + 1, _DEL
                if new[j - 1] + 1 < best:
                    best, op = new[j - 1] + 1, _INS
                if best < new[j]:
                    new[j], op_row[j] = best, op
            cost.append(new)
            ops.append("".join(op_row))
        out = []
        i, j = len(hyp), n_r
        while i > 0 or j > 0:
            op = ops[i][j]
            out.append(op)
            if op == _NOP or op == _SUB:
                i -= 1
                j -= 1
            elif op == _INS:
                j -= 1
            elif op == _DEL:
                i -= 1
            else:  # pragma: no cover - sacrebleu raises here too
                raise RuntimeError(f"TER: no operation at ({i}, {j})")
        return cost[-1][n_r], "".join(reversed(out))


def _alignment(trace: str) -> tuple[list[int], list[int], list[int]]:
    """From sacrebleu's trace (flipped: rewriting the reference into the hypothesis): the hypothesis position
    aligned with each reference position, and cumulative error counts over reference and hypothesis."""
    align: list[int] = []
    ref_err = [0]
    hyp_err = [0]
    pos_h = -1
    for op in trace:
        if op == _NOP or op == _SUB:  # flipped: same meaning
            pos_h += 1
            align.append(pos_h)
            e = 0 if op == _NOP else 1
            hyp_err.append(hyp_err[-1] + e)
            ref_err.append(ref_err[-1] + e)
        elif op == _DEL:  # a deletion from the hypothesis is an insertion when flipped
            pos_h += 1
            hyp_err.append(hyp_err[-1] + 1)
        else:  # insertion into the hypothesis: a deletion when flipped
            align.append(pos_h)
            ref_err.append(ref_err[-1] + 1)
    return align, ref_err, hyp_err


def _shift(hyp: str, ref: str, positions: dict[str, list[int]], ed: _BeamDistance, checked: int
           ) -> tuple[int, str, int]:
    """One step of the greedy shift search: (gain, shifted hypothesis, candidates checked so far)."""
    pre, trace = ed.trace(hyp)
    align, ref_err, hyp_err = _alignment(trace)
    n_h, n_r = len(hyp), len(ref)
    best: tuple[int, int, int, int] | None = None
    best_words = hyp
    distance = ed.distance
    for start_h in range(n_h):
        starts_r = positions.get(hyp[start_h])
        if not starts_r:
            continue
        for start_r in starts_r:
            if abs(start_r - start_h) > MAX_SHIFT_DIST:
                continue
            length = 0
            while length < MAX_SHIFT_SIZE and hyp[start_h + length] == ref[start_r + length]:
                length += 1
                # the span [start_h, start_h+length) matches [start_r, start_r+length)
                if (hyp_err[start_h + length] - hyp_err[start_h] != 0
                        and ref_err[start_r + length] - ref_err[start_r] != 0
                        and not start_h <= align[start_r] < start_h + length):
                    prev_idx = -1
                    for offset in range(-1, length):
                        idx = 0 if start_r + offset == -1 else align[start_r + offset] + 1
                        if idx == prev_idx:
                            continue
                        prev_idx = idx
                        shifted = _perform_shift(hyp, start_h, length, idx)
                        key = (pre - distance(shifted), length, -start_h, -idx)
                        checked += 1
                        if best is None or key > best:
                            best, best_words = key, shifted
                if checked >= MAX_SHIFT_CANDIDATES:
                    break
                if n_h == start_h + length or n_r == start_r + length:
                    break
            if checked >= MAX_SHIFT_CANDIDATES:
                break
        if checked >= MAX_SHIFT_CANDIDATES:
            break
    if best is None:
        return 0, hyp, checked
    return best[0], best_words, checked


def _perform_shift(words: str, start: int, length: int, target: int) -> str:
    if target < start:
        return words[:target] + words[start:start + length] + words[target:start] + words[start + length:]
    if target > start + length:
        return words[:start] + words[start + length:target] + words[start:start + length] + words[target:]
    return words[:start] + words[start + length:length + target] + words[start:start + length] + words[length + target:]


def ter_edits(words_hyp: list[str], words_ref: list[str]) -> tuple[int, int]:
    """(number of edits, reference length) of ``words_hyp`` against ``words_ref``: sacrebleu's
    ``translation_edit_rate``."""
    n_r = len(words_ref)
    if n_r == 0:
        return len(words_hyp), 0
    encoded = encode(words_hyp, words_ref)
    if encoded is None:  # more distinct reference words than code points: sacrebleu's own search
        from sacrebleu.metrics.lib_ter import translation_edit_rate

        return translation_edit_rate(words_hyp, words_ref)
    hyp, ref = encoded
    if hyp == ref:
        return 0, n_r
    positions: dict[str, list[int]] = {}
    for j, ch in enumerate(ref):
        positions.setdefault(ch, []).append(j)
    ed = _BeamDistance(ref, len(hyp))
    shifts = 0
    checked = 0
    while True:
        gain, shifted, checked = _shift(hyp, ref, positions, ed, checked)
        if checked >= MAX_SHIFT_CANDIDATES or gain <= 0:
            break
        shifts += 1
        hyp = shifted
    return shifts + ed.distance(hyp), n_r
