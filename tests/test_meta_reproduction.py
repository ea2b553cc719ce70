"""Reproduction of published meta-evaluation figures from the stored scores (../shared/data).

Each test pins the conventions (a MetaTask) that reproduce a figure to within 0.01; docs/meta-conventions.md lists
them. Where a plausible alternative convention gives a visibly different number, that is asserted too, so a change
of convention cannot pass silently.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from styleval.meta import MetaTask, inter_rater_pearson, merge_with_entity_score, run
from styleval.meta.datasets import load_lai2022, load_mir2019, load_sgdd_tst

pytestmark = pytest.mark.shared_data
TOL = 0.01


@pytest.fixture(scope="module")
def lai_txt(shared_data):
    return load_lai2022(shared_data, source="txt")


@pytest.fixture(scope="module")
def lai_json(shared_data):
    return load_lai2022(shared_data, source="json")


def _stat(task, data, metric):
    return run(task, data.judgments, data.metrics, metrics=[metric],
               lower_is_better=data.lower_is_better).statistic(metric)


# Lai et al. 2022: 8 systems (reference excluded), mean of the two raters' raw scores, both directions pooled;
# per-input Kendall tau-like (human ties skipped, metric ties discordant, inputs with all-tied humans left out)
# averaged over the 80 inputs; system level: Pearson of per-system means.
LAI_SEG = MetaTask("content", level="segment", method="kendall_tau_like", average_by="item", threshold=0.0,
                   human_ties="skip", metric_ties="discordant", direction="both", orientation="abs",
                   exclude=("ref",), human="mean")
LAI_SYS = MetaTask("content", level="system", method="pearson", direction="both", orientation="abs",
                   exclude=("ref",), human="mean")


@pytest.mark.parametrize("metric,seg,sys_", [("src:bleurt", 0.610, 0.993), ("src:comet", 0.650, 0.972),
                                             ("src:bleu", 0.292, 0.313)])
def test_lai2022_content_vs_source(lai_txt, metric, seg, sys_):
    res = run(LAI_SEG, lai_txt.judgments, lai_txt.metrics, metrics=[metric])[metric]
    assert res.statistic == pytest.approx(seg, abs=TOL)
    # 80 inputs; on one of them both raters gave every system the same content score: undefined, skipped
    assert res.n == 79 and res.options["n_undefined"] == 1
    assert _stat(LAI_SYS, lai_txt, metric) == pytest.approx(sys_, abs=TOL)


def test_lai2022_content_json_has_bleurt_bleu_but_not_the_comet(lai_json):
    """The JSON's BLEURT/BLEU give the same figures; its comet-20 is the .txt COMET-w (.634), not COMET (.650)."""
    assert _stat(LAI_SEG, lai_json, "src:bleurt") == pytest.approx(0.610, abs=TOL)
    assert _stat(LAI_SEG, lai_json, "src:bleu") == pytest.approx(0.292, abs=TOL)
    assert _stat(LAI_SYS, lai_json, "src:bleurt") == pytest.approx(0.993, abs=TOL)
    assert _stat(LAI_SEG, lai_json, "src:comet-20") == pytest.approx(0.634, abs=0.002)
    assert _stat(LAI_SYS, lai_json, "src:comet-20") == pytest.approx(0.972, abs=TOL)


def test_lai2022_content_conventions_matter(lai_txt):
    # counting the reference as a 9th system, or skipping metric ties, moves the figures away from the paper's
    assert abs(_stat(LAI_SEG.with_(exclude=()), lai_txt, "src:comet") - 0.650) > 0.02
    assert abs(_stat(LAI_SEG.with_(metric_ties="skip"), lai_txt, "src:bleurt") - 0.610) > 0.1
    # z-scores instead of raw means barely matter here
    assert _stat(LAI_SEG.with_(human="z"), lai_txt, "src:bleurt") == pytest.approx(0.610, abs=TOL)


def test_lai2022_style_xformal_classifier(lai_txt):
    """Classifier probability of the *target* style (1 - P(formal) on formal->informal inputs)."""
    seg, sys_ = LAI_SEG.with_(aspect="style"), LAI_SYS.with_(aspect="style")
    assert _stat(seg, lai_txt, "style:cls-xformal-target") == pytest.approx(0.420, abs=TOL)
    assert _stat(sys_, lai_txt, "style:cls-xformal-target") == pytest.approx(0.967, abs=TOL)
    # P(formal) as stored does not reproduce
    assert _stat(seg, lai_txt, "style:cls-xformal") == pytest.approx(0.319, abs=TOL)


def test_lai2022_style_json_rounding_creates_metric_ties(lai_json):
    """style.json's c-gyafc is the same probability rounded to 3 decimals: the rounding creates ties (0.999...),
    which count as discordant, and the per-input Kendall drops to .366. Skipping metric ties gives .421."""
    seg, sys_ = LAI_SEG.with_(aspect="style"), LAI_SYS.with_(aspect="style")
    assert _stat(seg, lai_json, "style:c-gyafc") == pytest.approx(0.366, abs=0.002)
    assert _stat(seg.with_(metric_ties="skip"), lai_json, "style:c-gyafc") == pytest.approx(0.420, abs=TOL)
    assert _stat(sys_, lai_json, "style:c-gyafc") == pytest.approx(0.967, abs=TOL)


