"""The metric contract: every registered metric (built-ins and plugins) through the same checks.

On a few segments of the bundled formality example (two systems), each metric must
- build again from its own spec (``parse_spec(metric_id.spec())``), parameters quoted where needed;
- declare its statistics layout (``n_stats``, row flags, segment scores inside ``value_range``);
- give the same numbers and signatures in memory, in chunks (``score_stream``), and from the statistics cache, or,
  when it declares itself batch-dependent, be refused by ``score_stream`` with one line;
- give an empty or whitespace-only output, source or reference the value docs/metrics.md's table documents for it
  (or a one-line ``InputError`` where the table says ``error``), never a traceback;
- refuse NaN, infinite and out-of-range numeric parameters at construction with a one-line ``InputError``;
- equal its reference implementation (sacrebleu, rouge-score, NLTK, rapidfuzz, bert_score) where one is installed.

A metric whose resource is missing here (an optional library's checkpoint, a judge's server) is skipped per check
with the reason; nothing passes without being run.
"""
from __future__ import annotations

import importlib.util
import inspect
import json
import math
import re
import tempfile
from dataclasses import replace
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest

import styleval
from styleval.engine import StreamOptions, score_stream
from styleval.errors import InputError, ResourceUnavailableError
from styleval.examples import get as get_example
from styleval.metrics import registry
from styleval.metrics.base import Against, Metric
from styleval.metrics.spec import quote
from styleval.records import Record
from styleval.results import ScoreResult

DOCS = Path(__file__).resolve().parents[1] / "docs" / "metrics.md"
NAMES = list(registry.available())
N_SEGMENTS = 5
SYSTEMS = 2
BLANKS = ("", "  \t ")  # an empty text and one of whitespace only

#: metrics that cannot run here at all, with the reason (each check skips with it)
UNAVAILABLE: dict[str, str] = {
    "bleurt": "needs the bleurt package and a local checkpoint folder (checkpoint=, required); none is installed "
              "offline",
    "comet": "needs the unbabel-comet package and a local checkpoint folder (checkpoint=, required); none is "
             "installed offline",
}
#: metrics that can be built here but not scored, with the reason (the scoring checks skip with it)
NOT_SCORED: dict[str, str] = {
    "rt_combined": "no registered metric scores on Rao & Tetreault's human scales (formality -3..3, meaning 1..6); "
                   "tests/test_overall.py checks it against the paper's Table 4",
}
#: extra parameters a metric needs to be built here (required ones, or the resources of this test)
SPEC_PARAMS: dict[str, str] = {
    "rt_combined": 'formality="style_regression";fluency="perplexity";meaning="sentence_cosine/src"',
}
#: non-default parameter values whose spec must round-trip too (separators, floats, booleans, None)
VARIANTS: dict[str, dict[str, Any]] = {
    "bleu": {"tokenize": "intl", "lowercase": True, "smooth_method": "floor", "smooth_value": 0.123456789012},
    "chrf": {"beta": 2.5, "word_order": 1},
    "bertscore": {"idf": True, "cache_dir": "/tmp/a;b,c", "component": "recall"},
    "style_emd": {"ground": "0 1; 1 0"},
    "perplexity": {"style_lms": "formal=smollm2-135m;informal=smollm2-135m"},
    "hm": {"content": 'chrf:beta=1;lowercase=true/ref'},
    "j": {"fluency": "none"},
    "llm_judge": {"base_url": "http://127.0.0.1:8000/v1", "model": "m;x", "price": "1.5/2"},
    "logprop": {"base_url": "http://127.0.0.1:8000/v1", "model": "served,1", "api_key_env": "KEY",
                "chat_template": "smollm2-135m"},
}
#: parameter values outside the range a metric accepts, beyond NaN and infinities
OUT_OF_RANGE: dict[str, dict[str, Any]] = {
    "bleu": {"max_ngram_order": 0},
    "chrf": {"char_order": 0, "beta": -1, "word_order": -1},
    "pinc": {"max_n": 0},
    "bertscore": {"batch_size": 0, "num_layers": -1},
    "naturalness": {"folds": 1},
    "meteor": {"alpha": 1.5},
    "j": {"fluency_threshold": float("nan")},
}


