"""llm_judge and logprop on the local backend (SmolLM2-135M-Instruct): templates, ratings, and the scores against
reference computations written the textbook way with transformers (chat template by transformers, full logits)."""
from __future__ import annotations

import math
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import numpy as np
import pytest

from styleval.errors import InputError
from styleval.judges.rating import parse_rating, weighted_rating
from styleval.judges.templates import SHIPPED_DIR, judge_template, logprop_template
from styleval.metrics import registry
from styleval.metrics.base import Aspect, Batch
from styleval.records import Direction

pytestmark = pytest.mark.usefixtures("one_torch_thread")

BATCH = Batch(ids=["a", "b", "c"],
              outputs=["Would you kindly send me the report?", "gimme the report lol", ""],
              sources=["send me the report", "Please send me the report.", "Please send me the report."],
              references=[[], [], []],
              directions=[Direction("informal", "formal"), Direction("formal", "informal"),
                          Direction("formal", "informal")])


# -- templates and ratings (no model) ---------------------------------------------------------------------------
def test_shipped_templates_read_and_render():
    for aspect in ("style", "content", "fluency"):
        t = judge_template(aspect)
        assert t.scale == (1, 2, 3, 4, 5) and t.file.name == f"shipped:{aspect}"
        msgs = t.messages({"source": "S{x}", "output": "O", "source_style": "informal", "target_style": "formal"})
        assert [m["role"] for m in msgs] == ["system", "user"]
        assert ("S{x}" in msgs[1]["content"]) == (aspect == "content")  # user braces pass through unformatted
    lp = logprop_template()
    assert lp.messages("rewrite", {"source": "hi", "target_style": "formal"})[1]["content"] == \
        "Rewrite the following sentence to be formal: hi"
    assert sorted(p.name for p in SHIPPED_DIR.glob("*.txt")) == ["content.txt", "fluency.txt", "logprop.txt",
                                                                 "style.txt"]


def test_a_users_template_and_its_errors(tmp_path):
    good = tmp_path / "mine.txt"
    good.write_text("# mine\n[user]\nRate {output} from 0 to 3.\n[scale]\n0-3\n", encoding="utf-8")
    t = judge_template("fluency", good)
    assert t.scale == (0, 1, 2, 3) and t.messages({"output": "x", "source": "", "source_style": "",
                                                   "target_style": ""}) == [{"role": "user",
                                                                             "content": "Rate x from 0 to 3."}]
    m = registry.create("llm_judge", aspect="fluency", template=str(good))
    assert m.value_range == (0.0, 3.0) and m.resources()["template_hash"] == t.file.short_hash
    cases = {"[user]\nRate {text}\n": ("unknown placeholder {text}", 2),
             "[user]\nRate\n[scale]\n1-10\n": ("[scale] must be two single digits", None),
             "Rate it\n[user]\nx\n": ("text before the first section", 1),
             "[system]\nx\n": ("no [user] section", None),
             "[user]\nx\n[user]\ny\n": ("appears twice", 3),
             "[user]\n\nRate {output\n": ("bad placeholder", 3),
             "[usr]\nx\n": ("unknown section [usr]", 1)}
    for text, (problem, line) in cases.items():
        bad = tmp_path / "bad.txt"
        bad.write_text(text, encoding="utf-8")
        with pytest.raises(InputError) as err:
            judge_template("style", bad)
        assert problem in str(err.value) and str(bad) in str(err.value)
        assert err.value.line == line
    with pytest.raises(InputError, match="cannot read"):
        judge_template("style", tmp_path / "absent.txt")


def test_weighted_and_parsed_ratings():
    top = [("The", math.log(0.5)), ("1", math.log(0.1)), (" 1", math.log(0.1)), ("5", math.log(0.2)),
           ("10", math.log(0.05)), ("4.", math.log(0.05))]
    rating, mass = weighted_rating(top, range(1, 6))
    assert mass == pytest.approx(0.4) and rating == pytest.approx((1 * 0.2 + 5 * 0.2) / 0.4)
    assert math.isnan(weighted_rating([("The", 0.0)], range(1, 6))[0])
    assert parse_rating("Rating: 4/5", range(1, 6)) == 4.0
    assert parse_rating("I'd say 10", range(1, 6)) != parse_rating("I'd say 10", range(1, 6))  # NaN: 10 is no digit
    assert math.isnan(parse_rating("9", range(1, 6))) and math.isnan(parse_rating("none", range(1, 6)))


