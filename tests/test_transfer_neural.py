"""Neural transfer baselines: parallel data and splits, the NMT and NMT-with-copy networks, the CLI verbs."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from styleval.cli.main import main
from styleval.errors import InputError
from styleval.datasets.paradetox import parallel_splits as load_paradetox_splits
from styleval.training.transfer.neural.data import (ParallelData, RewriteGroup, holdout, read_parallel_files,
                                                    split_by_source)

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("tokenizers")


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def test_parallel_files_and_errors(tmp_path):
    src = _write(tmp_path / "src.txt", ["you are an idiot", "shut up"])
    t1 = _write(tmp_path / "t1.txt", ["you are wrong", "please be quiet"])
    t2 = _write(tmp_path / "t2.txt", ["you are mistaken", ""])
    data = read_parallel_files(src, [t1, t2])
    assert data.groups == [RewriteGroup("you are an idiot", ("you are wrong", "you are mistaken")),
                           RewriteGroup("shut up", ("please be quiet",))]
    assert len(data.pairs()) == 3 and len(data.data_hash()) == 64
    short = _write(tmp_path / "short.txt", ["x"])
    with pytest.raises(InputError, match="1 lines, but the source file"):
        read_parallel_files(src, short)
    with pytest.raises(InputError, match=r"t2.txt:2: empty target"):
        read_parallel_files(src, [t2])
    blank = _write(tmp_path / "blank.txt", ["a", " "])
    with pytest.raises(InputError, match=r"blank.txt:2: empty source"):
        read_parallel_files(blank, t1)


def test_split_by_source_never_cuts_a_group():
    groups = [RewriteGroup(f"s{i}", (f"t{i}a", f"t{i}b")) for i in range(100)] + [RewriteGroup("s3", ("dup",))]
    parts = split_by_source(groups, seed=1)
    assert [len(parts[k]) for k in ("train", "dev", "test")] == [80, 10, 10] or \
        sum(len(p) for p in parts.values()) == 100  # the duplicate "s3" is dropped when it is held out
    train = set(parts["train"].sources)
    assert not train & set(parts["dev"].sources) and not train & set(parts["test"].sources)
    assert split_by_source(groups, seed=1)["test"].sources == parts["test"].sources
    assert split_by_source(groups, seed=2)["test"].sources != parts["test"].sources
    tr, dev = holdout(ParallelData(groups[:100]), 0.1, seed=0)
    assert len(dev) == 10 and len(tr) == 90 and not set(tr.sources) & set(dev.sources)


@pytest.mark.shared_data
def test_paradetox_split_matches_the_toxicity_classifier_split(shared_data):
    """Test sources are exactly the toxic sentences the shipped classifier held out (same shuffle, seed 13)."""
    from styleval.datasets.paradetox import labelled_splits as load_paradetox

    parts = load_paradetox_splits(shared_data)
    held = load_paradetox(shared_data)["test"]
    toxic = {t for t, y in zip(held.texts, held.labels) if y == "toxic"}
    assert set(parts["test"].sources) == toxic and len(parts["test"]) == 1194
    assert len(parts["train"]) == 9543 and len(parts["train"].pairs()) == 15798
    assert not set(parts["train"].sources) & set(parts["test"].sources)


TINY = dict(vocab_size=120, d_model=32, layers=1, heads=2, ffn=64, max_tokens=16, batch_size=8, lr=3e-3,
            warmup=5, epochs=1, max_minutes=2.0, dev_pairs=8)


@pytest.mark.parametrize("kind", ["nmt", "nmt-copy"])
def test_output_distribution_is_normalised_and_copy_mass_stays_on_the_source(kind):
    from styleval.training.transfer.neural.seq2seq import Seq2SeqConfig, _torch_modules

    _, net_class = _torch_modules()
    torch.manual_seed(0)
    net = net_class(Seq2SeqConfig(kind=kind, **TINY), 50).eval()
    src = torch.tensor([[5, 6, 7, 2], [8, 9, 2, 0]])
    mask = (src != 0).long()
    dec = torch.tensor([[1, 10], [1, 11]])
    with torch.no_grad():
        enc = net.encode(src, mask)
        logp = net.log_probs(src, mask, enc, dec)
        assert torch.allclose(logp.exp().sum(-1), torch.ones(2, 2), atol=1e-4)
        if kind == "nmt-copy":
            torch.nn.init.constant_(net.gate.bias, -50.0)  # p_gen ~ 0: pure copying
            torch.nn.init.zeros_(net.gate.weight)
            p = net.log_probs(src, mask, enc, dec).exp()
            assert float(p[0, :, [5, 6, 7, 2]].sum(-1).min()) > 0.999  # only the first source's tokens
            assert float(p[1, :, [8, 9, 2]].sum(-1).min()) > 0.999  # padding gets no mass


def _toy_pairs(n: int) -> list[tuple[str, str]]:
    words = "alpha beta gamma delta omega sigma kappa theta".split()
    pairs = []
    for i in range(n):
        a, b = words[i % 8], words[(i * 3 + 1) % 8]
        pairs.append((f"{a} damn {b}", f"{a} {b}"))
    return pairs


def test_copy_model_learns_a_deletion_and_round_trips(tmp_path):
    """About 100 steps on a toy deletion task: selection NLL halves; the saved model rewrites deterministically."""
    from styleval.training.transfer.neural.seq2seq import Seq2SeqConfig, Seq2SeqRewriter, train_seq2seq

    pairs = _toy_pairs(64)
    cfg = Seq2SeqConfig(kind="nmt-copy", **{**TINY, "epochs": 12})
    log = train_seq2seq(pairs, pairs[:8], tmp_path / "m", cfg)
    nll = [e["dev_nll"] for e in log["epochs"]]
    assert nll[-1] < 0.5 * nll[0], nll
    model = Seq2SeqRewriter(tmp_path / "m")
    out = model.rewrite(["beta damn kappa", "alpha damn beta"])
    assert out == model.rewrite(["beta damn kappa", "alpha damn beta"])  # greedy decoding is deterministic
    assert all(o.strip() and "damn" not in o for o in out), out  # ~100 steps: the deletion, not yet every word


def test_cli_train_transfer_and_apply(tmp_path, capsys):
    pairs = [(f"{s} {i}", f"{t} {i}") for i, (s, t) in enumerate(_toy_pairs(40))]  # 40 distinct sources
    src = _write(tmp_path / "src.txt", [s for s, _ in pairs])
    tgt = _write(tmp_path / "tgt.txt", [t for _, t in pairs])
    out = tmp_path / "model"
    # the CLI's defaults are CPU-sized, not test-sized: a one-minute budget and a small batch keep this short
    rc = main(["train-transfer", "--kind", "nmt", "--train-src", str(src), "--train-tgt", str(tgt), "--direction",
               "toxic->neutral", "--out", str(out), "--max-minutes", "0.3", "--epochs", "1", "--batch-size", "8",
               "--no-progress"])
    assert rc == 0
    card = json.loads((out / "transfer-card.json").read_text(encoding="utf-8"))
    assert card["kind"] == "nmt" and card["direction"] == "toxic->neutral"
    assert card["training"]["data"]["pairs"] == 38 and card["training"]["selection"]["pairs"] == 2  # 5 % held out
    assert (out / "README.md").read_text(encoding="utf-8").startswith("# model")
    inp = _write(tmp_path / "in.txt", ["alpha damn beta", "", "gamma damn delta"])
    capsys.readouterr()
    assert main(["transfer", "--model", str(out), str(inp), "-o", str(tmp_path / "o.txt"), "--no-progress"]) == 0
    lines = (tmp_path / "o.txt").read_text(encoding="utf-8").split("\n")
    assert len(lines) == 4 and lines[1] == "" and lines[3] == ""  # one line per input, the empty input kept empty
    assert main(["train-transfer", "--kind", "nmt", "--out", str(tmp_path / "x")]) == 2
    assert "exactly one of" in capsys.readouterr().err
    assert main(["transfer", "--model", str(tmp_path), str(inp)]) == 2
    assert "transfer-card.json is missing" in capsys.readouterr().err


def _smollm_tokenizer():
    from styleval.errors import ResourceUnavailableError
    from styleval.lm.loading import ensure_converted, resolve_causal_lm
    from styleval.models.catalog import DEFAULT_CAUSAL_LM

    try:
        folder = ensure_converted(resolve_causal_lm(DEFAULT_CAUSAL_LM))
    except ResourceUnavailableError as exc:
        pytest.skip(str(exc))
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(folder), local_files_only=True)


def test_lora_examples_mask_the_prompt_and_end_with_im_end():
    """The loss covers the rewrite and <|im_end|> only; the prompt is SmolLM2's own chat turn."""
    from styleval.training.transfer.neural.lora import LoraConfig, _end_id, _example, _prompt

    tok = _smollm_tokenizer()
    cfg = LoraConfig(source_style="toxic", target_style="neutral")
    end = _end_id(tok)
    ids, labels = _example(tok, cfg, "shut up you idiot", "please be quiet", end)
    prompt = _prompt(tok, cfg, "shut up you idiot")
    assert ids[:len(prompt)] == prompt and labels[:len(prompt)] == [-100] * len(prompt)
    assert labels[len(prompt):] == ids[len(prompt):] and ids[-1] == end
    assert tok.decode(ids[len(prompt):-1]) == "please be quiet"
    text = tok.decode(prompt)
    assert text.startswith("<|im_start|>user\nRewrite this toxic text in a neutral style: shut up you idiot")
    assert text.endswith("<|im_start|>assistant\n")


