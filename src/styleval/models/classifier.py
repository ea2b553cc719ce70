"""Transformers sequence classifiers: any ``AutoModelForSequenceClassification`` folder, or a hub id once fetched.

:func:`load_classifier` loads a resolved :class:`~.spec.ModelSpec` once per process (the model pool), in float32 and
on the GPU when torch sees one, after checking that the folder is a sequence classifier: its ``config.json`` names
a ``…ForSequenceClassification`` architecture (a bare encoder or a causal LM is refused in one line), a tokenizer
loads from it, and its weights cover the classification head. :meth:`SequenceClassifier.logits` runs texts in
batches of similar length (longest first, so padding is small), truncates a text past the model's maximum length
(the tokenizer's ``model_max_length``, else the model's positions) and says which texts were truncated; each
distinct text runs once per run (:func:`.outputs.memoized`). The style and fluency packages turn the logits into
style probabilities and P(acceptable).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from ..errors import InputError
from .spec import ModelSpec

#: Model types whose position ids start after the padding index (two positions fewer than the table holds).
_OFFSET_POSITIONS = frozenset({"roberta", "xlm-roberta", "camembert", "longformer", "bart", "mbart", "xlm-roberta-xl",
                               "data2vec-text", "ibert", "mpnet"})
DEFAULT_BATCH_SIZE = 32
#: Files one of which a tokenizer needs (a sentencepiece ``*.model`` file also does).
_TOKENIZER_FILES = ("tokenizer.json", "vocab.txt", "vocab.json", "merges.txt", "spiece.model", "tokenizer.model")


@dataclass
class SequenceClassifier:
    """A loaded sequence classifier: tokenizer, torch model (eval mode, float32), its labels and maximum length."""

    spec: ModelSpec
    tokenizer: Any
    model: Any
    labels: tuple[str, ...]  # config.id2label in index order (one name for a single-output head)
    max_length: int
    cased: bool  # False when the tokenizer lower-cases every text

    @property
    def name(self) -> str:
        return self.spec.display

    @property
    def n_outputs(self) -> int:
        return len(self.labels)

    def identity(self) -> dict[str, str]:
        """Name and content hash of a folder, or hub id and resolved commit (``hub:ID@COMMIT``)."""
        return self.spec.identity()

    @property
    def namespace(self) -> str:
        """What names this model's outputs in the run memo and the model-output cache."""
        return f"seq-classifier:{self.spec.content_hash()}:max{self.max_length}"

    def logits(self, texts: Sequence[str], batch_size: int = DEFAULT_BATCH_SIZE) -> tuple[np.ndarray, np.ndarray]:
        """``(logits, truncated)``: the head's outputs for each text, shape (n, n_outputs), float64 from the model's
        float32; and whether each text was cut at :attr:`max_length` tokens."""
        from .outputs import memoized

        rows = memoized(self.namespace, texts, lambda todo: self._run(todo, batch_size))
        if len(rows) == 0:
            return np.zeros((0, self.n_outputs)), np.zeros(0, dtype=bool)
        return rows[:, :-1], rows[:, -1] > 0

    def token_counts(self, texts: Sequence[str]) -> np.ndarray:
        """Tokens of each text with the special tokens, before truncation."""
        encoded = self.tokenizer(list(texts), add_special_tokens=True, truncation=False, verbose=False)
        return np.array([len(ids) for ids in encoded["input_ids"]], dtype=int)

    def _encode(self, texts: list[str]) -> tuple[dict[str, list[Any]], np.ndarray]:
        """Every text tokenized once, cut at :attr:`max_length` (no padding yet), and which texts were cut: only a
        text that fills the limit can have been, so only those are counted again in full."""
        encoded = self.tokenizer(texts, truncation=True, max_length=self.max_length, verbose=False)
        full = [i for i, ids in enumerate(encoded["input_ids"]) if len(ids) >= self.max_length]
        truncated = np.zeros(len(texts), dtype=bool)
        if full:
            truncated[full] = self.token_counts([texts[i] for i in full]) > self.max_length
        return dict(encoded), truncated

    def _run(self, texts: list[str], batch_size: int) -> np.ndarray:
        import torch

        from ..progress import report
        from .passes import timed

        encoded, truncated = self._encode(texts)
        lengths = np.array([len(ids) for ids in encoded["input_ids"]])
        order = np.argsort(-lengths, kind="stable")  # longest first: similar lengths share a batch
        out = np.empty((len(texts), self.n_outputs + 1), dtype=np.float64)
        out[:, -1] = truncated
        device = next(self.model.parameters()).device
        with timed("model", f"classifier {self.name}", len(texts)), torch.inference_mode():
            for start in range(0, len(texts), batch_size):
                rows = order[start:start + batch_size]
                batch = {key: [values[i] for i in rows] for key, values in encoded.items()}
                x = self.tokenizer.pad(batch, padding=True, return_tensors="pt").to(device)
                out[rows, :-1] = self.model(**x).logits.float().cpu().numpy()
                report("classifying texts [texts]", min(start + batch_size, len(texts)), len(texts))
        return out