def test_parameters_identity_and_checks():
    m = registry.create("llm_judge", aspect="content", concurrency=8, price="1/2")
    assert m.aspect is Aspect.CONTENT and registry.metric_class("llm_judge").aspect is Aspect.STYLE
    assert m.needs == frozenset({"source", "target_style"})
    params = m.get_params()
    assert params["aspect"] == "content" and params["temperature"] == 0
    assert not {"concurrency", "price", "api_key_env", "request_cache", "timeout"} & set(params)
    assert registry.create("logprop", part="style").aspect is Aspect.STYLE
    for name, bad in (("llm_judge", {"aspect": "tone"}), ("llm_judge", {"scoring": "vote"}),
                      ("llm_judge", {"top_logprobs": 50}), ("llm_judge", {"price": "cheap"}),
                      ("logprop", {"part": "both"}), ("logprop", {"base_url": "http://127.0.0.1:1/v1"}),
                      ("llm_judge", {"base_url": "http://user:secret@127.0.0.1:1/v1"})):
        with pytest.raises(InputError):
            registry.create(name, **bad)
    no_direction = Batch(ids=["x"], outputs=["hi"], sources=["hello"], references=[[]], directions=[None])
    with pytest.raises(InputError, match="direction"):
        registry.create("llm_judge", aspect="style").compute(no_direction)


# -- against textbook computations ------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def hf(smollm):
    from styleval.lm.loading import ensure_converted, load_causal_lm

    lm = load_causal_lm(backend="transformers")
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(ensure_converted(lm.spec)), local_files_only=True)
    return lm.model, tok


def _judge_reference(model, tok, messages, k=20):
    import torch

    ids = tok.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
    enc = torch.tensor([tok(ids, add_special_tokens=False)["input_ids"]])
    with torch.no_grad():
        logp = torch.log_softmax(model(enc).logits[0, -1].double(), dim=-1)
    values, top = torch.topk(logp, k)
    return ids, weighted_rating([(tok.decode([int(t)]), float(v)) for t, v in zip(top, values)], range(1, 6))


def test_llm_judge_matches_a_direct_transformers_computation(hf):
    model, tok = hf
    from styleval.judges.local import load_local

    local = load_local()
    for aspect in ("style", "content", "fluency"):
        metric = registry.create("llm_judge", aspect=aspect)
        stats = metric.compute(BATCH)
        for i in range(len(BATCH)):
            d = BATCH.directions[i]
            msgs = judge_template(aspect).messages({"source": BATCH.sources[i], "output": BATCH.outputs[i],
                                                    "source_style": d.source_style, "target_style": d.target_style})
            prompt, (rating, mass) = _judge_reference(model, tok, msgs)
            assert local.chat.render(msgs) == prompt  # our Jinja rendering is transformers'
            assert stats.values[i, 0] == pytest.approx(rating, abs=1e-4)
            assert stats.values[i, 1] == pytest.approx(mass, rel=1e-3)
            assert stats.values[i, 2] == 1.0
        assert stats.resources["scoring_used"] == "probability"
        assert stats.resources["judge_model_hash"] == metric.resources()["judge_model_hash"]


def test_parsed_scoring_reads_the_greedy_answer(hf):
    import torch

    model, tok = hf
    metric = registry.create("llm_judge", aspect="fluency", scoring="parsed", max_tokens=4)
    stats = metric.compute(BATCH)
    for i in range(len(BATCH)):
        msgs = judge_template("fluency").messages({"source": "", "output": BATCH.outputs[i], "source_style": "",
                                                   "target_style": ""})
        enc = tok.apply_chat_template(msgs, add_generation_prompt=True, tokenize=False)
        ids = torch.tensor([tok(enc, add_special_tokens=False)["input_ids"]])
        with torch.no_grad():
            out = model.generate(ids, max_new_tokens=4, do_sample=False, eos_token_id=tok.eos_token_id,
                                 pad_token_id=tok.pad_token_id)
        text = tok.decode(out[0, ids.shape[1]:], skip_special_tokens=True)
        expected = parse_rating(text, range(1, 6))
        assert (math.isnan(expected) and math.isnan(stats.values[i, 0])) or stats.values[i, 0] == expected
    assert set(np.flatnonzero(np.isnan(stats.values[:, 0]))) == set(stats.flags["no_rating"])