@pytest.mark.slow
def test_lora_rewriter_trains_saves_and_rewrites(tmp_path):
    """Two LoRA steps on four pairs: a small adapter folder with a card, and one rewrite per input through the CLI."""
    from styleval.training.transfer.neural.data import RewriteGroup

    _smollm_tokenizer()
    from styleval.training.transfer.neural.model import TransferOptions, train_transfer_model

    data = ParallelData([RewriteGroup(f"you are a damn fool {i}", (f"you are wrong {i}",)) for i in range(4)])
    card = train_transfer_model("lora", data, data, tmp_path / "lora", direction="toxic->neutral",
                                options=TransferOptions(threads=2,
                                                        settings={"max_steps": 2, "batch_size": 2, "dev_pairs": 2}))
    assert card["training"]["log"]["steps"] == 2 and card["training"]["log"]["trained_parameters"] == 921600
    assert sum(f.stat().st_size for f in (tmp_path / "lora").iterdir()) < 8_000_000  # the adapter, not the base
    inp = _write(tmp_path / "in.txt", ["you are a damn fool", ""])
    assert main(["transfer", "--model", str(tmp_path / "lora"), str(inp), "-o", str(tmp_path / "o.txt"),
                 "--no-progress"]) == 0
    lines = (tmp_path / "o.txt").read_text(encoding="utf-8").split("\n")
    assert len(lines) == 3 and lines[0].strip() and lines[1] == ""


def test_gyafc_layout_through_the_gyafc_reader(tmp_path):
    """train/tune folders in GYAFC's release layout become source groups with all their rewrites."""
    from styleval.datasets.gyafc import parallel as read_gyafc_groups

    for split in ("train", "tune"):
        folder = tmp_path / "Family_Relationships" / split
        folder.mkdir(parents=True)
        _write(folder / "informal", ["u r gr8", "lol idk"])
        _write(folder / "informal.ref0", ["You are great.", "I do not know."])
        _write(folder / "informal.ref1", ["You are wonderful.", ""])
    data = read_gyafc_groups(tmp_path, "informal->formal", domain="Family_Relationships", split="tune")
    assert data.groups == [RewriteGroup("u r gr8", ("You are great.", "You are wonderful.")),
                           RewriteGroup("lol idk", ("I do not know.",))]
    with pytest.raises(InputError, match="formal.*not found|no reference|does not exist"):
        read_gyafc_groups(tmp_path, "formal->informal", domain="Family_Relationships")