def _skip_unavailable(name: str) -> None:
    if name in UNAVAILABLE:
        pytest.skip(f"{name}: {UNAVAILABLE[name]}")


def _skip_not_scored(name: str) -> None:
    _skip_unavailable(name)
    if name in NOT_SCORED:
        pytest.skip(f"{name}: {NOT_SCORED[name]}")


def _spec(name: str) -> str:
    extra = SPEC_PARAMS.get(name)
    if name == "ngram-perplexity":
        extra = f"model={quote(str(_arpa()))}"
    return f"{name}:{extra}" if extra else name


@lru_cache(maxsize=1)
def _arpa() -> Path:
    """A small trigram LM over the example's references (the n-gram metric requires a model file)."""
    from styleval.lm.ngram import estimate_arpa

    example = get_example("formality")
    texts = [line for p in example.references for line in p.read_text(encoding="utf-8").splitlines()]
    return Path(estimate_arpa(texts, Path(tempfile.mkdtemp(prefix="contract-ngram-")) / "refs.arpa", order=3,
                              use_lmplz=False))


def _build(spec: str) -> Metric:
    name, params = registry.parse_spec(spec)
    return registry.create(name, **params)


# -- data ----------------------------------------------------------------------------------------------------
@lru_cache(maxsize=1)
def _records() -> tuple[Record, ...]:
    example = get_example("formality")
    source = example.source.read_text(encoding="utf-8").splitlines()[:N_SEGMENTS]
    refs = [p.read_text(encoding="utf-8").splitlines()[:N_SEGMENTS] for p in example.references]
    out = []
    for path in sorted(example.systems_dir.glob("*.txt"))[:SYSTEMS]:
        lines = path.read_text(encoding="utf-8").splitlines()[:N_SEGMENTS]
        out += [Record(id=str(i + 1), source=source[i], output=lines[i], references=[r[i] for r in refs],
                       system=path.stem, direction=example.direction) for i in range(N_SEGMENTS)]
    return tuple(out)


def _write_table(records: list[Record], path: Path) -> Path:
    with path.open("w", encoding="utf-8") as fh:
        for r in records:
            fh.write(json.dumps({"id": r.id, "system": r.system, "source": r.source, "output": r.output,
                                 "refs": list(r.references), "direction": str(r.direction)}) + "\n")
    return path


_MEMO: dict[tuple[Any, ...], "ScoreResult | BaseException"] = {}


def _score(spec: str, records: tuple[Record, ...]) -> ScoreResult:
    """``styleval.score`` without intervals, once per (spec, records) in this module."""
    key = (spec, *((r.id, r.system, r.source, r.output, tuple(r.references)) for r in records))
    if key not in _MEMO:
        try:
            _MEMO[key] = styleval.score(list(records), [spec], bootstrap=0)
        except BaseException as error:  # noqa: BLE001 (kept, re-raised to every caller)
            _MEMO[key] = error
    got = _MEMO[key]
    if isinstance(got, ResourceUnavailableError):
        pytest.skip(f"resource unavailable here: {got}")
    if isinstance(got, BaseException):
        raise got
    return got


# -- 1. spec round trip ---------------------------------------------------------------------------------------
def _instances(name: str) -> list[Metric]:
    metric = _build(_spec(name))
    out = [metric]
    if name in VARIANTS:
        out.append(registry.create(name, **{**registry.parse_spec(_spec(name))[1], **VARIANTS[name]}))
    if registry.accepts_against(type(metric)):
        out.append(registry.create(name, **{**registry.parse_spec(_spec(name))[1], "against": "source"}))
    return out


@pytest.mark.parametrize("name", NAMES)
def test_spec_builds_the_same_metric(name):
    _skip_unavailable(name)
    for metric in _instances(name):
        spec = metric.metric_id.spec()
        again = _build(spec)
        assert type(again) is type(metric)
        assert again.metric_id == metric.metric_id, spec
        assert again.metric_id.spec() == spec
        assert again.get_params().keys() == metric.get_params().keys()
        assert str(again.signature()) == str(metric.signature()), spec


