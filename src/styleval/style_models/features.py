"""Feature blocks of style models, each stored as plain numbers (JSON + arrays), never as pickles.

* :class:`TfidfBlock`: word and character n-gram TF-IDF (scikit-learn's vectorizer rebuilt from its vocabulary
  and idf weights, so a model loads under any scikit-learn version);
* :class:`EmbeddingBlock`: unit-normalised sentence embeddings (MiniLM by default, through the model pool);
* :class:`HandBlock`: standardised surface features of formality (capitalisation, punctuation, contractions,
  slang rate...);
* :class:`CaseCueBlock`: standardised cues that only cased, untokenized text carries (capitals at sentence starts,
  the pronoun ``i`` in lower case, tokenization artefacts, contractions with or without their apostrophe).

A block has ``fit(texts)``, ``transform(texts) -> matrix``, ``config()`` (JSON), ``arrays()`` and
``from_stored(config, arrays, vocab)``.
"""
from __future__ import annotations

import math
import re
from typing import Any, ClassVar, Sequence

import numpy as np
import scipy.sparse as sp

from ..errors import InputError

WORD_PATTERN = r"(?u)\b\w+\b|[^\w\s]"


class Block:
    """Base class of feature blocks."""

    kind: ClassVar[str]

    def fit(self, texts: Sequence[str]) -> "Block":
        return self

    def transform(self, texts: Sequence[str]) -> sp.csr_matrix:
        raise NotImplementedError

    def config(self) -> dict[str, Any]:
        return {"kind": self.kind}

    def arrays(self) -> dict[str, np.ndarray]:
        return {}

    def vocabularies(self) -> dict[str, list[str]]:
        return {}

    def resources(self) -> dict[str, str]:
        return {}

    @property
    def dim(self) -> int:
        raise NotImplementedError


# -- TF-IDF ----------------------------------------------------------------------------------------------
class TfidfBlock(Block):
    """Word n-grams (lower-cased, punctuation kept as tokens) and character n-grams within word boundaries
    (case kept, so capitalisation counts), sublinear TF, L2-normalised per analyzer."""

    kind = "tfidf"

    def __init__(self, *, word_ngrams: tuple[int, int] = (1, 2), char_ngrams: tuple[int, int] | None = (2, 5),
                 min_df: int = 2, max_word_features: int | None = 50000,
                 max_char_features: int | None = 100000) -> None:
        self.word_ngrams = tuple(word_ngrams)
        self.char_ngrams = tuple(char_ngrams) if char_ngrams else None
        self.min_df = min_df
        self.max_word_features = max_word_features
        self.max_char_features = max_char_features
        self._vecs: dict[str, Any] = {}

    def _params(self, part: str) -> dict[str, Any]:
        if part == "word":
            return dict(analyzer="word", token_pattern=WORD_PATTERN, lowercase=True, ngram_range=self.word_ngrams,
                        sublinear_tf=True, dtype=np.float32)
        return dict(analyzer="char_wb", lowercase=False, ngram_range=self.char_ngrams, sublinear_tf=True,
                    dtype=np.float32)

    def _parts(self) -> list[str]:
        return ["word"] + (["char"] if self.char_ngrams else [])

    def fit(self, texts: Sequence[str]) -> "TfidfBlock":
        from sklearn.feature_extraction.text import TfidfVectorizer

        for part in self._parts():
            cap = self.max_word_features if part == "word" else self.max_char_features
            vec = TfidfVectorizer(min_df=self.min_df, max_features=cap, **self._params(part))
            vec.fit(texts)
            self._vecs[part] = vec
        return self

    def transform(self, texts: Sequence[str]) -> sp.csr_matrix:
        if not self._vecs:
            raise RuntimeError("TfidfBlock is not fitted")
        return sp.hstack([self._vecs[p].transform(texts) for p in self._parts()], format="csr")

    @property
    def dim(self) -> int:
        return sum(len(self._vecs[p].vocabulary_) for p in self._parts())

    def config(self) -> dict[str, Any]:
        return {"kind": self.kind, "word_ngrams": list(self.word_ngrams),
                "char_ngrams": list(self.char_ngrams) if self.char_ngrams else None, "min_df": self.min_df,
                "max_word_features": self.max_word_features, "max_char_features": self.max_char_features}

    def vocabularies(self) -> dict[str, list[str]]:
        out = {}
        for p in self._parts():
            vocab = self._vecs[p].vocabulary_
            terms = [""] * len(vocab)
            for term, i in vocab.items():
                terms[i] = term
            out[p] = terms
        return out

    def arrays(self) -> dict[str, np.ndarray]:
        return {f"idf_{p}": np.asarray(self._vecs[p].idf_, dtype=np.float64) for p in self._parts()}

    @classmethod
    def from_stored(cls, config: dict[str, Any], arrays: dict[str, np.ndarray], vocab: dict[str, list[str]]
                    ) -> "TfidfBlock":
        from sklearn.feature_extraction.text import TfidfVectorizer

        block = cls(word_ngrams=tuple(config["word_ngrams"]),
                    char_ngrams=tuple(config["char_ngrams"]) if config.get("char_ngrams") else None,
                    min_df=config.get("min_df", 1), max_word_features=config.get("max_word_features"),
                    max_char_features=config.get("max_char_features"))
        for p in block._parts():
            terms = vocab[p]
            vec = TfidfVectorizer(vocabulary={t: i for i, t in enumerate(terms)}, **block._params(p))
            vec.idf_ = arrays[f"idf_{p}"]
            block._vecs[p] = vec
        return block


