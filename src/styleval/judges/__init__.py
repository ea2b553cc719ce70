"""LLM judges: prompted ratings and LogProp likelihoods, from a local causal LM or an OpenAI-compatible server.

* :mod:`.templates` reads the prompt templates (the shipped ones in ``templates/``, one per aspect, or a user's
  file) and hashes them for signatures;
* :mod:`.chat` renders chat messages into a prompt with a local model folder's chat template;
* :mod:`.rating` turns the rating tokens' log-probabilities into a probability-weighted rating, or parses one;
* :mod:`.local` runs a local causal LM (batched; GPU when present; outputs through the model-output store);
* :mod:`.server` asks an OpenAI-compatible server through the ``openai`` client (concurrency limit, timeouts,
  retries with backoff, token counts), with :mod:`.request_cache` so that no request is sent twice.

The metrics over them are ``llm_judge`` and ``logprop`` (:mod:`styleval.metrics.judge`).
"""
