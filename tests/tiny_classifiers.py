"""Small transformers models built in a folder, for tests that need a real checkpoint without a download.

:func:`build_classifier` makes a tokenizer with the ``tokenizers`` library from a fixed corpus (a WordPiece
vocabulary of its characters and words for BERT, a byte-level BPE trained on it for RoBERTa), initialises a
sequence-classification model from a seed and writes both with ``save_pretrained`` (``model.safetensors``), so
the folder loads with ``AutoTokenizer`` / ``AutoModelForSequenceClassification`` like any checkpoint from the
hub. The same arguments give the same bytes (in one installation), so tests may compare content hashes, and a
local stand-in for the hub can serve the folders. :func:`build_encoder` (no classification head) and
:func:`build_causal_lm` give the models a style or fluency metric must refuse.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Sequence

ARCHES = ("bert", "roberta")

#: The fixed corpus the tokenizers are trained on: everyday and formal sentences, so tests' texts tokenize into
#: real pieces as well as unknown ones.
CORPUS: tuple[str, ...] = (
    "I would be grateful if you could send me the report by Friday.",
    "hey wanna grab some food later lol",
    "The committee has approved the proposal after careful consideration.",
    "dunno what ur talking about tbh",
    "Please accept my sincere apologies for the delay.",
    "omg that movie was sooo good!!!",
    "We regret to inform you that your application was unsuccessful.",
    "gonna be late, traffic is crazy",
    "The results indicate a significant improvement in performance.",
    "lol no way that happened",
    "Kindly find attached the documents you requested.",
    "yeah i guess its ok but whatever",
    "The service at this restaurant was excellent and the staff were friendly.",
    "worst pizza ever, never going back",
    "It is essential that all participants arrive on time.",
    "u coming to the party tonight?",
    "The food was terrible and the waiter was rude.",
    "Thank you very much for your kind assistance.",
    "this place is awesome, love it",
    "He did not attend the meeting because he was ill.",
    "she said she'd call but never did smh",
    "Our findings are consistent with previous research.",
    "what a stupid idea, seriously",
    "I am writing to express my interest in the position.",
)

_BERT_SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
_ROBERTA_SPECIALS = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]


def _wordpiece_vocab(corpus: Sequence[str], size: int) -> dict[str, int]:
    """A WordPiece vocabulary from ``corpus``, chosen deterministically (``tokenizers``' WordPiece trainer breaks
    ties between equally frequent pieces differently from run to run): the special tokens, every character alone
    and as a continuation (``##c``), then whole words, most frequent first (ties in alphabetical order), up to
    ``size`` entries. Texts are split as the tokenizer will split them (BERT's normaliser and pre-tokenizer)."""
    from collections import Counter

    from tokenizers import normalizers, pre_tokenizers

    norm, split = normalizers.BertNormalizer(lowercase=True), pre_tokenizers.BertPreTokenizer()
    words = Counter(w for text in corpus for w, _ in split.pre_tokenize_str(norm.normalize_str(text)))
    chars = sorted({c for w in words for c in w})
    pieces = [*_BERT_SPECIALS, *chars, *(f"##{c}" for c in chars)]
    ranked = [w for w, _ in sorted(words.items(), key=lambda kv: (-kv[1], kv[0])) if len(w) > 1]
    pieces += ranked[:max(0, size - len(pieces))]
    return {piece: i for i, piece in enumerate(pieces)}


def _check_arch(arch: str) -> None:
    if arch not in ARCHES:
        raise ValueError(f"arch must be one of {ARCHES}, not {arch!r}")


def train_tokenizer(folder: str | Path, arch: str = "bert", *, max_length: int = 64, vocab_size: int | None = None,
                    corpus: Sequence[str] = CORPUS):
    """Build a tokenizer for ``arch`` from ``corpus`` and save it in ``folder`` (``save_pretrained``); returns the
    transformers fast tokenizer. ``max_length`` becomes its ``model_max_length``."""
    _check_arch(arch)
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers

    if arch == "bert":
        tok = Tokenizer(models.WordPiece(_wordpiece_vocab(corpus, vocab_size or 300), unk_token="[UNK]"))
        tok.normalizer = normalizers.BertNormalizer(lowercase=True)
        tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        tok.decoder = decoders.WordPiece()
        cls, sep = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
        tok.post_processor = processors.TemplateProcessing(
            single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
            special_tokens=[("[CLS]", cls), ("[SEP]", sep)])
        from transformers import BertTokenizerFast

        fast = BertTokenizerFast(tokenizer_object=tok, model_max_length=max_length, unk_token="[UNK]",
                                 pad_token="[PAD]", cls_token="[CLS]", sep_token="[SEP]", mask_token="[MASK]",
                                 do_lower_case=True)
    else:
        tok = Tokenizer(models.BPE(unk_token=None))
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        tok.decoder = decoders.ByteLevel()
        trainer = trainers.BpeTrainer(vocab_size=vocab_size or 400, special_tokens=_ROBERTA_SPECIALS,
                                      initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
        tok.train_from_iterator(list(corpus), trainer=trainer)
        tok.post_processor = processors.RobertaProcessing(("</s>", tok.token_to_id("</s>")),
                                                          ("<s>", tok.token_to_id("<s>")), trim_offsets=True,
                                                          add_prefix_space=False)
        from transformers import RobertaTokenizerFast

        fast = RobertaTokenizerFast(tokenizer_object=tok, model_max_length=max_length, bos_token="<s>",
                                    eos_token="</s>", sep_token="</s>", cls_token="<s>", unk_token="<unk>",
                                    pad_token="<pad>", mask_token="<mask>", add_prefix_space=False)
    fast.save_pretrained(str(folder))
    return fast


def _config(arch: str, tokenizer, *, max_length: int, num_labels: int, hidden: int, layers: int,
            initializer_range: float, extra: dict, heads: int = 2, intermediate: int | None = None):
    common = dict(vocab_size=len(tokenizer), hidden_size=hidden, num_hidden_layers=layers, num_attention_heads=heads,
                  intermediate_size=intermediate or 2 * hidden, initializer_range=initializer_range,
                  num_labels=num_labels, pad_token_id=tokenizer.pad_token_id, hidden_dropout_prob=0.0,
                  attention_probs_dropout_prob=0.0, **extra)
    if arch == "bert":
        from transformers import BertConfig

        return BertConfig(max_position_embeddings=max_length, **common)
    from transformers import RobertaConfig

    # RoBERTa's positions start after the padding index, so it needs two more position embeddings
    return RobertaConfig(max_position_embeddings=max_length + 2, bos_token_id=tokenizer.bos_token_id,
                         eos_token_id=tokenizer.eos_token_id, **common)


def build_classifier(folder: str | Path, arch: str = "bert", *,
                     labels: Sequence[str] | None = ("informal", "formal"), max_length: int = 64, seed: int = 0,
                     hidden: int = 32, layers: int = 2, initializer_range: float = 0.2,
                     corpus: Sequence[str] = CORPUS, vocab_size: int | None = None, heads: int = 2,
                     intermediate: int | None = None) -> Path:
    """A sequence-classification model of ``arch`` (``bert`` or ``roberta``) in ``folder``: ``labels`` in
    ``config.id2label`` order (``None``: a single-output regression head, ``problem_type="regression"``), a
    tokenizer trained here whose ``model_max_length`` and the model's positions are ``max_length``, weights drawn
    from ``seed`` (``initializer_range`` wider than BERT's 0.02, so that texts get distinct probabilities, and narrow
    enough that float32 padding noise stays well below 1e-6). ``hidden``, ``layers``, ``heads`` and
    ``intermediate`` size the model (RoBERTa-base: 768, 12, 12, 3072), ``corpus`` and ``vocab_size`` the tokenizer.
    Returns the folder."""
    _check_arch(arch)
    folder = Path(folder)
    tokenizer = train_tokenizer(folder, arch, max_length=max_length, corpus=corpus, vocab_size=vocab_size)
    if labels is None:
        extra: dict = {"problem_type": "regression"}
        num_labels = 1
    else:
        labels = [str(label) for label in labels]
        extra = {"id2label": dict(enumerate(labels)), "label2id": {lab: i for i, lab in enumerate(labels)},
                 "problem_type": "single_label_classification"}
        num_labels = len(labels)
    config = _config(arch, tokenizer, max_length=max_length, num_labels=num_labels, hidden=hidden, layers=layers,
                     initializer_range=initializer_range, extra=extra, heads=heads, intermediate=intermediate)
    import torch
    from transformers import AutoModelForSequenceClassification

    torch.manual_seed(seed)
    model = AutoModelForSequenceClassification.from_config(config)
    model.eval()
    _save(model, folder)
    return folder


def build_encoder(folder: str | Path, arch: str = "bert", *, max_length: int = 64, seed: int = 0,
                  hidden: int = 32) -> Path:
    """A bare encoder (``AutoModel``, no classification head) with its tokenizer in ``folder``."""
    folder = Path(folder)
    tokenizer = train_tokenizer(folder, arch, max_length=max_length)
    config = _config(arch, tokenizer, max_length=max_length, num_labels=2, hidden=hidden, layers=1,
                     initializer_range=0.5, extra={})
    import torch
    from transformers import AutoModel

    torch.manual_seed(seed)
    _save(AutoModel.from_config(config), folder)
    return folder


def build_causal_lm(folder: str | Path, *, max_length: int = 64, seed: int = 0, hidden: int = 32) -> Path:
    """A tiny GPT-2 causal LM (byte-level BPE tokenizer trained here) in ``folder``."""
    folder = Path(folder)
    tokenizer = train_tokenizer(folder, "roberta", max_length=max_length)
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    config = GPT2Config(vocab_size=len(tokenizer), n_positions=max_length, n_embd=hidden, n_layer=1, n_head=2,
                        bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id)
    torch.manual_seed(seed)
    _save(GPT2LMHeadModel(config), folder)
    return folder


def _save(model, folder: Path) -> None:
    """``save_pretrained`` with safetensors, without transformers' progress bar."""
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    model.save_pretrained(str(folder), safe_serialization=True)


def labels_of(folder: str | Path) -> list[str]:
    """The ``id2label`` names of a built folder, in index order."""
    config = json.loads((Path(folder) / "config.json").read_text(encoding="utf-8"))
    return [config["id2label"][str(i)] for i in range(len(config["id2label"]))]