def _logprop_reference(model, tok, source, output, style, skip_first=True):
    """Pauli et al.'s calculate_delta, rewritten: three prompts, output + end of turn tokenized apart, softmax
    probabilities of the output's tokens (from the second on, as their slices do)."""
    import torch

    system = logprop_template().file.sections["system"]
    users = [f"Paraphrase the following sentence: {source}", f"Rewrite the following sentence to be {style}: {source}",
             f"Repeat the following sentence: {source}"]
    probs = []
    for user in users:
        prompt = tok.apply_chat_template([{"role": "system", "content": system}, {"role": "user", "content": user}],
                                         add_generation_prompt=True, tokenize=False)
        head = tok(prompt, add_special_tokens=False)["input_ids"]
        tail = tok(output + tok.eos_token, add_special_tokens=False)["input_ids"]
        ids = torch.tensor([head + tail])
        with torch.no_grad():
            logits = model(ids).logits[0].double()
        start = len(head) if skip_first else len(head) - 1
        p = torch.softmax(logits[start:-1], dim=-1).gather(1, ids[0, start + 1:, None])[:, 0]
        probs.append(p.numpy())
    first, second, third = probs
    return float(np.mean(np.log(np.maximum(np.maximum(first, second), third)))), \
        float(np.mean(second - np.maximum(first, third)))


def test_logprop_matches_the_authors_formula(hf):
    model, tok = hf
    content = registry.create("logprop")
    style = registry.create("logprop", part="style")
    every = registry.create("logprop", score_first_token=True)
    got, got_style, got_every = (m.score(BATCH).segment_scores for m in (content, style, every))
    for i in range(2):
        d = BATCH.directions[i]
        c, s = _logprop_reference(model, tok, BATCH.sources[i], BATCH.outputs[i], d.target_style)
        assert got[i] == pytest.approx(c, abs=1e-4) and got_style[i] == pytest.approx(s, abs=1e-4)
        c_all, _ = _logprop_reference(model, tok, BATCH.sources[i], BATCH.outputs[i], d.target_style, False)
        assert got_every[i] == pytest.approx(c_all, abs=1e-4)
    assert math.isnan(got[2]) and content.score(BATCH).flags["no_tokens"] == ["c"]  # empty output: only the end
    assert not math.isnan(got_every[2])


def test_batching_and_the_model_output_store_change_nothing(tmp_path, smollm):
    from styleval.engine.model_cache import ModelOutputCache
    from styleval.models.outputs import use_store

    metric = registry.create("llm_judge", aspect="content")
    one_by_one = np.concatenate([metric.compute(Batch(ids=[BATCH.ids[i]], outputs=[BATCH.outputs[i]],
                                                      sources=[BATCH.sources[i]], references=[[]],
                                                      directions=[BATCH.directions[i]])).values
                                 for i in range(len(BATCH))])
    tiny = registry.create("llm_judge", aspect="content", batch_tokens=1)  # one prompt per forward pass
    np.testing.assert_allclose(tiny.compute(BATCH).values, one_by_one, atol=1e-6)
    with ModelOutputCache(tmp_path / "outputs.sqlite") as store, use_store(store):
        first = metric.compute(BATCH).values
        assert store.misses == 3 and store.hits == 0
        again = metric.compute(BATCH).values
        assert store.hits == 3
        lp1 = registry.create("logprop").compute(BATCH).values
        lp2 = registry.create("logprop", part="style").compute(BATCH).values  # the same LM pass, from the store
        assert store.hits == 3 + 9
    np.testing.assert_array_equal(first, again)
    np.testing.assert_array_equal(lp1, lp2)
    np.testing.assert_allclose(first, one_by_one, atol=2e-5)  # float32 matmuls of other shapes: ~3e-6 apart


def test_score_end_to_end_with_signature(smollm):
    import styleval

    records = [styleval.Record(id=str(i), source=s, output=o, system="A", direction="informal->formal")
               for i, (s, o) in enumerate([("u r gr8", "You are great."), ("idk lol", "I do not know.")])]
    result = styleval.score(records, ["llm_judge:aspect=style", "logprop"], bootstrap=50)
    judge = result.get("llm_judge", "A")
    assert judge.aspect is Aspect.STYLE and 1 <= judge.corpus_score <= 5 and judge.ci is not None
    sig = str(judge.signature)
    assert "template_hash:" in sig and "judge_model_hash:" in sig and "scoring_used:probability" in sig
    assert judge.extra["prompts"] == 2
    lp = result.get("logprop", "A")
    assert lp.aspect is Aspect.CONTENT and lp.corpus_score < 0
