"""Style and fluency metrics on any transformers sequence classifier (issue #51): styleval's per-segment
probabilities against a direct transformers forward pass, the labels and threshold parameters, the signature's
model identity, and the faults (a clear one-line error or a documented result).

The classifiers are small BERT and RoBERTa models built in a temporary folder (tests/tiny_classifiers.py), with
tokenizers made there; nothing is downloaded.
"""
from __future__ import annotations

import math
import shutil
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest

import styleval
from styleval.errors import InputError, ResourceUnavailableError, UnknownNameError
from styleval.records import Direction, Record
from tiny_classifiers import CORPUS, build_causal_lm, build_classifier, build_encoder

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

MAX_LENGTH = 16
TOL = 1e-6
#: outputs of every length: short, around the model's limit, and far past it (so truncation happens)
OUTPUTS = [CORPUS[i % len(CORPUS)] + (" and so on" * (i % 7)) for i in range(70)]
SOURCES = [CORPUS[(i + 5) % len(CORPUS)] + (" as well" * (i % 5)) for i in range(70)]


@lru_cache(maxsize=None)
def _model(arch: str, labels: tuple[str, ...] | None = ("informal", "formal"), seed: int = 0) -> Path:
    import tempfile

    name = f"{arch}-{'-'.join(labels) if labels else 'regression'}-{seed}"
    return build_classifier(Path(tempfile.mkdtemp(prefix="tiny-clf-")) / name, arch, labels=labels,
                            max_length=MAX_LENGTH, seed=seed)


def _records(outputs=OUTPUTS, sources=SOURCES, direction=("informal", "formal")) -> list[Record]:
    return [Record(id=str(i), source=s, output=o, system="sys", direction=Direction(*direction))
            for i, (s, o) in enumerate(zip(sources, outputs))]


def _direct_logits(folder: Path, texts: list[str], batch: int) -> np.ndarray:
    """The head's outputs from transformers itself, batches in the given order, padded to the longest."""
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForSequenceClassification.from_pretrained(folder).eval()
    rows = []
    with torch.no_grad():
        for start in range(0, len(texts), batch):
            x = tok(texts[start:start + batch], padding=True, truncation=True, max_length=MAX_LENGTH,
                    return_tensors="pt")
            rows.append(model(**x).logits.numpy())
    return np.concatenate(rows).astype(np.float64)


def _softmax(z: np.ndarray) -> np.ndarray:
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def _case(arch: str) -> str:
    """BERT's tokenizer lower-cases (a case-blind model); RoBERTa reads case."""
    return "blind" if arch == "bert" else "sensitive"


def _truncated(folder: Path, texts: list[str]) -> list[str]:
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(folder)
    return [str(i) for i, t in enumerate(texts) if len(tok(t)["input_ids"]) > MAX_LENGTH]


# -- the builder ----------------------------------------------------------------------------------------------
def test_the_builder_is_deterministic(tmp_path):
    a = build_classifier(tmp_path / "a", "bert", seed=3)
    b = build_classifier(tmp_path / "b", "bert", seed=3)
    names = sorted(p.name for p in a.iterdir())
    assert names == sorted(p.name for p in b.iterdir()) and "model.safetensors" in names
    assert all((a / n).read_bytes() == (b / n).read_bytes() for n in names)


# -- equal to a direct forward pass -------------------------------------------------------------------------------
@pytest.mark.parametrize("batch_size", [1, 64])
@pytest.mark.parametrize("arch", ["bert", "roberta"])
def test_style_probability_equals_a_direct_forward_pass(arch, batch_size):
    folder = _model(arch)
    spec = f"style_probability:model={folder};case={_case(arch)};batch_size={batch_size}"
    res = styleval.score(_records(), [spec], bootstrap=0).results[0]
    for direct_batch in (1, 64):
        want = _softmax(_direct_logits(folder, OUTPUTS, direct_batch))[:, 1]  # P(formal), the target
        np.testing.assert_allclose(res.segment_scores, want, rtol=0, atol=TOL)
    cut = _truncated(folder, OUTPUTS)
    assert 0 < len(cut) < len(OUTPUTS) and res.flags.get("truncated") == cut


