"""Metric registry: built-ins, entry-point plugins, signatures and errors."""
from __future__ import annotations

import sys
import textwrap

import pytest

from styleval import Record, UnknownNameError
from styleval.metrics import registry
from styleval.metrics.base import Against


def test_builtin_lexical_metrics_are_registered_with_facts():
    metrics = registry.available()
    for name in ("bleu", "chrf", "chrf++", "ter", "rouge1", "rouge2", "rouge3", "rougeL", "meteor", "pinc",
                 "levenshtein"):
        cls = metrics[name]
        assert cls.aspect.value == "content"
        assert isinstance(cls.higher_is_better, bool)
    assert metrics["ter"].higher_is_better is False
    assert metrics["levenshtein"].higher_is_better is False


def test_unknown_metric_error_lists_names():
    with pytest.raises(UnknownNameError) as err:
        registry.create("blue")
    assert "bleu" in str(err.value) and "chrf" in str(err.value)


def test_spec_parsing_coerces_values():
    assert registry.parse_spec("chrf:word_order=2;lowercase=true;tokenize=intl") == (
        "chrf", {"word_order": 2, "lowercase": True, "tokenize": "intl"})
    assert registry.parse_spec("bleu") == ("bleu", {})


def test_params_appear_in_repr_and_signature():
    metric = registry.create("bleu", against="source")
    assert metric.against is Against.SOURCE
    assert "against=" in repr(metric)
    sig = metric.signature()
    assert sig.metric == "bleu" and sig.against == "source" and sig.nrefs == 1
    assert sig.libraries["sacrebleu"] != "absent"


def test_entry_point_plugin_is_discovered(tmp_path, monkeypatch):
    """A plugin distribution on sys.path registers its metric through the styleval.metrics group."""
    (tmp_path / "shout_metric.py").write_text(textwrap.dedent('''
        import numpy as np
        from styleval.metrics.base import Aspect, Metric

        class ShoutRate(Metric):
            name = "shout_rate"
            aspect = Aspect.STYLE
            def __init__(self, *, threshold: float = 0.5):
                self.threshold = threshold
            def segment_stats(self, batch):
                return np.array([[sum(c.isupper() for c in o) / max(1, sum(c.isalpha() for c in o))]
                                 for o in batch.outputs])
    '''))
    dist = tmp_path / "shout_metric-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: shout-metric\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[styleval.metrics]\nshout_rate = shout_metric:ShoutRate\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(registry, "_plugins_loaded", False)
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))
    try:
        assert "shout_rate" in registry.available()
        import styleval

        result = styleval.score([Record("1", "hi", "HELLO there", system="S")], ["shout_rate"], bootstrap=0)
        assert result.get("shout_rate", "S").corpus_score == pytest.approx(5 / 10)
    finally:
        sys.modules.pop("shout_metric", None)