def test_spec_quotes_separators_and_keeps_types():
    emd = registry.create("style_emd", ground="0 1; 1 0")
    assert 'ground="0 1; 1 0"' in emd.metric_id.spec()
    assert registry.parse_spec('bertscore:cache_dir="X;idf=true";idf=false') == (
        "bertscore", {"cache_dir": "X;idf=true", "idf": False})
    assert registry.parse_spec('chrf:beta="2"') == ("chrf", {"beta": "2"})  # quoted: text, never a number
    assert registry.parse_spec(r'x:a="say \"hi\" \\ ok";b=1.5;c=yes') == ("x", {"a": 'say "hi" \\ ok', "b": 1.5,
                                                                               "c": True})
    chrf = registry.create("chrf", beta=0.1 + 0.2)  # floats in full, not as the label's %g
    assert _build(chrf.metric_id.spec()).beta == 0.1 + 0.2


@pytest.mark.parametrize("spec, problem", [
    ("style_emd:ground=0 1, 1 0", "',' inside the value of 'ground'"),
    ("logprop;base_url=http://127.0.0.1:8000/v1", "a ':' must follow the metric name"),
    ("bleu:lowercase", "parameter 'lowercase' is not key=value"),
    ('bleu:tokenize="intl', "is not closed"),
    ("bleu:tokenize=intl;tokenize=13a", "given twice"),
    ("bleu:against=source+ne[ne_score=coverage]", "the modifier +ne is not part of a metric spec"),
])
def test_bad_spec_is_one_line_naming_the_form(spec, problem):
    with pytest.raises(InputError) as error:
        registry.parse_spec(spec)
    message = str(error.value)
    assert problem in message and "\n" not in message
    if "modifier" not in problem:
        assert "NAME:key=value;key=value" in message


def test_comma_between_parameters_is_read_as_before():
    from styleval.metrics.spec import split_list

    expected = ("bleu", {"lowercase": True, "tokenize": "intl"})
    assert registry.parse_spec("bleu:lowercase=true,tokenize=intl") == expected
    assert registry.parse_spec("bleu:lowercase=true;tokenize=intl") == expected
    assert split_list('bleu:lowercase=true,tokenize=intl,chrf,style_emd:ground="0 1, 1 0"') == [
        "bleu:lowercase=true;tokenize=intl", "chrf", 'style_emd:ground="0 1, 1 0"']


def test_modified_metric_spec_names_its_modifier():
    from styleval.metrics.aware import EntityAware

    aware = EntityAware(inner=registry.create("bleu", against="source"), ne_score="coverage")
    full, alone = aware.metric_id.spec(), aware.metric_id.spec(modifiers=False)
    assert full.startswith(alone + "+ne[") and "ne_score=coverage" in full
    with pytest.raises(InputError, match=re.escape(repr(alone))):
        registry.parse_spec(full)
    assert _build(alone).metric_id == aware.inner.metric_id


# -- 2. statistics layout and ranges ------------------------------------------------------------------------
@pytest.mark.parametrize("name", NAMES)
def test_statistics_layout_and_range(name):
    _skip_not_scored(name)
    records = _records()
    result = _score(_spec(name), records)
    metrics = {m.metric_id: m for m in _built(_spec(name), has_refs=True)}
    assert result.results, name
    for res in result.results:
        metric = metrics[res.metric_id]
        n = N_SEGMENTS
        assert res.stats.shape == (n, metric.n_stats), res.metric
        assert res.segment_scores.shape == (n,) and len(res.ids) == n
        lo, hi = metric.value_range
        tol = 1e-6  # float32 model outputs: a text's cosine with itself may be 1 + 1e-7
        finite = res.segment_scores[np.isfinite(res.segment_scores)]
        assert np.all((finite >= lo - tol) & (finite <= hi + tol)), (res.metric, finite, metric.value_range)
        assert isinstance(res.corpus_score, float)
        if np.isfinite(res.corpus_score):
            assert lo - tol <= res.corpus_score <= hi + tol, (res.metric, res.corpus_score)
        for flag, ids in res.flags.items():
            assert set(ids) <= set(res.ids), (res.metric, flag)
        assert res.corpus_score == pytest.approx(metric.aggregate(res.stats), nan_ok=True)
        assert isinstance(metric.batch_independent, bool) and metric.streamable == metric.batch_independent


