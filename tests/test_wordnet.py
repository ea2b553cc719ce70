"""The WordNet resource: an NLTK data folder built from Debian's WordNet dictionary files."""
from __future__ import annotations

import gzip
import os
import re
import shutil
import stat
from pathlib import Path

import pytest

from styleval.errors import ResourceUnavailableError
from styleval.resources import wordnet as wnres


def _debian_dir() -> Path | None:
    try:
        return wnres.find_dictionary()
    except ResourceUnavailableError:
        return None


needs_debian = pytest.mark.skipif(_debian_dir() is None, reason="Debian WordNet files not installed")


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    if _debian_dir() is None:
        pytest.skip("Debian WordNet files not installed")
    cache = tmp_path_factory.mktemp("wn-cache") / "nltk_data"
    return wnres.ensure_wordnet(cache_dir=cache)


def test_lexnames_table():
    lines = wnres.lexnames_text().splitlines()
    assert len(lines) == 45
    for i, line in enumerate(lines):
        num, name, cat = line.split("\t")
        assert num == f"{i:02d}"
        assert cat == str({"noun": 1, "verb": 2, "adj": 3, "adv": 4}[name.split(".")[0]])
    assert lines[0] == "00\tadj.all\t3" and lines[3] == "03\tnoun.Tops\t1" and lines[44] == "44\tadj.ppl\t3"


def test_lexnames_table_equals_man_page():
    man = Path("/usr/share/man/man5/lexnames.5WN.gz")
    if not man.is_file():
        pytest.skip("lexnames(5WN) man page not installed")
    rows = re.findall(r"^(\d\d)\t(\S+)\s*\t", gzip.open(man, "rt", encoding="latin-1").read(), re.M)
    assert [(int(n), name) for n, name in rows] == [(n, name) for n, name, _ in wnres.LEXNAMES]


def test_missing_dictionary_says_how_to_install(tmp_path):
    with pytest.raises(ResourceUnavailableError) as err:
        wnres.ensure_wordnet(cache_dir=tmp_path / "cache", dict_dir=tmp_path / "nowhere")
    msg = str(err.value)
    assert "apt-get install wordnet-base wordnet-sense-index" in msg and "styleval setup" in msg
    assert not (tmp_path / "cache").exists()


