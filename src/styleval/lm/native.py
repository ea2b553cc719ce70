"""Llama-architecture causal LMs loaded without transformers, for fast scoring.

Importing transformers' model classes costs about 3 s per process (its modelling utilities pull in
``torch._dynamo``, ``torch.distributed.tensor``, sympy and scipy), more than the whole scoring of a small test set.
The default LM (SmolLM2-135M) is a plain Llama model, so this module implements the Llama forward pass in plain
torch (RMSNorm, rotary embeddings, grouped-query attention through ``scaled_dot_product_attention``, SiLU MLP,
tied or separate output head) and reads the weights with safetensors and the tokenizer with ``tokenizers``.

Only what scoring needs is implemented: a causal forward pass over right-padded batches (no cache, no
generation, no training). Because padding is on the right, the causal mask alone keeps padded positions out of
every real position's attention (a left-padded mask is refused). :func:`supports` names the
configurations this module reproduces exactly; any other folder goes through transformers. The tests compare the
token log-likelihoods with transformers' ``LlamaForCausalLM`` on the same folder.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import torch
from torch import nn
from torch.nn import functional as F

WEIGHTS = "model.safetensors"
WEIGHTS_INDEX = "model.safetensors.index.json"


def _rope_theta(cfg: dict[str, Any]) -> float | None:
    """The rotary base of a default (unscaled) RoPE, else ``None``."""
    params = cfg.get("rope_parameters")
    if isinstance(params, dict):  # transformers >= 5
        if params.get("rope_type", "default") != "default":
            return None
        theta = params.get("rope_theta", cfg.get("rope_theta"))
    else:
        scaling = cfg.get("rope_scaling")
        if scaling and (scaling.get("rope_type") or scaling.get("type")) not in (None, "default"):
            return None
        theta = cfg.get("rope_theta", 10000.0)
    return float(theta) if theta is not None else None


#: Tokenizer classes that are nothing but their ``tokenizer.json`` (transformers rewrites no part of it on load).
PLAIN_TOKENIZERS = ("TokenizersBackend", "PreTrainedTokenizerFast", "GPT2Tokenizer", "GPT2TokenizerFast")


def _plain_tokenizer(folder: Path) -> bool:
    """Whether transformers would tokenize exactly as ``tokenizer.json`` alone does: a plain class and none of
    the options (``add_prefix_space``, ``legacy``) with which transformers edits the pre-tokenizer on load."""
    try:
        cfg = json.loads((folder / "tokenizer_config.json").read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return False
    return cfg.get("tokenizer_class") in PLAIN_TOKENIZERS and "add_prefix_space" not in cfg and "legacy" not in cfg


def supports(folder: str | Path) -> bool:
    """Whether ``folder`` holds a Llama model (and tokenizer) that this module loads exactly."""
    folder = Path(folder)
    try:
        cfg = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return False
    if not (folder / "tokenizer.json").is_file() or not _plain_tokenizer(folder):
        return False
    return (cfg.get("model_type") == "llama"
            and cfg.get("hidden_act", "silu") == "silu"
            and not cfg.get("attention_bias", False) and not cfg.get("mlp_bias", False)
            and int(cfg.get("pretraining_tp", 1) or 1) == 1
            and cfg.get("quantization_config") is None
            and _rope_theta(cfg) is not None
            and ((folder / WEIGHTS).is_file() or (folder / WEIGHTS_INDEX).is_file()))


@dataclass(frozen=True)
class LlamaConfig:
    """The facts of a Llama ``config.json`` that the forward pass uses."""

    vocab_size: int
    hidden_size: int
    intermediate_size: int
    num_hidden_layers: int
    num_attention_heads: int
    num_key_value_heads: int
    head_dim: int
    rms_norm_eps: float
    rope_theta: float
    max_position_embeddings: int
    tie_word_embeddings: bool
    final_logit_softcapping: None = None  # read by styleval.lm.causal: never set for Llama

    @classmethod
    def from_dict(cls, cfg: dict[str, Any]) -> "LlamaConfig":
        heads = int(cfg["num_attention_heads"])
        theta = _rope_theta(cfg)
        if theta is None:
            raise ValueError("only the default (unscaled) rotary embedding is implemented natively")
        return cls(vocab_size=int(cfg["vocab_size"]), hidden_size=int(cfg["hidden_size"]),
                   intermediate_size=int(cfg["intermediate_size"]), num_hidden_layers=int(cfg["num_hidden_layers"]),
                   num_attention_heads=heads, num_key_value_heads=int(cfg.get("num_key_value_heads") or heads),
                   head_dim=int(cfg.get("head_dim") or int(cfg["hidden_size"]) // heads),
                   rms_norm_eps=float(cfg.get("rms_norm_eps", 1e-6)), rope_theta=theta,
                   max_position_embeddings=int(cfg.get("max_position_embeddings", 2048)),
                   tie_word_embeddings=bool(cfg.get("tie_word_embeddings", False)))


def _empty(*shape: int) -> nn.Parameter:
    """An uninitialised parameter: every one is replaced by the file's tensor, so random initialisation (and
    building on the meta device, whose initialisers import torch._dynamo) would be wasted time."""
    return nn.Parameter(torch.empty(*shape), requires_grad=False)


class Linear(nn.Module):
    """``nn.Linear`` without bias or initialisation."""

    def __init__(self, n_in: int, n_out: int) -> None:
        super().__init__()
        self.weight = _empty(n_out, n_in)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.linear(x, self.weight)


class Embedding(nn.Module):
    def __init__(self, n: int, dim: int) -> None:
        super().__init__()
        self.weight = _empty(n, dim)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return F.embedding(ids, self.weight)


class RMSNorm(nn.Module):
    def __init__(self, size: int, eps: float) -> None:
        super().__init__()
        self.weight = _empty(size)
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        dtype = x.dtype
        x = x.float()
        x = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)
        return self.weight * x.to(dtype)


def _rotate_half(x: torch.Tensor) -> torch.Tensor:
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


class Attention(nn.Module):
    def __init__(self, c: LlamaConfig) -> None:
        super().__init__()
        self.heads, self.kv_heads, self.head_dim = c.num_attention_heads, c.num_key_value_heads, c.head_dim
        self.q_proj = Linear(c.hidden_size, c.num_attention_heads * c.head_dim)
        self.k_proj = Linear(c.hidden_size, c.num_key_value_heads * c.head_dim)
        self.v_proj = Linear(c.hidden_size, c.num_key_value_heads * c.head_dim)
        self.o_proj = Linear(c.num_attention_heads * c.head_dim, c.hidden_size)

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        b, n, _ = x.shape
        q = self.q_proj(x).view(b, n, self.heads, self.head_dim).transpose(1, 2)
        k = self.k_proj(x).view(b, n, self.kv_heads, self.head_dim).transpose(1, 2)
        v = self.v_proj(x).view(b, n, self.kv_heads, self.head_dim).transpose(1, 2)
        q = q * cos + _rotate_half(q) * sin
        k = k * cos + _rotate_half(k) * sin
        if self.kv_heads != self.heads:  # grouped-query attention: each key/value head serves a group of queries
            rep = self.heads // self.kv_heads
            k = k.repeat_interleave(rep, dim=1)
            v = v.repeat_interleave(rep, dim=1)
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True, scale=self.head_dim ** -0.5)
        return self.o_proj(out.transpose(1, 2).reshape(b, n, -1))


class MLP(nn.Module):
    def __init__(self, c: LlamaConfig) -> None:
        super().__init__()
        self.gate_proj = Linear(c.hidden_size, c.intermediate_size)
        self.up_proj = Linear(c.hidden_size, c.intermediate_size)
        self.down_proj = Linear(c.intermediate_size, c.hidden_size)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class DecoderLayer(nn.Module):
    def __init__(self, c: LlamaConfig) -> None:
        super().__init__()
        self.self_attn = Attention(c)
        self.mlp = MLP(c)
        self.input_layernorm = RMSNorm(c.hidden_size, c.rms_norm_eps)
        self.post_attention_layernorm = RMSNorm(c.hidden_size, c.rms_norm_eps)

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        x = x + self.self_attn(self.input_layernorm(x), cos, sin)
        return x + self.mlp(self.post_attention_layernorm(x))


@dataclass
class Output:
    """What the forward passes return (the attribute names transformers uses)."""

    last_hidden_state: torch.Tensor | None = None
    logits: torch.Tensor | None = None


class LlamaModel(nn.Module):
    """Embeddings, decoder layers and final norm: ``forward`` returns the last hidden states."""

    def __init__(self, c: LlamaConfig) -> None:
        super().__init__()
        self.config = c
        self.embed_tokens = Embedding(c.vocab_size, c.hidden_size)
        self.layers = nn.ModuleList(DecoderLayer(c) for _ in range(c.num_hidden_layers))
        self.norm = RMSNorm(c.hidden_size, c.rms_norm_eps)

    def rotary(self, n: int, device: torch.device, dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
        """cos and sin of positions ``0..n-1`` (computed in float32 as transformers does)."""
        d = self.config.head_dim
        inv_freq = 1.0 / (self.config.rope_theta ** (torch.arange(0, d, 2, dtype=torch.float, device=device) / d))
        freqs = torch.arange(n, dtype=torch.float, device=device)[:, None] * inv_freq[None, :]
        emb = torch.cat((freqs, freqs), dim=-1)
        return emb.cos().to(dtype), emb.sin().to(dtype)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor | None = None) -> Output:
        """Hidden states of right-padded ``input_ids``. With right padding the causal mask already keeps padding
        out of every real position, so ``attention_mask`` is only checked to be right padding."""
        if attention_mask is not None and bool((attention_mask[:, 1:] > attention_mask[:, :-1]).any()):
            raise ValueError("the native Llama model takes right-padded batches only")
        x = self.embed_tokens(input_ids)
        cos, sin = self.rotary(input_ids.shape[1], x.device, x.dtype)
        for layer in self.layers:
            x = layer(x, cos, sin)
        return Output(last_hidden_state=self.norm(x))


class LlamaForCausalLM(nn.Module):
    """The decoder plus the output head; attribute names follow transformers so its weights load as they are."""

    base_model_prefix = "model"

    def __init__(self, c: LlamaConfig) -> None:
        super().__init__()
        self.config = c
        self.model = LlamaModel(c)
        self.lm_head = Linear(c.hidden_size, c.vocab_size)

    def get_output_embeddings(self) -> Linear:
        return self.lm_head

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor | None = None) -> Output:
        return Output(logits=self.lm_head(self.model(input_ids, attention_mask).last_hidden_state))


def _read_weights(folder: Path) -> dict[str, torch.Tensor]:
    from safetensors.torch import load_file

    if (folder / WEIGHTS).is_file():
        return load_file(str(folder / WEIGHTS))
    index = json.loads((folder / WEIGHTS_INDEX).read_text(encoding="utf-8"))
    out: dict[str, torch.Tensor] = {}
    for shard in sorted(set(index["weight_map"].values())):
        out.update(load_file(str(folder / shard)))
    return out


def load_llama(folder: str | Path, dtype: torch.dtype = torch.float32,
               weights: dict[str, torch.Tensor] | None = None) -> LlamaForCausalLM:
    """A Llama causal LM from a transformers folder (or from ``weights`` already read), in eval mode.

    The modules are built without initialisation and take the file's tensors as they are (no copy when the dtype
    matches); a missing or unexpected weight is an error.
    """
    folder = Path(folder)
    cfg = LlamaConfig.from_dict(json.loads((folder / "config.json").read_text(encoding="utf-8")))
    state = dict(weights) if weights is not None else _read_weights(folder)
    # a tied head is the embedding matrix (as transformers does for a folder); given weights keep their own head
    if "lm_head.weight" not in state or (weights is None and cfg.tie_word_embeddings):
        state["lm_head.weight"] = state["model.embed_tokens.weight"]
    state = {k: (v if v.dtype == dtype else v.to(dtype)) for k, v in state.items()}
    model = LlamaForCausalLM(cfg)
    missing, unexpected = model.load_state_dict(state, strict=False, assign=True)
    if missing or unexpected:
        raise ValueError(f"weights do not match a Llama model: missing {missing[:3]}, unexpected {unexpected[:3]}")
    if model.lm_head.weight.data_ptr() == model.model.embed_tokens.weight.data_ptr():
        model.lm_head.weight = model.model.embed_tokens.weight  # one parameter, as in transformers
    return model.eval()


# ------------------------------------------------------------------------------------------- tokenizer
class Tokenizer:
    """``tokenizers.Tokenizer`` with the small part of transformers' tokenizer interface that scoring uses:
    ``tok(texts, add_special_tokens=...)["input_ids"]`` and the BOS/EOS/PAD token ids."""

    def __init__(self, folder: str | Path) -> None:
        import tokenizers

        folder = Path(folder)
        self._tok = tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json"))
        self._tok.no_padding()
        self._tok.no_truncation()
        special = _special_tokens(folder)
        self.bos_token_id = self._id(special.get("bos_token"))
        self.eos_token_id = self._id(special.get("eos_token"))
        self.pad_token_id = self._id(special.get("pad_token"))
        self.unk_token_id = self._id(special.get("unk_token"))

    def _id(self, token: str | None) -> int | None:
        return self._tok.token_to_id(token) if token else None

    def __call__(self, texts: str | Sequence[str], add_special_tokens: bool = True) -> dict[str, Any]:
        if isinstance(texts, str):
            return {"input_ids": self._tok.encode(texts, add_special_tokens=add_special_tokens).ids}
        enc = self._tok.encode_batch(list(texts), add_special_tokens=add_special_tokens)
        return {"input_ids": [e.ids for e in enc]}

    def decode(self, ids: Sequence[int], skip_special_tokens: bool = False) -> str:
        return self._tok.decode(list(ids), skip_special_tokens=skip_special_tokens)

    def __len__(self) -> int:
        return self._tok.get_vocab_size(with_added_tokens=True)


def _special_tokens(folder: Path) -> dict[str, str]:
    """BOS/EOS/PAD/UNK token strings from ``tokenizer_config.json`` (then ``special_tokens_map.json``)."""
    out: dict[str, str] = {}
    for name in ("special_tokens_map.json", "tokenizer_config.json"):  # the later file wins
        p = folder / name
        if not p.is_file():
            continue
        data = json.loads(p.read_text(encoding="utf-8"))
        for key in ("bos_token", "eos_token", "pad_token", "unk_token"):
            value = data.get(key)
            if isinstance(value, dict):
                value = value.get("content")
            if isinstance(value, str):
                out[key] = value
    return out



# ------------------------------------------------------------------------------------------- LoRA
#: adapter_config.json entries that must be empty/false for the plain merge ``W + (alpha / r) · B·A`` to be exact.
_LORA_MUST_BE_UNSET = ("use_dora", "lora_bias", "modules_to_save", "fan_in_fan_out", "rank_pattern", "alpha_pattern",
                       "layer_replication", "trainable_token_indices", "target_parameters", "use_qalora",
                       "alora_invocation_tokens", "use_bdlora", "arrow_config")
_LORA_PREFIX = "base_model.model."


def merge_lora(base: dict[str, torch.Tensor], adapter: str | Path) -> dict[str, torch.Tensor] | None:
    """The base weights with a peft LoRA adapter merged in (``W + scale · B·A``, new tensors for the changed
    weights, the others shared with ``base``), or ``None`` when the adapter is anything but plain LoRA on linear
    weights that ``base`` holds (DoRA, biases, extra saved modules, rank patterns ...), which peft must then load.
    ``scale`` is ``lora_alpha / r`` (``lora_alpha / sqrt(r)`` with rsLoRA)."""
    adapter = Path(adapter)
    weights_file = adapter / "adapter_model.safetensors"
    try:
        cfg = json.loads((adapter / "adapter_config.json").read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None
    if cfg.get("peft_type") != "LORA" or cfg.get("bias", "none") != "none" or not weights_file.is_file():
        return None
    if any(cfg.get(key) for key in _LORA_MUST_BE_UNSET):
        return None
    r, alpha = int(cfg.get("r", 8)), float(cfg.get("lora_alpha", 8))
    scale = alpha / math.sqrt(r) if cfg.get("use_rslora") else alpha / r
    from safetensors.torch import load_file

    pairs: dict[str, dict[str, torch.Tensor]] = {}
    for key, tensor in load_file(str(weights_file)).items():
        if not key.startswith(_LORA_PREFIX):
            return None
        path, dot, rest = key[len(_LORA_PREFIX):].rpartition(".lora_")
        if not dot or rest not in ("A.weight", "B.weight"):
            return None
        pairs.setdefault(path + ".weight", {})[rest[0]] = tensor
    out = dict(base)
    for name, ab in pairs.items():
        w = base.get(name)
        if w is None or set(ab) != {"A", "B"} or w.ndim != 2 or ab["A"].shape[0] != r \
                or (ab["B"].shape[0], ab["A"].shape[1]) != tuple(w.shape):
            return None
        out[name] = w + scale * (ab["B"].to(w.dtype) @ ab["A"].to(w.dtype))
    return out
