"""Encoder-decoder transfer models trained from scratch with transformers: the NMT baseline and NMT with copy.

Both are a small BART-architecture transformer (``transformers.BartModel``, randomly initialised) over a byte-level
BPE vocabulary learned on the training pairs (``tokenizers``), shared by source and target, with tied embeddings.

* ``nmt``: the decoder's output distribution over the vocabulary (Rao & Tetreault's NMT baseline, with a
  transformer in place of their LSTM encoder-decoder).
* ``nmt-copy``: a pointer-generator head (See et al. 2017) on the same network. A separate single-head copy
  attention over the encoder states gives a distribution over the source positions; a gate
  ``p_gen = sigmoid(w·[h_t; c_t; e(y_{t-1})])`` mixes ``p_gen·P_vocab + (1 − p_gen)·Σ_{i: x_i = w} a_{t,i}``.
  Source and target share the vocabulary, so copying a source token means adding its attention mass to that
  token's probability (no extended vocabulary: byte-level BPE has no unknown tokens). Rao & Tetreault's copy model
  (OpenNMT's copy attention) is the same idea on an LSTM.

Training: teacher forcing, label smoothing, AdamW with warm-up and linear decay, a wall-clock budget, the epoch with
the lowest loss on the selection (dev) pairs kept. Decoding: greedy, at most ``1.5 × source + 10`` tokens.
"""
from __future__ import annotations

import json
import math
import random
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Sequence

from ....errors import InputError
from ....progress import Progress


PAD, BOS, EOS, UNK = 0, 1, 2, 3
SPECIALS = ["<pad>", "<s>", "</s>", "<unk>"]
KINDS = ("nmt", "nmt-copy")
WEIGHTS_FILE = "model.safetensors"
CONFIG_FILE = "seq2seq.json"
TOKENIZER_FILE = "tokenizer.json"


@dataclass
class Seq2SeqConfig:
    """Architecture and training hyper-parameters (CPU-sized defaults)."""

    kind: str = "nmt"
    vocab_size: int = 4000
    d_model: int = 192
    layers: int = 2
    heads: int = 4
    ffn: int = 768
    dropout: float = 0.1
    max_tokens: int = 48
    batch_size: int = 32
    lr: float = 1e-3
    warmup: int = 200
    label_smoothing: float = 0.1
    epochs: int = 30
    max_minutes: float = 20.0
    dev_pairs: int = 500  # selection pairs scored after each epoch (the first N)
    seed: int = 13


