"""Train and load neural transfer models; every model folder carries a card (``transfer-card.json`` + README.md).

Kinds (:data:`MODEL_KINDS`): ``nmt`` and ``nmt-copy`` (:mod:`.seq2seq`, transformers encoder-decoder trained from
scratch) and ``lora`` (:mod:`.lora`, SmolLM2-135M-Instruct with LoRA adapters). A folder holds the weights, the
kind, the transfer direction and the source preprocessing, so :func:`load_transfer_model` rewrites new text the way
the model was trained.
"""
from __future__ import annotations

import platform
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Mapping, Protocol, Sequence

from .... import __version__
from ....errors import InputError
from ....models import cards
from ....records import Direction
from ....signature import library_version
from ....progress import Progress
from .data import ParallelData, preprocess_groups, preprocessor
from .lora import LoraConfig, LoraRewriter, train_lora
from .seq2seq import Seq2SeqConfig, Seq2SeqRewriter, train_seq2seq

MODEL_KINDS = ("nmt", "nmt-copy", "lora")
CARD_FILE = cards.FORMATS[cards.TRANSFER].file


class Rewriter(Protocol):
    def rewrite(self, texts: Sequence[str], *, batch_size: int = ..., progress: Progress | None = None
                ) -> list[str]: ...


def _threads() -> int:
    import torch

    return int(torch.get_num_threads())


@dataclass(frozen=True)
class TransferOptions:
    """How :func:`train_transfer_model` trains: ``preprocess`` (one of :data:`.data.PREPROCESSING`) is applied to the
    sources in training and again by the loaded model before rewriting; ``threads`` torch threads; ``settings``
    overrides fields of :class:`~.seq2seq.Seq2SeqConfig` or :class:`~.lora.LoraConfig` (``max_minutes``,
    ``epochs``, ``batch_size``, ...); the card's ``name`` (None: the folder's) and the ``command`` that rebuilds it."""

    preprocess: str = "none"
    threads: int = 2
    settings: Mapping[str, Any] = field(default_factory=dict)
    name: str | None = None
    command: str = ""


def train_transfer_model(kind: str, train: ParallelData, dev: ParallelData, out_dir: str | Path, *,
                         direction: str | Direction, options: TransferOptions | None = None,
                         progress: Progress | None = None) -> dict[str, Any]:
    """Train a ``kind`` model on ``train`` (selection on ``dev``) into ``out_dir`` as ``options`` say
    (:class:`TransferOptions`); return its card."""
    o = options or TransferOptions()
    preprocess, threads, settings, name, command = o.preprocess, o.threads, o.settings, o.name, o.command
    if kind not in MODEL_KINDS:
        raise InputError(f"model kind must be one of {', '.join(MODEL_KINDS)}; got {kind!r}")
    d = Direction.parse(direction) if isinstance(direction, str) else direction
    if d is None:
        raise InputError(f"a transfer direction SRC:TGT is required (e.g. informal:formal), got {direction!r}")
    out = Path(out_dir)
    if out.exists() and any(out.iterdir()):
        raise InputError("output folder exists and is not empty", out)
    preprocessor(preprocess)  # fail on an unknown name before any work
    import torch

    torch.set_num_threads(max(1, int(threads)))
    train_p, dev_p = preprocess_groups(train, preprocess), preprocess_groups(dev, preprocess)
    settings = dict(settings or {})
    start = time.perf_counter()
    if kind == "lora":
        cfg: Any = LoraConfig(source_style=d.source_style, target_style=d.target_style)
    else:
        cfg = Seq2SeqConfig(kind=kind)
    for key, value in settings.items():
        if not hasattr(cfg, key):
            raise InputError(f"unknown setting {key!r} for a {kind} model; settings: {', '.join(asdict(cfg))}")
        setattr(cfg, key, value)
    if kind == "lora":
        log = train_lora(train_p.pairs(), dev_p.pairs(), out, cfg, progress=progress)
        engine = {"engine": "transformers + peft (LoRA)", "peft": library_version("peft")}
    else:
        log = train_seq2seq(train_p.pairs(), dev_p.pairs(), out, cfg, progress=progress)
        engine = {"engine": "transformers (BART architecture, from scratch)",
                  "tokenizers": library_version("tokenizers")}
    card = {
        "name": name or out.name, "kind": kind, "direction": str(d), "preprocess": preprocess,
        "description": {"nmt": "encoder-decoder NMT baseline (Rao & Tetreault 2018's NMT baseline, transformer)",
                        "nmt-copy": "encoder-decoder NMT with a pointer-generator copy gate over source tokens",
                        "lora": "SmolLM2-135M-Instruct fine-tuned with LoRA as a rewriter"}[kind],
        "config": asdict(cfg),
        "training": {"data": train.describe(), "selection": dev.describe(), "log": log,
                     "wall_minutes": round((time.perf_counter() - start) / 60, 2), "torch_threads": _threads(),
                     "machine": f"{platform.machine()}, {platform.system()}", "command": command},
        "libraries": {"styleval": __version__, "torch": library_version("torch"),
                      "transformers": library_version("transformers"), **engine},
        "evaluation": [],
    }
    cards.write_card(out, cards.TRANSFER, card)
    return card


def add_evaluation(folder: str | Path, entry: dict[str, Any]) -> dict[str, Any]:
    """Add an evaluation entry (data, which split, figures, command) to a model's card; it replaces an earlier
    entry on the same data and split."""
    card = cards.read_card(folder, cards.TRANSFER)
    kept = [e for e in card.get("evaluation", []) if (e.get("data"), e.get("split")) != (entry.get("data"),
                                                                                        entry.get("split"))]
    card["evaluation"] = kept + [entry]
    cards.write_card(folder, cards.TRANSFER, card)
    return card


class TransferModel:
    """A trained transfer model folder: rewrites texts with its preprocessing."""

    def __init__(self, folder: str | Path, *, progress: Progress | None = None) -> None:
        self.folder = Path(folder)
        if not self.folder.is_dir():
            raise InputError("transfer model folder does not exist", self.folder)
        self.card = cards.read_card(self.folder, cards.TRANSFER)
        kind = self.card.get("kind")
        if kind not in MODEL_KINDS:
            raise InputError(f"unknown model kind {kind!r} in the card", self.folder / CARD_FILE)
        self.kind = kind
        self.direction = Direction.parse(self.card["direction"])
        self._pre = preprocessor(self.card.get("preprocess", "none"))
        self._impl: Rewriter = LoraRewriter(self.folder, progress=progress) if kind == "lora" \
            else Seq2SeqRewriter(self.folder)

    def rewrite(self, texts: Sequence[str], *, batch_size: int = 16, progress: Progress | None = None) -> list[str]:
        """One rewrite per input text, in order (an empty input gives an empty output)."""
        texts = list(texts)
        keep = [i for i, t in enumerate(texts) if t.strip()]
        done = self._impl.rewrite([self._pre(texts[i].strip()) for i in keep], batch_size=batch_size,
                                  progress=progress)
        out = [""] * len(texts)
        for i, o in zip(keep, done):
            out[i] = o
        return out


def load_transfer_model(folder: str | Path, *, progress: Progress | None = None) -> TransferModel:
    return TransferModel(folder, progress=progress)