@pytest.mark.parametrize("source", ["txt", "json"])
def test_lai2022_fluency_gpt2_perplexity(request, source):
    data = request.getfixturevalue(f"lai_{source}")
    seg = LAI_SEG.with_(aspect="fluency", direction="informal->formal")
    sys_ = LAI_SYS.with_(aspect="fluency", direction="informal->formal")
    assert _stat(seg, data, "fluency:gpt2_ppl") == pytest.approx(0.515, abs=TOL)
    assert _stat(sys_, data, "fluency:gpt2_ppl") == pytest.approx(0.965, abs=TOL)
    # perplexity is lower-is-better: as stored, the sign flips
    assert _stat(sys_.with_(orientation="signed"), data, "fluency:gpt2_ppl") == pytest.approx(-0.965, abs=TOL)
    # pooling both directions does not give the paper's figure
    assert abs(_stat(sys_.with_(direction="both"), data, "fluency:gpt2_ppl") - 0.965) > 0.2


@pytest.mark.parametrize("aspect,expected", [("content", 0.855), ("style", 0.524), ("fluency", 0.664)])
def test_lai2022_inter_rater_pearson(lai_json, aspect, expected):
    """First rater against second rater, pooled over the 4 surveys, 8 systems x 80 inputs."""
    r = inter_rater_pearson(lai_json.judgments, aspect, slot=lambda a: a.split("/")[-1], exclude=["ref"])
    assert r.n == 640
    assert r.statistic == pytest.approx(expected, abs=TOL)


# Mir et al. 2019: Pearson over all outputs of all settings of one model pooled (244 x settings), mean-of-3
# human score, metric scores as stored (signed: WMD is a distance so its correlation is negative).
@pytest.fixture(scope="module")
def mir(shared_data):
    return load_mir2019(shared_data)


MIR = MetaTask("content_preservation", level="segment", method="pearson", average_by="none", orientation="signed")


@pytest.mark.parametrize("model,wmd,emd", [("ARAE", -0.457, 0.519), ("CAAE", -0.517, 0.589),
                                           ("DAR", -0.475, 0.566)])
def test_mir2019_pooled_pearson(mir, model, wmd, emd):
    systems = tuple(mir.extra["models"][model])
    task = MIR.with_(systems=systems)
    res = run(task, mir.judgments, mir.metrics, metrics=["style_masked:WMD"])
    assert res["style_masked:WMD"].n == 244 * len(systems)
    assert res.statistic("style_masked:WMD") == pytest.approx(wmd, abs=TOL)
    sti = task.with_(aspect="style_transfer_intensity")
    assert _stat(sti, mir, "emd:textcnn") == pytest.approx(emd, abs=TOL)
    # orientation="abs" reports the same magnitude with the sign of agreement
    assert _stat(task.with_(orientation="abs"), mir, "style_masked:WMD") == pytest.approx(-wmd, abs=TOL)


def test_mir2019_style_masking_does_not_win_everywhere(mir):
    task = MIR.with_(systems=tuple(mir.extra["models"]["CAAE"]))
    assert _stat(task, mir, "unmasked:BLEU") == pytest.approx(0.526, abs=TOL)
    assert _stat(task, mir, "style_masked:BLEU") == pytest.approx(0.488, abs=TOL)


# Babakov et al. (SGDD-TST): Spearman over all 10,287 pairs (pairs with a missing metric value dropped).
@pytest.fixture(scope="module")
def sgdd(shared_data):
    return load_sgdd_tst(shared_data)


SGDD = MetaTask("content", level="segment", method="spearman", average_by="none")


def _with_merged(sgdd, metric):
    wide = sgdd.metrics.pivot(index="segment", columns="metric", values="score")
    merged = merge_with_entity_score(wide[metric], wide["scipy_ner"], wide["scipy_proprotion"])
    extra = pd.DataFrame({"system": "rewrite", "segment": wide.index, "metric": f"{metric}+ne",
                          "score": np.asarray(merged)})
    return pd.concat([sgdd.metrics, extra.dropna()], ignore_index=True)


@pytest.mark.parametrize("metric,before,after", [("bleu", 0.348, 0.376), ("rouge1", 0.292, 0.358),
                                                 ("Elron/bleurt-large-512", 0.562, 0.558)])
def test_sgdd_tst_entity_merge(sgdd, metric, before, after):
    table = _with_merged(sgdd, metric)
    res = run(SGDD, sgdd.judgments, table, metrics=[metric, f"{metric}+ne"])
    assert res.statistic(metric) == pytest.approx(before, abs=TOL)
    assert res.statistic(f"{metric}+ne") == pytest.approx(after, abs=TOL)


def test_sgdd_tst_all_stored_metrics(sgdd):
    frame = run(SGDD, sgdd.judgments, sgdd.metrics).to_frame().set_index("metric")
    expected = {"chrf": 0.268, "bleu": 0.348, "rouge1": 0.292, "rouge2": 0.150, "rouge3": 0.087, "rougeL": 0.271,
                "Elron/bleurt-large-512": 0.562, "bertscore/roberta-large": 0.397,
                "bertscore/bert-base-multilingual-cased": 0.284, "bertscore/microsoft/deberta-xlarge-mnli": 0.466,
                "fasttext_cossim": 0.215, "w2v_cossim": 0.216}
    for metric, value in expected.items():
        assert frame.loc[metric, "statistic"] == pytest.approx(value, abs=0.001), metric
    assert frame.loc["w2v_cossim", "n"] == 10287 - 27
