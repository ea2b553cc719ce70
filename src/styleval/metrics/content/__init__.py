"""Content-preservation metrics; importing this package registers them (no heavy library is imported).

Lexical: ``bleu``, ``chrf``, ``chrf++``, ``ter`` (sacrebleu), ``rouge1``, ``rouge2``, ``rouge3``, ``rougeL``
(rouge-score), ``meteor`` (NLTK + WordNet), ``pinc`` (against the source only), ``levenshtein`` (rapidfuzz).
Embedding: ``wmd``, ``embedding_average``, ``vector_extrema``, ``greedy_matching`` (word vectors),
``sentence_cosine`` and ``bertscore`` (transformer encoders). Learned: ``bleurt``, ``comet`` (need a checkpoint),
``preservation`` (shipped with styleval; see its class for what the evidence shows).
"""
from .bertscore import BERTScore
from .bleu import BLEU
from .bleurt import BLEURT
from .chrf import CHRF, CHRFPlusPlus
from .comet import COMET
from .embedding import WMD, EmbeddingAverage, GreedyMatching, SentenceCosine, VectorExtrema
from .levenshtein import Levenshtein
from .meteor import Meteor
from .pinc import PINC
from .preservation import Preservation
from .rouge import Rouge1, Rouge2, Rouge3, RougeL
from .ter import TER

__all__ = ["BLEU", "CHRF", "CHRFPlusPlus", "TER", "Rouge1", "Rouge2", "Rouge3", "RougeL", "Meteor", "PINC",
           "Levenshtein", "WMD", "EmbeddingAverage", "VectorExtrema", "GreedyMatching", "SentenceCosine",
           "BERTScore", "BLEURT", "COMET", "Preservation"]
