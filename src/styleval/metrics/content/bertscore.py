"""BERTScore (Zhang et al., 2020), computed with transformers directly, equal to the ``bert-score`` package.

Each distinct text is tokenized as ``bert_score.utils.sent_encode`` does (stripped; special tokens added;
truncated to the tokenizer's maximum length), encoded once (texts sorted by length and batched), and the
hidden states of layer ``num_layers`` are unit-normalized and kept in the process-wide embedding cache
(keyed by the model's content hash, the layer and the text; on disk too with ``cache_dir`` or
``STYLEVAL_CACHE``). P, R and F1 of a pair follow ``bert_score.utils.greedy_cos_idf``: greedy cosine
matching, weights from idf (computed on the batch's comparison texts, as bert_score computes it on the
references) or uniform with [CLS]/[SEP] at 0. With several comparisons each of P, R, F1 is the maximum
over them (as bert_score). Rescaling with a baseline maps ``x`` to ``(x - b) / (1 - b)`` with ``b`` from a
``LAYER,P,R,F`` table; styleval ships such a table for MiniLM (``models/baselines/minilm_L6.tsv``), made by
``studies/shipped_models/make_bertscore_baseline.py`` the way bert_score's baselines were made.

One known difference from ``bert_score.score``: bert_score pads the texts of a batch and multiplies the
similarities by the padding mask, so a padded position counts as similarity 0 in the greedy max. When every
real similarity of a token is negative (rare with BERT, seen with MiniLM on unrelated sentence pairs) its
score then depends on which other texts share the batch (up to 0.015 in F1 on random Yelp pairs). styleval
scores each pair on its own, which equals bert_score called with one pair at a time (within 2e-7) and does
not change with batch size or order.

Statistics per segment: ``[P, R, F1, truncated texts]`` (raw, before rescaling); ``component`` picks the
segment score.
"""
from __future__ import annotations

import warnings
from collections import Counter
from math import log
from pathlib import Path
from typing import Any, ClassVar, Sequence

import numpy as np

from ...errors import InputError, ResourceUnavailableError
from ..base import Against, ContentMetric, SegmentStats
from ..registry import register
from ._common import check_bool, check_choice, check_lengths, check_number

COMPONENTS = ("f1", "precision", "recall")
#: the flag of segments whose output, or every comparison text, is empty: raw P, R and F1 are 0 (bert_score's
#: values), and rescaled they are the baseline's image of 0, (0 - b) / (1 - b) (docs/metrics.md, "Empty texts")
EMPTY_FLAG = "empty_text_raw_0"
BASELINE_DIR = Path(__file__).resolve().parents[2] / "models" / "baselines"


def read_baseline(path: str | Path, layer: int) -> np.ndarray:
    """``(P, R, F)`` baselines of one layer from a bert_score-style ``LAYER,P,R,F`` file."""
    import csv

    path = Path(path)
    try:
        with open(path, encoding="utf-8") as fh:
            rows = [r for r in csv.reader(line for line in fh if not line.startswith("#"))]
    except OSError as exc:
        raise InputError(f"cannot read the BERTScore baseline: {exc}", path) from None
    header, body = rows[0], rows[1:]
    if [h.strip().upper() for h in header[:4]] != ["LAYER", "P", "R", "F"]:
        raise InputError("a baseline file has the header LAYER,P,R,F", path, 1)
    for r in body:
        if int(r[0]) == layer:
            return np.array([float(r[1]), float(r[2]), float(r[3])])
    raise InputError(f"no baseline for layer {layer}", path)


