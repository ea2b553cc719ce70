"""Transfer directions: the shell-safe colon form reads the same as the arrow form on every entry point."""
from __future__ import annotations

import json

import pandas as pd
import pytest

from styleval import Direction, InputError
from styleval.cli.main import main
from styleval.meta import Judgments, MetaTask, run
from styleval.readers import read_parallel, read_table


@pytest.mark.parametrize("text", ["informal:formal", "informal->formal", "informal → formal", "informal2formal",
                                  " informal : formal "])
def test_every_form_parses_to_one_direction(text):
    assert Direction.parse(text) == Direction("informal", "formal")
    assert str(Direction.parse(text)) == "informal->formal"


def test_colon_wins_over_a_two_inside_a_style_name():
    assert Direction.parse("l2:l1") == Direction("l2", "l1")


def test_a_text_with_no_separator_suggests_the_colon_form():
    with pytest.raises(InputError, match="informal:formal"):
        Direction.parse("formal")


def _files(tmp_path):
    (tmp_path / "src.txt").write_text("u r gr8\nthx a lot\ngonna go now\n", encoding="utf-8")
    (tmp_path / "out.txt").write_text("You are great.\nThanks a lot.\nI am going to leave now.\n", encoding="utf-8")
    (tmp_path / "ref.txt").write_text("You are great.\nThank you very much.\nI am going now.\n", encoding="utf-8")
    return tmp_path / "out.txt", tmp_path / "src.txt", tmp_path / "ref.txt"


def test_readers_give_identical_records(tmp_path):
    out, src, ref = _files(tmp_path)
    assert read_parallel(out, src, [ref], direction="informal:formal") == read_parallel(
        out, src, [ref], direction="informal->formal")
    rows = "source\toutput\tdirection\nu r gr8\tYou are great.\t{}\n"
    (tmp_path / "colon.tsv").write_text(rows.format("informal:formal"), encoding="utf-8")
    (tmp_path / "arrow.tsv").write_text(rows.format("informal->formal"), encoding="utf-8")
    colon, arrow = read_table(tmp_path / "colon.tsv"), read_table(tmp_path / "arrow.tsv")
    assert [r.direction for r in colon] == [r.direction for r in arrow] == [Direction("informal", "formal")]


def test_score_cli_gives_identical_scores_and_signatures(tmp_path, capsys):
    out, src, ref = _files(tmp_path)
    docs = {}
    for name, direction in (("colon", "informal:formal"), ("arrow", "informal->formal")):
        path = tmp_path / f"{name}.json"
        assert main(["score", "--system", f"A={out}", "--source", str(src), "-r", str(ref), "--direction",
                     direction, "-m", "bleu,style_accuracy", "--bootstrap", "20", "--quiet",
                     "--json", str(path)]) == 0
        docs[name] = json.loads(path.read_text(encoding="utf-8"))
    assert docs["colon"]["corpus"] == docs["arrow"]["corpus"]
    assert docs["colon"]["segments"] == docs["arrow"]["segments"]
    assert any(c["metric"] == "style_accuracy" for c in docs["colon"]["corpus"])


def _judgments(direction_of) -> list[dict]:
    human = [[80, 60, 30, 90], [20, 50, 40, 10], [60, 70, 20, 30]]
    return [{"system": s, "segment": str(k), "annotator": "a", "aspect": "content", "score": human[i][k],
             "direction": direction_of(k)} for i, s in enumerate(("s1", "s2", "s3")) for k in range(4)]


def test_meta_judgments_tables_and_tasks_read_the_colon_form(tmp_path):
    colon = Judgments.from_records(_judgments(lambda k: "informal:formal" if k < 2 else "formal:informal"))
    arrow = Judgments.from_records(_judgments(lambda k: "informal->formal" if k < 2 else "formal->informal"))
    assert colon == arrow
    metric = pd.DataFrame([(s, str(k), "m", float(i * 4 + k * (1 if k % 2 else -1)))
                           for i, s in enumerate(("s1", "s2", "s3")) for k in range(4)],
                          columns=["system", "segment", "metric", "score"])
    by_colon = run(MetaTask("content", level="segment", method="pearson", direction="informal:formal"), colon,
                   metric)
    by_arrow = run(MetaTask("content", level="segment", method="pearson", direction="informal->formal"), arrow,
                   metric)
    assert by_colon.task == by_arrow.task
    assert by_colon.to_dict()["metrics"] == by_arrow.to_dict()["metrics"]
    # an already aggregated human table with colon directions
    table = pd.DataFrame(_judgments(lambda k: "informal:formal" if k < 2 else "formal:informal"))
    by_table = run(MetaTask("content", level="segment", method="pearson", direction="informal:formal"),
                   table.drop(columns=["annotator", "aspect"]), metric)
    assert by_table.to_dict()["metrics"] == by_arrow.to_dict()["metrics"]


def test_meta_cli_direction_colon_equals_arrow(tmp_path, capsys):
    rows = _judgments(lambda k: "informal:formal" if k < 2 else "formal:informal")
    pd.DataFrame(rows).to_csv(tmp_path / "h.csv", index=False)
    pd.DataFrame([(r["system"], r["segment"], "m", r["score"] * 0.5 + int(r["segment"]))
                  for r in rows], columns=["system", "segment", "metric", "score"]).to_csv(tmp_path / "s.csv",
                                                                                         index=False)
    printed = {}
    for direction in ("informal:formal", "informal->formal"):
        assert main(["meta", "--human", str(tmp_path / "h.csv"), "--scores", str(tmp_path / "s.csv"),
                     "--direction", direction, "--level", "segment", "--segment-method", "pearson"]) == 0
        printed[direction] = capsys.readouterr().out
    assert printed["informal:formal"] == printed["informal->formal"]
    assert "informal->formal" in printed["informal:formal"]
