"""The Python API's frames: paired tests as a frame (``to_dataframe("comparisons")``) with the numbers of the
``Comparison`` objects, and segment rows that carry their texts, so the inputs where two systems differ most are
one pivot away."""
from __future__ import annotations

import pandas as pd
import pytest
import sacrebleu

import styleval
from styleval.examples import get
from styleval.readers import read_parallel
from styleval.readers.text import read_lines


@pytest.fixture(scope="module")
def example():
    ex = get("formality")
    refs = [str(r) for r in ex.references]
    records = []
    for name in ("copy", "rewrite", "tidy"):
        records += read_parallel(ex.systems_dir / f"{name}.txt", ex.source, refs, system=name,
                                 direction=ex.direction)
    result = styleval.score(records, ["bleu", "chrf"], against=["source"], bootstrap=200,
                            significance="paired-bootstrap", baseline="copy")
    return ex, refs, result


def test_comparisons_frame_holds_every_paired_test(example) -> None:
    _, _, result = example
    frame = result.to_dataframe("comparisons")
    assert len(frame) == len(result.comparisons) == 2 * 2  # two metrics, two systems against copy
    for c, row in zip(result.comparisons, frame.itertuples(index=False)):
        assert (row.metric, row.system, row.baseline, row.delta, row.p_value, row.method) == \
            (c.metric, c.system, c.baseline, c.delta, c.p_value, "paired-bootstrap")
        corpus = {s: result.get(c.metric, s).corpus_score for s in (c.system, c.baseline)}
        assert row.delta == pytest.approx(corpus[c.system] - corpus[c.baseline])  # system minus baseline
        assert row.significant == (c.p_value < 0.05)
        # BLEU against the source is higher the more is copied: copy, the baseline, is the better one
        assert row.better == (c.baseline if row.significant else None)
    assert frame["significant"].all()
    assert result.to_dataframe("comparisons", alpha=0.0)["better"].isna().all()


def test_comparisons_frame_of_a_run_without_tests_is_empty_with_its_columns() -> None:
    records = [styleval.Record("1", "a b c", "a b c", system="A"), styleval.Record("1", "a b c", "a b", system="B")]
    frame = styleval.score(records, ["bleu"], bootstrap=0).to_dataframe("comparisons")
    assert frame.empty and {"metric", "system", "baseline", "delta", "p_value", "better"} <= set(frame.columns)


def test_segment_frame_has_the_texts_and_finds_the_inputs_where_systems_differ(example) -> None:
    ex, refs, result = example
    seg = result.to_dataframe("segment")
    sources = read_lines(ex.source)
    outputs = {name: read_lines(ex.systems_dir / f"{name}.txt") for name in ("copy", "rewrite", "tidy")}
    references = [read_lines(r) for r in refs]
    for row in seg.itertuples(index=False):
        k = int(row.id) - 1
        assert (row.source, row.output, row.references) == \
            (sources[k], outputs[row.system][k], [r[k] for r in references])
    bleu = seg[seg["metric"] == "bleu/src"]
    wide = bleu.pivot(index="id", columns="system", values="score")
    gap = (wide["copy"] - wide["rewrite"]).sort_values(ascending=False)
    top = gap.index[0]
    k = int(top) - 1
    # the segment score is sacrebleu's sentence BLEU of that output against its source
    expected = sacrebleu.sentence_bleu(outputs["rewrite"][k], [sources[k]]).score
    assert wide.loc[top, "rewrite"] == pytest.approx(expected, abs=1e-9)
    texts = bleu[(bleu["id"] == top) & (bleu["system"] == "rewrite")].iloc[0]
    assert texts["output"] == outputs["rewrite"][k] and texts["source"] == sources[k]


def test_texts_stay_out_of_the_json(example, tmp_path) -> None:
    _, _, result = example
    path = tmp_path / "scores.json"
    result.write_json(path)
    assert "texts" not in pd.read_json(path, typ="series").index
