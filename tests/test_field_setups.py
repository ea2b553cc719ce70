"""``evaluate --setup``: the field's protocols by name, their formulas on fixed numbers, and end to end with small
local models standing in for the published ones (``--model-dir``), checked against a direct transformers /
sentence-transformers / sacrebleu computation of the same formula."""
from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from styleval.cli.main import main
from styleval.errors import ResourceUnavailableError
from styleval.evaluation.setups import SETUPS, get_setup, parse_model_dirs, resolved_models, setup_specs
from styleval.metrics.registry import create, parse_spec

from tiny_classifiers import build_classifier

pytest.importorskip("sentence_transformers")

SOURCE = ["you are a stupid idiot and nobody likes you", "this is the worst garbage i have ever read",
          "shut up, your idea is dumb", "what a pathetic excuse for a restaurant"]
OUTPUT = ["I do not agree with you.", "I did not enjoy reading this.", "Please stop, I disagree with your idea.",
          "This restaurant was disappointing."]
REFS = [["I disagree with you.", "Nobody agrees with you."], ["I did not like this text.", "This is bad writing."],
        ["Please be quiet, I do not like the idea.", "I disagree with the idea."],
        ["A disappointing restaurant.", "This restaurant was not good."]]


def test_every_setup_is_documented_with_pinned_models_and_its_sources():
    doc = (Path(__file__).parents[1] / "docs" / "field-models.md").read_text(encoding="utf-8")
    for setup in SETUPS.values():
        assert f"`{setup.name}`" in doc
        for m in setup.models:
            assert re.fullmatch(r"[0-9a-f]{40}", m.revision)
            assert m.hub_id in doc and m.revision in doc
        assert setup.formula and setup.paper and setup.code


def test_formulas_on_fixed_numbers(stand_ins):
    models = {"style": str(stand_ins["toxicity"]), "similarity": str(stand_ins["encoder"]),
              "fluency": str(stand_ins["cola"])}
    sta = np.array([1.0, 0.0, 1.0, 1.0])
    sim = np.array([0.9, 0.8, -0.2, 0.5])  # a negative cosine counts as no similarity
    flu = np.array([0.7, 0.9, 0.6, 0.5])  # P(acceptable); 0.5 passes (>= 0.5)
    for name in ("paradetox", "krishna2020"):
        *_, j_spec = setup_specs(SETUPS[name], models)
        name_, params = parse_spec(j_spec)
        j = create(name_, **params)
        got = j.combine_segments({"style": sta, "similarity": sim, "fluency": flu})
        by_hand = [1 * 0.9 * 1, 0 * 0.8 * 1, 1 * 0.0 * 1, 1 * 0.5 * 1]
        assert got == pytest.approx(by_hand)
        assert float(np.mean(got)) == pytest.approx((0.9 + 0.5) / 4)
    *_, hm_spec = setup_specs(SETUPS["gyafc"], {"style": str(stand_ins["formality"])})
    name_, params = parse_spec(hm_spec)
    hm = create(name_, **params)
    acc, bleu = 0.75, 42.0
    assert hm.combine_corpus({"style": acc, "content": bleu}, {}) == pytest.approx(2 * 0.75 * 0.42 / (0.75 + 0.42))


def test_without_the_hub_the_setup_names_the_models_to_fetch_in_one_line():
    setup = get_setup("paradetox")
    with pytest.raises(ResourceUnavailableError) as err:
        resolved_models(setup, {}, hub_allowed=False)
    text = str(err.value)
    assert "STYLEVAL_ALLOW_HUB=1" in text and "\n" not in text
    for m in setup.models:
        assert m.pinned in text and f"--model-dir {m.hub_id}=DIR" in text
    # local copies of all three: no hub needed; a local copy of one only: the other two are still named
    dirs = parse_model_dirs([f"{m.hub_id}=/x/{i}" for i, m in enumerate(setup.models)])
    assert resolved_models(setup, dirs, hub_allowed=False) == {m.role: f"/x/{i}" for i, m in enumerate(setup.models)}
    with pytest.raises(ResourceUnavailableError) as err:
        resolved_models(setup, {setup.models[0].hub_id: "/x"}, hub_allowed=False)
    assert setup.models[0].hub_id not in str(err.value).split("needs")[1].split("from")[0]


@pytest.fixture(scope="module")
def stand_ins(tmp_path_factory) -> dict[str, Path]:
    from styleval.models.catalog import lookup

    root = tmp_path_factory.mktemp("setup-models")
    # seeds chosen so that the decisions differ between outputs and J is not 0 (the tiny models' probabilities
    # are nearly constant for most seeds)
    return {"toxicity": build_classifier(root / "tox", "roberta", labels=("neutral", "toxic"), seed=4),
            "formality": build_classifier(root / "formality", "roberta", labels=("informal", "formal"), seed=7),
            "cola": build_classifier(root / "cola", "roberta", labels=("LABEL_0", "LABEL_1"), seed=2),
            "encoder": Path(lookup("minilm").locate())}


