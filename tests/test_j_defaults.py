"""One J (issue #52, item 1): ``-m j`` with no parameters is ``styleval evaluate``'s J (style decision x MiniLM
sentence cosine against the source x acceptability >= 0.5), and ``styleval metrics j`` says so. Held together on the
bundled example: evaluate's per-segment J and ``styleval score -m j``'s are the same numbers."""
from __future__ import annotations

import argparse

import numpy as np
import pytest

import styleval
from styleval.cli.main import main
from styleval.cli.score_cmd import load_records
from styleval.evaluation.plan import FLUENCY_METRICS, RECOMMENDED
from styleval.examples import get as get_example
from styleval.metrics import registry

pytestmark = pytest.mark.usefixtures("one_torch_thread")
SYSTEMS = ("copy", "rewrite")


def test_default_j_is_evaluates_composition():
    j = registry.create("j")
    assert j.style.name == "style_accuracy" and j.similarity.metric_id.label == "sentence_cosine/src"
    assert j.fluency is not None and j.fluency.name == "acceptability" and j.fluency_threshold == 0.5
    # the pass values J takes by default are those evaluate's --fluency uses
    for name, threshold in FLUENCY_METRICS.items():
        assert registry.metric_class(name).pass_threshold == threshold
        assert registry.create("j", fluency=name).fluency_threshold == threshold
    assert registry.create("j", fluency="none").fluency is None
    assert registry.create("j", fluency_threshold="none").fluency_threshold is None  # FL: the score itself
    # the spec of a J without a fluency factor builds that J again, not the default one
    bare = registry.create("j", fluency="none")
    name, params = registry.parse_spec(bare.metric_id.spec())
    assert registry.create(name, **params).fluency is None
    assert RECOMMENDED["overall"][0] == "j"


def test_metrics_j_states_the_defaults(capsys):
    assert main(["metrics", "j", "--width", "200"]) == 0
    out = capsys.readouterr().out
    assert "property object" not in out
    assert "similarity (default 'sentence_cosine/src')" in out and "fluency (default 'acceptability')" in out
    assert "sentence cosine against the source and FL acceptability >= 0.5" in out
    # the signature shown is the one a default J's scores carry (auto resolved to the number used)
    assert "fluency_threshold:0.5" in out and "similarity:sentence_cosine:model=minilm;against=source" in out


def _records():
    ns = argparse.Namespace(example="formality", input=[], gyafc=None, system=[], systems_dir=None, source=None,
                            reference=[], direction=None)
    return [r for r in load_records(ns) if r.system in SYSTEMS]


def test_score_j_equals_evaluates_j_segment_by_segment(smollm, tmp_path, capsys):
    ev = styleval.evaluate(_records(), bootstrap=0, significance="none", anchor=False)
    example = get_example("formality")
    out = tmp_path / "j.json"
    assert main(["score", "--source", str(example.source), *[a for s in SYSTEMS for a in
                                                              ("--system", f"{s}={example.systems_dir / s}.txt")],
                 *[a for r in example.references for a in ("--reference", str(r))], "--direction",
                 "informal:formal", "-m", "j", "--bootstrap", "0", "--json", str(out), "-q"]) == 0
    scored = styleval.load(out)
    for system in SYSTEMS:
        mine = scored.get("j", system)
        theirs = ev.overall_segments["j"][system]
        assert mine.ids == list(theirs)
        np.testing.assert_allclose(mine.segment_scores, [theirs[i] for i in mine.ids], rtol=0, atol=1e-12)
        assert mine.corpus_score == pytest.approx(ev.overall_score(system, "j"), abs=1e-12)
        # the same three parts: evaluate's style decision, sentence cosine against the source, acceptability
        sig = mine.signature
        assert sig.params["similarity"].startswith("sentence_cosine:") and sig.params["fluency_threshold"] == 0.5
        used = ev.result.get("style_accuracy", system).signature.resources
        assert sig.resources["style.style_model"] == used["style_model"] == "formality-classifier-pt16-cased"
    assert scored.get("j", "rewrite").corpus_score > 0.3 and scored.get("j", "copy").corpus_score == 0.0
