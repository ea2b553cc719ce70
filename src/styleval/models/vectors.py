"""Static word vectors: a vocabulary (word -> row) and a matrix, memory-mapped where the format allows.

Loaders are written here (gensim is not a dependency): the GloVe package's ``.npy`` + parquet index
(memory-mapped), word2vec text (``<count> <dim>`` header), word2vec binary (``.bin``: header, then each
word, a space and ``dim`` little-endian float32), and GloVe text (``word v1 ... vd`` per line).
When a word occurs twice, its first row wins (as in gensim).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

from ..errors import InputError


@dataclass
class WordVectors:
    """Word vectors: ``vocab`` maps a word to its row of ``matrix`` (shape (n_words, dim))."""

    vocab: dict[str, int]
    matrix: np.ndarray
    source: str = ""
    _mean: np.ndarray | None = field(default=None, repr=False)

    @property
    def dim(self) -> int:
        return int(self.matrix.shape[1])

    def __len__(self) -> int:
        return len(self.vocab)

    def __contains__(self, word: object) -> bool:
        return word in self.vocab

    def indices(self, tokens: Iterable[str]) -> tuple[list[int], list[str]]:
        """Row indices of in-vocabulary tokens (in order) and the out-of-vocabulary tokens."""
        idx, oov = [], []
        get = self.vocab.get
        for t in tokens:
            i = get(t)
            if i is None:
                oov.append(t)
            else:
                idx.append(i)
        return idx, oov

    def lookup(self, tokens: Sequence[str]) -> tuple[np.ndarray, list[str]]:
        """Matrix rows (float64, shape (k, dim)) of the in-vocabulary tokens, and the OOV tokens."""
        idx, oov = self.indices(tokens)
        rows = np.asarray(self.matrix[np.asarray(idx, dtype=np.int64)], dtype=np.float64) if idx else \
            np.zeros((0, self.dim))
        return rows, oov

    def mean_vector(self) -> np.ndarray:
        """Mean of all vectors (nlg-eval's vector for unknown words); computed once."""
        if self._mean is None:
            acc = np.zeros(self.dim, dtype=np.float64)
            step = 65536
            for i in range(0, self.matrix.shape[0], step):
                acc += np.asarray(self.matrix[i:i + step], dtype=np.float64).sum(axis=0)
            self._mean = acc / max(1, self.matrix.shape[0])
        return self._mean


def _vocab_from_words(words: Iterable[str]) -> dict[str, int]:
    vocab: dict[str, int] = {}
    for i, w in enumerate(words):
        vocab.setdefault(w, i)
    return vocab


def load_glove_package(folder: str | Path) -> WordVectors:
    """``<folder>/*_emb.npy`` memory-mapped, words from ``<folder>/*_index.parquet`` (column ``index``)."""
    folder = Path(folder)
    embs = sorted(folder.glob("*_emb.npy"))
    index = sorted(folder.glob("*_index.parquet"))
    if len(embs) != 1 or len(index) != 1:
        raise InputError("expected exactly one *_emb.npy and one *_index.parquet file", folder)
    import pyarrow.parquet as pq

    words = pq.read_table(index[0], columns=["index"]).column(0).to_pylist()
    matrix = np.load(embs[0], mmap_mode="r")
    if matrix.ndim != 2 or matrix.shape[0] != len(words):
        raise InputError(f"{embs[0].name} has shape {matrix.shape} but the index lists {len(words)} words", folder)
    return WordVectors(_vocab_from_words(str(w) for w in words), matrix, source=str(folder))


def _parse_text(lines: Iterable[bytes], path: Path, dim: int | None, first_line: int) -> tuple[list[str], np.ndarray]:
    words: list[str] = []
    rows: list[np.ndarray] = []
    for lineno, raw in enumerate(lines, start=first_line):
        line = raw.rstrip(b"\r\n")
        if not line.strip():
            continue
        parts = line.rstrip().split(b" ")
        if dim is None:
            dim = len(parts) - 1
            if dim < 1:
                raise InputError("no vector values on the line", path, lineno)
        if len(parts) != dim + 1:  # words may contain spaces in some GloVe files: the vector is the tail
            if len(parts) < dim + 1:
                raise InputError(f"expected {dim} values, found {len(parts) - 1}", path, lineno)
            parts = [b" ".join(parts[: len(parts) - dim])] + parts[len(parts) - dim:]
        try:
            rows.append(np.array(parts[1:], dtype=np.float32))
        except ValueError:
            raise InputError("vector values are not numbers", path, lineno) from None
        words.append(parts[0].decode("utf-8", errors="replace"))
    matrix = np.vstack(rows) if rows else np.zeros((0, dim or 0), dtype=np.float32)
    return words, matrix


def load_word2vec_text(path: str | Path) -> WordVectors:
    path = Path(path)
    with open(path, "rb") as fh:
        header = fh.readline().split()
        if len(header) != 2:
            raise InputError("word2vec text files start with '<count> <dim>'", path, 1)
        count, dim = int(header[0]), int(header[1])
        words, matrix = _parse_text(fh, path, dim, first_line=2)
    if len(words) != count:
        raise InputError(f"the header says {count} words but the file holds {len(words)}", path)
    return WordVectors(_vocab_from_words(words), matrix, source=str(path))


def load_glove_text(path: str | Path) -> WordVectors:
    path = Path(path)
    with open(path, "rb") as fh:
        words, matrix = _parse_text(fh, path, None, first_line=1)
    return WordVectors(_vocab_from_words(words), matrix, source=str(path))


def load_word2vec_binary(path: str | Path) -> WordVectors:
    """The C word2vec binary format: ``<count> <dim>\\n`` then per word ``word<space><dim float32>[\\n]``."""
    path = Path(path)
    data = np.memmap(path, dtype=np.uint8, mode="r")
    buf = memoryview(data)  # type: ignore[arg-type]  # numpy memmaps export the buffer protocol
    nl = bytes(buf[:256]).find(b"\n")
    header = bytes(buf[:nl]).split() if nl > 0 else []
    if len(header) != 2:
        raise InputError("word2vec binary files start with '<count> <dim>\\n'", path)
    count, dim = int(header[0]), int(header[1])
    pos = nl + 1
    nbytes = 4 * dim
    words: list[str] = []
    offsets = np.empty(count, dtype=np.int64)
    raw = bytes(buf)  # one copy; word boundaries need byte search
    for i in range(count):
        while pos < len(raw) and raw[pos] in (0x0A, 0x0D, 0x20):  # newline after the previous vector
            pos += 1
        sp = raw.find(b" ", pos)
        if sp < 0 or sp + 1 + nbytes > len(raw):
            raise InputError(f"truncated file: word {i + 1} of {count}", path)
        words.append(raw[pos:sp].decode("utf-8", errors="replace"))
        offsets[i] = sp + 1
        pos = sp + 1 + nbytes
    matrix = np.empty((count, dim), dtype=np.float32)
    for i, off in enumerate(offsets):
        matrix[i] = np.frombuffer(raw, dtype="<f4", count=dim, offset=int(off))
    return WordVectors(_vocab_from_words(words), matrix, source=str(path))


def save_word2vec_binary(vectors: WordVectors, path: str | Path) -> None:
    """Write word2vec binary (used by tests and for converting text files once)."""
    inv = sorted(vectors.vocab.items(), key=lambda kv: kv[1])
    with open(path, "wb") as fh:
        fh.write(f"{len(inv)} {vectors.dim}\n".encode())
        for word, i in inv:
            fh.write(word.encode("utf-8") + b" " + np.asarray(vectors.matrix[i], dtype="<f4").tobytes() + b"\n")


def load_vectors(path: str | Path, fmt: str) -> WordVectors:
    from .spec import GLOVE_NPY, GLOVE_TEXT, WORD2VEC_BINARY, WORD2VEC_TEXT

    loaders = {GLOVE_NPY: load_glove_package, WORD2VEC_TEXT: load_word2vec_text,
               WORD2VEC_BINARY: load_word2vec_binary, GLOVE_TEXT: load_glove_text}
    if fmt not in loaders:
        raise InputError(f"unknown word-vector format {fmt!r}; known: {', '.join(loaders)}")
    p = Path(path)
    if fmt == GLOVE_NPY and p.is_file():
        p = p.parent
    return loaders[fmt](p)
