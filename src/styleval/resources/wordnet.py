"""WordNet for NLTK (METEOR's synonym matching), built from Debian's dictionary files.

No PyPI package ships the WordNet database, and styleval never downloads data at run time
(``nltk.download`` is not used). Debian's ``wordnet-base`` and ``wordnet-sense-index`` packages
install the Princeton WordNet 3.0 dictionary under ``/usr/share/wordnet``; NLTK's
:class:`~nltk.corpus.reader.wordnet.WordNetCorpusReader` reads the same file format from
``<nltk_data>/corpora/wordnet/`` and additionally wants a ``lexnames`` file (the table of the
``lexnames(5WN)`` man page), which Debian does not install.

:func:`ensure_wordnet` builds that NLTK data folder once, atomically, in a cache directory
(``$STYLEVAL_CACHE/nltk_data``, else ``$XDG_CACHE_HOME/styleval/nltk_data``, else
``~/.cache/styleval/nltk_data``), appends it to ``nltk.data.path`` and returns a
:class:`WordNetInfo` (version, path, content hash). :func:`wordnet_reader` returns a reader rooted
at exactly that folder, so that a WordNet found elsewhere on ``nltk.data.path`` cannot change
scores silently.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import stat
import tempfile
import threading
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ResourceUnavailableError

INSTALL_HINT = ("install the Debian WordNet dictionary with `apt-get install wordnet-base wordnet-sense-index`, "
                "then run `styleval setup` (or call styleval.resources.wordnet.ensure_wordnet())")

#: Files NLTK's WordNetCorpusReader opens (``lexnames`` is written by us, not copied).
DICT_FILES: tuple[str, ...] = (
    "data.adj", "data.adv", "data.noun", "data.verb",
    "index.adj", "index.adv", "index.noun", "index.verb",
    "adj.exc", "adv.exc", "noun.exc", "verb.exc",
    "index.sense",
)
#: Copied when present (``cntlist.rev`` gives lemma counts; the reader lists it but only opens it on demand).
OPTIONAL_FILES: tuple[str, ...] = ("cntlist.rev",)

#: Where Debian (and the Princeton tarball) put the dictionary; ``$WNSEARCHDIR`` first.
CANDIDATE_DIRS: tuple[str, ...] = (
    "/usr/share/wordnet",
    "/usr/share/wordnet/dict",
    "/usr/local/WordNet-3.0/dict",
    "/usr/local/share/wordnet",
)

#: The lexicographer files of WordNet 3.0: ``lexnames(5WN)``. Syntactic category 1 noun, 2 verb,
#: 3 adjective, 4 adverb.
LEXNAMES: tuple[tuple[int, str, int], ...] = (
    (0, "adj.all", 3), (1, "adj.pert", 3), (2, "adv.all", 4), (3, "noun.Tops", 1),
    (4, "noun.act", 1), (5, "noun.animal", 1), (6, "noun.artifact", 1), (7, "noun.attribute", 1),
    (8, "noun.body", 1), (9, "noun.cognition", 1), (10, "noun.communication", 1), (11, "noun.event", 1),
    (12, "noun.feeling", 1), (13, "noun.food", 1), (14, "noun.group", 1), (15, "noun.location", 1),
    (16, "noun.motive", 1), (17, "noun.object", 1), (18, "noun.person", 1), (19, "noun.phenomenon", 1),
    (20, "noun.plant", 1), (21, "noun.possession", 1), (22, "noun.process", 1), (23, "noun.quantity", 1),
    (24, "noun.relation", 1), (25, "noun.shape", 1), (26, "noun.state", 1), (27, "noun.substance", 1),
    (28, "noun.time", 1), (29, "verb.body", 2), (30, "verb.change", 2), (31, "verb.cognition", 2),
    (32, "verb.communication", 2), (33, "verb.competition", 2), (34, "verb.consumption", 2),
    (35, "verb.contact", 2), (36, "verb.creation", 2), (37, "verb.emotion", 2), (38, "verb.motion", 2),
    (39, "verb.perception", 2), (40, "verb.possession", 2), (41, "verb.social", 2), (42, "verb.stative", 2),
    (43, "verb.weather", 2), (44, "adj.ppl", 3),
)

MANIFEST = "styleval-wordnet.json"
_BUILD_FORMAT = 1
_VERSION_RE = re.compile(r"WordNet (\d+(?:\.\d+)*\+?) Copyright")
_lock = threading.Lock()
_reader_cache: dict[str, Any] = {}


@dataclass(frozen=True)
class WordNetInfo:
    """Identity of the WordNet NLTK reads."""

    version: str          # e.g. "3.0" (from the licence header of the data files)
    path: Path            # the ``corpora/wordnet`` folder
    sha256: str           # hash over the dictionary files (names and contents) and the lexnames table
    source_dir: Path      # where the dictionary files were taken from

    @property
    def nltk_data(self) -> Path:
        """The folder to put on ``nltk.data.path`` (holds ``corpora/wordnet``)."""
        return self.path.parent.parent

    @property
    def name(self) -> str:
        return f"WordNet {self.version}"

    def __str__(self) -> str:
        return f"{self.name} at {self.path} (sha256 {self.sha256[:16]}, from {self.source_dir})"

    def as_resources(self) -> dict[str, str]:
        """The entries METEOR puts into its signature."""
        return {"wordnet": self.name, "wordnet_sha256": self.sha256[:16]}


def lexnames_text() -> str:
    """The ``lexnames`` file NLTK expects: ``NN<TAB>name<TAB>category`` per line, 45 lines."""
    return "".join(f"{num:02d}\t{name}\t{cat}\n" for num, name, cat in LEXNAMES)


def default_cache_dir() -> Path:
    """``$STYLEVAL_CACHE/nltk_data``, else ``$XDG_CACHE_HOME/styleval/nltk_data``, else
    ``~/.cache/styleval/nltk_data``."""
    if os.environ.get("STYLEVAL_CACHE"):
        return Path(os.environ["STYLEVAL_CACHE"]).expanduser() / "nltk_data"
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base).expanduser() / "styleval" / "nltk_data"


def find_dictionary(dict_dir: str | os.PathLike[str] | None = None) -> Path:
    """The directory holding the WordNet dictionary files; :class:`ResourceUnavailableError` if none."""
    if dict_dir is not None:
        candidates = [Path(dict_dir)]
    else:
        candidates = [Path(p) for p in ([os.environ["WNSEARCHDIR"]] if os.environ.get("WNSEARCHDIR") else [])]
        candidates += [Path(p) for p in CANDIDATE_DIRS]
    for cand in candidates:
        if all((cand / f).is_file() for f in DICT_FILES):
            return cand
    tried = ", ".join(str(c) for c in candidates)
    missing = ""
    if candidates and candidates[0].is_dir():
        lacking = [f for f in DICT_FILES if not (candidates[0] / f).is_file()]
        missing = f" ({candidates[0]} lacks {', '.join(lacking)})"
    raise ResourceUnavailableError(f"WordNet dictionary files not found (looked in {tried}){missing}; {INSTALL_HINT}")


def read_version(dict_dir: str | os.PathLike[str]) -> str:
    """The WordNet version from the licence header of ``data.adj`` (e.g. ``"3.0"``)."""
    with open(Path(dict_dir) / "data.adj", encoding="utf-8", errors="replace") as fh:
        for i, line in enumerate(fh):
            match = _VERSION_RE.search(line)
            if match:
                return match.group(1)
            if i > 100 or not line.startswith("  "):  # the licence lines start with two spaces
                break
    return "unknown"


def _source_fingerprint(src: Path) -> dict[str, list[int]]:
    out = {}
    for name in DICT_FILES + OPTIONAL_FILES:
        p = src / name
        if p.is_file():
            st = p.stat()
            out[name] = [st.st_size, st.st_mtime_ns]
    return out


def _hash_folder(folder: Path, names: list[str]) -> str:
    h = hashlib.sha256()
    for name in sorted(names):
        h.update(name.encode() + b"\0")
        with open(folder / name, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
        h.update(b"\0")
    return h.hexdigest()


def _copy(src: Path, dst: Path) -> None:
    # A copy, not a link: NLTK's hardened file access refuses symlinks and multiply-linked files,
    # and files writable by group or others; a copy is also a snapshot the recorded hash stays true to.
    shutil.copyfile(src, dst)
    os.chmod(dst, 0o644)


def _private_dir(path: Path) -> None:
    """Create ``path`` if needed and drop group/world write bits on it (NLTK refuses to read a data
    folder that another account could write to)."""
    path.mkdir(parents=True, exist_ok=True, mode=0o755)
    st = path.stat()
    if st.st_uid == os.geteuid() and st.st_mode & 0o022:
        os.chmod(path, stat.S_IMODE(st.st_mode) & ~0o022)


def _build(src: Path, target: Path) -> dict[str, Any]:
    """Build ``target`` (a ``corpora/wordnet`` folder) in a temporary sibling, then rename it into place."""
    _private_dir(target.parent.parent)
    _private_dir(target.parent)
    tmp = Path(tempfile.mkdtemp(prefix=".wordnet-build-", dir=target.parent))
    try:
        names = []
        for name in DICT_FILES + OPTIONAL_FILES:
            if (src / name).is_file():
                _copy(src / name, tmp / name)
                names.append(name)
        (tmp / "lexnames").write_text(lexnames_text(), encoding="utf-8")
        os.chmod(tmp / "lexnames", 0o644)
        names.append("lexnames")
        manifest = {
            "format": _BUILD_FORMAT,
            "source_dir": str(src),
            "source": _source_fingerprint(src),
            "version": read_version(tmp),
            "files": sorted(names),
            "sha256": _hash_folder(tmp, names),
        }
        (tmp / MANIFEST).write_text(json.dumps(manifest, indent=1, sort_keys=True), encoding="utf-8")
        os.chmod(tmp / MANIFEST, 0o644)
        os.chmod(tmp, 0o755)
        old = None
        if target.exists():
            old = target.parent / f".wordnet-old-{os.getpid()}-{threading.get_ident()}"
            try:
                os.rename(target, old)
            except OSError:
                old = None
        try:
            os.rename(tmp, target)
        except OSError:
            # Another process won the race; its folder is as good as ours if it is complete.
            if _read_manifest(target) is None:
                raise
            shutil.rmtree(tmp, ignore_errors=True)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
        return _read_manifest(target) or manifest
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _read_manifest(folder: Path) -> dict[str, Any] | None:
    try:
        data = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if data.get("format") != _BUILD_FORMAT or not all((folder / f).is_file() for f in data.get("files", [])):
        return None
    return data


def build_nltk_data(cache_dir: str | os.PathLike[str] | None = None,
                    dict_dir: str | os.PathLike[str] | None = None, *, rebuild: bool = False) -> WordNetInfo:
    """Make ``<cache_dir>/corpora/wordnet`` from the Debian dictionary (once; again if the source changed).

    Does not touch ``nltk.data.path``; see :func:`ensure_wordnet`.
    """
    src = find_dictionary(dict_dir)
    root = Path(cache_dir).expanduser() if cache_dir is not None else default_cache_dir()
    target = root / "corpora" / "wordnet"
    with _lock:
        manifest = None if rebuild else _read_manifest(target)
        if manifest is not None and (manifest.get("source_dir") != str(src)
                                     or manifest.get("source") != _source_fingerprint(src)):
            manifest = None
        if manifest is None:
            try:
                manifest = _build(src, target)
            except OSError as exc:
                raise ResourceUnavailableError(
                    f"cannot build the NLTK WordNet folder in {target}: {exc}; set STYLEVAL_CACHE to a "
                    "writable directory") from exc
    return WordNetInfo(version=manifest["version"], path=target, sha256=manifest["sha256"], source_dir=src)


def ensure_wordnet(cache_dir: str | os.PathLike[str] | None = None,
                   dict_dir: str | os.PathLike[str] | None = None) -> WordNetInfo:
    """Build the NLTK WordNet folder if needed, append it to ``nltk.data.path``, return its identity.

    Raises :class:`~styleval.errors.ResourceUnavailableError` (with install instructions) when the
    Debian WordNet files are absent.
    """
    info = build_nltk_data(cache_dir, dict_dir)
    import nltk

    path = str(info.nltk_data)
    if path not in nltk.data.path:
        nltk.data.path.append(path)
    return info


setup = ensure_wordnet  # what ``styleval setup`` calls


def _reader_class() -> type:
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    class StylevalWordNetReader(WordNetCorpusReader):
        """NLTK's reader, minus the sense-key map to WordNet 3.0 built at start-up (about half of the
        loading time), which only the Open Multilingual WordNet functions use; they are unavailable here
        anyway (no OMW data), and with the index files read by Python's own line reader (through NLTK's seekable
        stream reader, start-up takes 1.27 instead of 0.81 CPU-s: benchmarks/bench_wordnet.py). Synsets, lemmas,
        morphy and similarity are NLTK's own, over the same maps (tests/test_wordnet.py compares them entry for
        entry)."""

        def map_wn(self, version: str = "wordnet") -> None:  # type: ignore[override]
            return None

        def _load_lemma_pos_offset_map(self) -> None:
            from nltk.corpus.reader.wordnet import ADJ, ADJ_SAT

            index, satellites = self._lemma_pos_offset_map, self.satellite_offsets
            for suffix in self._FILEMAP.values():
                fileid = f"index.{suffix}"
                with open(self.abspath(fileid).path, encoding=self._ENCODING) as lines:
                    for number, line in enumerate(lines, start=1):
                        if line.startswith(" "):  # the licence header
                            continue
                        lemma, pos, offsets = _index_entry(line, fileid, number)
                        index[lemma][pos] = offsets
                        if pos == ADJ:  # its satellites too, in index order
                            index[lemma][ADJ_SAT] = [offset for offset in offsets if offset in satellites]

    return StylevalWordNetReader


def _index_entry(line: str, fileid: str, number: int) -> tuple[str, str, list[int]]:
    """``(lemma, pos, synset offsets)`` of one line of an ``index.POS`` file, parsed as NLTK's reader parses it:
    ``lemma pos n_synsets n_pointers pointer... n_senses n_tagged offset...``."""
    fields = line.split()
    try:
        n_synsets = int(fields[2])
        start = 4 + int(fields[3])  # after the pointer symbols
        if n_synsets <= 0 or int(fields[start]) != n_synsets:
            raise ValueError(f"{n_synsets} synsets but {fields[start]} senses")
        offsets = [int(x) for x in fields[start + 2:start + 2 + n_synsets]]
        if len(offsets) != n_synsets:
            raise ValueError(f"{n_synsets} synset offsets announced, {len(offsets)} given")
    except (IndexError, ValueError) as exc:
        from nltk.corpus.reader.wordnet import WordNetError

        raise WordNetError(f"file {fileid}, line {number}: {exc}") from exc
    return fields[0], fields[1], offsets


def wordnet_reader(cache_dir: str | os.PathLike[str] | None = None,
                   dict_dir: str | os.PathLike[str] | None = None) -> tuple[Any, WordNetInfo]:
    """A :class:`WordNetCorpusReader` over exactly the folder :func:`ensure_wordnet` built, and its identity.

    The reader is made once per folder and shared (NLTK readers cache synsets; loading takes ~1 s).
    """
    info = ensure_wordnet(cache_dir, dict_dir)
    key = f"{info.path}:{info.sha256}"
    with _lock:
        reader = _reader_cache.get(key)
        if reader is None:
            with warnings.catch_warnings():
                # "The multilingual functions are not available": no Open Multilingual WordNet here.
                warnings.simplefilter("ignore", UserWarning)
                reader = _reader_class()(str(info.path), None)
            _reader_cache[key] = reader
    return reader, info


__all__ = ["WordNetInfo", "ensure_wordnet", "setup", "wordnet_reader", "build_nltk_data", "find_dictionary",
           "read_version", "lexnames_text", "default_cache_dir", "LEXNAMES", "INSTALL_HINT"]