def _built(spec: str, has_refs: bool) -> list[Metric]:
    from styleval.engine.metric_specs import build_metrics

    return build_metrics([spec], ("source", "references"), has_refs)


# -- 3. in memory, chunked, streamed, cached: the same numbers and signatures -------------------------------
def _same(a: ScoreResult, b: ScoreResult, exact: bool) -> None:
    assert [(r.metric, r.system) for r in a.results] == [(r.metric, r.system) for r in b.results]
    for x, y in zip(a.results, b.results):
        assert str(x.signature) == str(y.signature), x.metric
        assert x.flags == y.flags, x.metric
        if exact:
            assert np.array_equal(x.stats, y.stats, equal_nan=True), x.metric
            assert x.corpus_score == y.corpus_score or (math.isnan(x.corpus_score) and math.isnan(y.corpus_score))
        else:  # model outputs: batches padded differently move the last bits (lexical metrics: tests/test_stream.py)
            np.testing.assert_allclose(x.stats, y.stats, rtol=1e-5, atol=1e-7, equal_nan=True, err_msg=x.metric)
            assert x.corpus_score == pytest.approx(y.corpus_score, rel=1e-5, abs=1e-7, nan_ok=True)


#: a parameter that makes a metric batch-independent, where its default is not (an ``auto`` decided per batch)
STREAMABLE_WITH: dict[str, str] = {
    **{name: "case=sensitive" for name in ("style_accuracy", "style_probability", "style_emd", "style_regression")},
    **{name: 'style="style_accuracy:case=sensitive"' for name in ("hm", "gm", "j")},
}


@pytest.mark.parametrize("name", NAMES)
def test_memory_chunks_stream_and_cache_agree(name, tmp_path):
    _skip_not_scored(name)
    records = _records()
    spec = _spec(name)
    metric = _built(spec, has_refs=True)[0]
    table = _write_table(list(records), tmp_path / "t.jsonl")
    if not metric.streamable:
        with pytest.raises(InputError, match="cannot be streamed") as error:
            score_stream(table, [spec], bootstrap=0, stream=StreamOptions(chunk_size=3))
        assert "\n" not in str(error.value)
        if name not in STREAMABLE_WITH:
            return
        spec = f"{spec}{';' if ':' in spec else ':'}{STREAMABLE_WITH[name]}"
        assert _built(spec, has_refs=True)[0].streamable, spec
    _memory_chunks_stream_and_cache(spec, records, table, tmp_path)


def _memory_chunks_stream_and_cache(spec: str, records: tuple[Record, ...], table: Path, tmp_path: Path) -> None:
    mem = _score(spec, records)
    # a chunk holds 3 records, so systems and chunks cross; two runs: the same numbers and signatures
    streamed = score_stream(table, [spec], bootstrap=0, stream=StreamOptions(chunk_size=3, keep_stats=True))
    _same(mem, streamed.result, exact=False)
    cache = tmp_path / "stats.sqlite"
    first = score_stream(table, [spec], bootstrap=0, stream=StreamOptions(chunk_size=4, keep_stats=True, cache=cache))
    cached = score_stream(table, [spec], bootstrap=0, stream=StreamOptions(chunk_size=4, keep_stats=True, cache=cache))
    assert cached.cache_misses == 0 and cached.cache_hits > 0
    _same(first.result, cached.result, exact=True)
    _same(mem, cached.result, exact=False)


# -- 3b. a batch-independent metric: a row's score never depends on the other rows of its system ----------------
#: rows that change any decision taken over a whole system (casing, tokenization, idf, fitted classifiers)
UNRELATED = ("This Sentence Was Written With Capitals, Carefully.", "it 's tokenized , is n't it ?",
             "<UNK> <UNK> the the the", "I AM SHOUTING NOW!")


def _with_unrelated(records: tuple[Record, ...]) -> tuple[Record, ...]:
    """The first system's records, then rows of that system with new ids and unrelated outputs."""
    first = [r for r in records if r.system == records[0].system]
    extra = [replace(first[k % len(first)], id=f"extra{k}", output=text) for k, text in enumerate(UNRELATED)]
    return (*first, *extra)


