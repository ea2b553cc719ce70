"""evaluate runs each encoder once per distinct text it reads (issue #46): the style classifier's adapted MiniLM,
MiniLM sentence embeddings (sentence_cosine) and MiniLM token embeddings (BERTScore) each see every distinct output
and source exactly once, however many metrics and systems read them. Counted on the real models: a forward hook on
each encoder sees every row it encodes. Loads are timed apart from the passes (``Evaluation.timing``)."""
from __future__ import annotations

import dataclasses

import pytest

pytestmark = pytest.mark.usefixtures("one_torch_thread")

N_INPUTS = 12


@pytest.fixture(scope="module")
def yelp_pair(shared_data):
    """DualRL and UnsuperMT_Zhang on the first inputs of yelp-dualrl; UnsuperMT_Zhang's first three outputs are made
    DualRL's, so the systems share some outputs (a memo that ran per system would encode them twice)."""
    from styleval.datasets import read_yelp_dualrl

    records = read_yelp_dualrl(shared_data, systems=["DualRL", "UnsuperMT_Zhang"], include_humans_as_systems=False)
    by = {s: [r for r in records if r.system == s][:N_INPUTS] for s in ("DualRL", "UnsuperMT_Zhang")}
    shared = {r.id: r.output for r in by["DualRL"][:3]}
    return by["DualRL"] + [dataclasses.replace(r, output=shared.get(r.id, r.output)) for r in by["UnsuperMT_Zhang"]]


def _count_rows(module, rows: list[int]):
    def hook(mod, args, kwargs):
        ids = kwargs.get("input_ids", args[0] if args else None)
        if not hasattr(ids, "shape"):  # a SentenceTransformer takes its features as one mapping
            ids = ids["input_ids"]
        rows.append(int(ids.shape[0]))

    return module.register_forward_pre_hook(hook, with_kwargs=True)


def test_each_encoder_reads_each_distinct_text_once(yelp_pair, smollm):
    from styleval.evaluation import evaluate
    from styleval.metrics.fluency import lm_shared
    from styleval.models.encoder import sentence_encoder, transformer
    from styleval.models.pool import embedding_cache
    from styleval.style_models.adapted_block import AdaptedEncoderBlock
    from styleval.style_models.pretrained import load_style_model

    style = load_style_model("sentiment-classifier-yelp")
    block = next(b for b in style.blocks if isinstance(b, AdaptedEncoderBlock))
    encoders = {"style": block._encoder()[1], "sentence": sentence_encoder("minilm"),
                "token": transformer("minilm")[1]}
    assert len({id(m) for m in encoders.values()}) == 3  # three distinct modules: no row counted twice
    rows: dict[str, list[int]] = {k: [] for k in encoders}
    hooks = [_count_rows(m, rows[k]) for k, m in encoders.items()]
    embedding_cache().clear()  # the process-wide embedding cache would serve texts earlier tests encoded
    lm_shared.clear_cache()
    try:
        ev = evaluate(yelp_pair, bootstrap=0, significance="none")
    finally:
        for h in hooks:
            h.remove()

    # the systems' outputs and sources, and the anchor row's outputs (each input's first reference, #45)
    assert "human-reference" in ev.systems
    distinct = {t for r in yelp_pair for t in (r.output, r.source, r.references[0])}
    assert len(distinct) < 4 * N_INPUTS  # shared outputs and sources: fewer texts than the metrics read
    assert {k: sum(v) for k, v in rows.items()} == {k: len(distinct) for k in encoders}
    passes = ev.timing["model_passes"]
    assert passes["style classifier sentiment-classifier-yelp"]["texts"] == len(distinct)
    assert passes["sentence encoder minilm"]["texts"] == len(distinct)
    assert passes["token encoder minilm layer 6"]["texts"] == len(distinct)
    # everything was loaded before this evaluate (the hooks needed the models), so no load is timed in it ...
    assert "adapted encoder minilm" not in ev.timing["loads"]
    # ... and the style metrics read the classifier's decisions for every output
    assert len(ev.result.get("style_accuracy", "DualRL").segment_scores) == N_INPUTS


def test_a_first_pass_times_its_load_apart(yelp_pair):
    """A style model whose adapted encoder is not loaded yet: the load (its imports included) is a ``load`` entry,
    and the style classifier's pass entry is the encoding alone (the two add up to the time inside the pass)."""
    from styleval.models.passes import time_log
    from styleval.style_models.adapted_block import AdaptedEncoderBlock
    from styleval.style_models.model import StyleModel
    from styleval.style_models.pretrained import resolve_style_model

    model = StyleModel.load(resolve_style_model("sentiment-classifier-yelp"))  # a fresh copy, not the pool's
    block = next(b for b in model.blocks if isinstance(b, AdaptedEncoderBlock))
    assert block._runtime is None
    texts = [r.output for r in yelp_pair[:4]]
    with time_log() as log:
        first = model._decision(texts)
    facts = log.to_dict()
    assert facts["load"]["adapted encoder minilm"]["calls"] == 1
    assert facts["model"]["style classifier sentiment-classifier-yelp"]["texts"] == 4
    with time_log() as log:
        again = model._decision(texts)
    assert "load" not in log.to_dict()
    assert (first == again).all()
