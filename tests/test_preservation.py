"""The learned content-preservation metric (``preservation``) and its model layer (styleval.preservation)."""
from __future__ import annotations

import json
import random

import numpy as np
import pytest

from styleval.preservation import (LogisticHead, PairData, PairSetup, PreservationModel, load_preservation_model,
                                   read_pairs)
from styleval.training.negatives import DonorPool, delete_clause, swap_entity
from styleval.preservation.model import FORMAT, Part, upgrade_config, upgrade_model_folder
from styleval.preservation.pretrained import DEFAULT_MODEL, FAST_MODEL, resolve_preservation_model, shipped_models
from styleval.training.preservation import fit_logistic
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


def test_the_package_ships_the_default_and_the_fast_model_only():
    assert sorted(shipped_models()) == [DEFAULT_MODEL, FAST_MODEL]


@pytest.mark.parametrize("name", [DEFAULT_MODEL, FAST_MODEL])
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
    assert (model.cross is not None) == (name == DEFAULT_MODEL)


def test_the_fast_model_is_the_default_models_feature_head():
    """preservation-minilm-fast is the head of preservation-minilm alone: same standardisation and coefficients."""
    full, fast = load_preservation_model(DEFAULT_MODEL), load_preservation_model(FAST_MODEL)
    for attr in ("mean", "scale", "coef"):
        np.testing.assert_allclose(getattr(full, attr), getattr(fast, attr), rtol=1e-9, atol=1e-12)
    assert full.intercept == pytest.approx(fast.intercept)
    assert [(p.kind, p.weight) for p in full.parts] == [("head", 0.35), ("cross_encoder", 0.35), ("cosine", 0.3)]
    assert [(p.kind, p.weight) for p in fast.parts] == [("head", 1.0)]


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


@pytest.mark.xfail(strict=True, reason="known weakness of the feature head alone (preservation-minilm-fast), "
                   "docs/preservation.md: on these hand-made pairs a near-copy with one swapped name or noun still "
                   "outscores a casual or polite rewrite in 2 of 4 cases; it leans on whole-sentence similarity. "
                   "The default model's cross-encoder fixes these cases (test above)")
def test_style_rewrites_beat_single_substitutions_fast_model():
    test_style_rewrites_beat_single_substitutions(create("preservation", against="source", model=FAST_MODEL))


def _with_parts(model: PreservationModel, parts: list[Part], cross=None) -> PreservationModel:
    return PreservationModel(head=head_of(model), pairs=PairSetup(model.encoder, model.spacy_model, model.style_words),
                             cross=cross, parts=parts)


def head_of(model: PreservationModel) -> LogisticHead:
    return LogisticHead(mean=model.mean, scale=model.scale, coef=model.coef, intercept=model.intercept,
                        ceiling=model.ceiling)


def test_the_default_scores_as_the_form_it_was_chosen_in_bit_for_bit():
    """Format 6's running mean over the parts (.35, .35, .3) gives exactly what format 4 computed:
    .7 * (.5 * head + .5 * cross-encoder) + .3 * clip(cosine, 0, 1), with each part scored on its own here."""
    model = load_preservation_model(DEFAULT_MODEL)
    srcs = [SOURCE] + [p[0] for p in PAIRS] * 2
    outs = [STYLE] + [p[1] for p in PAIRS] + [p[2] for p in PAIRS]
    feats = model.featurizer.features(srcs, outs)
    head, cross = model.from_features(feats), model.cross.score(srcs, outs)
    expected = (1.0 - 0.3) * (0.5 * head + 0.5 * cross) + 0.3 * np.clip(feats[:, 0], 0, 1)
    np.testing.assert_array_equal(model.score(srcs, outs), expected)


def test_a_cosine_part_averages_in_the_plain_sentence_cosine(tmp_path):
    """score = (1 - a) * head + a * clip(cosine, 0, 1), the cosine being the head's first feature; the parts survive
    a save and a load."""
    srcs = [SOURCE] + [p[0] for p in PAIRS] * 2
    outs = [STYLE] + [p[1] for p in PAIRS] + [p[2] for p in PAIRS]
    base = load_preservation_model(FAST_MODEL)
    blended = _with_parts(base, [Part("head", 0.7), Part("cosine", 0.3)])
    cosine = base.featurizer.features(srcs, outs)[:, 0]
    expected = 0.7 * base.score(srcs, outs) + 0.3 * np.clip(cosine, 0, 1)
    np.testing.assert_allclose(blended.score(srcs, outs), expected, atol=1e-12)
    folder = blended.save(tmp_path / "m")
    config = json.loads((folder / "model.json").read_text())
    assert config["format"] == FORMAT
    assert config["parts"] == [{"kind": "head", "file": "weights.npz", "weight": 0.7},
                               {"kind": "cosine", "weight": 0.3}]
    np.testing.assert_array_equal(PreservationModel.load(folder).score(srcs, outs), blended.score(srcs, outs))


@pytest.mark.parametrize("parts, problem", [
    ([Part("head", 0.5), Part("cosine", 0.4)], "add up to 1"),
    ([Part("cosine", 0.3), Part("head", 0.7)], "the head, then"),
    ([Part("head", 1.0), Part("cosine", 0.0)], "positive"),
    ([Part("head", 0.5), Part("bi_encoder", 0.5)], "unknown"),
    ([Part("head", 0.5), Part("cross_encoder", 0.5)], "needs a cross-encoder"),
])
def test_bad_parts_are_refused(parts, problem):
    with pytest.raises(InputError, match=problem):
        _with_parts(load_preservation_model(FAST_MODEL), parts)


def test_earlier_formats_are_refused_with_the_way_to_convert_them(tmp_path):
    """A format-4 folder (how preservation-minilm was shipped before) is refused in one line naming the folder and
    the converter; converted, it gives the shipped parts and scores exactly as the shipped default."""
    import shutil

    shipped = resolve_preservation_model(DEFAULT_MODEL)
    old = tmp_path / "v4"
    shutil.copytree(shipped, old)
    config = json.loads((shipped / "model.json").read_text())
    v4 = {k: v for k, v in config.items() if k != "parts"}
    v4.update({"format": "styleval-preservation/4", "head": "logistic",
               "cross_encoder": {"file": "cross.npz", "weight": 0.5, "rank": 16}, "cosine_weight": 0.3})
    (old / "model.json").write_text(json.dumps(v4))
    with pytest.raises(InputError, match=r"v4.model.json: format 'styleval-preservation/4' is an older .*"
                                         r"upgrade_model_folder\(") as info:
        PreservationModel.load(old)
    assert "\n" not in str(info.value) and str(old) in str(info.value)
    assert upgrade_config(v4) == config
    upgrade_model_folder(old)
    srcs, outs = [SOURCE] + [p[0] for p in PAIRS], [STYLE] + [p[2] for p in PAIRS]
    np.testing.assert_array_equal(PreservationModel.load(old).score(srcs, outs),
                                  load_preservation_model(DEFAULT_MODEL).score(srcs, outs))
    fast = json.loads((resolve_preservation_model(FAST_MODEL) / "model.json").read_text())
    v1 = {**{k: v for k, v in fast.items() if k != "parts"}, "format": "styleval-preservation/1", "head": "logistic"}
    assert upgrade_config(v1) == fast
    for gone in ("styleval-preservation/3", "styleval-preservation/5"):
        with pytest.raises(InputError, match="left styleval"):
            upgrade_config({**v1, "format": gone})


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
    model (docs/results.md has all 10,287: default .552, fast .445, cosine .418): the default model's
    cross-encoder adds most of it. On these 600 the default (version 4,
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
