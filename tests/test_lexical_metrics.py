"""Lexical content metrics against their reference implementations, on real style-transfer data.

Yelp sentiment transfer (DualRL, Luo et al. 2019): 1,000 sources, DualRL outputs, 4 human references.
"""
from __future__ import annotations

import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import sacrebleu

from styleval.errors import InputError, ResourceUnavailableError
from styleval.metrics.base import Against, Batch
from styleval.metrics.registry import available, create, parse_spec
from styleval.signature import library_version

LEXICAL = ["bleu", "chrf", "chrf++", "ter", "rouge1", "rouge2", "rouge3", "rougeL", "meteor", "pinc", "levenshtein"]


def _wordnet_available() -> bool:
    from styleval.resources.wordnet import find_dictionary

    try:
        find_dictionary()
    except ResourceUnavailableError:
        return False
    return True


needs_wordnet = pytest.mark.skipif(not _wordnet_available(), reason="Debian WordNet files not installed")


@pytest.fixture(scope="module", autouse=True)
def _private_cache(tmp_path_factory):
    """Build the NLTK WordNet folder in a temporary cache, not in the user's home."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("STYLEVAL_CACHE", str(tmp_path_factory.mktemp("styleval-cache")))
        yield


def _lines(path: Path) -> list[str]:
    # Human2/test.0.tsf holds one byte that is not UTF-8 (a mis-encoded "décor"); some files lack a final newline.
    return path.read_text(encoding="utf-8", errors="replace").splitlines()


@pytest.fixture(scope="module")
def yelp(shared_data):
    root = shared_data / "yelp-dualrl"
    src = _lines(root / "data/yelp/test.0") + _lines(root / "data/yelp/test.1")
    out = _lines(root / "outputs/yelp/DualRL/test.0.tsf") + _lines(root / "outputs/yelp/DualRL/test.1.tsf")
    refs = [_lines(root / f"outputs/yelp/Human{k}/test.0.tsf") + _lines(root / f"outputs/yelp/Human{k}/test.1.tsf")
            for k in range(4)]
    assert len(src) == len(out) == 1000 and all(len(r) == 1000 for r in refs)
    other = (_lines(root / "outputs/yelp/CrossAlignment_Shen/test.0.tsf")
             + _lines(root / "outputs/yelp/CrossAlignment_Shen/test.1.tsf"))
    return {"src": src, "out": out, "refs": refs, "other": other}


def make_batch(outputs, sources, refs_per_segment, system="sys") -> Batch:
    n = len(outputs)
    return Batch([str(i) for i in range(n)], list(outputs), list(sources), [list(r) for r in refs_per_segment],
                 [None] * n, system)


def seg_refs(refs_streams, n=None):
    n = len(refs_streams[0]) if n is None else n
    return [[stream[i] for stream in refs_streams] for i in range(n)]


@pytest.fixture(scope="module")
def batch4(yelp):
    return make_batch(yelp["out"], yelp["src"], seg_refs(yelp["refs"]), "DualRL")


@pytest.fixture(scope="module")
def small(yelp):
    """First 150 segments of each sentiment (300 in all), for the slower per-segment comparisons."""
    idx = list(range(150)) + list(range(500, 650))
    out = [yelp["out"][i] for i in idx]
    src = [yelp["src"][i] for i in idx]
    refs = [[r[i] for i in idx] for r in yelp["refs"]]
    return {"out": out, "src": src, "refs": refs, "batch": make_batch(out, src, seg_refs(refs))}


def variable_refs(refs_streams):
    """Segment i keeps 1 + i % 4 references; as sacrebleu streams, missing ones are None."""
    n = len(refs_streams[0])
    per_seg = [[refs_streams[k][i] for k in range(1 + i % 4)] for i in range(n)]
    streams = [[refs_streams[k][i] if k < 1 + i % 4 else None for i in range(n)] for k in range(4)]
    return per_seg, streams


# -- registry ------------------------------------------------------------------------------------
def test_all_registered_with_class_facts():
    reg = available()
    for name in LEXICAL:
        cls = reg[name]
        assert cls.name == name
        assert cls.description and isinstance(cls.version, str)
        assert isinstance(cls.higher_is_better, bool)
        lo, hi = cls.value_range
        assert lo < hi
        for lib in cls.libraries:
            assert library_version(lib) != "absent", lib
    assert not reg["ter"].higher_is_better and not reg["levenshtein"].higher_is_better
    assert "against" not in reg["pinc"].param_names()
    for name in set(LEXICAL) - {"pinc"}:
        assert "against" in reg[name].param_names()
        assert create(name).against is Against.REFERENCES
        assert create(name, against="src").display_name == f"{name}/src"


def test_params_read_back():
    m = create("bleu", tokenize="intl", lowercase=True, smooth_method="floor", smooth_value=0.2)
    p = m.get_params()
    assert p["tokenize"] == "intl" and p["lowercase"] is True and p["smooth_method"] == "floor"
    assert p["smooth_value"] == 0.2 and p["sentence_smooth_method"] == "exp" and p["against"] is Against.REFERENCES
    assert create("chrf++").get_params()["word_order"] == 2 and create("chrf").get_params()["word_order"] == 0
    name, params = parse_spec("rougeL:measure=recall;use_stemmer=true")
    assert create(name, **params).get_params()["use_stemmer"] is True


# -- BLEU ----------------------------------------------------------------------------------------
def test_bleu_matches_sacrebleu_4refs(yelp, batch4):
    res = create("bleu").score(batch4)
    expected = sacrebleu.corpus_bleu(yelp["out"], yelp["refs"]).score
    assert res.corpus_score == expected
    seg = [sacrebleu.sentence_bleu(h, [r[i] for r in yelp["refs"]]).score for i, h in enumerate(yelp["out"])]
    assert np.array_equal(res.segment_scores, np.array(seg))
    assert res.stats.shape == (1000, 10)
    sig = str(res.signature)
    for part in ("nrefs:4", "tokenize:13a", "lowercase:no", "smooth_method:exp", "sentence_smooth_method:exp",
                 f"sacrebleu:{sacrebleu.__version__}", "against:references", "styleval:"):
        assert part in sig, (part, sig)


def test_bleu_matches_sacrebleu_cli_4refs(yelp, tmp_path):
    exe = shutil.which("sacrebleu", path=os.path.dirname(sys.executable)) or shutil.which("sacrebleu")
    if exe is None:
        pytest.skip("sacrebleu command not found")
    hyp = tmp_path / "hyp.txt"
    hyp.write_text("\n".join(yelp["out"]) + "\n", encoding="utf-8")
    ref_files = []
    for k, stream in enumerate(yelp["refs"]):
        f = tmp_path / f"ref{k}.txt"
        f.write_text("\n".join(stream) + "\n", encoding="utf-8")
        ref_files.append(str(f))
    proc = subprocess.run([exe, *ref_files, "-i", str(hyp), "-m", "bleu", "-b", "-w", "10"],
                          capture_output=True, text=True, check=True)
    cli = float(proc.stdout.strip())
    res = create("bleu").score(make_batch(yelp["out"], yelp["src"], seg_refs(yelp["refs"])))
    assert abs(res.corpus_score - cli) < 1e-9


def test_bleu_variable_reference_counts(yelp):
    per_seg, streams = variable_refs(yelp["refs"])
    res = create("bleu").score(make_batch(yelp["out"], yelp["src"], per_seg))
    assert res.corpus_score == sacrebleu.corpus_bleu(yelp["out"], streams).score
    seg = [sacrebleu.sentence_bleu(h, per_seg[i]).score for i, h in enumerate(yelp["out"][:300])]
    assert np.array_equal(res.segment_scores[:300], np.array(seg))
    assert "nrefs:4" in str(res.signature)


def test_bleu_other_params(small):
    out, refs = small["out"], small["refs"]
    m = create("bleu", tokenize="intl", lowercase=True, smooth_method="floor", smooth_value=0.2,
               sentence_smooth_method="add-k")
    res = m.score(small["batch"])
    assert res.corpus_score == sacrebleu.corpus_bleu(out, refs, tokenize="intl", lowercase=True,
                                                     smooth_method="floor", smooth_value=0.2).score
    seg = [sacrebleu.sentence_bleu(h, [r[i] for r in refs], tokenize="intl", lowercase=True,
                                   smooth_method="add-k").score for i, h in enumerate(out)]
    assert np.array_equal(res.segment_scores, np.array(seg))


def test_bleu_against_source(yelp):
    b = make_batch(yelp["out"], yelp["src"], seg_refs(yelp["refs"]))
    res = create("bleu", against="source").score(b)
    assert res.corpus_score == sacrebleu.corpus_bleu(yelp["out"], [yelp["src"]]).score
    assert res.metric == "bleu/src" and "nrefs:1" in str(res.signature) and "against:source" in str(res.signature)


def test_bleu_aggregate_of_resampled_stats_is_corpus_bleu(yelp, batch4):
    m = create("bleu")
    res = m.score(batch4)
    rng = np.random.default_rng(7)
    idx = rng.integers(0, 1000, 1000)
    hyps = [yelp["out"][i] for i in idx]
    refs = [[r[i] for i in idx] for r in yelp["refs"]]
    assert m.aggregate(res.stats[idx]) == sacrebleu.corpus_bleu(hyps, refs).score


def test_reference_cache_reused_across_systems(yelp, batch4):
    m = create("bleu")
    m.score(batch4)
    assert len(m._ref_cache) == 1
    other = make_batch(yelp["other"], yelp["src"], seg_refs(yelp["refs"]), "CrossAlignment")
    res = m.score(other)
    assert len(m._ref_cache) == 1  # same references: cache hit
    assert res.corpus_score == sacrebleu.corpus_bleu(yelp["other"], yelp["refs"]).score
    assert res.corpus_score == create("bleu").score(other).corpus_score


# -- chrF / chrF++ -------------------------------------------------------------------------------
@pytest.mark.parametrize("name,word_order", [("chrf", 0), ("chrf++", 2)])
def test_chrf_matches_sacrebleu(small, name, word_order):
    out, refs = small["out"], small["refs"]
    res = create(name).score(small["batch"])
    assert res.corpus_score == sacrebleu.corpus_chrf(out, refs, word_order=word_order).score
    seg = [sacrebleu.sentence_chrf(h, [r[i] for r in refs], word_order=word_order).score for i, h in enumerate(out)]
    assert np.array_equal(res.segment_scores, np.array(seg))
    sig = str(res.signature)
    assert f"word_order:{word_order}" in sig and "nrefs:4" in sig and "sacrebleu:" in sig


def test_chrf_variable_references_and_params(small):
    per_seg, streams = variable_refs(small["refs"])
    res = create("chrf", lowercase=True, eps_smoothing=True).score(make_batch(small["out"], small["src"], per_seg))
    assert res.corpus_score == sacrebleu.metrics.CHRF(lowercase=True, eps_smoothing=True).corpus_score(
        small["out"], streams).score
    seg = [sacrebleu.metrics.CHRF(lowercase=True, eps_smoothing=True).sentence_score(h, per_seg[i]).score
           for i, h in enumerate(small["out"][:50])]
    assert np.array_equal(res.segment_scores[:50], np.array(seg))


# -- TER -----------------------------------------------------------------------------------------
def test_ter_matches_sacrebleu(small):
    out, refs = small["out"], small["refs"]
    res = create("ter").score(small["batch"])
    assert abs(res.corpus_score - sacrebleu.corpus_ter(out, refs).score) < 1e-9
    seg = [sacrebleu.sentence_ter(h, [r[i] for r in refs]).score for i, h in enumerate(out)]
    np.testing.assert_allclose(res.segment_scores, seg, rtol=0, atol=1e-9)
    assert res.higher_is_better is False and "case_sensitive:no" in str(res.signature)


def test_ter_variable_references(small):
    per_seg, streams = variable_refs(small["refs"])
    res = create("ter", case_sensitive=True).score(make_batch(small["out"], small["src"], per_seg))
    assert abs(res.corpus_score - sacrebleu.corpus_ter(small["out"], streams, case_sensitive=True).score) < 1e-9


# -- ROUGE ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["rouge1", "rouge2", "rouge3", "rougeL"])
def test_rouge_matches_rouge_score(small, name):
    from rouge_score.rouge_scorer import RougeScorer

    scorer = RougeScorer([name])
    expected = [scorer.score_multi([r[i] for r in small["refs"]], h)[name] for i, h in enumerate(small["out"])]
    for measure in ("fmeasure", "precision", "recall"):
        res = create(name, measure=measure).score(small["batch"])
        want = np.array([getattr(s, measure) for s in expected])
        np.testing.assert_allclose(res.segment_scores, want, rtol=0, atol=1e-12)
        assert abs(res.corpus_score - want.mean()) < 1e-12
    assert "measure:recall" in str(res.signature) and "rouge-score:0." in str(res.signature)


def test_rouge_stemmer_and_variable_references(small):
    from rouge_score.rouge_scorer import RougeScorer

    per_seg, _ = variable_refs(small["refs"])
    scorer = RougeScorer(["rougeL"], use_stemmer=True)
    res = create("rougeL", use_stemmer=True).score(make_batch(small["out"], small["src"], per_seg))
    want = [scorer.score_multi(per_seg[i], h)["rougeL"].fmeasure for i, h in enumerate(small["out"])]
    np.testing.assert_allclose(res.segment_scores, want, rtol=0, atol=1e-12)


# -- METEOR --------------------------------------------------------------------------------------
@needs_wordnet
def test_meteor_matches_nltk(small):
    from nltk.translate.meteor_score import meteor_score

    from styleval.resources.wordnet import ensure_wordnet

    info = ensure_wordnet()  # puts the WordNet folder on nltk.data.path for NLTK's default reader
    res = create("meteor").score(small["batch"])
    want = np.array([meteor_score([r[i].split() for r in small["refs"]], h.split())
                     for i, h in enumerate(small["out"][:120])])
    np.testing.assert_allclose(res.segment_scores[:120], want, rtol=0, atol=1e-12)
    assert abs(res.corpus_score - float(np.mean(res.segment_scores))) < 1e-12
    sig = str(res.signature)
    assert "wordnet:WordNet 3.0" in sig and f"wordnet_sha256:{info.sha256[:16]}" in sig and "nltk:" in sig
    assert "tokenize:whitespace" in sig and "alpha:0.9" in sig


@needs_wordnet
def test_meteor_synonyms_and_tokenizer():
    m = create("meteor")
    b = make_batch(["the auto is red", "the cat is red"], ["x", "x"], [["the car is red"], ["the car is red"]])
    syn, unrelated = m.score(b).segment_scores
    assert syn > unrelated
    wp = create("meteor", tokenize="wordpunct")
    from nltk.tokenize import wordpunct_tokenize
    from nltk.translate.meteor_score import meteor_score

    from styleval.resources.wordnet import wordnet_reader

    hyp, ref = "it's great, isn't it?", "it's good, right?"
    got = wp.score(make_batch([hyp], [""], [[ref]])).segment_scores[0]
    assert got == meteor_score([wordpunct_tokenize(ref)], wordpunct_tokenize(hyp), wordnet=wordnet_reader()[0])


# -- PINC ----------------------------------------------------------------------------------------
def test_pinc_hand_computed():
    from styleval.metrics.content.pinc import pinc

    src = "the food was bad".split()
    # 1-grams {the, food, was, great}: 1 of 4 new; 2-grams: 'was great' 1 of 3 new; 3-grams: 'food was great'
    # 1 of 2 new; 4-grams: 1 of 1 new
    assert pinc(src, "the food was great".split()) == pytest.approx((1 / 4 + 1 / 3 + 1 / 2 + 1) / 4, abs=1e-15)
    assert pinc(src, src) == 0.0
    assert pinc(src, "great".split()) == 1.0  # only unigrams exist: mean over 1 order
    assert pinc(src, "food good".split()) == pytest.approx((1 / 2 + 1) / 2)
    # sets, not multisets: "the the" has one distinct unigram and one bigram
    assert pinc(src, "the the".split()) == pytest.approx((0 + 1) / 2)
    assert pinc(src, []) == 0.0


def test_pinc_metric_always_against_source(yelp):
    m = create("pinc")
    b = make_batch(["The food was GREAT", "", "the food was bad"], ["the food was bad"] * 3,
                   [["r"], ["r"], ["r"]])
    res = m.score(b)
    np.testing.assert_allclose(res.segment_scores, [(1 / 4 + 1 / 3 + 1 / 2 + 1) / 4, 0.0, 0.0], atol=1e-15)
    assert res.metric == "pinc/src" and "against:source" in str(res.signature) and "nrefs:1" in str(res.signature)
    assert res.flags["empty_output"] == ["1"]
    assert create("pinc", lowercase=False).score(b).segment_scores[0] > res.segment_scores[0]
    with pytest.raises(InputError, match="against"):
        create("pinc", against="references")
    with pytest.raises(InputError, match="one source"):
        m.pair_stats(["a b"], [["a", "b"]])
    real = m.score(make_batch(yelp["out"][:200], yelp["src"][:200], [[] for _ in range(200)]))  # refs not needed
    assert 0 < real.corpus_score < 1


# -- Levenshtein ---------------------------------------------------------------------------------
def _dp_levenshtein(a: str, b: str) -> int:
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


def test_levenshtein_against_dp(small):
    out, refs = small["out"][:80], [r[:80] for r in small["refs"]]
    per_seg = seg_refs(refs)
    b = make_batch(out, small["src"][:80], per_seg)
    raw = create("levenshtein").score(b)
    want = [min(_dp_levenshtein(h, r) for r in per_seg[i]) for i, h in enumerate(out)]
    assert raw.segment_scores.tolist() == want
    assert raw.corpus_score == pytest.approx(np.mean(want), abs=1e-12)
    norm = create("levenshtein", normalized=True).score(b)
    want_n = [min(_dp_levenshtein(h, r) / max(len(h), len(r)) for r in per_seg[i]) for i, h in enumerate(out)]
    np.testing.assert_allclose(norm.segment_scores, want_n, rtol=0, atol=1e-12)
    assert norm.higher_is_better is False and "normalized:yes" in str(norm.signature)
    src = create("levenshtein", against="source").score(b)
    assert src.segment_scores.tolist() == [_dp_levenshtein(h, s) for h, s in zip(out, small["src"][:80])]
    assert create("levenshtein", normalized=True).score(make_batch([""], [""], [[""]])).segment_scores[0] == 0.0


# -- all metrics ---------------------------------------------------------------------------------
@pytest.mark.parametrize("name", LEXICAL)
def test_empty_output_is_scored(small, name):
    if name == "meteor" and not _wordnet_available():
        pytest.skip("Debian WordNet files not installed")
    outs = list(small["out"][:20])
    outs[3] = ""
    outs[7] = "   "
    b = make_batch(outs, small["src"][:20], seg_refs([r[:20] for r in small["refs"]]))
    res = create(name).score(b)
    assert res.segment_scores.shape == (20,) and np.all(np.isfinite(res.segment_scores))
    assert math.isfinite(res.corpus_score)
    assert res.flags["empty_output"] == ["3", "7"]
    lo, hi = create(name).value_range
    assert np.all((res.segment_scores >= lo) & (res.segment_scores <= hi))
    if create(name).higher_is_better:
        assert res.segment_scores[3] == 0.0


def test_empty_references_side():
    # an empty reference string is a reference (as in sacrebleu), not a crash
    b = make_batch(["a b c", ""], ["x", "y"], [[""], [""]])
    assert create("ter").score(b).segment_scores.tolist() == [100.0, 0.0]
    assert create("bleu").score(b).corpus_score == 0.0


@pytest.mark.parametrize("name,params,match", [
    ("bleu", {"tokenize": "moses"}, "tokenize"),
    ("bleu", {"tokenize": "spm"}, "tokenize"),
    ("bleu", {"smooth_method": "laplace"}, "smooth_method"),
    ("bleu", {"sentence_smooth_method": "bogus"}, "sentence_smooth_method"),
    ("bleu", {"lowercase": "yes"}, "lowercase"),
    ("bleu", {"against": "target"}, "against"),
    ("chrf", {"beta": "two"}, "beta"),
    ("chrf++", {"word_order": -1}, "word_order"),
    ("ter", {"normalized": 1}, "normalized"),
    ("rouge1", {"measure": "f1"}, "measure"),
    ("rougeL", {"use_stemmer": "porter"}, "use_stemmer"),
    ("meteor", {"tokenize": "spacy"}, "tokenize"),
    ("meteor", {"alpha": 2.0}, "alpha"),
    ("pinc", {"max_n": 0}, "max_n"),
    ("levenshtein", {"normalized": "true"}, "normalized"),
    ("levenshtein", {"ignore_case": True}, "ignore_case"),
])
def test_bad_params(name, params, match):
    with pytest.raises(InputError, match=match):
        create(name, **params)


def test_missing_references_is_clear_error(small):
    b = make_batch(small["out"][:3], small["src"][:3], [["r"], [], ["r"]])
    with pytest.raises(InputError, match="needs references"):
        create("chrf").score(b)
    with pytest.raises(InputError, match="nothing to compare"):
        create("bleu").pair_stats(["a"], [[]])


# -- sacrebleu's private stages --------------------------------------------------------------------------------------
@pytest.mark.parametrize("module,name", [("bleu", "BLEU"), ("chrf", "CHRF"), ("ter", "TER")])
def test_sacrebleu_private_stages_have_the_shape_the_metrics_call(module, name):
    """The installed sacrebleu has every private member the metrics call, with the parameters they pass; when a
    release changes them, this fails first and names the member (the metrics refuse to start the same way)."""
    import importlib

    from styleval.metrics.content._sacrebleu import check_private_api

    cls = getattr(importlib.import_module(f"sacrebleu.metrics.{module}"), name)
    check_private_api(cls)  # raises ResourceUnavailableError naming the member otherwise


def test_a_changed_private_stage_is_refused_in_one_line_naming_it():
    from sacrebleu.metrics.bleu import BLEU

    from styleval.metrics.content._sacrebleu import check_private_api

    class Renamed(BLEU):  # a sacrebleu release that renamed a parameter of one private stage
        def _compute_segment_statistics(self, hyp, refs_info):  # type: ignore[override]
            return super()._compute_segment_statistics(hyp, refs_info)

    Renamed.__name__ = "BLEU"
    with pytest.raises(ResourceUnavailableError, match=r"private BLEU._compute_segment_statistics takes "
                                                       r"\(hyp, refs_info\), not \(hypothesis, ref_kwargs\)"):
        check_private_api(Renamed)

    class Gone(BLEU):
        _extract_reference_info = None  # type: ignore[assignment]

    with pytest.raises(ResourceUnavailableError, match=r"_extract_reference_info is missing"):
        check_private_api(Gone)


def test_private_stages_give_the_statistics_of_the_public_sentence_scores(small):
    """Side by side with sacrebleu's public API where it exposes statistics: BLEU's counts and lengths and TER's
    edits from ``sentence_score`` equal the rows computed through the private stages."""
    from sacrebleu.metrics.bleu import BLEU
    from sacrebleu.metrics.ter import TER

    outputs, refs = small["out"], seg_refs(small["refs"])
    bleu, ter = create("bleu"), create("ter")
    rows = bleu.pair_stats(outputs, refs)
    public = BLEU()
    for row, hyp, comps in zip(rows, outputs, refs):
        s = public.sentence_score(hyp, comps)
        assert list(row) == [s.sys_len, s.ref_len, *s.counts, *s.totals]
    rows = ter.pair_stats(outputs, refs)
    public_ter = TER()
    for row, hyp, comps in zip(rows, outputs, refs):
        s = public_ter.sentence_score(hyp, comps)
        assert list(row) == [s.num_edits, s.ref_length]