def test_default_cache_dir(monkeypatch, tmp_path):
    monkeypatch.setenv("STYLEVAL_CACHE", str(tmp_path))
    assert wnres.default_cache_dir() == tmp_path / "nltk_data"
    monkeypatch.delenv("STYLEVAL_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert wnres.default_cache_dir() == tmp_path / "xdg" / "styleval" / "nltk_data"


@needs_debian
def test_build_identity(built):
    import nltk

    assert built.version == "3.0" and built.name == "WordNet 3.0"
    assert re.fullmatch(r"[0-9a-f]{64}", built.sha256)
    assert built.path.name == "wordnet" and built.path.parent.name == "corpora"
    for f in wnres.DICT_FILES + ("lexnames",):
        p = built.path / f
        assert p.is_file() and not p.is_symlink() and p.stat().st_nlink == 1  # NLTK refuses links
        assert not p.stat().st_mode & (stat.S_IWGRP | stat.S_IWOTH)
    assert (built.path / "lexnames").read_text() == wnres.lexnames_text()
    assert str(built.nltk_data) in nltk.data.path
    assert built.as_resources() == {"wordnet": "WordNet 3.0", "wordnet_sha256": built.sha256[:16]}
    assert not list(built.path.parent.glob(".wordnet-*"))  # no leftovers of the atomic build


@needs_debian
def test_second_call_reuses_folder(built):
    before = (built.path / "data.noun").stat().st_mtime_ns, (built.path / wnres.MANIFEST).stat().st_ino
    again = wnres.ensure_wordnet(cache_dir=built.nltk_data)
    assert again == built
    after = (built.path / "data.noun").stat().st_mtime_ns, (built.path / wnres.MANIFEST).stat().st_ino
    assert before == after


@needs_debian
def test_nltk_reader_works(built):
    reader, info = wnres.wordnet_reader(cache_dir=built.nltk_data)
    assert info == built
    assert reader.get_version() == "3.0"
    dog = reader.synsets("dog")
    assert dog[0].name() == "dog.n.01" and dog[0].lexname() == "noun.animal"
    assert reader.morphy("dogs") == "dog" and reader.morphy("ran", reader.VERB) == "run"
    assert reader.morphy("geese") == "goose"  # from noun.exc
    assert "auto" in {lemma.name() for s in reader.synsets("car") for lemma in s.lemmas()}
    assert reader.synset("dog.n.01").lemmas()[0].key() == "dog%1:05:00::"  # index.sense
    assert reader.synsets("large", pos=reader.ADJ)
    assert wnres.wordnet_reader(cache_dir=built.nltk_data)[0] is reader  # loaded once


@needs_debian
def test_fast_index_parse_equals_nltks(built):
    """The reader's own reading of the index files (issue #46: NLTK's stream reader took ~2.4 s) gives NLTK's
    lemma -> pos -> offsets map entry for entry, satellites included, and the same synsets."""
    import warnings

    from nltk.corpus.reader.wordnet import WordNetCorpusReader, WordNetError

    ours, _ = wnres.wordnet_reader(cache_dir=built.nltk_data)
    stock_class = type("Stock", (wnres._reader_class(),),
                       {"_load_lemma_pos_offset_map": WordNetCorpusReader._load_lemma_pos_offset_map})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        stock = stock_class(str(built.path), None)
    assert len(ours._lemma_pos_offset_map) > 140_000
    assert dict(ours._lemma_pos_offset_map) == dict(stock._lemma_pos_offset_map)
    assert any("s" in entry for entry in ours._lemma_pos_offset_map.values())  # satellites were split out
    for word in ("dog", "large", "ran", "geese", "quickly", "fantastic"):
        assert [s.name() for s in ours.synsets(word)] == [s.name() for s in stock.synsets(word)]
    with pytest.raises(WordNetError, match=r"index\.noun, line 3: 2 synset offsets announced, 1 given"):
        wnres._index_entry("dog n 2 1 @ 2 1 02084071\n", "index.noun", 3)


@needs_debian
def test_meteor_gets_synonym_matches(built):
    from nltk.translate.meteor_score import meteor_score

    reader, _ = wnres.wordnet_reader(cache_dir=built.nltk_data)
    ref = "the car is red".split()
    syn = meteor_score([ref], "the auto is red".split(), wordnet=reader)
    unrelated = meteor_score([ref], "the cat is red".split(), wordnet=reader)
    assert syn > unrelated


@needs_debian
def test_rebuilds_when_source_changes(tmp_path):
    src = tmp_path / "dict"
    src.mkdir()
    for f in wnres.DICT_FILES:
        shutil.copyfile(_debian_dir() / f, src / f)
    cache = tmp_path / "cache"
    os.makedirs(cache, mode=0o775)
    os.chmod(cache, 0o775)  # group-writable: NLTK would refuse it, the build tightens it
    first = wnres.ensure_wordnet(cache_dir=cache, dict_dir=src)
    assert not cache.stat().st_mode & stat.S_IWGRP
    assert not (first.path / "cntlist.rev").exists()  # optional file, absent in this source
    with open(src / "adv.exc", "a", encoding="utf-8") as fh:
        fh.write("bestest best\n")
    second = wnres.ensure_wordnet(cache_dir=cache, dict_dir=src)
    assert second.sha256 != first.sha256 and second.path == first.path
    assert (second.path / "adv.exc").read_text().endswith("bestest best\n")
    assert not list(second.path.parent.glob(".wordnet-*"))


def test_version_from_header(tmp_path):
    (tmp_path / "data.adj").write_text("  1 This software and database is being provided\n"
                                       "  14 WordNet 3.1 Copyright 2011 by Princeton University.\n"
                                       "00001740 00 a 01 able 0 005 = 05207437 n 0000 | (usually ...)\n")
    assert wnres.read_version(tmp_path) == "3.1"
    (tmp_path / "data.adj").write_text("00001740 00 a 01 able 0 005 = 05207437 n 0000 | x\n")
    assert wnres.read_version(tmp_path) == "unknown"
