"""The learned content-preservation metric (``preservation``) and its model layer (styleval.content)."""
from __future__ import annotations

import json
import random

import numpy as np
import pytest

from styleval.content import PairData, PreservationModel, load_preservation_model, read_pairs
from styleval.content.negatives import DonorPool, delete_clause, swap_entity
from styleval.content.pretrained import (BI_CROSS_MODEL, BI_MODEL, DEFAULT_MODEL, FAST_MODEL, LATE_MODEL,
                                         resolve_preservation_model)
from styleval.content.train import fit_logistic
from styleval.errors import InputError, UnknownNameError
from styleval.metrics.base import Batch
from styleval.metrics.registry import create

pytest.importorskip("spacy")
pytest.importorskip("transformers")

SOURCE = "John flew to Boston with his two sisters on Monday."
STYLE = "Yo, John took a flight to Boston with his 2 sisters on Monday lol"
ENTITY = "Mary flew to Boston with his two sisters on Monday."
PAIRS = [
    ("The meeting with the lawyers was moved to Friday afternoon.",
     "Hey, the lawyer meeting got pushed to Friday afternoon!",
     "The meeting with the doctors was moved to Friday afternoon."),
    ("i dont think the hotel in paris was worth the money lol",
     "I do not believe the hotel in Paris was worth the money.",
     "i dont think the hotel in london was worth the money lol"),
    ("This stupid phone broke after three days, what a piece of junk.",
     "This phone broke after three days, which is disappointing.",
     "This stupid laptop broke after three days, what a piece of junk."),
]


def _batch(sources, outputs, refs=None):
    n = len(outputs)
    return Batch([str(i) for i in range(n)], list(outputs), list(sources), refs or [[] for _ in range(n)], [None] * n)


@pytest.fixture(scope="module")
def metric():
    return create("preservation", against="source")


@pytest.mark.parametrize("name", [DEFAULT_MODEL, FAST_MODEL, BI_MODEL, BI_CROSS_MODEL, LATE_MODEL])
def test_shipped_models_load_offline_and_keep_their_cards(monkeypatch, name):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    model = load_preservation_model(name)
    assert model.folder == resolve_preservation_model(name)
    assert model.card["name"] == name and "SGDD-TST" in " ".join(model.card["notes"])
    # weights are plain arrays (each encoder's adapters: 1.3-2.7 MB), not a copy of the encoder (90 MB)
    assert sum(p.stat().st_size for p in model.folder.iterdir()) < 5_000_000
    again = PreservationModel.load(model.folder)
    np.testing.assert_allclose(again.coef, model.coef)
    assert (model.cross is not None) == (name in (DEFAULT_MODEL, BI_CROSS_MODEL))


def test_the_bi_cross_model_is_the_bi_encoder_with_a_three_layer_cross_encoder():
    """preservation-minilm-bi-cross: the bi-encoder of preservation-minilm-bi (the same file: in both, version 2's
    encoder with its adapters scaled by .6) at .75 and a cross-encoder on MiniLM's first 3 layers at .25; the feature
    head (and spaCy) is not run."""
    duo, bi = load_preservation_model(BI_CROSS_MODEL), load_preservation_model(BI_MODEL)
    assert duo.bi is not None and bi.bi is not None and duo.cross is not None
    assert duo.bi.file_hash == bi.bi.file_hash and duo.bi_weight == 0.75 and duo.cross_weight == 0.25
    trained = duo.card["parameters"]["bi_encoder"]
    assert trained["adapter_scale"] == 0.6 and duo.bi.scaling == pytest.approx(0.6 * trained["trained_scaling"])
    assert duo.cross.layers == 3 and len(duo.cross.adapters) == 18 and not duo.uses_features
    assert all(int(name.split(".layer.")[1].split(".")[0]) < 3 for name in duo.cross.adapters)
    srcs = [SOURCE] + [p[0] for p in PAIRS]
    outs = [STYLE] + [p[1] for p in PAIRS]
    np.testing.assert_allclose(duo.score(srcs, outs),
                               0.75 * bi.score(srcs, outs) + 0.25 * duo.cross.score(srcs, outs), atol=1e-6)
    assert "spacy_model" not in duo.resources() and duo.resources()["cross_encoder_hash"] == duo.cross.file_hash[:12]


