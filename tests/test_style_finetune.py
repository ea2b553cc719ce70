"""Fine-tuned (low-rank adapted) style models: the adapter arithmetic, learning, saving and the CLI."""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
import torch
from scipy.stats import spearmanr

from styleval.errors import InputError
from styleval.style_models import AdaptedEncoderBlock, LabelledData, StyleModel
from styleval.training.options import CardText, FinetuneOptions, HeadOptions, StyleTarget
from styleval.training.style_finetune import finetune_style_model
from styleval.models.lora import target_modules
from styleval.models.lora import LoraAdapter

FORMAL = ["I would be grateful if you could send the report.", "We regret to inform you of the delay.",
          "Please find the requested documents attached.", "The committee will convene on Monday.",
          "I am writing to request further information.", "Kindly confirm your attendance at the meeting.",
          "The results are presented in the following section.", "We appreciate your patience in this matter."]
INFORMAL = ["lol thats so funny dude", "omg i cant believe it!!!", "gonna grab some food brb",
            "yeah whatever u say lol", "haha nah im good thx", "dude wtf was that",
            "ugh mondays suck so bad", "kinda tired tbh, ttyl"]


def test_hooked_adapter_equals_merged_weight():
    torch.manual_seed(0)
    layer = torch.nn.Linear(6, 5)
    adapter = LoraAdapter(layer, rank=2, scale=3.0, dropout=0.0)
    with torch.no_grad():
        adapter.B.normal_()
    x = torch.randn(4, 6)
    hooked = layer(x)
    adapter.handle.remove()
    with torch.no_grad():
        plain = layer(x)
        layer.weight += 3.0 * adapter.B @ adapter.A
        merged = layer(x)
    assert not torch.allclose(hooked, plain)  # the adapter does change the output
    torch.testing.assert_close(hooked, merged, rtol=1e-5, atol=1e-5)


def test_target_modules_of_minilm_and_unknown_targets():
    from styleval.models.encoder import private_encoder

    _, enc = private_encoder("minilm")
    ident = AdaptedEncoderBlock().resources()
    names = target_modules(enc, ("query", "value"))
    layers = enc.config.num_hidden_layers
    assert len(names) == 2 * layers and all(n.endswith((".query", ".value")) for n in names)
    assert ident["encoder_hash"]
    with pytest.raises(InputError, match="none of the layers"):
        target_modules(enc, ("no_such_layer",))


@pytest.fixture(scope="module")
def tiny_regressor():
    texts = FORMAL + INFORMAL
    scores = [2.0] * len(FORMAL) + [-2.0] * len(INFORMAL)
    data = LabelledData(texts, scores, "tiny.tsv")
    model = finetune_style_model(data, selection=data, held_out=data,
                                 target=StyleTarget(kind="regressor", poles=("informal", "formal")),
                                 tuning=FinetuneOptions(epochs=6, lr=2e-3, head_lr=1e-2, batch_size=8, rank=4,
                                                        alpha=8.0, device="cpu"),
                                 card=CardText(name="tiny-ft"))
    return model, data


def test_finetuned_regressor_learns_and_records_its_card(tiny_regressor):
    model, data = tiny_regressor
    pred = model.regress(data.texts)
    assert spearmanr(pred, data.labels)[0] > 0.8
    assert np.mean(pred[:len(FORMAL)]) > np.mean(pred[len(FORMAL):]) + 1.0
    card = model.card
    assert card["held_out"]["scores"]["spearman"] == pytest.approx(spearmanr(pred, data.labels)[0], abs=1e-6)
    epochs = card["selection"]["epochs"]
    assert len(epochs) == 6 and card["selection"]["chosen"]["epoch"] == max(
        epochs, key=lambda e: e["selection"])["epoch"]
    assert card["parameters"]["fine_tuning"]["rank"] == 4
    block = model.blocks[0]
    assert isinstance(block, AdaptedEncoderBlock) and block.lora
    assert all(a.shape[0] == 4 and b.shape[1] == 4 for a, b in block.lora.values())


def test_saved_model_reloads_with_identical_scores(tiny_regressor, tmp_path):
    model, data = tiny_regressor
    folder = model.save(tmp_path / "ft")
    size = sum(p.stat().st_size for p in folder.iterdir())
    assert size < 3_000_000  # adapters and head only, not the encoder
    again = StyleModel.load(folder)
    np.testing.assert_allclose(again.regress(data.texts), model.regress(data.texts), rtol=1e-5, atol=1e-5)
    meta = json.loads((folder / "model.json").read_text())
    assert meta["blocks"][0]["kind"] == "adapted-encoder"