def load_classifier(spec: ModelSpec) -> SequenceClassifier:
    """The classifier of a resolved spec (a transformers folder, or a hub id's fetched snapshot), loaded once per
    process; an :class:`InputError` naming the folder when it is not a usable sequence classifier."""
    from .pool import _need, get_pool

    _need("transformers", "neural")
    key = f"seq-classifier:{spec.key}:{spec.content_hash()}"  # a folder retrained in place loads again
    return get_pool().get(key, lambda: _load(spec), f"classifier {spec.display}")


def _load(spec: ModelSpec) -> SequenceClassifier:
    from .encoder import quiet_transformers, transformers_dir
    from .pool import configure_torch

    configure_torch()
    import torch
    from transformers import AutoConfig, AutoModelForSequenceClassification, AutoTokenizer

    folder = transformers_dir(spec)
    with quiet_transformers():
        try:
            config = AutoConfig.from_pretrained(str(folder), local_files_only=True)
        except Exception as exc:  # noqa: BLE001 - any unreadable config is the same one-line error
            raise InputError(f"unreadable transformers config.json: {_reason(exc)}", folder) from None
        _check_architecture(config, folder)
        no_tokenizer = ("no tokenizer files (tokenizer.json, vocab.txt, vocab.json with merges.txt, or a "
                        "sentencepiece model)")
        if not any((folder / name).is_file() for name in _TOKENIZER_FILES) and not any(folder.glob("*.model")):
            raise InputError(no_tokenizer, folder)  # transformers would build an empty vocabulary and go on
        try:
            tokenizer = AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
        except Exception as exc:  # noqa: BLE001
            raise InputError(f"{no_tokenizer} that transformers can load: {_reason(exc)}", folder) from None
        if len(tokenizer) <= len(set(tokenizer.all_special_tokens)):
            raise InputError(f"{no_tokenizer}: the tokenizer loaded has only special tokens", folder)
        try:
            model, info = AutoModelForSequenceClassification.from_pretrained(
                str(folder), local_files_only=True, dtype=torch.float32, output_loading_info=True)
        except Exception as exc:  # noqa: BLE001 - a corrupt or truncated weights file among them
            raise InputError(f"cannot load the classifier's weights: {_reason(exc)}", folder) from None
    missing = [k for k in info.get("missing_keys", ()) if k]
    if missing:
        raise InputError(f"the weights do not hold the whole classifier (missing {', '.join(sorted(missing)[:4])}"
                         f"{' …' if len(missing) > 4 else ''}): an encoder without a trained classification head?",
                         folder)
    model.eval()
    if torch.cuda.is_available():
        model.to("cuda")
    labels = tuple(str(config.id2label.get(i, f"LABEL_{i}")) for i in range(int(config.num_labels)))
    return SequenceClassifier(spec=spec, tokenizer=tokenizer, model=model, labels=labels,
                              max_length=_max_length(tokenizer, config), cased=not _lower_cases(tokenizer))


def _reason(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:300] or type(exc).__name__


def _check_architecture(config: Any, folder: Any) -> None:
    """A config naming architectures must name a sequence classifier; a causal LM or a bare encoder is refused."""
    archs = [str(a) for a in (getattr(config, "architectures", None) or [])]
    if not archs or any(a.endswith("ForSequenceClassification") for a in archs):
        return
    what = ("a causal language model" if any(a.endswith(("ForCausalLM", "LMHeadModel")) for a in archs)
            else "a model without a sequence-classification head")
    raise InputError(f"{what} ({', '.join(archs)} in config.json), not a sequence classifier; give a "
                     "…ForSequenceClassification model (a classification or single-output regression head)", folder)


def _max_length(tokenizer: Any, config: Any) -> int:
    """Tokens a text may have: the tokenizer's ``model_max_length`` when set, at most the model's positions."""
    positions = getattr(config, "max_position_embeddings", None)
    limit = None
    if positions:
        limit = int(positions) - (int(getattr(config, "pad_token_id", 0) or 0) + 1
                                  if config.model_type in _OFFSET_POSITIONS else 0)
    own = getattr(tokenizer, "model_max_length", None)
    if own is not None and own < 1_000_000:
        limit = min(int(own), limit) if limit else int(own)
    return int(limit or 512)


def _lower_cases(tokenizer: Any) -> bool:
    """Whether the tokenizer lower-cases every text (a case-blind model)."""
    backend = getattr(tokenizer, "backend_tokenizer", None)
    normalizer = getattr(backend, "normalizer", None)
    if normalizer is not None:
        try:
            return bool(normalizer.normalize_str("AbC") == "abc")
        except Exception:  # noqa: BLE001 - a normaliser without normalize_str: fall back to the flag
            pass
    return bool(getattr(tokenizer, "do_lower_case", False))
