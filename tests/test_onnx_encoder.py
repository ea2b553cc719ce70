"""The ONNX Runtime encoder backend: same preservation features as torch, export cached by content hash."""
from __future__ import annotations

import numpy as np
import pytest

from styleval.errors import InputError, MissingDependencyError, OutputError
from styleval.models import onnx_encoder as oe

pytest.importorskip("spacy")
pytest.importorskip("transformers")

SOURCES = ["John flew to Boston with his two sisters on Monday.",
           "i dont think the hotel in paris was worth the money lol",
           "The meeting with the lawyers was moved to Friday afternoon, because of the storm that hit the coast."]
OUTPUTS = ["Yo, John took a flight to Boston with his 2 sisters on Monday lol",
           "I do not believe the hotel in London was worth the money.",
           "meeting moved"]


def test_backend_choice_is_checked(monkeypatch):
    with pytest.raises(InputError, match="backend must be one of"):
        oe.resolve_backend("tensorrt")
    monkeypatch.setattr(oe, "onnx_available", lambda: False)
    assert oe.resolve_backend("auto") == "torch"
    with pytest.raises(MissingDependencyError, match=r"styleval\[fast\]"):
        oe.resolve_backend("onnx")


def test_onnx_features_equal_torch_features(tmp_path, monkeypatch):
    pytest.importorskip("onnxruntime")
    monkeypatch.setenv("STYLEVAL_CACHE", str(tmp_path / "cache"))
    from styleval.models import pool

    # a private model pool: an ONNX encoder loaded by an earlier test would otherwise be reused, with no export here
    monkeypatch.setattr(pool, "_POOL", pool.ModelPool())
    from styleval.preservation.model import PreservationModel
    from styleval.preservation.pretrained import resolve_preservation_model

    folder = resolve_preservation_model("preservation-minilm")
    torch_model = PreservationModel.load(folder, backend="torch")
    onnx_model = PreservationModel.load(folder, backend="onnx")
    a = torch_model.featurizer.features(SOURCES, OUTPUTS)
    b = onnx_model.featurizer.features(SOURCES, OUTPUTS)
    np.testing.assert_allclose(b, a, atol=2e-6, rtol=0)
    np.testing.assert_allclose(onnx_model.from_features(b), torch_model.from_features(a), atol=2e-6, rtol=0)
    # the export landed under the cache folder, keyed by the encoder's content hash, and is reused
    exports = list((tmp_path / "cache" / "onnx").glob("*/model.onnx"))
    assert len(exports) == 1 and not list((tmp_path / "cache" / "onnx").glob(".export-*"))
    assert onnx_model.resources()["encoder_backend"].startswith("onnxruntime-")
    assert torch_model.resources()["encoder_backend"].startswith("torch-")


def test_metric_signature_names_the_backend():
    from styleval.metrics.registry import create

    metric = create("preservation", against="source", backend="torch")
    sig = metric.signature(None)
    assert sig.params["backend"] == "torch"
    assert sig.resources["encoder_backend"].startswith("torch-")
    assert "|backend:torch|" in str(sig)


def test_a_corrupt_export_is_named(tmp_path):
    pytest.importorskip("onnxruntime")
    bad = tmp_path / "enc-0123" / "model.onnx"
    bad.parent.mkdir()
    bad.write_bytes(b"not an onnx graph")
    with pytest.raises(OutputError, match="delete the folder") as err:
        oe.OnnxEncoder(bad)
    assert str(bad.parent) in str(err.value)