@pytest.mark.parametrize("name", NAMES)
def test_unrelated_rows_leave_a_batch_independent_metrics_scores_alone(name):
    _skip_not_scored(name)
    spec = _spec(name)
    built = _built(spec, has_refs=True)
    if not all(m.batch_independent for m in built):
        dependent = [m for m in built if not m.batch_independent]
        assert all(m.batch_dependence for m in dependent), f"{name}: batch-dependent without saying why"
        return
    records = _with_unrelated(_records())
    alone = _score(spec, records[:N_SEGMENTS])
    joined = _score(spec, records)
    for a, b in zip(alone.results, joined.results):
        assert a.metric == b.metric and list(b.ids[:N_SEGMENTS]) == list(a.ids)
        np.testing.assert_allclose(b.segment_scores[:N_SEGMENTS], a.segment_scores, rtol=1e-5, atol=1e-7,
                                   equal_nan=True, err_msg=f"{a.metric}: unrelated rows moved other rows' scores")
        assert str(a.signature) == str(b.signature), a.metric


def test_every_auto_normalisation_decides_per_text_by_default_and_per_corpus_when_asked():
    """Over every registered metric with a ``normalize`` parameter: the default is batch-independent, and
    ``auto-corpus`` is not and says why (capabilities and ``styleval metrics NAME``)."""
    from styleval.metrics.guide import parameter_help

    with_normalize = [n for n in NAMES if "normalize" in registry.metric_class(n).param_names()
                      and n not in UNAVAILABLE]
    assert {"acceptability", "perplexity", "slor", "mean_logprob"} <= set(with_normalize)
    for name in with_normalize:
        assert _build(_spec(name)).batch_independent, name
        corpus = _build(f"{name}:normalize=auto-corpus")
        assert not corpus.batch_independent and "auto-corpus" in corpus.batch_dependence, name
        assert "auto-corpus" in parameter_help(registry.metric_class(name), "normalize"), name