def test_the_late_model_is_its_late_interaction_encoder_with_its_adapters_at_half_strength():
    """preservation-minilm-late version 2: a late-interaction encoder alone (weight 1, no cosine pass), its adapters
    scaled by .5 after training (the card keeps the trained scaling); no feature head, no spaCy; an identical pair
    scores 1."""
    from styleval.content.late_encoder import LateEncoder

    late = load_preservation_model(LATE_MODEL)
    assert isinstance(late.bi, LateEncoder) and late.bi_weight == 1.0 and late.cosine_weight == 0.0
    assert late.cross is None and not late.uses_features and late.bi.layers == 0
    entry = late.card["parameters"]["late_encoder"]
    assert entry["adapter_scale"] == 0.5 and late.bi.scaling == pytest.approx(0.5 * entry["trained_scaling"])
    srcs = [SOURCE] + [p[0] for p in PAIRS]
    outs = [STYLE] + [p[1] for p in PAIRS]
    np.testing.assert_allclose(late.score(srcs, outs), late.bi.score(srcs, outs), atol=1e-9)
    np.testing.assert_allclose(late.score(srcs, srcs), 1.0, atol=1e-5)
    assert "spacy_model" not in late.resources() and late.resources()["late_encoder_hash"] == late.bi.file_hash[:12]


def test_the_fast_model_is_the_default_models_feature_head():
    """preservation-minilm-fast is the head of preservation-minilm alone: same standardisation and coefficients."""
    full, fast = load_preservation_model(DEFAULT_MODEL), load_preservation_model(FAST_MODEL)
    for attr in ("mean", "scale", "coef"):
        np.testing.assert_allclose(getattr(full, attr), getattr(fast, attr), rtol=1e-9, atol=1e-12)
    assert full.intercept == pytest.approx(fast.intercept) and full.cross_weight == 0.5


def test_identical_pairs_score_high_and_meaning_changes_lower(metric):
    srcs = [SOURCE] + [p[0] for p in PAIRS]
    same = metric.score(_batch(srcs, srcs)).segment_scores
    changed = metric.score(_batch(srcs, [ENTITY] + [p[2] for p in PAIRS])).segment_scores
    assert np.all(same > 0.9) and np.all(same > changed)  # the cross-encoder part has no exact ceiling
    assert np.all((changed >= 0) & (changed < 0.9))
    fast = create("preservation", against="source", model=FAST_MODEL)
    np.testing.assert_allclose(fast.score(_batch(srcs, srcs)).segment_scores, 1.0)  # the head's ceiling


def test_style_rewrites_beat_single_substitutions(metric):
    srcs = [SOURCE] + [p[0] for p in PAIRS]
    style = metric.score(_batch(srcs, [STYLE] + [p[1] for p in PAIRS])).segment_scores
    changed = metric.score(_batch(srcs, [ENTITY] + [p[2] for p in PAIRS])).segment_scores
    assert np.mean(style > changed) >= 0.75, (style, changed)


def test_style_rewrites_beat_single_substitutions_bi_cross_model():
    test_style_rewrites_beat_single_substitutions(create("preservation", against="source", model=BI_CROSS_MODEL))


def test_style_rewrites_beat_single_substitutions_bi_encoder():
    """Version 2 of the bi-encoder (trained on every training rewrite) passes; version 1 failed 2 of 4 cases."""
    test_style_rewrites_beat_single_substitutions(create("preservation", against="source", model=BI_MODEL))


@pytest.mark.xfail(strict=True, reason="known weakness of preservation-minilm-late (docs/preservation.md): a "
                   "near-copy with one swapped name or noun outscores the casual rewrite and the polite rewrite (2 of "
                   "4 cases), as for the fast model; so it did in version 1, with .4 of the plain cosine")
def test_style_rewrites_beat_single_substitutions_late_model():
    test_style_rewrites_beat_single_substitutions(create("preservation", against="source", model=LATE_MODEL))


@pytest.mark.xfail(strict=True, reason="known weakness of the feature head alone (preservation-minilm-fast), "
                   "docs/preservation.md: on these hand-made pairs a near-copy with one swapped name or noun still "
                   "outscores a casual or polite rewrite in 2 of 4 cases; it leans on whole-sentence similarity. "
                   "The default model's cross-encoder and the bi-encoder fix these cases (tests above)")
def test_style_rewrites_beat_single_substitutions_fast_model():
    test_style_rewrites_beat_single_substitutions(create("preservation", against="source", model=FAST_MODEL))


def _with_cosine(model: PreservationModel, weight: float) -> PreservationModel:
    return PreservationModel(encoder=model.encoder, spacy_model=model.spacy_model, style_words=model.style_words,
                             mean=model.mean, scale=model.scale, coef=model.coef, intercept=model.intercept,
                             ceiling=model.ceiling, cross=model.cross, cross_weight=model.cross_weight, bi=model.bi,
                             bi_weight=model.bi_weight, cosine_weight=weight)


