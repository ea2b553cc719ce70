"""Intervals and paired tests of the overall scores (HM, GM, J): a joint bootstrap over segments, checked against a
plain numpy recomputation from the segment statistics with the same resample indices."""
from __future__ import annotations

import argparse
from itertools import combinations

import numpy as np
import pytest
from sacrebleu.metrics.bleu import BLEU

from styleval.cli.score_cmd import load_records
from styleval.evaluation import evaluate
from styleval.evaluation.summary import estimate, estimate_parts
from styleval.report.text import text_report
from styleval.report.html import render_html, render_markdown

N_RESAMPLES = 300
SEED = 777


@pytest.fixture(scope="module")
def ev():
    ns = argparse.Namespace(example="formality", input=[], gyafc=None, system=[], systems_dir=None, source=None,
                            reference=[], direction=None)
    return evaluate(load_records(ns), fast=True, bootstrap=N_RESAMPLES, seed=SEED, significance="paired-bootstrap")


def _corpus_bleu(sums: np.ndarray) -> float:
    """sacrebleu's corpus BLEU ('exp' smoothing, no effective order) from summed [hyp_len, ref_len, correct_1..4,
    total_1..4] statistics."""
    v = [int(round(x)) for x in sums]
    return BLEU.compute_bleu(correct=v[2:6], total=v[6:10], sys_len=v[0], ref_len=v[1], smooth_method="exp",
                             effective_order=False, max_ngram_order=4).score


def _resampled(ev, system: str, idx: np.ndarray) -> dict[str, np.ndarray]:
    """Per resample: style accuracy, BLEU/ref ÷ 100, HM, GM and J, from the raw segment statistics."""
    r = ev.result
    correct = np.asarray(r.get("style_accuracy", system).stats)[:, 0]
    bleu_stats = np.asarray(r.get("bleu/ref", system).stats)
    chrf_seg = np.asarray(r.get("chrf/src", system).segment_scores, dtype=float) / 100.0
    j_seg = np.clip(correct, 0, 1) * np.clip(chrf_seg, 0, 1)  # fast mode: no fluency factor
    s = correct[idx].mean(axis=1)
    c = np.array([_corpus_bleu(bleu_stats[i].sum(axis=0)) for i in idx]) / 100.0
    with np.errstate(invalid="ignore", divide="ignore"):
        hm = np.where(s + c > 0, 2 * s * c / (s + c), 0.0)
    return {"style": s, "content": c, "hm": hm, "gm": np.sqrt(s * c), "j": j_seg[idx].mean(axis=1)}


def _indices(n: int) -> np.ndarray:
    # the draws of styleval.stats.bootstrap_ci and of sacrebleu: one (n_resamples, n) matrix per seed
    return np.random.default_rng(SEED).choice(n, size=(N_RESAMPLES, n), replace=True)


def test_overall_intervals_equal_numpy_recomputation(ev):
    n = len(ev.result.get("style_accuracy", "rewrite").ids)
    idx = _indices(n)
    for system in ev.systems:
        res = _resampled(ev, system, idx)
        # same indices as the metrics' own intervals: the style and content parts reproduce their CIs
        acc = ev.result.get("style_accuracy", system)
        bleu = ev.result.get("bleu/ref", system)
        assert tuple(np.quantile(res["style"], [0.025, 0.975])) == pytest.approx(acc.ci, abs=1e-12)
        assert tuple(100 * np.quantile(res["content"], [0.025, 0.975])) == pytest.approx(bleu.ci, rel=1e-9)
        for name in ("hm", "gm", "j"):
            low, high = np.quantile(res[name], [0.025, 0.975])
            ci = ev.overall_ci(system, name)
            assert ci == pytest.approx((low, high), rel=1e-9, abs=1e-12), (system, name)
            value = ev.overall_score(system, name)
            assert ci[0] - 1e-12 <= value <= ci[1] + 1e-12, (system, name, value, ci)
    # a real spread where the system transfers some style, and none for the copy (style accuracy 0)
    low, high = ev.overall_ci("rewrite", "hm")
    assert high - low > 0.05
    assert ev.overall_ci("copy", "hm") == (0.0, 0.0)