@pytest.mark.parametrize("arch", ["bert", "roberta"])
def test_style_accuracy_and_emd_follow_the_same_probabilities(arch):
    folder = _model(arch)
    target = ("formal", "informal")  # this direction's target is the model's label 0
    recs = _records(direction=target)
    common = f"model={folder};case={_case(arch)}"
    acc, emd = styleval.score(recs, [f"style_accuracy:{common}", f"style_emd:{common}"], bootstrap=0).results
    po = _softmax(_direct_logits(folder, OUTPUTS, 64))
    ps = _softmax(_direct_logits(folder, SOURCES, 64))
    np.testing.assert_array_equal(acc.segment_scores, (np.argmax(po, axis=1) == 1 - 1).astype(float))
    # Mir et al.'s EMD for two labels: |P_src - P_out| of the target, negative when the output has less of it
    want = np.abs(po[:, 0] - ps[:, 0]) * np.where(po[:, 0] >= ps[:, 0], 1.0, -1.0)
    np.testing.assert_allclose(emd.segment_scores, want, rtol=0, atol=TOL)
    cut = _truncated(folder, SOURCES)
    assert cut and emd.flags.get("source_truncated") == cut


@pytest.mark.parametrize("arch", ["bert", "roberta"])
def test_a_regression_head_with_a_threshold(arch):
    folder = _model(arch, None)
    threshold = float(np.median(_direct_logits(folder, OUTPUTS, 64)[:, 0]))  # half the outputs on each side
    common = f"model={folder};case={_case(arch)};labels=\"informal,formal\";threshold={threshold!r}"
    for direction, sign in ((("informal", "formal"), 1.0), (("formal", "informal"), -1.0)):
        acc, prob = styleval.score(_records(direction=direction), [f"style_accuracy:{common}",
                                                                    f"style_probability:{common}"],
                                   bootstrap=0).results
        score = _direct_logits(folder, OUTPUTS, 1)[:, 0]
        p_high = 1.0 / (1.0 + np.exp(-(score - threshold)))
        np.testing.assert_allclose(prob.segment_scores, p_high if sign > 0 else 1.0 - p_high, rtol=0, atol=TOL)
        high = score >= threshold
        np.testing.assert_array_equal(acc.segment_scores, (high if sign > 0 else ~high).astype(float))
        assert 0.3 < acc.corpus_score < 0.7


def test_three_labels_give_the_target_against_the_source():
    folder = _model("bert", ("informal", "neutral", "formal"))
    res = styleval.score(_records(), [f"style_probability:model={folder};case=blind",
                                      f"style_accuracy:model={folder};case=blind"], bootstrap=0).results
    p = _softmax(_direct_logits(folder, OUTPUTS, 64))
    want = p[:, 2] / (p[:, 2] + p[:, 0])  # P(formal) against P(informal); 'neutral' does not count
    np.testing.assert_allclose(res[0].segment_scores, want, rtol=0, atol=TOL)
    np.testing.assert_array_equal(res[1].segment_scores, (p[:, 2] > p[:, 0]).astype(float))


def test_labels_map_generic_names_to_styles():
    named = _model("roberta", ("informal", "formal"), seed=5)
    generic = _model("roberta", ("LABEL_0", "LABEL_1"), seed=5)  # the same weights, generic names
    want = styleval.score(_records(), [f"style_probability:model={named};case=sensitive"], bootstrap=0)
    for labels in ('"LABEL_0=informal,LABEL_1=formal"', '"label_1=Formal,LABEL_0=INFORMAL"', '"informal,formal"'):
        got = styleval.score(_records(), [f"style_probability:model={generic};case=sensitive;labels={labels}"],
                             bootstrap=0)
        np.testing.assert_array_equal(got.results[0].segment_scores, want.results[0].segment_scores)
    with pytest.raises(InputError) as err:
        styleval.score(_records(), [f"style_probability:model={generic};case=sensitive"], bootstrap=0)
    message = str(err.value)
    assert "LABEL_0, LABEL_1" in message and "labels=" in message and "\n" not in message


@pytest.mark.parametrize("batch_size", [1, 64])
def test_acceptability_equals_a_direct_forward_pass(batch_size):
    folder = _model("bert", ("unacceptable", "acceptable"))
    res = styleval.score(_records(), [f"acceptability:model={folder};normalize=none;batch_size={batch_size}"],
                         bootstrap=0).results[0]
    p = _softmax(_direct_logits(folder, OUTPUTS, 64))[:, 1]
    np.testing.assert_allclose(res.segment_scores, p, rtol=0, atol=TOL)
    assert res.corpus_score == pytest.approx(float(np.mean(p >= 0.5)))
    assert res.flags.get("truncated") == _truncated(folder, OUTPUTS)