@pytest.mark.parametrize("name", [FAST_MODEL, BI_MODEL])
def test_a_cosine_weight_averages_in_the_plain_sentence_cosine(tmp_path, name):
    """score = (1 - a) * learned + a * clip(cosine, 0, 1): with the head, cosine is its first feature; without it
    (the bi-encoder) the frozen encoder runs without a parse and gives the same cosine. The weight survives a save
    (format 4) and a load."""
    srcs = [SOURCE] + [p[0] for p in PAIRS] * 2
    outs = [STYLE] + [p[1] for p in PAIRS] + [p[2] for p in PAIRS]
    base = load_preservation_model(name)
    blended = _with_cosine(base, 0.3)
    cosine = load_preservation_model(FAST_MODEL).featurizer.features(srcs, outs)[:, 0]
    assert not blended.uses_features or name == FAST_MODEL
    np.testing.assert_allclose(blended.featurizer.sentence_cosines(srcs, outs), cosine, atol=1e-6)
    expected = 0.7 * base.score(srcs, outs) + 0.3 * np.clip(cosine, 0, 1)
    np.testing.assert_allclose(blended.score(srcs, outs), expected, atol=1e-6)
    folder = blended.save(tmp_path / "m")
    config = json.loads((folder / "model.json").read_text())
    assert config["format"] == "styleval-preservation/4" and config["cosine_weight"] == 0.3
    np.testing.assert_allclose(PreservationModel.load(folder).score(srcs, outs), expected, atol=1e-6)
    with pytest.raises(InputError, match="cosine_weight"):
        _with_cosine(base, 1.0)
    config["cosine_weight"] = "high"
    (folder / "model.json").write_text(json.dumps(config))
    with pytest.raises(InputError, match="cosine_weight must be a number"):
        PreservationModel.load(folder)


def test_signature_names_the_model_and_its_hash(metric):
    from styleval.models.hashing import content_hash

    res = metric.score(_batch([SOURCE], [STYLE]))
    sig = res.signature
    folder = resolve_preservation_model(DEFAULT_MODEL)
    assert sig.resources["preservation_model"] == DEFAULT_MODEL
    assert sig.resources["preservation_model_hash"] == content_hash(folder)[:12]
    assert sig.resources["encoder_hash"] and sig.resources["spacy_model_hash"]
    assert sig.resources["spacy_model"] == "spacy-en-sm"
    # every key appears once in the printed signature (the spaCy model is not confused with the spaCy library)
    keys = [part.split(":", 1)[0] for part in str(sig).split("|")[1:]]
    assert len(keys) == len(set(keys)), keys
    assert sig.metric == "preservation" and sig.against == "source" and sig.nrefs == 1
    assert res.metric == "preservation/src"


def _truncated(m, sources, outputs):
    return np.asarray(m.segment_stats(_batch(sources, outputs)))[:, 1]


def test_truncated_texts_and_pairs_are_counted(metric):
    """Each text fits the encoder's 128 tokens, but source and output together do not: the cross-encoder of the
    default model truncates the pair, which its statistics count; the fast model reads the texts one by one."""
    words = "the committee met again on tuesday to discuss the budget of the new library and its opening hours"
    source = " ".join([words] * 4)  # 4 x 18 words: about 80 tokens each side, 160 together
    output = source.replace("tuesday", "monday")
    np.testing.assert_array_equal(_truncated(metric, [source, SOURCE], [output, STYLE]), [1, 0])
    fast = create("preservation", against="source", model=FAST_MODEL)
    np.testing.assert_array_equal(_truncated(fast, [source], [output]), [0])
    long = " ".join([words] * 9)  # over 128 tokens alone: the text and its pair both count for the default model
    np.testing.assert_array_equal(_truncated(metric, [long], [STYLE]), [2])
    np.testing.assert_array_equal(_truncated(fast, [long], [STYLE]), [1])


def test_against_references_takes_the_best_reference():
    m = create("preservation", against="references")
    res = m.score(_batch([SOURCE], [STYLE], [[ENTITY, SOURCE]]))
    alone = create("preservation", against="source").score(_batch([SOURCE], [STYLE])).segment_scores[0]
    assert res.segment_scores[0] == pytest.approx(alone)
    with pytest.raises(InputError, match="needs references"):
        m.score(_batch([SOURCE], [STYLE]))


def test_bad_model_names_and_folders(tmp_path):
    with pytest.raises(UnknownNameError, match="preservation-minilm"):
        create("preservation", model="no-such-model")
    with pytest.raises(InputError, match="no model.json"):
        create("preservation", model=str(tmp_path))
    (tmp_path / "model.json").write_text(json.dumps({"format": "other"}))
    with pytest.raises(InputError, match="format"):
        PreservationModel.load(tmp_path)


