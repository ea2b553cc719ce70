"""What ``styleval metrics NAME`` says about a metric beyond its class facts: what each parameter means, the
reference implementation its scores equal (and the test that checks it), and the shipped model behind it.

A metric class may declare ``parameter_help`` (parameter -> meaning) and ``reference`` itself (a plugin should);
the tables here cover the metrics shipped with styleval. ``tests/test_metrics_cli.py`` checks that every parameter
of every shipped metric has a meaning.
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any

#: Meanings of parameters many metrics share.
COMMON: dict[str, str] = {
    "against": "what the output is compared with: references (every reference of the segment) or source",
    "model": "the model: a shipped or catalog name (`styleval models`) or a model folder",
    "lowercase": "lower-case both texts first",
    "tokenize": "tokenizer applied before matching: treebank, whitespace, wordpunct or 13a (where offered)",
    "batch_size": "texts per forward pass (speed and memory only, not the scores)",
    "cache_dir": "folder for an on-disk embedding cache (none: in memory only)",
    "checkpoint": "the local checkpoint folder of the optional library's model (required)",
    "vectors": "word vectors: a catalog name (`styleval models`) or a word2vec/GloVe file",
    "oov": "words without a vector: 'mean' uses the mean vector (nlg-eval), 'drop' leaves them out",
    "style_lms": "target-style LMs, 'formal=DIR;informal=DIR': each output is scored under its target style's LM, "
                 "else under `model`",
    "normalize": "text normalisation before the LM: none, detok, truecase, detok+truecase, or auto (only lower-cased "
                 "or tokenized releases are normalised)",
    "batch_tokens": "tokens per LM batch (speed and memory only)",
    "max_tokens": "truncate each text to this many tokens (0: no limit)",
    "calibrated": "decide with the model card's calibration (threshold and probability map) when it has one",
    "case": "auto: decide once per corpus from its sources and references (lower-cased or tokenized release -> "
            "blind, else sensitive); sensitive: a cased model reads the outputs as written (the cased slot of a "
            "shipped pair); blind: the model reads them lower-cased and tokenized",
}

#: (metric, parameter) -> meaning, where the common one does not fit.
#: the word-vector metrics' case convention, which differs from the reference implementations' (docs/metrics.md)
_VECTOR_CASE = ("lower-case the tokens before the lookup (default true, so the lower-case GloVe vocabulary finds "
                "capitalised words); {reference} looks tokens up as written, so false gives its convention. On cased "
                "text it matters: on Lai 2022's 720 outputs {effect} (studies/embedding_case/case_effect.py)")

SPECIFIC: dict[tuple[str, str], str] = {
    ("embedding_average", "lowercase"): _VECTOR_CASE.format(
        reference="nlg-eval", effect="630 segment scores differ against the source, corpus +.022 to +.037"),
    ("vector_extrema", "lowercase"): _VECTOR_CASE.format(
        reference="nlg-eval", effect="551 segment scores differ against the source, corpus +.013 to +.020"),
    ("greedy_matching", "lowercase"): _VECTOR_CASE.format(
        reference="nlg-eval", effect="582 segment scores differ against the source, corpus +.010 to +.073"),
    ("wmd", "lowercase"): _VECTOR_CASE.format(
        reference="gensim's wmdistance", effect="630 segment scores differ against the source, corpus "
                                                "-.055 to -.032 (a distance)"),
    ("llm_judge", "aspect"): "style (how strongly the output shows the target style), content (the source's meaning "
                             "kept, the style change excepted) or fluency",
    ("llm_judge", "model"): "the judging LM: a catalog name or local folder (base_url empty), or the model name the "
                            "server knows",
    ("llm_judge", "base_url"): "an OpenAI-compatible server's address (ending in /v1); empty: run model locally "
                               "through transformers",
    ("llm_judge", "template"): "a prompt template file of one's own (default: the shipped one; docs/llm-judges.md)",
    ("llm_judge", "scoring"): "probability (ratings weighted by their first-token probabilities), parsed (the greedy "
                              "answer's digit) or auto (weighted where possible)",
    ("llm_judge", "top_logprobs"): "how many first-token alternatives are read for the weighted rating",
    ("llm_judge", "max_tokens"): "length of the greedy answer a parsed rating is read from",
    ("llm_judge", "api_key_env"): "the environment variable holding the server's API key (never written anywhere)",
    ("llm_judge", "concurrency"): "server requests in flight at once",
    ("llm_judge", "timeout"): "seconds for one server request",
    ("llm_judge", "retries"): "retries of a request that failed for a transient reason (connection, 429, 5xx)",
    ("llm_judge", "backoff"): "seconds before the first retry, doubled for each further one",
    ("llm_judge", "request_cache"): "SQLite file of server answers, so that a rerun or resumed run sends nothing "
                                    "twice (none: this process only)",
    ("llm_judge", "price"): "IN/OUT currency per million prompt / completion tokens, for a cost estimate in the run "
                            "facts",
    ("llm_judge", "batch_tokens"): "tokens per local batch (speed and memory only)",
    ("logprop", "part"): "content (mean log of the best of the three prompts' token probabilities) or style (rewrite "
                         "minus the best other)",
    ("logprop", "model"): "the judging LM: a catalog name or local folder (base_url empty), or the model name the "
                          "server knows",
    ("logprop", "base_url"): "an OpenAI-compatible server's address (ending in /v1); empty: run model locally through"
                             " transformers",
    ("logprop", "template"): "a prompt template file of one's own (default: the shipped one; docs/llm-judges.md)",
    ("logprop", "chat_template"): "a local folder with the served model's chat template (logprop over a server)",
    ("logprop", "score_first_token"): "also score the output's first token (the authors' script does not)",
    ("logprop", "api_key_env"): "the environment variable holding the server's API key (never written anywhere)",
    ("logprop", "concurrency"): "server requests in flight at once",
    ("logprop", "timeout"): "seconds for one server request",
    ("logprop", "retries"): "retries of a request that failed for a transient reason (connection, 429, 5xx)",
    ("logprop", "backoff"): "seconds before the first retry, doubled for each further one",
    ("logprop", "request_cache"): "SQLite file of server answers, so that a rerun or resumed run sends nothing twice "
                                  "(none: this process only)",
    ("logprop", "price"): "IN/OUT currency per million prompt / completion tokens, for a cost estimate in the run "
                          "facts",
    ("logprop", "batch_tokens"): "tokens per local batch (speed and memory only)",
    ("acceptability", "model"): "the acceptability classifier: shipped name or model folder",
    ("acceptability", "normalize"): "auto: detokenize and true-case only lower-cased or tokenized releases; "
                                    "detok+truecase always; none",
    ("bertscore", "model"): "the encoder: catalog name or sentence-transformers/transformers folder",
    ("bertscore", "num_layers"): "the encoder layer whose token vectors are matched (default: the last)",
    ("bertscore", "component"): "which BERTScore is reported: precision, recall or f1",
    ("bertscore", "idf"): "weight tokens by inverse document frequency over the comparison texts",
    ("bertscore", "rescale_with_baseline"): "rescale with the baseline numbers of models/baselines/ (or "
                                            "baseline_path) so unrelated pairs score about 0",
    ("bertscore", "baseline_path"): "a baseline file of one's own for rescale_with_baseline",
    ("bleu", "tokenize"): "sacrebleu tokenizer: 13a (default), intl, char, none, zh, ja-mecab, ko-mecab",
    ("bleu", "smooth_method"): "corpus BLEU smoothing: exp, floor, add-k or none",
    ("bleu", "smooth_value"): "the value of floor or add-k smoothing (default: sacrebleu's)",
    ("bleu", "sentence_smooth_method"): "smoothing of segment BLEU (sentence_bleu): exp, floor, add-k or none",
    ("bleu", "sentence_smooth_value"): "the value of the segment smoothing (default: sacrebleu's)",
    ("bleu", "max_ngram_order"): "longest n-gram counted",
    ("chrf", "char_order"): "longest character n-gram",
    ("chrf", "word_order"): "longest word n-gram (0: chrF, 2: chrF++)",
    ("chrf", "beta"): "recall weight of the F-score",
    ("chrf", "whitespace"): "keep whitespace in character n-grams",
    ("chrf", "eps_smoothing"): "sacrebleu's epsilon smoothing instead of chrF++'s effective order",
    ("comet", "gpus"): "GPUs for COMET (0: CPU)",
    ("formality_fscore", "pipeline"): "the spaCy pipeline (catalog name) whose part-of-speech tags count",
    ("formality_fscore", "oriented"): "sign flipped for formal->informal, so higher is always toward the target",
    ("gm", "style"): "the column (metric label) giving the style score",
    ("gm", "content"): "the column giving the content score (÷ 100 when on 0-100)",
    ("j", "style"): "the column giving each segment's style decision (0/1)",
    ("j", "similarity"): "the column giving each segment's content similarity (clipped to 0-1)",
    ("j", "fluency"): "the column giving each segment's fluency (none: no fluency factor)",
    ("j", "fluency_threshold"): "a segment is fluent when its fluency is at or past this (acceptability: >= 0.5; "
                                "perplexity: <= 200)",
    ("levenshtein", "normalized"): "divide the distance by the longer text's length",
    ("meteor", "alpha"): "NLTK's alpha: the precision-recall weight",
    ("meteor", "beta"): "NLTK's beta: the shape of the fragmentation penalty",
    ("meteor", "gamma"): "NLTK's gamma: the weight of the fragmentation penalty",
    ("naturalness", "classifier"): "the adversarial classifier: unigram (bag of words) or embedding (MiniLM)",
    ("naturalness", "folds"): "cross-fitting folds: each output is judged by a classifier not trained on it",
    ("naturalness", "seed"): "seed of the folds and the classifier",
    ("naturalness", "encoder"): "the encoder of the embedding classifier",
    ("ngram-perplexity", "model"): "the ARPA n-gram LM (required unless style_lms covers every target)",
    ("ngram-perplexity", "corpus"): "corpus score: tokens (exp of total NLL / total tokens) or mean of segments",
    ("perplexity", "corpus"): "corpus score: tokens (exp of total NLL / total tokens) or mean of segments",
    ("perplexity", "model"): "the generic causal LM: catalog name or folder",
    ("mean_logprob", "model"): "the causal LM: catalog name or folder",
    ("slor", "model"): "the causal LM: catalog name or folder",
    ("slor", "unigram"): "the unigram counts over the LM's tokens (shipped name or file)",
    ("pinc", "max_n"): "longest n-gram whose novelty is averaged",
    ("preservation", "model"): "the preservation model: shipped name (`styleval models`) or a `train-content` folder",
    ("preservation", "backend"): "encoder runtime: auto (ONNX Runtime when installed, else torch), onnx or torch",
    ("hm", "style"): "the column (metric label) giving the style score",
    ("hm", "content"): "the column giving the content score (÷ 100 when on 0-100)",
    ("rouge", "measure"): "which ROUGE figure: fmeasure, precision or recall",
    ("rouge", "use_stemmer"): "Porter-stem words before matching",
    ("rt_combined", "formality"): "the column giving formality on Rao & Tetreault's scale (required)",
    ("rt_combined", "fluency"): "the column giving fluency on their scale (required)",
    ("rt_combined", "meaning"): "the column giving meaning preservation on their scale (required)",
    ("style_accuracy", "model"): "the style classifier: auto (the shipped one covering the direction's styles), "
                                 "a shipped name or a `train-style` folder",
    ("style_probability", "model"): "the style classifier: auto, a shipped name or a folder",
    ("style_emd", "model"): "the style classifier: auto, a shipped name or a folder",
    ("style_emd", "ground"): "ground distance between labels: unit (Mir et al.), ordinal, or a matrix '0 1; 1 0'",
    ("style_regression", "model"): "the style regressor: shipped name or folder",
    ("style_regression", "relative"): "subtract the source's score (the change made, not the output's level)",
    ("style_regression", "scale"): "score: the regressor's score from its decision point; probability: the "
                                   "calibrated probability of the target style (both directions on one axis)",
    ("ter", "normalized"): "sacrebleu's TER normalisation",
    ("ter", "no_punct"): "remove punctuation first",
    ("ter", "asian_support"): "sacrebleu's tokenisation of Asian scripts",
    ("ter", "case_sensitive"): "keep case",
    ("wmd", "normalize_vectors"): "unit-normalise word vectors (gensim 4's wmdistance)",
    ("wmd", "remove_stopwords"): "leave English stop words out",
}
#: Metrics documented under one family name in SPECIFIC.
FAMILY = {"chrf++": "chrf", "rouge1": "rouge", "rouge2": "rouge", "rouge3": "rouge", "rougeL": "rouge",
          "embedding_average": "wmd", "vector_extrema": "wmd", "greedy_matching": "wmd"}

#: The implementation each shipped metric's scores equal, and where that is checked.
REFERENCES: dict[str, str] = {
    "bleu": "sacrebleu BLEU: sentence_bleu per segment, corpus_bleu from summed statistics; equal within 1e-9 to "
            "sacrebleu's Python API and command line (tests/test_lexical_metrics.py)",
    "chrf": "sacrebleu CHRF (word_order=0): sentence_chrf and corpus_chrf; equal within 1e-9 "
            "(tests/test_lexical_metrics.py)",
    "chrf++": "sacrebleu CHRF (word_order=2); equal within 1e-9 (tests/test_lexical_metrics.py)",
    "ter": "sacrebleu TER: sentence_ter and corpus_ter; equal within 1e-9 (tests/test_lexical_metrics.py)",
    "rouge1": "rouge-score RougeScorer, score_multi over references; equal within 1e-9 "
              "(tests/test_lexical_metrics.py)",
    "rouge2": "rouge-score RougeScorer (tests/test_lexical_metrics.py)",
    "rouge3": "rouge-score RougeScorer (tests/test_lexical_metrics.py)",
    "rougeL": "rouge-score RougeScorer (tests/test_lexical_metrics.py)",
    "meteor": "NLTK meteor_score with WordNet 3.0; equal within 1e-9 (tests/test_lexical_metrics.py)",
    "levenshtein": "rapidfuzz Levenshtein.distance on characters",
    "pinc": "Chen & Dolan 2011, written here",
    "bertscore": "the bert-score package: equal within 1e-6 where batch padding does not intervene "
                 "(tests/test_embedding_metrics.py, docs/metrics.md)",
    "wmd": "gensim 4's wmdistance (POT emd2 exact transport)",
    "embedding_average": "nlg-eval's embedding average (Sharma et al. 2017)",
    "vector_extrema": "nlg-eval's vector extrema",
    "greedy_matching": "nlg-eval's greedy matching (Rus & Lintean 2012)",
    "sentence_cosine": "sentence-transformers embeddings, cosine",
    "bleurt": "the bleurt package with the user's checkpoint",
    "comet": "the unbabel-comet package with the user's checkpoint",
    "perplexity": "transformers causal LM loop: corpus perplexity within 1.4e-5 (relative; benchmarks/"
                  "bench_perplexity.py)",
    "ngram-perplexity": "KenLM scoring of ARPA models",
    "mean_logprob": "the same LM pass as perplexity",
    "slor": "Kann et al. 2018's formula over the LM's tokens",
    "style_emd": "Mir et al. 2019's direction-corrected EMD: their stored TextCNN figures reproduce "
                 "(tests/test_meta_reproduction.py)",
    "formality_fscore": "Heylighen & Dewaele 1999's formula over spaCy part-of-speech tags",
    "rt_combined": "Rao & Tetreault 2018, Table 4: all twelve combined values within 0.05 (tests/test_overall.py)",
    "j": "ParaDetox's J (Logacheva et al. 2022): mean over segments of STA x SIM x FL",
    "hm": "Lai et al. 2022's harmonic mean of style accuracy and content",
    "gm": "geometric mean of style accuracy and content (Lai et al. 2022)",
    "naturalness": "Mir et al. 2019's adversarial classifiers, refitted per run",
}


def parameter_help(cls: Any, name: str) -> str:
    """What parameter ``name`` of metric class ``cls`` means ('' when nobody wrote it down)."""
    own = getattr(cls, "parameter_help", None) or {}
    metric = cls.name
    for key in ((metric, name), (FAMILY.get(metric, metric), name)):
        if key in SPECIFIC:
            return own.get(name) or SPECIFIC[key]
    return own.get(name) or COMMON.get(name, "")


def reference(cls: Any) -> str:
    """The implementation the metric's scores equal ('' when none is named)."""
    return getattr(cls, "reference", "") or REFERENCES.get(cls.name, "")


@dataclass(frozen=True)
class Parameter:
    name: str
    default: Any
    required: bool
    meaning: str


def parameters(cls: Any) -> list[Parameter]:
    """Every constructor parameter of ``cls`` with its default and meaning."""
    signature = inspect.signature(cls.__init__)
    out = []
    for name in cls.param_names():
        default = signature.parameters[name].default
        required = default is inspect.Parameter.empty
        out.append(Parameter(name, None if required else default, required, parameter_help(cls, name)))
    return out


def model_parameter_default(cls: Any) -> str | None:
    """The default of the class's ``model`` parameter, when it has one that is a string."""
    signature = inspect.signature(cls.__init__)
    param = signature.parameters.get("model")
    if param is None or not isinstance(param.default, str) or not param.default:
        return None
    return param.default