def test_acceptable_label_names_the_acceptable_output():
    folder = _model("roberta", ("LABEL_0", "LABEL_1"), seed=2)
    p = _softmax(_direct_logits(folder, OUTPUTS, 64))
    for label, column in (("LABEL_0", 0), ("1", 1), ("label_1", 1)):
        res = styleval.score(_records(), [f"acceptability:model={folder};normalize=none;acceptable_label={label}"],
                             bootstrap=0).results[0]
        np.testing.assert_allclose(res.segment_scores, p[:, column], rtol=0, atol=TOL)
    with pytest.raises(InputError, match="acceptable_label=") as err:
        styleval.score(_records(), [f"acceptability:model={folder}"], bootstrap=0)
    assert "LABEL_0, LABEL_1" in str(err.value)


# -- identity in the signature ------------------------------------------------------------------------------------
def test_the_signature_holds_the_folders_content_hash(tmp_path):
    from styleval.models.hashing import content_hash

    folder = build_classifier(tmp_path / "clf", "bert", max_length=MAX_LENGTH)
    res = styleval.score(_records(OUTPUTS[:3], SOURCES[:3]), [f"style_accuracy:model={folder};case=blind"],
                         bootstrap=0).results[0]
    resources = res.signature.resources
    assert resources["style_model_hash"] == content_hash(folder)[:12]
    assert resources["style_labels"] == "informal,formal" and resources["style_calibration"] == "none"
    other = build_classifier(tmp_path / "other", "bert", max_length=MAX_LENGTH, seed=1)
    assert content_hash(other)[:12] != resources["style_model_hash"]


# -- faults ----------------------------------------------------------------------------------------------------
def _one_line_error(spec: str, error=InputError, records=None) -> str:
    with pytest.raises(error) as err:
        styleval.score(records or _records(OUTPUTS[:4], SOURCES[:4]), [spec], bootstrap=0)
    message = str(err.value)
    assert "\n" not in message, message
    return message


def test_an_encoder_without_a_classification_head_is_refused(tmp_path):
    folder = build_encoder(tmp_path / "encoder", "bert")
    message = _one_line_error(f"style_accuracy:model={folder}")
    assert "BertModel" in message and "not a sequence classifier" in message and str(folder) in message
    # without architectures in its config, the missing head weights give it away
    import json

    config = json.loads((folder / "config.json").read_text())
    config.pop("architectures", None)
    (folder / "config.json").write_text(json.dumps(config))
    assert "classification head" in _one_line_error(f"acceptability:model={folder};acceptable_label=1")


def test_a_causal_lm_is_refused(tmp_path):
    folder = build_causal_lm(tmp_path / "lm")
    message = _one_line_error(f"acceptability:model={folder};acceptable_label=1")
    assert "causal language model" in message and "GPT2LMHeadModel" in message