def test_overall_paired_tests_equal_numpy_recomputation(ev):
    n = len(ev.result.get("style_accuracy", "rewrite").ids)
    idx = _indices(n)
    res = {s: _resampled(ev, s, idx) for s in ev.systems}
    tests = {(c.metric, c.system, c.baseline): c for c in ev.overall_comparisons}
    assert len(tests) == 3 * len(list(combinations(ev.systems, 2)))
    for system, baseline in combinations(ev.systems, 2):
        for name in ("hm", "gm", "j"):
            comp = tests[(name, system, baseline)]
            delta = ev.overall_score(system, name) - ev.overall_score(baseline, name)
            diffs = np.abs(res[system][name] - res[baseline][name])
            p = (np.sum(diffs - diffs.mean() >= abs(delta)) + 1) / (N_RESAMPLES + 1)  # sacrebleu's, ties counted
            assert comp.delta == pytest.approx(delta, abs=1e-12)
            assert comp.p_value == pytest.approx(p), (name, system, baseline)
            assert comp.method == "paired-bootstrap" and comp.n_resamples == N_RESAMPLES and comp.seed == SEED
    # rewrite is clearly better than the copy on every overall score
    assert all(tests[(name, "copy", "rewrite")].p_value < 0.05 for name in ("hm", "gm", "j"))


def test_overall_intervals_shown_everywhere(ev, tmp_path):
    data = ev.to_dict()
    entries = {(o["system"], o["score"]): o for o in data["overall"]}
    ci = ev.overall_ci("rewrite", "hm")
    assert entries[("rewrite", "hm")]["ci"] == pytest.approx(list(ci))
    assert {c["metric"] for c in data["overall_comparisons"]} == {"hm", "gm", "j"}
    cell = f"{estimate(ev.overall_score('rewrite', 'hm'), ci)} ^a"
    assert cell in text_report(data)  # the terminal table of `styleval evaluate`
    assert cell.replace("|", "\\|") in render_markdown(data)
    page = render_html(data)
    overall = page[page.index("<h2>Overall</h2>"):]
    value, half = estimate_parts(ev.overall_score("rewrite", "hm"), ci)
    assert f'{value} <span class="ci" title="95% CI [' in overall and f'">{half}</span><sup>a' in overall
    ev.write_json(tmp_path / "ev.json")
    from styleval.evaluation import load_evaluation

    assert render_html(load_evaluation(tmp_path / "ev.json")) == page


def test_no_bootstrap_no_overall_interval():
    ns = argparse.Namespace(example="formality", input=[], gyafc=None, system=[], systems_dir=None, source=None,
                            reference=[], direction=None)
    records = [r for r in load_records(ns) if r.system in ("copy", "tidy")]
    ev = evaluate(records, fast=True, bootstrap=0, significance="none")
    assert ev.overall_ci("tidy", "hm") is None and ev.overall_comparisons == []
    assert all(o["ci"] is None for o in ev.to_dict()["overall"])


def test_cli_options():
    from styleval.cli import evaluate_cmd
    from styleval.errors import InputError

    parser = argparse.ArgumentParser()
    evaluate_cmd.add_parser(parser.add_subparsers())
    args = parser.parse_args(["evaluate", "--example", "formality", "--naturalness"])
    assert args.naturalness == "unigram" and args.exclude_system == []
    args = parser.parse_args(["evaluate", "--example", "formality", "--naturalness", "embedding", "--html", "r.html",
                              "--exclude-system", "ref", "--exclude-system", "copy"])
    assert args.naturalness == "embedding" and args.exclude_system == ["ref", "copy"]
    with pytest.raises(InputError, match="give --human"):
        args.run(args)  # fails before any scoring
    with pytest.raises(InputError, match="naturalness must be one of"):
        evaluate(load_records(argparse.Namespace(example="formality", input=[], gyafc=None, system=[],
                                                 systems_dir=None, source=None, reference=[], direction=None)),
                 fast=True, naturalness="bigram")


def test_rationale_warns_when_the_fluency_threshold_rejects_most_outputs():
    from types import SimpleNamespace

    from styleval.evaluation.battery import _fluency_warning

    ppl = {"A": [250.0, 300.0, 150.0, 900.0, 1200.0, 400.0], "B": [500.0, 210.0, 800.0, 950.0, 199.0, 1e4]}

    def result(scores):
        return SimpleNamespace(systems=list(scores),
                               get=lambda metric, system: SimpleNamespace(segment_scores=scores[system]))

    lines = _fluency_warning(result(ppl), "perplexity", 200.0)  # A passes 1/6, B 1/6
    assert len(lines) == 1 and "at most 17% of any system's outputs" in lines[0] and "≤ 200" in lines[0]
    assert _fluency_warning(result(ppl), "perplexity", 260.0) == []  # A passes 2/6 = 33%
    assert _fluency_warning(result({"A": ppl["A"], "C": [10.0] * 6}), "perplexity", 200.0) == []
