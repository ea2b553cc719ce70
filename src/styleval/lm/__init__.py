"""Language models, all in one package: loading a causal LM (``loading``: the shipped SmolLM2 or a local folder,
through the plain-torch Llama of ``native`` or transformers), token likelihoods (``causal``), n-gram LMs
(``ngram``) and style adaptation (``train``)."""