# -- 4. empty and whitespace-only texts ------------------------------------------------------------------------
def documented_empty_values() -> dict[str, dict[str, str]]:
    """docs/metrics.md's table of the value an empty output, source or reference gets: metric -> column -> cell."""
    text = DOCS.read_text(encoding="utf-8")
    section = text.split("## Empty texts", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    out: dict[str, dict[str, str]] = {}
    for row in rows:
        cells = [c.strip() for c in row.strip("|").split("|")]
        for name in re.findall(r"`([^`]+)`", cells[0]):
            out[name] = {"output": cells[1], "source": cells[2], "reference": cells[3]}
    return out


def _empty_cells(name: str) -> dict[str, str]:
    """The documented cells of a built-in metric; a plugin states its own as ``empty_values`` on its class."""
    documented = documented_empty_values()
    if name in documented:
        return documented[name]
    own = getattr(registry.metric_class(name), "empty_values", None)
    if not own:
        pytest.skip(f"{name}: a plugin without empty_values (output/source/reference -> value) on its class")
    return dict(own)


def test_every_metric_has_a_documented_empty_value():
    documented = documented_empty_values()
    missing = [name for name in NAMES if name not in documented
               and registry.metric_class(name).__module__.startswith("styleval.")]
    assert not missing, f"docs/metrics.md, '## Empty texts': no row for {missing}"


def _emptied(field: str) -> tuple[Record, ...]:
    """The records with the first system's first segment's ``field`` empty and its second segment's only
    whitespace (all of a segment's references, for the reference field)."""
    records = list(_records())
    for k, blank in enumerate(BLANKS):
        r = records[k]
        if field == "output":
            records[k] = replace(r, output=blank)
        elif field == "source":
            records[k] = replace(r, source=blank)
        else:
            records[k] = replace(r, references=[blank] * len(r.references))
    return tuple(records)


def _reads(metric: Metric, field: str, cell: str) -> bool:
    against = getattr(metric, "against", None)
    if isinstance(against, Against):
        return field == "output" or (field == "source") == (against is Against.SOURCE)
    return cell != "—"


def _check_cell(cell: str, score: float, metric: Metric, label: str) -> None:
    lo, hi = metric.value_range
    if cell == "NaN":
        assert math.isnan(score), (label, score)
    elif cell == "scored":
        assert math.isfinite(score) and lo - 1e-6 <= score <= hi + 1e-6, (label, score)
    else:
        assert score == pytest.approx(float(cell), abs=1e-9), (label, score)


@pytest.mark.parametrize("field", ["output", "source", "reference"])
@pytest.mark.parametrize("name", NAMES)
def test_empty_texts_get_the_documented_value(name, field):
    _skip_not_scored(name)
    cell = _empty_cells(name)[field]
    records = _emptied(field)
    if cell == "error":
        with pytest.raises(InputError) as error:
            _score(_spec(name), records)
        assert "\n" not in str(error.value)
        return
    got = _score(_spec(name), records)
    plain = _score(_spec(name), _records())
    metrics = {m.metric_id: m for m in _built(_spec(name), has_refs=True)}
    first = records[0].system
    blanks = len(BLANKS)
    for res, before in zip(got.results, plain.results):
        metric = metrics[res.metric_id]
        if res.system != first:
            continue
        if not _reads(metric, field, cell):
            np.testing.assert_allclose(res.segment_scores, before.segment_scores, equal_nan=True, err_msg=res.metric)
            continue
        for k in range(blanks):  # the empty and the whitespace-only text: the same documented value
            _check_cell(cell, float(res.segment_scores[k]), metric, f"{res.metric}, {BLANKS[k]!r}")
        # the other segments are scored as before (nothing shifts, nothing is dropped)
        if metric.batch_independent:
            np.testing.assert_allclose(res.segment_scores[blanks:], before.segment_scores[blanks:], rtol=1e-5,
                                       atol=1e-7, equal_nan=True, err_msg=res.metric)
        if field == "output":
            assert res.flags.get("empty_output") == [r.id for r in records[:blanks]], res.metric


# -- 5. parameters: NaN, infinities and out-of-range values are refused at construction ---------------------
def _numeric_parameters(cls: type[Metric]) -> list[str]:
    signature = inspect.signature(cls.__init__)
    out = []
    for name in cls.param_names():
        param = signature.parameters[name]
        annotation = str(param.annotation)
        default = param.default
        numeric_default = isinstance(default, (int, float)) and not isinstance(default, bool)
        if numeric_default or re.search(r"\b(int|float)\b", annotation) and "bool" not in annotation:
            out.append(name)
    return out


@pytest.mark.parametrize("name", NAMES)
def test_bad_numbers_refused_at_construction(name):
    _skip_unavailable(name)
    cls = registry.metric_class(name)
    base = registry.parse_spec(_spec(name))[1]
    bad: list[tuple[str, Any]] = [(p, v) for p in _numeric_parameters(cls)
                                  for v in (float("nan"), float("inf"), float("-inf"))]
    bad += list(OUT_OF_RANGE.get(name, {}).items())
    if not bad:
        pytest.skip(f"{name} has no numeric parameter")
    for param, value in bad:
        with pytest.raises(InputError) as error:
            registry.create(name, **{**base, param: value})
        message = str(error.value)
        assert param in message and "\n" not in message, (param, value, message)


# -- 6. reference implementations ---------------------------------------------------------------------------
def _sacrebleu(kind: str, **kw: Any) -> Callable[[list[str], list[list[str]]], tuple[list[float], float]]:
    def run(outputs: list[str], comparisons: list[list[str]]) -> tuple[list[float], float]:
        import sacrebleu.metrics as sm

        metric = {"bleu": sm.BLEU, "chrf": sm.CHRF, "ter": sm.TER}[kind]
        seg_metric = metric(**({"effective_order": True} if kind == "bleu" else {}), **kw)
        streams = [list(s) for s in zip(*comparisons)]
        return ([seg_metric.sentence_score(o, c).score for o, c in zip(outputs, comparisons)],
                metric(**kw).corpus_score(outputs, streams).score)
    return run


def _rouge(kind: str) -> Callable[[list[str], list[list[str]]], tuple[list[float], float]]:
    def run(outputs: list[str], comparisons: list[list[str]]) -> tuple[list[float], float]:
        from rouge_score.rouge_scorer import RougeScorer

        scorer = RougeScorer([kind])
        seg = [scorer.score_multi(c, o)[kind].fmeasure for o, c in zip(outputs, comparisons)]
        return seg, float(np.mean(seg))
    return run


def _levenshtein(outputs: list[str], comparisons: list[list[str]]) -> tuple[list[float], float]:
    from rapidfuzz.distance import Levenshtein

    seg = [float(min(Levenshtein.distance(o, c) for c in comps)) for o, comps in zip(outputs, comparisons)]
    return seg, float(np.mean(seg))


def _meteor(outputs: list[str], comparisons: list[list[str]]) -> tuple[list[float], float]:
    from nltk.translate.meteor_score import meteor_score

    from styleval.resources.wordnet import ensure_wordnet

    ensure_wordnet()
    seg = [meteor_score([c.split() for c in comps], o.split()) for o, comps in zip(outputs, comparisons)]
    return seg, float(np.mean(seg))


def _bert_score(outputs: list[str], comparisons: list[list[str]]) -> tuple[list[float], float]:
    import bert_score

    from styleval.models.encoder import transformers_dir
    from styleval.models.spec import model_spec

    model = str(transformers_dir(model_spec("minilm")))
    best = np.full(len(outputs), -np.inf)
    for k in range(max(len(c) for c in comparisons)):  # max F1 over references, as the metric
        pairs = [(i, o, c[k]) for i, (o, c) in enumerate(zip(outputs, comparisons)) if k < len(c)]
        _, _, f1 = bert_score.score([o for _, o, _ in pairs], [c for _, _, c in pairs], model_type=model,
                                    num_layers=6, device="cpu", nthreads=0, batch_size=1)
        for (i, _, _), f in zip(pairs, f1.tolist()):
            best[i] = max(best[i], f)
    return best.tolist(), float(np.mean(best))


REFERENCE_IMPLEMENTATIONS: dict[str, tuple[str, Callable[[list[str], list[list[str]]], tuple[list[float], float]]]] = {
    "bleu": ("sacrebleu", _sacrebleu("bleu")),
    "chrf": ("sacrebleu", _sacrebleu("chrf")),
    "chrf++": ("sacrebleu", _sacrebleu("chrf", word_order=2)),
    "ter": ("sacrebleu", _sacrebleu("ter")),
    "rouge1": ("rouge_score", _rouge("rouge1")),
    "rouge2": ("rouge_score", _rouge("rouge2")),
    "rouge3": ("rouge_score", _rouge("rouge3")),
    "rougeL": ("rouge_score", _rouge("rougeL")),
    "levenshtein": ("rapidfuzz", _levenshtein),
    "meteor": ("nltk", _meteor),
    "bertscore": ("bert_score", _bert_score),
}
#: how close a reference implementation must come (float32 encoders: the last bits move with batching)
TOLERANCE = {"bertscore": 1e-6}
#: metrics whose reference implementation is compared elsewhere, on more data than the contract's few segments
COMPARED_ELSEWHERE: dict[str, str] = {
    "perplexity": "benchmarks/bench_perplexity.py (the transformers loop)",
    "ngram-perplexity": "tests/test_fluency_ngram.py::test_kenlm_scores_equal_estimator (KenLM)",
    "style_emd": "tests/test_meta_reproduction.py (Mir et al.'s stored figures)",
    "rt_combined": "tests/test_overall.py (Rao & Tetreault's Table 4)",
}


@pytest.mark.parametrize("name", NAMES)
def test_equals_reference_implementation(name):
    _skip_not_scored(name)
    if name not in REFERENCE_IMPLEMENTATIONS:
        where = COMPARED_ELSEWHERE.get(name)
        pytest.skip(f"{name}: reference implementation compared in {where}" if where
                    else f"{name}: no reference implementation to run side by side (its own tests check it)")
    library, implementation = REFERENCE_IMPLEMENTATIONS[name]
    if importlib.util.find_spec(library) is None:
        pytest.skip(f"{library} is not installed")
    records = _records()
    result = _score(name, records)
    for res in result.results:
        rows = [r for r in records if r.system == res.system]
        outputs = [r.output for r in rows]
        comparisons = [[r.source] for r in rows] if res.metric_id.against == "source" else \
            [list(r.references) for r in rows]
        seg, corpus = implementation(outputs, comparisons)
        tol = TOLERANCE.get(name, 1e-9)
        np.testing.assert_allclose(res.segment_scores, seg, rtol=0, atol=tol, err_msg=res.metric)
        assert res.corpus_score == pytest.approx(corpus, abs=tol), res.metric



# -- 7. transformers classifiers as style and fluency models: the model parameters ----------------------------------
@lru_cache(maxsize=None)
def _classifier(labels: tuple[str, ...] | None) -> Path:
    """A small transformers classifier in a folder whose name needs quoting in a spec (';' and ',')."""
    from tiny_classifiers import build_classifier

    folder = Path(tempfile.mkdtemp(prefix="contract-clf-")) / f"clf;{'-'.join(labels or ('score',))},x"
    return build_classifier(folder, "roberta", labels=labels, max_length=16)


def _classifier_specs() -> dict[str, str]:
    """One spec per metric that takes a transformers classifier, with every new model parameter set."""
    generic = quote(str(_classifier(("LABEL_0", "LABEL_1"))))
    score = quote(str(_classifier(None)))
    return {
        "style_accuracy": f'style_accuracy:model={generic};labels="LABEL_0=informal,LABEL_1=formal";batch_size=3',
        "style_probability": f'style_probability:model={score};labels="informal,formal";threshold=0.125',
        "style_emd": f'style_emd:model={generic};labels="informal,formal";batch_size=2',
        "acceptability": f"acceptability:model={generic};acceptable_label=LABEL_1;batch_size=4",
    }


CLASSIFIER_METRICS = ("style_accuracy", "style_probability", "style_emd", "acceptability")


@pytest.mark.parametrize("name", CLASSIFIER_METRICS)
def test_classifier_parameters_round_trip(name):
    spec = _classifier_specs()[name]
    metric = _build(spec)
    again = _build(metric.metric_id.spec())
    assert again.metric_id == metric.metric_id and again.metric_id.spec() == metric.metric_id.spec()
    assert str(again.signature()) == str(metric.signature())
    params = dict(metric.metric_id.params)
    assert "batch_size" not in params  # it does not change scores
    assert {k for k in ("labels", "threshold", "acceptable_label") if f"{k}=" in spec} <= params.keys()
    other = _build(spec.replace("batch_size=", "batch_size=1") if "batch_size=" in spec else spec + ";batch_size=7")
    assert other.metric_id == metric.metric_id


@pytest.mark.parametrize("name", CLASSIFIER_METRICS)
def test_classifier_memory_chunks_stream_and_cache_agree(name, tmp_path):
    spec = _classifier_specs()[name] + (";normalize=none" if name == "acceptability" else ";case=sensitive")
    records = _records()
    _memory_chunks_stream_and_cache(spec, records, _write_table(list(records), tmp_path / "t.jsonl"), tmp_path)
    result = _score(spec, records)
    for res in result.results:
        assert res.signature.resources.get("style_model_hash", res.signature.resources.get("acceptability_hash"))
        lo, hi = _build(spec).value_range
        assert np.all((res.segment_scores >= lo) & (res.segment_scores <= hi)), res.metric


@pytest.mark.parametrize("name", CLASSIFIER_METRICS)
def test_classifier_empty_outputs_get_the_documented_value(name):
    spec = _classifier_specs()[name] + (";normalize=none" if name == "acceptability" else ";case=sensitive")
    cell = documented_empty_values()[name]["output"]
    got = _score(spec, _emptied("output"))
    metric = _build(spec)
    for res in got.results:
        if res.system != _records()[0].system:
            continue
        for k in range(len(BLANKS)):
            _check_cell(cell, float(res.segment_scores[k]), metric, f"{res.metric}, {BLANKS[k]!r}")
        assert res.flags.get("empty_output") == [r.id for r in _records()[:len(BLANKS)]]