def _files(tmp_path: Path, outputs: list[str] = OUTPUT) -> list[str]:
    (tmp_path / "src.txt").write_text("\n".join(SOURCE) + "\n", encoding="utf-8")
    (tmp_path / "out.txt").write_text("\n".join(outputs) + "\n", encoding="utf-8")
    args = ["--source", str(tmp_path / "src.txt"), "--system", f"mine={tmp_path / 'out.txt'}"]
    for k in range(2):
        (tmp_path / f"ref{k}.txt").write_text("\n".join(r[k] for r in REFS) + "\n", encoding="utf-8")
        args += ["--reference", str(tmp_path / f"ref{k}.txt")]
    return args


def _probs(folder: Path, texts: list[str]) -> np.ndarray:
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(folder))
    model = AutoModelForSequenceClassification.from_pretrained(str(folder)).eval()
    with torch.no_grad():
        logits = model(**tok(texts, return_tensors="pt", padding=True, truncation=True)).logits
    return torch.softmax(logits.double(), dim=-1).numpy()


def _cosines(folder: Path, outputs: list[str], others: list[list[str]]) -> np.ndarray:
    from sentence_transformers import SentenceTransformer

    enc = SentenceTransformer(str(folder))

    def emb(texts):
        return enc.encode(texts, normalize_embeddings=True, convert_to_numpy=True).astype(np.float64)

    out = emb(outputs)
    return np.array([max(float(out[i] @ emb(group)[k]) for k in range(len(group))) for i, group in enumerate(others)])


def _run(tmp_path: Path, name: str, dirs: dict[str, Path], direction: str) -> dict:
    setup = get_setup(name)
    argv = ["evaluate", "--setup", name, *_files(tmp_path), "--direction", direction, "--bootstrap", "0",
            "--json", str(tmp_path / f"{name}.json"), "--no-progress"]
    for m in setup.models:
        argv += ["--model-dir", f"{m.hub_id}={dirs[m.role]}"]
    assert main(argv) == 0
    return json.loads((tmp_path / f"{name}.json").read_text())


def _corpus(data: dict, prefix: str) -> float:
    (row,) = [r for r in data["corpus"] if r["metric"].split(":")[0].split("/")[0] == prefix]
    return float(row["score"])


@pytest.mark.parametrize("name", ["paradetox", "krishna2020"])
def test_j_setups_end_to_end_equal_the_formula_computed_directly(name, stand_ins, tmp_path, capsys):
    style = stand_ins["toxicity"] if name == "paradetox" else stand_ins["formality"]
    direction = "toxic:neutral" if name == "paradetox" else "informal:formal"
    target = 0 if name == "paradetox" else 1  # index of the target label in the stand-in's id2label
    dirs = {"style": style, "similarity": stand_ins["encoder"], "fluency": stand_ins["cola"]}
    data = _run(tmp_path, name, dirs, direction)
    printed = capsys.readouterr().out
    assert get_setup(name).title in printed and "differs from the paper" in printed

    sta = (_probs(style, OUTPUT).argmax(axis=1) == target).astype(float)
    others = [[s] for s in SOURCE] if name == "paradetox" else REFS
    sim = np.clip(_cosines(stand_ins["encoder"], OUTPUT, others), 0, 1)
    fl = (_probs(stand_ins["cola"], OUTPUT)[:, 0] >= 0.5).astype(float)
    assert _corpus(data, "style_accuracy") == pytest.approx(sta.mean(), abs=1e-9)
    assert _corpus(data, "acceptability") == pytest.approx(fl.mean(), abs=1e-9)  # the share that passes
    assert 0 < fl.mean() < 1 and float(np.mean(sta * sim * fl)) > 0  # the product is not trivially 0
    assert _corpus(data, "j") == pytest.approx(float(np.mean(sta * sim * fl)), abs=1e-6)


def test_gyafc_setup_end_to_end_equals_accuracy_bleu_and_their_harmonic_mean(stand_ins, tmp_path):
    import sacrebleu

    data = _run(tmp_path, "gyafc", {"style": stand_ins["formality"]}, "informal:formal")
    acc = float((_probs(stand_ins["formality"], OUTPUT).argmax(axis=1) == 1).mean())
    assert 0 < acc < 1
    bleu = sacrebleu.corpus_bleu(OUTPUT, [[r[k] for r in REFS] for k in range(2)]).score
    assert _corpus(data, "style_accuracy") == pytest.approx(acc, abs=1e-9)
    assert _corpus(data, "bleu") == pytest.approx(bleu, abs=1e-9)
    hm = 0.0 if acc == 0 or bleu == 0 else 2 * acc * (bleu / 100) / (acc + bleu / 100)
    assert _corpus(data, "hm") == pytest.approx(hm, abs=1e-9)
