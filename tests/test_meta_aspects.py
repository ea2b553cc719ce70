"""``styleval meta --aspect``: each metric with its own aspect by default, several aspects or all of them on
request, and the output naming the aspect of every figure."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from styleval.cli import main as cli_main
from styleval.errors import InputError
from styleval.meta import Judgments, MetaTask, run
from styleval.meta.aspects import pair_aspects

SYSTEMS = ["s1", "s2", "s3", "s4", "s5"]
RNG = np.random.default_rng(3)
CONTENT = RNG.uniform(0, 100, size=(5, 8))
STYLE = RNG.uniform(0, 100, size=(5, 8))


@pytest.fixture()
def files(tmp_path):
    """Human content and style judgments; bleu/src follows content, style_accuracy follows style, 'mystery' is no
    registered metric."""
    rows = [{"system": s, "segment": k, "annotator": "a", "aspect": aspect, "score": values[i, k]}
            for aspect, values in (("content", CONTENT), ("style", STYLE))
            for i, s in enumerate(SYSTEMS) for k in range(8)]
    human = tmp_path / "human.csv"
    Judgments.from_records(rows).write(human)
    metrics = {"bleu/src": CONTENT + RNG.normal(0, 5, CONTENT.shape),
               "style_accuracy": STYLE / 100 + RNG.normal(0, .05, STYLE.shape),
               "mystery": RNG.normal(0, 1, STYLE.shape)}
    table = [(s, k, name, v[i, k]) for name, v in metrics.items() for i, s in enumerate(SYSTEMS) for k in range(8)]
    scores = tmp_path / "scores.csv"
    pd.DataFrame(table, columns=["system", "segment", "metric", "score"]).to_csv(scores, index=False)
    return human, scores


def _meta(human, scores, tmp_path, *extra):
    out = tmp_path / "meta.json"
    code = cli_main.main(["meta", "--human", str(human), "--scores", str(scores), "--level", "system",
                          "--json", str(out), *extra])
    assert code == 0
    data = json.loads(out.read_text(encoding="utf-8"))
    return data, {(r["task"].split(";")[0].split("=")[1], m): v["statistic"]
                  for r in data["results"] for m, v in r["metrics"].items()}


def test_default_pairs_each_metric_with_its_own_aspect(files, tmp_path, capsys):
    human, scores = files
    data, figures = _meta(human, scores, tmp_path)
    assert set(figures) == {("content", "bleu/src"), ("content", "mystery"), ("style", "style_accuracy")}
    out = capsys.readouterr().out
    assert "aspects (each metric with its own kind):" in out
    assert "content: bleu/src, mystery (metric of no known kind: content by default; --aspect chooses)" in out
    assert "  style: style_accuracy\n" in out and "== style, system pearson ==" in out
    assert data["inputs"]["aspects"]["groups"] == {"content": ["bleu/src", "mystery"], "style": ["style_accuracy"]}
    # each figure is the one meta.run gives for that aspect
    table = pd.read_csv(scores)
    judgments = Judgments.read(human)
    for aspect, metric in figures:
        expected = run(MetaTask(aspect, level="system", method="pearson"), judgments, table,
                       metrics=[metric]).statistic(metric)
        assert figures[(aspect, metric)] == pytest.approx(expected, abs=1e-12)
    assert figures[("style", "style_accuracy")] > 0.9  # the style metric meets the style judgments


def test_several_aspects_and_all(files, tmp_path, capsys):
    human, scores = files
    _, listed = _meta(human, scores, tmp_path, "--aspect", "style,content")
    _, every = _meta(human, scores, tmp_path, "--aspect", "all")
    assert set(listed) == set(every) == {(a, m) for a in ("content", "style")
                                          for m in ("bleu/src", "style_accuracy", "mystery")}
    assert listed == pytest.approx(every)
    summary = capsys.readouterr().out.split("summary:")[-1]
    assert "aspect" in summary.splitlines()[1] and "style_accuracy  style  " in summary


def test_aspect_errors(files, tmp_path, capsys):
    human, scores = files
    content_only = tmp_path / "content.csv"
    frame = Judgments.read(human).frame
    Judgments(frame[frame["aspect"] == "content"]).write(content_only)
    assert cli_main.main(["meta", "--human", str(content_only), "--scores", str(scores), "-m", "style_accuracy"]) == 2
    assert "judges style, but the human file has no style aspect" in capsys.readouterr().err
    assert cli_main.main(["meta", "--human", str(human), "--scores", str(scores), "--aspect", "fluency"]) == 2
    assert "no judgments for aspect 'fluency' (the human file has: content, style)" in capsys.readouterr().err
    assert cli_main.main(["meta", "--human", str(human), "--scores", str(scores), "--aspect", "all,style"]) == 2
    assert "stand alone" in capsys.readouterr().err


def test_pairing_rules():
    mir = ["style_transfer_intensity", "content_preservation", "naturalness"]
    p = pair_aspects(["wmd/src", "unmasked:BLEU", "acceptability", "style_emd"], mir)
    assert p.groups == {"style_transfer_intensity": ["style_emd"], "content_preservation": ["wmd/src", "unmasked:BLEU"],
                        "naturalness": ["acceptability"]}
    assert pair_aspects(["x"], ["content"]).how == {"x": "metric of no known kind: the file's only aspect"}
    assert pair_aspects(["style:cls-xformal", "fluency:gpt2_ppl", "src:bleu"], ["content", "style", "fluency"]
                        ).groups == {"content": ["src:bleu"], "style": ["style:cls-xformal"],
                                     "fluency": ["fluency:gpt2_ppl"]}
    assert pair_aspects(["bleu"], mir, "style,content").groups == {"style_transfer_intensity": ["bleu"],
                                                                   "content_preservation": ["bleu"]}
    with pytest.raises(InputError, match="cannot tell which human aspect metric 'emd:textcnn'"):
        pair_aspects(["emd:textcnn"], mir)