class TokenEmbedder:
    """Per-text token ids and unit-normalized hidden states of one layer of a transformers encoder."""

    def __init__(self, model: str, layer: int | None, batch_size: int = 64, cache_dir: str | None = None) -> None:
        from ...models.encoder import transformer
        from ...models.spec import model_spec

        self.spec = model_spec(model)
        self.tokenizer, self.model = transformer(model)
        n_layers = int(getattr(self.model.config, "num_hidden_layers", 0) or 0)  # type: ignore[call-overload]
        if layer is None:
            entry = self.spec.entry
            layer = int(entry.defaults.get("bertscore_layers", n_layers)) if entry is not None else n_layers  # type: ignore[call-overload]
        if not 0 <= layer <= n_layers:
            raise InputError(f"bertscore: num_layers={layer} is outside 0..{n_layers} for model {model!r}")
        self.layer = layer
        self.n_layers = n_layers
        self.batch_size = batch_size
        self.cache_dir = cache_dir
        max_len = int(getattr(self.tokenizer, "model_max_length", 512) or 512)
        max_pos = int(getattr(self.model.config, "max_position_embeddings", max_len) or max_len)
        self.max_length = min(max_len, max_pos)
        self.namespace = f"bertscore:{self.spec.content_hash()}:L{layer}:max{self.max_length}"

    def encode_ids(self, text: str) -> tuple[list[int], bool]:
        """Token ids as bert_score's ``sent_encode``, and whether the text was truncated."""
        tok = self.tokenizer
        text = text.strip()
        if text == "":  # only the special tokens, as bert_score (transformers 5 lacks build_inputs_with_special_tokens)
            build = getattr(tok, "build_inputs_with_special_tokens", None)
            ids = build([]) if build is not None else tok("", add_special_tokens=True)["input_ids"]
            return list(ids), False
        kwargs: dict[str, Any] = {"add_special_tokens": True}
        if type(tok).__name__.startswith(("GPT2Tokenizer", "RobertaTokenizer")):
            kwargs["add_prefix_space"] = True
        full = tok.encode(text, **kwargs, verbose=False)
        if len(full) <= self.max_length:
            return list(full), False
        return list(tok.encode(text, **kwargs, max_length=self.max_length, truncation=True)), True

    def embed(self, texts: Sequence[str]) -> tuple[dict[str, tuple[np.ndarray, np.ndarray]], set[str]]:
        """``{text: (ids, unit-normalized embeddings)}`` for the distinct texts, and the truncated texts."""
        import torch

        from ...models.passes import timed
        from ...models.pool import embedding_cache
        from ...progress import report

        distinct = list(dict.fromkeys(texts))
        cache = embedding_cache()
        found = cache.get_many(self.namespace, distinct, self.cache_dir)
        truncated: set[str] = set()
        todo = [t for t in distinct if t not in found]
        encoded = {}
        for t in todo:
            ids, trunc = self.encode_ids(t)
            encoded[t] = ids
            if trunc:
                truncated.add(t)
        # truncation of cached texts: recheck cheaply only by length of cached ids
        for t in distinct:
            if t in found and len(found[t][0]) >= self.max_length \
                    and len(self.tokenizer.tokenize(t)) + 2 > self.max_length:
                truncated.add(t)
        order = sorted(todo, key=lambda t: len(encoded[t]), reverse=True)
        pad = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else 0
        new: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        passed = timed("model", f"token encoder {self.spec.name} layer {self.layer}", len(order))
        with torch.inference_mode(), passed:
            for start in range(0, len(order), self.batch_size):
                chunk = order[start:start + self.batch_size]
                lens: list[int] = [len(encoded[t]) for t in chunk]
                width = max(lens)
                batch_ids = torch.full((len(chunk), width), pad, dtype=torch.long)
                mask = torch.zeros((len(chunk), width), dtype=torch.long)
                for i, t in enumerate(chunk):
                    batch_ids[i, :lens[i]] = torch.tensor(encoded[t], dtype=torch.long)
                    mask[i, :lens[i]] = 1
                device = next(self.model.parameters()).device
                if self.layer == self.n_layers:
                    out = self.model(batch_ids.to(device), attention_mask=mask.to(device))
                    hidden = out[0]
                else:
                    out = self.model(batch_ids.to(device), attention_mask=mask.to(device), output_hidden_states=True)
                    hidden = out.hidden_states[self.layer]
                hidden = hidden.float().cpu()
                hidden = hidden / torch.norm(hidden, dim=-1, keepdim=True)
                for i, t in enumerate(chunk):
                    new[t] = (np.asarray(encoded[t], dtype=np.int64), hidden[i, :lens[i]].numpy().copy())
                report("encoding texts [texts]", start + len(chunk), len(order))
        if new:
            cache.put_many(self.namespace, new, self.cache_dir)
            found.update(new)
        return found, truncated

    def idf_weights(self, docs: Sequence[np.ndarray] | None) -> "IdfWeights":
        tok = self.tokenizer
        if docs is None:
            return IdfWeights(None, 0, {tok.sep_token_id, tok.cls_token_id})
        counts: Counter[int] = Counter()
        for ids in docs:
            counts.update(set(int(i) for i in ids))
        return IdfWeights(counts, len(docs), set())


class IdfWeights:
    """bert_score's idf dict: ``log((N + 1) / (count + 1))``, unseen ids ``log(N + 1)``; or uniform weights
    with the [CLS]/[SEP] ids at 0."""

    def __init__(self, counts: Counter[int] | None, n_docs: int, zero_ids: set[int | None]) -> None:
        self.counts, self.n_docs, self.zero_ids = counts, n_docs, zero_ids

    def __call__(self, ids: np.ndarray) -> np.ndarray:
        if self.counts is None:
            w = np.ones(len(ids), dtype=np.float32)
            for z in self.zero_ids:
                if z is not None:
                    w[ids == z] = 0.0
            return w
        n = self.n_docs
        return np.array([log((n + 1) / (self.counts.get(int(i), 0) + 1)) for i in ids], dtype=np.float32)