# -- sentence embeddings ---------------------------------------------------------------------------------
def encoder_identity(model: str) -> dict[str, str]:
    """The resources entry of a block built on an encoder: its name and content hash."""
    from ..models.spec import model_spec

    ident = model_spec(model).identity()
    return {"encoder": ident["model"], "encoder_hash": ident["model_hash"]}


def encode(model: str, texts: Sequence[str], batch_size: int = 64) -> np.ndarray:
    """Unit-normalised sentence embeddings, through the model pool and the shared embedding cache."""
    from ..models.encoder import encode_sentences, sentence_encoder
    from ..models.passes import timed
    from ..models.pool import embedding_cache
    from ..models.spec import model_spec

    spec = model_spec(model)
    encoder = sentence_encoder(model)
    max_len = int(getattr(encoder, "max_seq_length", 0) or 0)
    ns = f"st:{spec.content_hash()}:{max_len}"  # the namespace sentence_cosine uses
    distinct = list(dict.fromkeys(texts))
    cache = embedding_cache()
    found = cache.get_many(ns, distinct)
    todo = sorted((t for t in distinct if t not in found), key=len, reverse=True)
    if todo:
        with timed("model", f"sentence encoder {model}", len(todo)):
            vecs = encode_sentences(encoder, todo, batch_size)
        new = {t: np.asarray(v, dtype=np.float32) for t, v in zip(todo, vecs)}
        cache.put_many(ns, new)
        found.update(new)
    if not distinct:
        return np.zeros((0, 0), dtype=np.float32)
    return np.stack([found[t] for t in texts]).astype(np.float32)


class EmbeddingBlock(Block):
    """Sentence embeddings of ``model`` (a catalog name or a local folder), times ``scale``."""

    kind = "embedding"

    def __init__(self, *, model: str = "minilm", scale: float = 1.0) -> None:
        self.model = model
        self.scale = float(scale)
        self._dim = 0

    def transform(self, texts: Sequence[str]) -> sp.csr_matrix:
        emb = encode(self.model, texts) * self.scale
        self._dim = emb.shape[1] if emb.size else self._dim
        return sp.csr_matrix(emb)

    def fit(self, texts: Sequence[str]) -> "EmbeddingBlock":
        self._dim = int(encode(self.model, list(texts[:1])).shape[1]) if len(texts) else 0
        return self

    @property
    def dim(self) -> int:
        return self._dim

    def config(self) -> dict[str, Any]:
        return {"kind": self.kind, "model": self.model, "scale": self.scale, "dim": self._dim}

    def resources(self) -> dict[str, str]:
        return encoder_identity(self.model)

    @classmethod
    def from_stored(cls, config: dict[str, Any], arrays: dict[str, np.ndarray], vocab: dict[str, list[str]]
                    ) -> "EmbeddingBlock":
        block = cls(model=config.get("model", "minilm"), scale=config.get("scale", 1.0))
        block._dim = int(config.get("dim", 0))
        return block


