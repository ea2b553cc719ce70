"""Language models for fluency: causal-LM token likelihoods, n-gram LMs, style adaptation."""
