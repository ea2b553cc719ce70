"""Chat messages rendered into one prompt string with a local model folder's chat template.

The template is the folder's ``chat_template.jinja`` (or the ``chat_template`` of ``tokenizer_config.json``), the
Jinja template transformers' ``apply_chat_template`` and the llama.cpp server (from the GGUF's metadata) render.
It is rendered here as transformers does (a sandboxed Jinja environment with ``trim_blocks`` and ``lstrip_blocks``,
``add_generation_prompt`` and the special tokens as variables), so that the local backend and a server given the
same messages see the same text.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..errors import InputError, MissingDependencyError


@dataclass(frozen=True)
class ChatFormat:
    """A folder's chat template with the special tokens it refers to."""

    folder: Path
    template: str
    bos_token: str
    eos_token: str

    def render(self, messages: list[dict[str, str]], *, add_generation_prompt: bool = True) -> str:
        return _compiled(self.template).render(messages=messages, add_generation_prompt=add_generation_prompt,
                                               bos_token=self.bos_token, eos_token=self.eos_token)

    def count_tokens(self, texts: list[str]) -> list[int]:
        """How many tokens the folder's ``tokenizer.json`` makes of each text (special tokens written out)."""
        path = self.folder / "tokenizer.json"
        if not path.is_file():
            raise InputError("counting tokens needs the model's tokenizer.json next to its chat template", self.folder)
        import tokenizers

        tok = tokenizers.Tokenizer.from_file(str(path))
        return [len(e.ids) for e in tok.encode_batch(texts, add_special_tokens=False)]


def chat_format(folder: str | Path) -> ChatFormat:
    """The chat template of a transformers model folder (an :class:`InputError` when it has none)."""
    folder = Path(folder)
    config: dict[str, Any] = {}
    cfg_path = folder / "tokenizer_config.json"
    if cfg_path.is_file():
        try:
            config = json.loads(cfg_path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise InputError(f"cannot read the tokenizer configuration: {exc}", cfg_path) from None
    jinja_path = folder / "chat_template.jinja"
    template = jinja_path.read_text(encoding="utf-8") if jinja_path.is_file() else config.get("chat_template")
    if isinstance(template, list):  # several named templates: the default one
        template = next((t.get("template") for t in template if t.get("name") == "default"), None)
    if not isinstance(template, str) or not template.strip():
        raise InputError("this model folder has no chat template (chat_template.jinja or tokenizer_config.json's "
                         "chat_template); an LLM judge needs an instruction-tuned model", folder)
    return ChatFormat(folder=folder, template=template, bos_token=_token(config.get("bos_token")),
                      eos_token=_token(config.get("eos_token")))


def _token(value: Any) -> str:
    if isinstance(value, dict):  # {"content": "<|im_end|>", ...} in older configurations
        value = value.get("content")
    return value if isinstance(value, str) else ""


@lru_cache(maxsize=16)
def _compiled(template: str) -> Any:
    try:
        from jinja2.sandbox import ImmutableSandboxedEnvironment
    except ImportError:
        raise MissingDependencyError("Jinja2", "judge", "rendering a chat template") from None

    def raise_exception(message: str) -> None:
        raise InputError(f"the chat template refused the messages: {message}")

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
    env.globals["raise_exception"] = raise_exception
    return env.from_string(template)