@pytest.mark.parametrize("damage", ["truncated", "corrupt"])
def test_damaged_weights_are_refused(tmp_path, damage):
    folder = build_classifier(tmp_path / "clf", "roberta", max_length=MAX_LENGTH)
    weights = folder / "model.safetensors"
    data = weights.read_bytes()
    weights.write_bytes(data[: len(data) // 2] if damage == "truncated" else b"\x00" * 64 + data[64:])
    message = _one_line_error(f"style_accuracy:model={folder};case=sensitive")
    assert "weights" in message and str(folder) in message


def test_a_folder_without_tokenizer_files_is_refused(tmp_path):
    folder = build_classifier(tmp_path / "clf", "bert", max_length=MAX_LENGTH)
    for name in ("tokenizer.json", "tokenizer_config.json", "vocab.txt", "special_tokens_map.json"):
        (folder / name).unlink(missing_ok=True)
    message = _one_line_error(f"style_accuracy:model={folder}")
    assert "no tokenizer files" in message and str(folder) in message


def test_labels_that_do_not_cover_the_direction_are_one_error():
    folder = _model("bert")
    message = _one_line_error(f"style_accuracy:model={folder};case=blind",
                              records=_records(OUTPUTS[:2], SOURCES[:2], ("negative", "positive")))
    assert "'positive'" in message and "informal, formal" in message and "labels=" in message


def test_a_regression_head_needs_a_threshold_and_its_poles():
    folder = _model("roberta", None)
    assert "threshold=" in _one_line_error(f"style_accuracy:model={folder};labels=\"informal,formal\"")
    assert "LOW,HIGH" in _one_line_error(f"style_accuracy:model={folder};threshold=0")
    assert "single output" in _one_line_error(f"acceptability:model={folder}")
    classifier = _model("roberta")
    assert "single-output" in _one_line_error(f"style_accuracy:model={classifier};threshold=0.5")


def test_styleval_model_parameters_are_refused_for_a_styleval_model():
    message = _one_line_error("style_accuracy:model=formality-classifier-pt16;labels=\"informal,formal\"")
    assert "transformers classifier" in message


def test_very_long_and_empty_outputs(tmp_path):
    folder = _model("roberta")
    long = " ".join(["word"] * 5000)  # far past any model's length
    outputs = [long, "", "   ", "Thank you."]
    style = styleval.score(_records(outputs, SOURCES[:4]), [f"style_probability:model={folder};case=sensitive"],
                           bootstrap=0).results[0]
    assert style.flags["truncated"] == ["0"] and style.flags["empty_output"] == ["1", "2"]
    want = _softmax(_direct_logits(folder, outputs, 1))[:, 1]  # the empty text is scored like any other
    np.testing.assert_allclose(style.segment_scores, want, rtol=0, atol=TOL)
    cola = _model("bert", ("unacceptable", "acceptable"))
    fl = styleval.score(_records(outputs, SOURCES[:4]), [f"acceptability:model={cola};normalize=none"],
                        bootstrap=0).results[0]
    assert fl.segment_scores[1] == 0.0 and fl.segment_scores[2] == 0.0  # as the shipped classifier: empty is 0
    assert fl.flags["truncated"] == ["0"] and math.isfinite(fl.segment_scores[0])


def test_a_hub_id_is_refused_offline(monkeypatch):
    monkeypatch.delenv("STYLEVAL_ALLOW_HUB", raising=False)
    message = _one_line_error("style_accuracy:model=some-org/formality-roberta", error=InputError)
    assert "STYLEVAL_ALLOW_HUB=1" in message
    message = _one_line_error("acceptability:model=some-org/roberta-cola", error=InputError)
    assert "STYLEVAL_ALLOW_HUB=1" in message
    # allowed, but the hub cannot be reached: one line naming the id, nothing half-loaded
    monkeypatch.setenv("STYLEVAL_ALLOW_HUB", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    message = _one_line_error("style_accuracy:model=some-org/formality-roberta", error=ResourceUnavailableError)
    assert "'some-org/formality-roberta'" in message


def test_unknown_names_still_list_the_shipped_models():
    with pytest.raises(UnknownNameError, match="formality-classifier-pt16"):
        styleval.score(_records(OUTPUTS[:2], SOURCES[:2]), ["style_accuracy:model=no-such-model"], bootstrap=0)


def test_the_score_command_takes_a_classifier_folder(tmp_path):
    from styleval.cli.main import main

    folder = shutil.copytree(_model("roberta"), tmp_path / "my classifier")
    (tmp_path / "src.txt").write_text("\n".join(SOURCES[:5]) + "\n", encoding="utf-8")
    (tmp_path / "out.txt").write_text("\n".join(OUTPUTS[:5]) + "\n", encoding="utf-8")
    out = tmp_path / "scores.json"
    code = main(["score", "--source", str(tmp_path / "src.txt"), "--system", str(tmp_path / "out.txt"),
                 "--direction", "informal:formal", "-m", f'style_accuracy:model="{folder}";case=sensitive',
                 "--bootstrap", "0", "--json", str(out), "--quiet"])
    assert code in (0, None)
    import json

    data = json.loads(out.read_text())
    assert "style_model_hash" in json.dumps(data)


# -- evaluate with the user's style and fluency classifiers ---------------------------------------------------------
def test_evaluate_takes_a_style_and_a_fluency_classifier():
    """J's STA and FL come from the given classifiers: j per segment is STA x SIM x FL computed from a direct
    forward pass of each, and the rationale names both models and says no human figures are known for them."""
    style = _model("roberta", ("LABEL_0", "LABEL_1"), seed=7)
    cola = _model("bert", ("unacceptable", "acceptable"), seed=8)
    outputs, sources = OUTPUTS[:12], SOURCES[:12]
    records = _records(outputs, sources) + [Record(id=r.id, source=r.source, output=r.source, system="copy",
                                                   direction=r.direction) for r in _records(outputs, sources)]
    from styleval.evaluation import evaluate

    ev = evaluate(records, style_model=str(style), style_labels="LABEL_0=informal,LABEL_1=formal",
                  fluency_model=str(cola), bootstrap=0, anchor=False)
    assert ev.settings["style_model"] == str(style) and ev.settings["fluency_model"] == str(cola)
    text = " ".join(ev.rationale)
    assert f"{str(style)!r}" in text and f"{str(cola)!r}" in text
    assert text.count("no human figures known for this model") == 2
    sta = (_softmax(_direct_logits(style, outputs, 64))[:, 1] > 0.5).astype(float)
    fl = (_softmax(_direct_logits(cola, outputs, 64))[:, 1] >= 0.5).astype(float)
    sim = np.clip(ev.result.get(ev.roles["similarity"], "sys").segment_scores, 0, 1)
    j = np.array([ev.overall_segments["j"]["sys"][str(i)] for i in range(len(outputs))])
    np.testing.assert_allclose(j, sta * sim * fl, atol=1e-9)
    from styleval.models.hashing import content_hash

    assert ev.result.get(ev.roles["style"], "sys").signature.resources["style_model_hash"] == content_hash(style)[:12]


# -- benchmark on the human sets -------------------------------------------------------------------------------------
def test_benchmark_takes_classifier_folders_and_rescoring_follows_the_model(shared_data, tmp_path):
    """``benchmark -m "style_accuracy:model=DIR"`` and ``-m "acceptability:model=DIR"`` run on Lai 2022's human
    judgments; the cache is keyed by the folder's content, so a model retrained in place is scored again."""
    from styleval.benchmark.scoring import score_metric
    from styleval.benchmark.sets import first_inputs, lai2022_set
    from styleval.cli import main as cli_main

    style = build_classifier(tmp_path / "style", "roberta", max_length=64)
    cola = build_classifier(tmp_path / "cola", "bert", labels=("unacceptable", "acceptable"), max_length=64)
    out = tmp_path / "bench.json"
    specs = f"style_probability:model={style},acceptability:model={cola}"
    assert cli_main.main(["benchmark", "-m", specs, "--sets", "lai2022", "--root", str(shared_data), "--inputs", "6",
                          "--no-stored", "--ci", "0", "--permutations", "0", "--json", str(out), "-q"]) == 0
    import json

    data = json.loads(out.read_text(encoding="utf-8"))
    scored = {(t["label"].split("] ")[1].split()[0], r["metric"]) for t in data["tasks"] for r in t["rows"]
              if r.get("statistic") is not None}
    assert {("style", "style_probability"), ("fluency", "acceptability")} <= scored
    assert "style_model_hash" in data["signatures"]["style_probability"]

    records = first_inputs(lai2022_set(shared_data), 3).records()
    spec = f"style_probability:model={style};case=sensitive"
    first = score_metric(spec, records, "lai2022", cache_dir=tmp_path / "cache")
    again = score_metric(spec, records, "lai2022", cache_dir=tmp_path / "cache")
    assert not first.cached and again.cached
    shutil.rmtree(style)
    build_classifier(style, "roberta", max_length=64, seed=11)  # retrained in place
    third = score_metric(spec, records, "lai2022", cache_dir=tmp_path / "cache")
    assert not third.cached and not np.allclose(third.table["score"], first.table["score"])


def test_the_evaluate_command_takes_the_classifier_options(tmp_path, capsys):
    from styleval.cli.main import main

    style = _model("roberta", ("LABEL_0", "LABEL_1"), seed=7)
    (tmp_path / "src.txt").write_text("\n".join(SOURCES[:6]) + "\n", encoding="utf-8")
    (tmp_path / "out.txt").write_text("\n".join(OUTPUTS[:6]) + "\n", encoding="utf-8")
    base = ["evaluate", "--source", str(tmp_path / "src.txt"), "--system", str(tmp_path / "out.txt"),
            "--direction", "informal:formal", "--bootstrap", "0", "--fast", "-q"]
    out = tmp_path / "ev.json"
    assert main([*base, "--style-model", str(style), "--style-labels", "LABEL_0=informal,LABEL_1=formal",
                 "--json", str(out)]) in (0, None)
    import json

    data = json.loads(out.read_text(encoding="utf-8"))
    assert any(str(style) in line and "transformers sequence classifier" in line for line in data["rationale"])
    assert 'labels="LABEL_0=informal,LABEL_1=formal"' in " ".join(data["metric_specs"])
    capsys.readouterr()
    assert main([*base, "--style-model", str(style)]) == 2  # generic labels, not mapped: one line naming labels=
    err = capsys.readouterr().err.strip()
    assert "labels=" in err and "LABEL_0, LABEL_1" in err and len(err.splitlines()) == 1
    assert main([*base, "--fluency-model", str(style)]) == 2  # fast mode has no fluency model
    assert "fast" in capsys.readouterr().err