def train_tokenizer(texts: Sequence[str], vocab_size: int) -> Any:
    """A byte-level BPE tokenizer learned on ``texts`` with styleval's four special tokens."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=True)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=SPECIALS, min_frequency=2,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(list(texts), trainer)
    return tok


def _torch_modules():
    import torch
    from torch import nn

    class TransferSeq2Seq(nn.Module):
        """BART encoder-decoder; with ``copy`` a pointer-generator head over the source tokens."""

        def __init__(self, cfg: Seq2SeqConfig, vocab_size: int) -> None:
            super().__init__()
            from transformers import BartConfig, BartModel

            bc = BartConfig(vocab_size=vocab_size, d_model=cfg.d_model, encoder_layers=cfg.layers,
                            decoder_layers=cfg.layers, encoder_attention_heads=cfg.heads,
                            decoder_attention_heads=cfg.heads, encoder_ffn_dim=cfg.ffn, decoder_ffn_dim=cfg.ffn,
                            dropout=cfg.dropout, attention_dropout=0.0, activation_dropout=0.0,
                            max_position_embeddings=cfg.max_tokens + 2, pad_token_id=PAD, bos_token_id=BOS,
                            eos_token_id=EOS, decoder_start_token_id=BOS, scale_embedding=True,
                            tie_word_embeddings=True)
            self.copy = cfg.kind == "nmt-copy"
            self.model = BartModel(bc)
            if self.copy:
                self.copy_query = nn.Linear(cfg.d_model, cfg.d_model, bias=False)
                self.gate = nn.Linear(3 * cfg.d_model, 1)

        def encode(self, src: "torch.Tensor", src_mask: "torch.Tensor") -> "torch.Tensor":
            return self.model.encoder(input_ids=src, attention_mask=src_mask).last_hidden_state

        def log_probs(self, src: "torch.Tensor", src_mask: "torch.Tensor", enc: "torch.Tensor",
                      dec_in: "torch.Tensor") -> "torch.Tensor":
            """(B, T, V) log-probabilities of the next token after each decoder input position."""
            h = self.model.decoder(input_ids=dec_in, encoder_hidden_states=enc,
                                   encoder_attention_mask=src_mask).last_hidden_state
            logits = h @ self.model.shared.weight.T
            if not self.copy:
                return torch.log_softmax(logits, dim=-1)
            scores = self.copy_query(h) @ enc.transpose(1, 2) / math.sqrt(h.shape[-1])  # (B, T, S)
            scores = scores.masked_fill(~src_mask.bool()[:, None, :], float("-inf"))
            attn = torch.softmax(scores, dim=-1)
            context = attn @ enc
            p_gen = torch.sigmoid(self.gate(torch.cat([h, context, self.model.shared(dec_in)], dim=-1)))
            p_vocab = torch.softmax(logits, dim=-1)
            p_copy = torch.zeros_like(p_vocab).scatter_add_(
                2, src[:, None, :].expand(-1, h.shape[1], -1), attn)
            return torch.log(p_gen * p_vocab + (1 - p_gen) * p_copy + 1e-10)

    return torch, TransferSeq2Seq


def _encode(tok: Any, texts: Sequence[str], max_tokens: int) -> list[list[int]]:
    return [e.ids[: max_tokens - 1] + [EOS] for e in tok.encode_batch(list(texts))]


def _pad(seqs: Sequence[Sequence[int]], torch: Any) -> tuple[Any, Any]:
    width = max(len(s) for s in seqs)
    ids = torch.full((len(seqs), width), PAD, dtype=torch.long)
    for i, s in enumerate(seqs):
        ids[i, :len(s)] = torch.tensor(s, dtype=torch.long)
    return ids, (ids != PAD).long()


def _loss(torch: Any, model: Any, src_ids: Sequence[Sequence[int]], tgt_ids: Sequence[Sequence[int]],
          smoothing: float) -> Any:
    src, mask = _pad(src_ids, torch)
    tgt, _ = _pad(tgt_ids, torch)
    dec_in = torch.cat([torch.full((tgt.shape[0], 1), BOS, dtype=torch.long), tgt[:, :-1]], dim=1)
    logp = model.log_probs(src, mask, model.encode(src, mask), dec_in)
    keep = tgt != PAD
    nll = -logp.gather(2, tgt[..., None]).squeeze(-1)
    loss = (1 - smoothing) * nll - smoothing * logp.mean(dim=-1) if smoothing else nll
    return (loss * keep).sum() / keep.sum()


def train_seq2seq(train_pairs: Sequence[tuple[str, str]], dev_pairs: Sequence[tuple[str, str]], out_dir: Path,
                  cfg: Seq2SeqConfig, *, progress: Progress | None = None) -> dict[str, Any]:
    """Train a model of ``cfg.kind`` and write it into ``out_dir``; return the training log for the card."""
    if cfg.kind not in KINDS:
        raise InputError(f"kind must be one of {', '.join(KINDS)}; got {cfg.kind!r}")
    if not train_pairs or not dev_pairs:
        raise InputError("training needs at least one training and one selection (dev) pair")
    torch, TransferSeq2Seq = _torch_modules()
    from safetensors.torch import save_file

    torch.manual_seed(cfg.seed)
    rnd = random.Random(cfg.seed)
    tok = train_tokenizer([s for p in train_pairs for s in p], cfg.vocab_size)
    src = _encode(tok, [s for s, _ in train_pairs], cfg.max_tokens)
    tgt = _encode(tok, [t for _, t in train_pairs], cfg.max_tokens)
    dev_pairs = list(dev_pairs)[: cfg.dev_pairs]
    dev_src = _encode(tok, [s for s, _ in dev_pairs], cfg.max_tokens)
    dev_tgt = _encode(tok, [t for _, t in dev_pairs], cfg.max_tokens)
    model = TransferSeq2Seq(cfg, tok.get_vocab_size())
    n_params = sum(p.numel() for p in model.parameters())
    steps_per_epoch = math.ceil(len(src) / cfg.batch_size)
    total = steps_per_epoch * cfg.epochs
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, betas=(0.9, 0.98), weight_decay=0.01)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / cfg.warmup) * max(0.05, 1 - s / total))
    budget = cfg.max_minutes * 60.0
    start, cpu_start = time.perf_counter(), time.process_time()
    log: dict[str, Any] = {"epochs": [], "parameters": n_params, "steps_per_epoch": steps_per_epoch}
    best, best_state, step, stopped = float("inf"), None, 0, "epochs"
    for epoch in range(1, cfg.epochs + 1):
        model.train()
        losses = []
        for batch in _batches(len(src), cfg.batch_size, rnd):
            loss = _loss(torch, model, [src[i] for i in batch], [tgt[i] for i in batch], cfg.label_smoothing)
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
            step += 1
            losses.append(loss.item())
            if progress:
                progress(f"training {cfg.kind}, epoch {epoch}", step, total)
            if time.perf_counter() - start > budget:
                stopped = "time budget"
                break
        dev = _dev_loss(torch, model, dev_src, dev_tgt, cfg.batch_size)
        log["epochs"].append({"epoch": epoch, "steps": step, "train_loss": round(sum(losses) / len(losses), 4),
                              "dev_nll": round(dev, 4), "minutes": round((time.perf_counter() - start) / 60, 2)})
        if dev < best:
            best, best_state = dev, {k: v.detach().clone() for k, v in model.state_dict().items()}
            log["best_epoch"] = epoch
        if stopped == "time budget":
            break
    if progress:
        progress(f"training {cfg.kind}", total, total)
    log.update(stopped_by=stopped, train_minutes=round((time.perf_counter() - start) / 60, 2),
               cpu_minutes=round((time.process_time() - cpu_start) / 60, 2),
               best_dev_nll=round(best, 4), steps=step)
    model.load_state_dict(best_state)
    out_dir.mkdir(parents=True, exist_ok=True)
    state = {k: v.contiguous() for k, v in model.state_dict().items() if k != "model.encoder.embed_tokens.weight"
             and k != "model.decoder.embed_tokens.weight"}  # tied to model.shared.weight
    save_file(state, str(out_dir / WEIGHTS_FILE))
    tok.save(str(out_dir / TOKENIZER_FILE))
    (out_dir / CONFIG_FILE).write_text(json.dumps(asdict(cfg), indent=1), encoding="utf-8")
    return log


def _batches(n: int, size: int, rnd: random.Random) -> list[list[int]]:
    order = list(range(n))
    rnd.shuffle(order)
    return [order[i:i + size] for i in range(0, n, size)]


def _dev_loss(torch: Any, model: Any, src: list[list[int]], tgt: list[list[int]], batch_size: int) -> float:
    """Mean token negative log-likelihood (no smoothing) on the selection pairs."""
    model.eval()
    total, count = 0.0, 0
    with torch.no_grad():
        for i in range(0, len(src), batch_size):
            s, t = src[i:i + batch_size], tgt[i:i + batch_size]
            n = sum(len(x) for x in t)
            total += float(_loss(torch, model, s, t, 0.0)) * n
            count += n
    return total / max(count, 1)


class Seq2SeqRewriter:
    """A trained ``nmt``/``nmt-copy`` folder, loaded for greedy rewriting."""

    def __init__(self, folder: str | Path) -> None:
        folder = Path(folder)
        for name in (WEIGHTS_FILE, CONFIG_FILE, TOKENIZER_FILE):
            if not (folder / name).is_file():
                raise InputError(f"not a styleval seq2seq transfer model: {name} is missing", folder)
        torch, TransferSeq2Seq = _torch_modules()
        from safetensors.torch import load_file
        from tokenizers import Tokenizer

        self.torch = torch
        self.cfg = Seq2SeqConfig(**json.loads((folder / CONFIG_FILE).read_text(encoding="utf-8")))
        self.tok = Tokenizer.from_file(str(folder / TOKENIZER_FILE))
        self.model = TransferSeq2Seq(self.cfg, self.tok.get_vocab_size())
        state = load_file(str(folder / WEIGHTS_FILE))
        missing, unexpected = self.model.load_state_dict(state, strict=False)
        if unexpected or any(not k.endswith("embed_tokens.weight") for k in missing):
            raise InputError(f"weights do not match the configuration (missing {missing}, unexpected "
                             f"{unexpected})", folder / WEIGHTS_FILE)
        self.model.eval()

    def rewrite(self, texts: Sequence[str], *, batch_size: int = 32, progress: Progress | None = None) -> list[str]:
        torch = self.torch
        out: list[str] = []
        with torch.no_grad():
            for start in range(0, len(texts), batch_size):
                ids = _encode(self.tok, texts[start:start + batch_size], self.cfg.max_tokens)
                src, mask = _pad(ids, torch)
                enc = self.model.encode(src, mask)
                limit = min(self.cfg.max_tokens, int(1.5 * src.shape[1]) + 10)
                dec = torch.full((src.shape[0], 1), BOS, dtype=torch.long)
                done = torch.zeros(src.shape[0], dtype=torch.bool)
                for _ in range(limit):
                    nxt = self.model.log_probs(src, mask, enc, dec)[:, -1].argmax(-1)
                    nxt = torch.where(done, torch.full_like(nxt, PAD), nxt)
                    dec = torch.cat([dec, nxt[:, None]], dim=1)
                    done |= nxt == EOS
                    if bool(done.all()):
                        break
                for row in dec[:, 1:].tolist():
                    row = row[:row.index(EOS)] if EOS in row else row
                    out.append(self.tok.decode([t for t in row if t != PAD]).strip())
                if progress:
                    progress("rewriting", len(out), len(texts))
        return out