def greedy_prf(h_emb: np.ndarray, h_w: np.ndarray, r_emb: np.ndarray, r_w: np.ndarray) -> tuple[float, float, float]:
    """P, R, F1 of one pair from unit-normalized token embeddings and (unnormalized) weights (float32 as
    bert_score); an empty text (only special tokens) gives 0, as bert_score."""
    if len(h_emb) <= 2 or len(r_emb) <= 2:
        return 0.0, 0.0, 0.0
    sim = h_emb @ r_emb.T
    hw = h_w / h_w.sum(dtype=np.float32)
    rw = r_w / r_w.sum(dtype=np.float32)
    p = float((sim.max(axis=1) * hw).sum(dtype=np.float32))
    r = float((sim.max(axis=0) * rw).sum(dtype=np.float32))
    f = 2 * p * r / (p + r) if (p + r) != 0 else 0.0
    if np.isnan(f):
        f = 0.0
    return p, r, f


@register
class BERTScore(ContentMetric):
    name = "bertscore"
    parameter_help: ClassVar[dict[str, str]] = {
        "model": "the encoder: catalog name or sentence-transformers/transformers folder",
        "num_layers": "the encoder layer whose token vectors are matched (default: the last)",
        "component": "which BERTScore is reported: precision, recall or f1",
        "idf": "weight tokens by inverse document frequency over the comparison texts",
        "rescale_with_baseline": "rescale with the baseline numbers of models/baselines/ (or baseline_path) "
                                 "so unrelated pairs score about 0",
        "baseline_path": "a baseline file of one's own for rescale_with_baseline",
    }
    reference = ("the bert-score package: equal within 1e-6 where batch padding does not intervene "
                 "(tests/test_embedding_metrics.py, docs/metrics.md)")
    n_stats = 4
    version = "1"
    higher_is_better = True
    value_range = (-1.0, 1.0)
    unit_range = (0.0, 1.0)  # cosine-like: negative similarity counts as none in overall scores
    description = ("BERTScore P/R/F1 (Zhang et al. 2020) with a transformers encoder (MiniLM by default, all "
                   "6 layers), optional idf and baseline rescaling; max over references; equals bert-score")
    libraries: ClassVar[tuple[str, ...]] = ("torch", "transformers")

    def __init__(self, *, against: str | Against = "references", model: str = "minilm",
                 num_layers: int | None = None, component: str = "f1", idf: bool = False,
                 rescale_with_baseline: bool = False, baseline_path: str | None = None, batch_size: int = 64,
                 cache_dir: str | None = None) -> None:
        self.against = Against.parse(against)
        if not isinstance(model, str) or not model.strip():
            raise InputError(f"metric {self.name!r}: model must be a name or path, got {model!r}")
        if num_layers is not None:
            check_number(self.name, "num_layers", num_layers, low=0, integer=True)
        check_choice(self.name, "component", component, COMPONENTS)
        check_bool(self.name, "idf", idf)
        check_bool(self.name, "rescale_with_baseline", rescale_with_baseline)
        check_number(self.name, "batch_size", batch_size, low=1, integer=True)
        self.model = model
        self.num_layers = num_layers
        self.component = component
        self.idf = idf
        self.rescale_with_baseline = rescale_with_baseline
        self.baseline_path = baseline_path
        self.batch_size = batch_size
        self.cache_dir = cache_dir
        self._embedder: TokenEmbedder | None = None
        self._baseline: np.ndarray | None = None

    batch_dependence = "with idf=true it weights words by idf computed over the whole batch's comparison texts"

    @property
    def batch_independent(self) -> bool:  # type: ignore[override]
        return not self.idf

    def get_params(self) -> dict[str, Any]:  # batch size and cache do not change scores
        params = super().get_params()
        params.pop("batch_size", None)
        params.pop("cache_dir", None)
        return params

    # -- lazy pieces ----------------------------------------------------------------------------
    @property
    def embedder(self) -> TokenEmbedder:
        if self._embedder is None:
            self._embedder = TokenEmbedder(self.model, self.num_layers, self.batch_size, self.cache_dir)
        return self._embedder

    def layer(self) -> int:
        """The layer used, without loading the model when the catalog knows it."""
        if self.num_layers is not None:
            return self.num_layers
        from ...models.spec import model_spec

        entry = model_spec(self.model).entry
        if entry is not None and "bertscore_layers" in entry.defaults:
            return int(entry.defaults["bertscore_layers"])  # type: ignore[call-overload]
        return self.embedder.layer

    def baseline_file(self) -> Path | None:
        if not self.rescale_with_baseline:
            return None
        if self.baseline_path:
            return Path(self.baseline_path)
        from ...models.spec import model_spec

        entry = model_spec(self.model).entry
        name = entry.defaults.get("bertscore_baseline") if entry is not None else None
        if not name or not (BASELINE_DIR / str(name)).is_file():
            raise ResourceUnavailableError(
                f"bertscore: no rescaling baseline ships for model {self.model!r}; pass baseline_path= a "
                "LAYER,P,R,F file (studies/shipped_models/make_bertscore_baseline.py makes one) or "
                "rescale_with_baseline=false")
        return BASELINE_DIR / str(name)

    def baseline(self) -> np.ndarray | None:
        path = self.baseline_file()
        if path is None:
            return None
        if self._baseline is None:
            self._baseline = read_baseline(path, self.layer())
        return self._baseline

    def resources(self) -> dict[str, str]:
        from ...models.hashing import short_hash
        from ...models.spec import model_spec

        res = {**model_spec(self.model).facts(), "layer": str(self.layer())}
        path = self.baseline_file()
        if path is not None:
            res["baseline"] = path.name
            res["baseline_hash"] = short_hash(path)
        return res

    # -- statistics -----------------------------------------------------------------------------
    def pair_stats(self, outputs: list[str], comparisons: list[list[str]]) -> SegmentStats:
        check_lengths(self.name, outputs, comparisons)
        flat_comp = [c for comp in comparisons for c in comp]
        emb, truncated = self.embedder.embed([*outputs, *flat_comp])
        weights = self.embedder.idf_weights([emb[c][0] for c in flat_comp] if self.idf else None)
        wcache: dict[str, np.ndarray] = {}

        def w(text: str) -> np.ndarray:
            if text not in wcache:
                wcache[text] = weights(emb[text][0])
            return wcache[text]

        stats = np.zeros((len(outputs), 4))
        trunc_rows, empty_rows = [], []
        for i, (out, comp) in enumerate(zip(outputs, comparisons)):
            o_ids, o_emb = emb[out]
            best = np.full(3, -np.inf)
            every_comparison_empty = True
            for c in comp:
                c_ids, c_emb = emb[c]
                prf = greedy_prf(o_emb, w(out), c_emb, w(c))
                best = np.maximum(best, prf)
                every_comparison_empty &= len(c_ids) <= 2
            # the raw P, R, F1 are bert_score's 0 only when the output or every comparison text is empty (one empty
            # reference among several leaves the others to set the maximum)
            if len(o_ids) <= 2 or (comp and every_comparison_empty):
                empty_rows.append(i)
            n_trunc = (out in truncated) + sum(c in truncated for c in comp)
            if n_trunc:
                trunc_rows.append(i)
            stats[i, :3] = best
            stats[i, 3] = n_trunc
        if trunc_rows:
            warnings.warn(f"bertscore: {len(trunc_rows)} segments have a text longer than the model's maximum "
                          f"of {self.embedder.max_length} tokens; it was truncated (flag 'truncated')", stacklevel=3)
        return SegmentStats(values=stats,
                            flags={"truncated": trunc_rows, EMPTY_FLAG: sorted(set(empty_rows))},
                            extra={"truncated_segments": len(trunc_rows), "layer": self.embedder.layer})

    def scores_from_stats(self, stats: np.ndarray) -> np.ndarray:
        stats = np.asarray(stats, dtype=float)
        col = COMPONENTS.index(self.component)
        col = {0: 2, 1: 0, 2: 1}[col]  # f1 -> F column, precision -> P, recall -> R
        values = stats[:, col]
        base = self.baseline()
        if base is not None:
            b = base[col]
            values = (values - b) / (1 - b)
        return values

    # -- convenience: all three at once ---------------------------------------------------------
    def prf(self, outputs: list[str], comparisons: list[list[str]]) -> dict[str, np.ndarray]:
        """P, R, F1 per segment (rescaled when asked), as ``bert_score.score`` returns them."""
        stats = SegmentStats.of(self.pair_stats(outputs, comparisons)).values
        base = self.baseline()
        out = {}
        for name, col in (("precision", 0), ("recall", 1), ("f1", 2)):
            v = stats[:, col]
            out[name] = v if base is None else (v - base[col]) / (1 - base[col])
        return out