def test_pair_files_are_checked_with_file_and_line(tmp_path):
    good = tmp_path / "pairs.tsv"
    good.write_text("source\toutput\tscore\tgroup\nA cat sat.\tA cat was sitting.\t1\thuman\n"
                    "A cat sat.\tA dog sat.\t0.2\tauto\n", encoding="utf-8")
    data = read_pairs(good)
    assert len(data) == 2 and data.groups == ["human", "auto"]
    np.testing.assert_allclose(data.group_weights(), [1.0, 1.0])
    bad = tmp_path / "bad.tsv"
    bad.write_text("source\toutput\tscore\nA cat sat.\tA dog sat.\t3\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"bad.tsv:2: score 3.0 is outside \[0, 1\]"):
        read_pairs(bad)
    empty = tmp_path / "empty.jsonl"
    empty.write_text('{"source": "A cat sat.", "output": "ok", "score": 1}\n'
                     '{"source": "A cat sat.", "output": " ", "score": 1}\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"empty.jsonl:2: empty output"):
        read_pairs(empty)
    cols = tmp_path / "cols.csv"
    cols.write_text("src,output,score\nA,B,1\n", encoding="utf-8")
    with pytest.raises(InputError, match="missing column\\(s\\) source; columns present: src, output, score"):
        read_pairs(cols)
    with pytest.raises(InputError, match="not a number"):
        (tmp_path / "nan.tsv").write_text("source\toutput\tscore\nA\tB\thigh\n", encoding="utf-8")
        read_pairs(tmp_path / "nan.tsv")


def test_group_weights_balance_groups():
    d = PairData(["a"] * 4, ["b"] * 4, [1, 0, 1, 0], ["big", "big", "big", "small"])
    w = d.group_weights()
    assert w[:3].sum() == pytest.approx(w[3]) and w.mean() == pytest.approx(1.0)


def test_soft_target_logistic_regression_matches_a_known_solution():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(4000, 2))
    p = 1 / (1 + np.exp(-(2.0 * x[:, 0] - 1.0 * x[:, 1] + 0.5)))
    coef, b = fit_logistic(x, p, np.ones(len(p)), c=1e6)  # soft targets = the true probabilities
    np.testing.assert_allclose(coef, [2.0, -1.0], atol=0.05)
    assert b == pytest.approx(0.5, abs=0.05)


def test_negatives_change_the_named_part_and_keep_the_rest():
    from styleval.nlp import parse_many

    texts = ["John flew to Boston with his two sisters on Monday.",
             "Mary visited Chicago last week because her brother lives there."]
    parsed = parse_many(texts)
    pool = DonorPool.build(parsed)
    new = swap_entity(parsed[0], pool, random.Random(1))
    assert new is not None and new != texts[0]
    assert sum(a != b for a, b in zip(new.split(), texts[0].split())) >= 1
    cut = delete_clause(parsed[1], pool, random.Random(2))
    assert cut is not None and len(cut.split()) < len(texts[1].split()) and cut.split()[0] == "Mary"


@pytest.mark.shared_data
def test_sgdd_spearman_of_the_shipped_models_on_its_first_600_pairs(shared_data):
    """Spearman with SGDD-TST's crowd score (never trained on) on its first 600 pairs, measured once for each shipped
    model (docs/results.md has all 10,287: default .552, bi-encoder .549, fast .445, cosine .418): the default
    model's cross-encoder and the bi-encoder's tuned cosine add most of it. On these 600 the default (version 4,
    with the plain cosine averaged in at .3) is a little below version 3 (.4822)."""
    from scipy.stats import spearmanr

    from styleval.meta.datasets import load_sgdd_tst

    frame = load_sgdd_tst(shared_data).extra["frame"].iloc[:600]
    src, out = frame["text1"].astype(str).tolist(), frame["text2"].fillna("").astype(str).tolist()
    human = frame["human"].astype(float).to_numpy()
    full, fast = load_preservation_model(DEFAULT_MODEL), load_preservation_model(FAST_MODEL)
    assert spearmanr(full.score(src, out), human)[0] == pytest.approx(0.4757, abs=0.002)
    assert spearmanr(fast.score(src, out), human)[0] == pytest.approx(0.3456, abs=0.002)
    cosine = fast.featurizer.features(src, out)[:, 0]  # MiniLM sentence cosine, the sentence_cosine metric
    assert spearmanr(cosine, human)[0] == pytest.approx(0.3147, abs=0.002)
    bi = load_preservation_model(BI_MODEL)
    # version 3 (adapters at .6) is .4608 here against version 2's .5155, while on all 10,287 pairs the two are level
    assert spearmanr(bi.score(src, out), human)[0] == pytest.approx(0.4608, abs=0.002)
    late = load_preservation_model(LATE_MODEL)  # below the bi-encoder here, as on all of SGDD-TST (results.md)
    assert spearmanr(late.score(src, out), human)[0] == pytest.approx(0.3436, abs=0.002)
