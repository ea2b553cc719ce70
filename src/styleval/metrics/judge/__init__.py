"""Metrics that ask a language model: ``llm_judge`` (prompted 1-5 ratings of style, content or fluency) and
``logprop`` (Pauli et al. 2025's likelihood under prompts with and without the target style). Importing this package
registers them; the backends live in :mod:`styleval.judges`."""
from . import llm_judge, logprop  # noqa: F401