# -- hand features of formality --------------------------------------------------------------------------
_TOKEN = re.compile(r"\w+(?:'\w+)?|n't|'\w+|[^\w\s]")
CONTRACTIONS = frozenset("n't 'm 're 's 'll 've 'd dont cant wont im ive youre thats isnt didnt doesnt "
                         "wasnt aint gonna wanna gotta".split())
SLANG = frozenset("""lol lmao rofl omg btw idk imo imho tbh u ur r ya yah yeah yep yup nope ok okay k kinda sorta
dude guy guys hey hi hello haha hahaha hehe wow yay ugh damn crap cool awesome stuff thing things lots gonna wanna
gotta y'all cuz coz cause thx thanks pls plz luv xd bro omfg wtf hell oh ah um uh hmm well like really so just
pretty totally""".split())
INFORMAL_PRONOUNS = frozenset("i me my mine you your yours u ur we us our".split())
_EMOTICON = re.compile(r"[:;=8][\-o']?[)(\]\[dDpP/\\|]|<3|\^_\^")
_ELONGATED = re.compile(r"(\w)\1\1")
_REPEAT_PUNCT = re.compile(r"([!?.])\s*\1")

HAND_FEATURES = ("log_tokens", "mean_word_len", "punct_rate", "first_upper", "all_lower", "upper_char_rate",
                 "allcaps_word_rate", "exclaim", "question", "repeated_punct", "ellipsis", "contraction_rate",
                 "slang_rate", "pronoun_rate", "lower_i", "ends_period", "no_final_punct", "emoticons",
                 "elongated", "digit_rate", "type_token", "starts_conj", "capitalised_word_rate")


def hand_features(text: str) -> list[float]:
    """Surface features of one text, in the order of :data:`HAND_FEATURES`."""
    toks = _TOKEN.findall(text)
    words = [t for t in toks if t[0].isalnum() or t[0] == "'"]
    n, nw = max(len(toks), 1), max(len(words), 1)
    letters = [c for c in text if c.isalpha()]
    lower = [w.lower() for w in words]
    stripped = text.strip()
    last = stripped[-1:] if stripped else ""
    return [
        math.log1p(len(toks)),
        sum(len(w) for w in words) / nw,
        (len(toks) - len(words)) / n,
        float(bool(stripped) and stripped[0].isupper()),
        float(bool(letters) and not any(c.isupper() for c in letters)),
        sum(c.isupper() for c in letters) / max(len(letters), 1),
        sum(len(w) > 1 and w.isupper() for w in words) / nw,
        math.log1p(text.count("!")),
        math.log1p(text.count("?")),
        math.log1p(len(_REPEAT_PUNCT.findall(text))),
        float("..." in text or ". . ." in text),
        sum(w in CONTRACTIONS for w in lower) / nw,
        sum(w in SLANG for w in lower) / nw,
        sum(w in INFORMAL_PRONOUNS for w in lower) / nw,
        float(" i " in f" {text} "),
        float(last == "."),
        float(bool(last) and last not in ".!?\"')"),
        math.log1p(len(_EMOTICON.findall(text))),
        math.log1p(len(_ELONGATED.findall(text))),
        sum(c.isdigit() for c in text) / max(len(text), 1),
        len(set(lower)) / nw,
        float(bool(lower) and lower[0] in ("and", "but", "so", "or", "well", "plus", "because")),
        sum(w[0].isupper() for w in words[1:]) / nw,
    ]