def test_finetune_rejects_bad_input():
    with pytest.raises(InputError, match="at least 4"):
        finetune_style_model(LabelledData(["a", "b"], ["x", "y"], "t.tsv"))
    with pytest.raises(InputError, match="two labels"):
        finetune_style_model(LabelledData(["a", "b", "c", "d", "e"], ["x"] * 5, "t.tsv"), selection=None)
    with pytest.raises(InputError, match="numeric"):
        finetune_style_model(LabelledData(["a", "b", "c", "d"], ["x", "y", "x", "y"], "t.tsv"),
                             selection=LabelledData(["a"], ["x"], "s.tsv"), target=StyleTarget(kind="regressor"))


def test_cli_train_style_finetune_classifier(tmp_path):
    rows = ["text\tlabel"] + [f"{t}\tformal" for t in FORMAL] + [f"{t}\tinformal" for t in INFORMAL]
    table = tmp_path / "train.tsv"
    table.write_text("\n".join(rows) + "\n", encoding="utf-8")
    out = tmp_path / "model"
    proc = subprocess.run([sys.executable, "-m", "styleval.cli.main", "train-style", str(table), "-o", str(out),
                           "--features", "finetune", "--epochs", "3", "--lr", "2e-3", "--rank", "4",
                           "--selection", str(table), "--held-out", str(table), "--device", "cpu"],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert f"wrote {out}" in proc.stdout
    card = json.loads((out / "model_card.json").read_text())
    assert card["labels"] == ["formal", "informal"]
    assert card["parameters"]["fine_tuning"]["epochs"] == 3 and card["parameters"]["fine_tuning"]["rank"] == 4
    assert "--features finetune" in card["command"]
    model = StyleModel.load(out)
    assert card["held_out"]["scores"]["accuracy"] == pytest.approx(
        float(np.mean(model.predict(FORMAL + INFORMAL) == np.array(["formal"] * 8 + ["informal"] * 8))))


def test_cli_train_style_tfidf(tmp_path):
    rows = ["text,label"] + [f'"{t}",formal' for t in FORMAL] + [f'"{t}",informal' for t in INFORMAL]
    table = tmp_path / "train.csv"
    table.write_text("\n".join(rows) + "\n", encoding="utf-8")
    out = tmp_path / "lin"
    proc = subprocess.run([sys.executable, "-m", "styleval.cli.main", "train-style", str(table), "-o", str(out),
                           "--alias", "formality=formal", "--held-out", str(table)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    card = json.loads((out / "model_card.json").read_text())
    assert card["aliases"] == {"formality": "formal"} and card["held_out"]["scores"]["accuracy"] > 0.9
    bad = subprocess.run([sys.executable, "-m", "styleval.cli.main", "train-style", str(table), "-o", str(out),
                          "--alias", "formality"], capture_output=True, text=True, timeout=300)
    assert bad.returncode != 0 and "STYLE=LABEL" in bad.stderr


def test_ridge_on_a_fine_tuned_encoder_and_hand_features(tiny_regressor, tmp_path):
    """The shipped PT16 regressor's second stage: a fitted encoder block reused as features of a linear head."""
    from styleval.training.style import train_style_model

    ft, data = tiny_regressor
    encoder = ft.blocks[0]
    model = train_style_model(data, selection=data, target=StyleTarget(kind="regressor", poles=("informal", "formal")),
                              head=HeadOptions(features="hand", fitted_blocks=[encoder], grid=[1.0]))
    assert [b.kind for b in model.blocks] == ["adapted-encoder", "hand"]
    assert model.card["parameters"]["features"][0]["kind"] == "adapted-encoder"
    assert spearmanr(model.regress(data.texts), data.labels)[0] > 0.8
    again = StyleModel.load(model.save(tmp_path / "hybrid"))
    np.testing.assert_allclose(again.regress(data.texts), model.regress(data.texts), rtol=1e-5, atol=1e-5)
    with pytest.raises(InputError, match="no feature blocks"):
        train_style_model(data, selection=data, target=StyleTarget(kind="regressor"), head=HeadOptions(features=""))
