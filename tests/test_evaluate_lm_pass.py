"""evaluate runs SmolLM2 once per distinct text (issue #46): perplexity reads the outputs normalised as acceptability
reads them, so the two share one LM pass. Counted on the real model: a forward hook on its decoder stack sees
every row the LM scores."""
from __future__ import annotations

import argparse
import dataclasses

import pytest

from styleval.cli.score_cmd import load_records
from styleval.textnorm.readable import normalize_all, resolve_auto, tokenize_lower

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _released_like_yelp():
    """The bundled example's outputs as a lower-cased, tokenized release prints them (so acceptability detokenizes
    and true-cases them, and perplexity would read the raw text if it kept its own default); 'copy' and 'tidy'
    share some outputs."""
    ns = argparse.Namespace(example="formality", input=[], gyafc=None, system=[], systems_dir=None, source=None,
                            reference=[], direction=None)
    records = [r for r in load_records(ns) if r.system in ("copy", "tidy")]
    copy = {r.id: r.output for r in records if r.system == "copy"}
    shared = set(list(copy)[:10])  # tidy's first ten outputs are copy's
    return [dataclasses.replace(r, output=tokenize_lower(copy[r.id] if r.id in shared else r.output))
            for r in records]


def _count_rows(lm, rows: list[int]):
    """A forward pre-hook on the LM's decoder stack (native or transformers): appends the rows of every batch."""
    base = getattr(lm.model, lm.model.base_model_prefix)

    def hook(module, args, kwargs):
        ids = kwargs.get("input_ids", args[0] if args else None)
        rows.append(int(ids.shape[0]))

    return base.register_forward_pre_hook(hook, with_kwargs=True)


def test_evaluate_runs_the_lm_once_per_distinct_text(smollm):
    from styleval.evaluation import evaluate
    from styleval.metrics.fluency import lm_shared

    records = _released_like_yelp()
    by_system: dict[str, list[str]] = {}
    for r in records:
        by_system.setdefault(r.system, []).append(r.output)
    assert all(resolve_auto(outs) == "detok+truecase" for outs in by_system.values())
    distinct = {t for outs in by_system.values() for t in normalize_all(outs, "auto") if t.strip()}  # per text
    raw = {t for outs in by_system.values() for t in outs if t.strip()}
    assert len(distinct) < sum(len(o) for o in by_system.values())  # shared outputs: fewer texts than records
    assert not raw & distinct  # perplexity on the raw text would need a pass of its own over every output

    rows: list[int] = []
    hook = _count_rows(smollm, rows)
    lm_shared.clear_cache()
    try:
        ev = evaluate(records, bootstrap=0, significance="none", anchor=False)  # the systems' outputs only
    finally:
        hook.remove()
    assert sum(rows) == len(distinct)  # one forward row per distinct normalised text, for both metrics

    for system in ("copy", "tidy"):
        ppl = ev.result.get("perplexity", system)
        assert ppl.signature.resources["normalized"] == "per text"
        assert "|normalize:auto|" in str(ppl.signature)
        assert ev.result.get("acceptability", system).signature.resources["normalized"] == "per text"
    assert any("perplexity reads each system's outputs normalised as acceptability reads them" in line
               for line in ev.rationale)
    # where the time went: the LM's passes read each distinct text once; metrics and statistics are there too
    lm_pass = ev.timing["model_passes"]["lm smollm2-135m"]
    assert lm_pass["texts"] == len(distinct) and lm_pass["calls"] == 2  # one call per system batch
    assert {"perplexity", "acceptability", "style_accuracy"} <= set(ev.timing["metrics"])
    assert sum(t["seconds"] for t in ev.timing["model_passes"].values()) <= ev.timing["total_seconds"]
    assert ev.to_dict()["timing"] == ev.timing
    from styleval.cli.evaluate_cmd import timing_text

    shown = timing_text(ev.timing)  # what evaluate --verbose prints
    assert shown.startswith("time: ") and "lm smollm2-135m: " in shown and f"{len(distinct):,} texts" in shown


def test_score_keeps_perplexity_on_the_raw_text(smollm):
    """`score -m perplexity` keeps its default (normalize=none): its LM pass reads the outputs as written."""
    import styleval
    from styleval.metrics.fluency import lm_shared

    records = _released_like_yelp()[:6]
    rows: list[int] = []
    hook = _count_rows(smollm, rows)
    lm_shared.clear_cache()
    try:
        res = styleval.score(records, ["perplexity"], bootstrap=0)
    finally:
        hook.remove()
    assert sum(rows) == len({r.output for r in records if r.output.strip()})
    assert not {"normalized_as", "normalized"} & set(res.get("perplexity", "copy").signature.resources)


def test_time_log_counts_model_passes_once(monkeypatch):
    """Model passes record their own time (a pass inside another is taken out of it), metrics include theirs, and
    nothing is recorded without an open log. A stepping clock stands in for wall-clock time."""
    from styleval.models import passes

    ticks, cpu_ticks = iter(range(100)), iter(range(0, 200, 2))  # CPU time: two seconds a tick
    monkeypatch.setattr(passes.time, "perf_counter", lambda: float(next(ticks)))
    monkeypatch.setattr(passes.time, "process_time", lambda: float(next(cpu_ticks)))
    with passes.timed("model", "ignored"):  # no log open
        pass
    with passes.time_log() as log:
        with passes.timed("metric", "style_accuracy", 10):  # t=0 .. 5
            with passes.timed("model", "style classifier", 10):  # t=1 .. 4
                with passes.timed("model", "sentence encoder", 7):  # t=2 .. 3
                    pass
        with passes.timed("model", "sentence encoder", 3):  # t=6 .. 7
            pass
        with passes.timed("metric", "bertscore", 3):  # t=8 .. 15
            with passes.timed("model", "token encoder", 3):  # t=9 .. 14, of which the load t=10 .. 13
                with passes.timed("load", "encoder minilm"):  # t=10 .. 13
                    with passes.timed("load", "transformers import"):  # t=11 .. 12
                        pass
    facts = log.to_dict()
    assert facts["model"]["style classifier"] == {"seconds": 2.0, "texts": 10, "calls": 1, "cpu_seconds": 4.0}
    assert facts["model"]["sentence encoder"] == {"seconds": 2.0, "texts": 10, "calls": 2, "cpu_seconds": 4.0}
    assert facts["metric"]["style_accuracy"]["seconds"] == 5.0
    assert "ignored" not in facts["model"]
    # a first pass that loads its model: the load is taken out of the pass, and loads nest like passes
    assert facts["model"]["token encoder"] == {"seconds": 2.0, "texts": 3, "calls": 1, "cpu_seconds": 4.0}
    assert facts["load"] == {"encoder minilm": {"seconds": 2.0, "texts": 0, "calls": 1, "cpu_seconds": 4.0},
                             "transformers import": {"seconds": 1.0, "texts": 0, "calls": 1, "cpu_seconds": 2.0}}
    assert facts["metric"]["bertscore"]["seconds"] == 7.0