class HandBlock(Block):
    """:func:`hand_features`, standardised with the training mean and standard deviation, times ``scale``. A
    subclass with other cues sets ``kind``, ``names``, ``cues`` and ``what``."""

    kind = "hand"
    names: tuple[str, ...] = HAND_FEATURES
    cues = staticmethod(hand_features)
    what = "hand features"  # in the error for a stored model whose cues differ

    def __init__(self, *, scale: float = 1.0) -> None:
        self.scale = float(scale)
        self.mean = np.zeros(len(self.names))
        self.std = np.ones(len(self.names))

    @classmethod
    def raw(cls, texts: Sequence[str]) -> np.ndarray:
        return np.array([cls.cues(t) for t in texts], dtype=np.float64).reshape(len(texts), len(cls.names))

    def fit(self, texts: Sequence[str]) -> "HandBlock":
        x = self.raw(texts)
        self.mean = x.mean(axis=0)
        std = x.std(axis=0)
        self.std = np.where(std > 1e-9, std, 1.0)
        return self

    def transform(self, texts: Sequence[str]) -> sp.csr_matrix:
        return sp.csr_matrix((self.raw(texts) - self.mean) / self.std * self.scale)

    @property
    def dim(self) -> int:
        return len(self.names)

    def config(self) -> dict[str, Any]:
        return {"kind": self.kind, "scale": self.scale, "features": list(self.names)}

    def arrays(self) -> dict[str, np.ndarray]:
        return {"mean": self.mean, "std": self.std}

    @classmethod
    def from_stored(cls, config: dict[str, Any], arrays: dict[str, np.ndarray], vocab: dict[str, list[str]]
                    ) -> "HandBlock":
        if list(config.get("features", cls.names)) != list(cls.names):
            raise InputError(f"the model's {cls.what} differ from this styleval version's; retrain it")
        block = cls(scale=config.get("scale", 1.0))
        block.mean, block.std = arrays["mean"], arrays["std"]
        return block


# -- case cues --------------------------------------------------------------------------------------------------------
_SENTENCE_START = re.compile(r"(?:^|[.!?]+[\s\"')\]]+)\W*?([^\W\d_])", re.UNICODE)
_PRONOUN_I = re.compile(r"(?<![\w'])([iI])(?=(?:'(?:m|ve|d|ll))?(?![\w']))")
_SPACE_PUNCT = re.compile(r"\w [.,!?;:]")
_SPLIT_CLITIC = re.compile(r"\w (?:n't|'(?:s|re|ve|m|ll|d))\b", re.IGNORECASE)
_JOINED_CLITIC = re.compile(r"\w(?:n't|'(?:s|re|ve|m|ll|d))\b", re.IGNORECASE)
NO_APOSTROPHE = frozenset("dont cant wont im ive youre thats isnt didnt doesnt wasnt arent werent couldnt wouldnt "
                          "shouldnt hes shes theyre whats theres lets ill id youll youve weve".split())

CASE_CUES = ("sentence_starts_upper", "pronoun_i_lower", "pronoun_i_upper", "space_before_punct", "split_clitic",
             "joined_contraction", "apostrophe_dropped", "comma_rate")


def case_cues(text: str) -> list[float]:
    """Cues of one text that its casing and spacing carry, in the order of :data:`CASE_CUES`: the share of its
    sentences that start with a capital (1 when none starts with a letter), the pronoun ``i`` in lower and upper
    case, spaces before punctuation and split clitics (tokenization artefacts), contractions written as one word,
    contractions without their apostrophe (``dont``) and commas, each per word."""
    words = _TOKEN.findall(text)
    nw = max(sum(1 for t in words if t[0].isalnum() or t[0] == "'"), 1)
    starts = _SENTENCE_START.findall(text)
    pronouns = _PRONOUN_I.findall(text)
    lower = [w.lower() for w in re.findall(r"[\w']+", text)]
    return [
        sum(c.isupper() for c in starts) / len(starts) if starts else 1.0,
        sum(p == "i" for p in pronouns) / nw,
        sum(p == "I" for p in pronouns) / nw,
        len(_SPACE_PUNCT.findall(text)) / nw,
        len(_SPLIT_CLITIC.findall(text)) / nw,
        len(_JOINED_CLITIC.findall(text)) / nw,
        sum(w in NO_APOSTROPHE for w in lower) / nw,
        text.count(",") / nw,
    ]


class CaseCueBlock(HandBlock):
    """:func:`case_cues`, standardised with the training mean and standard deviation, times ``scale``: what a cased
    model can see that an uncased encoder cannot."""

    kind = "case-cues"
    names = CASE_CUES
    cues = staticmethod(case_cues)
    what = "case cues"


BLOCKS: dict[str, type[Block]] = {"tfidf": TfidfBlock, "embedding": EmbeddingBlock, "hand": HandBlock,
                                  "case-cues": CaseCueBlock}


def make_block(spec: str, **options: Any) -> Block:
    """A block by kind name (``tfidf``, ``embedding``, ``hand``)."""
    try:
        cls = BLOCKS[spec]
    except KeyError:
        raise InputError(f"unknown feature block {spec!r}; available: {', '.join(BLOCKS)}") from None
    return cls(**options)
