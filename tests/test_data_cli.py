"""``styleval data export``: the shipped datasets' judgments, outputs and stored scores as files the other verbs
read, checked end to end against the Python path and the published figures."""
from __future__ import annotations

import json

import pandas as pd
import pytest

from styleval import Record
from styleval.cli import main as cli_main
from styleval.datasets.export import write_records_table
from styleval.errors import InputError
from styleval.meta import Judgments
from styleval.readers import read_table


def _export(*argv: str) -> int:
    return cli_main.main(["data", "export", *map(str, argv)])


@pytest.fixture(scope="module")
def lai_files(shared_data, tmp_path_factory):
    folder = tmp_path_factory.mktemp("lai")
    files = {k: folder / name for k, name in (("human", "lai.human.csv"), ("outputs", "lai.outputs.tsv"),
                                              ("stored", "lai.stored.csv"))}
    assert _export("lai2022", "--root", shared_data, "--human", files["human"], "--outputs", files["outputs"],
                   "--stored-scores", files["stored"], "-q") == 0
    return files


@pytest.mark.shared_data
def test_lai2022_export_files_join(lai_files):
    human = Judgments.read(lai_files["human"])
    assert len(human.frame) == 4320 and sorted(human.aspects) == ["content", "fluency", "style"]
    records = read_table(lai_files["outputs"])
    assert len(records) == 720 and len({r.system for r in records}) == 9
    first = records[0]
    assert (first.id, first.system, str(first.direction)) == ("0", "bart", "informal->formal")
    assert first.output == "It depends on when you are ready." and len(first.references) == 1
    judged = set(zip(human.frame["system"], human.frame["segment"]))
    assert {(r.system, r.id) for r in records} == judged  # every output has judgments, and nothing else is judged
    stored = pd.read_csv(lai_files["stored"])
    assert {"system", "segment", "metric", "score", "higher_is_better"} <= set(stored.columns)
    assert not stored.loc[stored["metric"] == "src:wmd", "higher_is_better"].any()


@pytest.mark.shared_data
def test_lai2022_score_then_meta_gives_the_python_figures(lai_files, shared_data, tmp_path):
    """score --input OUTPUTS, then meta --human HUMAN: the figures of the Python path (styleval.score on the dataset's
    records, meta.run with Lai's conventions), which are within .01 of Lai et al.'s BLEU (.292 per input, .313 per
    system; docs/results.md: .290 / .312)."""
    from styleval import score
    from styleval.datasets import read_lai2022
    from styleval.meta import run
    from styleval.meta.conventions import lai2022_tasks
    from styleval.meta.datasets import load_lai2022
    from styleval.meta.scores import metric_table_from_result

    scores, meta_json = tmp_path / "lai.scores.json", tmp_path / "meta.json"
    assert cli_main.main(["score", "--input", str(lai_files["outputs"]), "-m", "bleu", "--against", "source",
                          "--bootstrap", "0", "--json", str(scores), "-q"]) == 0
    assert cli_main.main(["meta", "--human", str(lai_files["human"]), "--scores", str(scores), "--preset", "lai2022",
                          "--json", str(meta_json), "-q"]) == 0
    results = json.loads(meta_json.read_text(encoding="utf-8"))["results"]
    cli = {r["choices"]["level"]: r["metrics"]["bleu/src"]["statistic"] for r in results}

    table = metric_table_from_result(score(read_lai2022(shared_data), ["bleu"], against=["source"], bootstrap=0))
    judgments = load_lai2022(shared_data).judgments
    seg_task, sys_task = lai2022_tasks("content")
    python = {task.level: run(task, judgments, table, metrics=["bleu/src"]).statistic("bleu/src")
              for task in (seg_task, sys_task)}
    assert cli == pytest.approx(python, abs=1e-12)
    assert cli["segment"] == pytest.approx(0.292, abs=0.01) and cli["system"] == pytest.approx(0.313, abs=0.01)
    assert cli["segment"] == pytest.approx(0.290, abs=0.0005) and cli["system"] == pytest.approx(0.312, abs=0.0005)


@pytest.mark.shared_data
def test_sgdd_stored_scores_through_the_cli(shared_data, tmp_path):
    """SGDD-TST: the exported stored BLEU column gives Babakov et al.'s Spearman (.348) through meta; the outputs'
    ids and system are those of the judgments."""
    human, outputs, stored = tmp_path / "h.csv", tmp_path / "o.csv", tmp_path / "s.csv"
    assert _export("sgdd_tst", "--root", shared_data, "--human", human, "--outputs", outputs,
                   "--stored-scores", stored, "-q") == 0
    records = read_table(outputs)
    judgments = Judgments.read(human)
    assert len(records) == 10287 == len(judgments.frame)
    assert {(r.system, r.id) for r in records} == set(zip(judgments.frame["system"], judgments.frame["segment"]))
    out = tmp_path / "meta.json"
    assert cli_main.main(["meta", "--human", str(human), "--scores", str(stored), "-m", "bleu", "--preset",
                          "spearman", "--level", "segment", "--json", str(out), "-q"]) == 0
    result = json.loads(out.read_text(encoding="utf-8"))["results"][0]
    assert result["metrics"]["bleu"]["statistic"] == pytest.approx(0.348, abs=0.01)


@pytest.mark.shared_data
def test_mir2019_and_yelp_dualrl(shared_data, tmp_path, capsys):
    human, outputs = tmp_path / "mir.h.jsonl", tmp_path / "mir.o.jsonl"
    assert _export("mir2019", "--root", shared_data, "--human", human, "--outputs", outputs) == 0
    assert "2,928 outputs of 12 systems" in capsys.readouterr().err
    records = read_table(outputs)
    frame = Judgments.read(human).frame
    content = frame[frame["aspect"] == "content_preservation"]
    assert {(r.system, r.id) for r in records} == set(zip(content["system"], content["segment"]))
    assert _export("yelp-dualrl", "--root", shared_data, "--outputs", tmp_path / "y.tsv", "-q") == 0
    yelp = read_table(tmp_path / "y.tsv")
    assert len(yelp) == 15000 and max(len(r.references) for r in yelp) == 4
    human_sys = [r for r in yelp if r.system == "Human0"]
    assert all(len(r.references) == 3 for r in human_sys)  # a human rewrite is scored against the other three
    assert _export("yelp-dualrl", "--root", shared_data, "--human", tmp_path / "y.csv") == 2
    assert "has no human judgments" in capsys.readouterr().err


def test_export_errors_are_one_line(tmp_path, capsys):
    assert _export("lai2021", "--human", tmp_path / "h.csv") == 2
    err = capsys.readouterr().err
    assert "unknown dataset 'lai2021'; did you mean lai2022?" in err and len(err.strip().splitlines()) == 1
    assert _export("lai2022") == 2
    assert "nothing to write" in capsys.readouterr().err
    assert cli_main.main(["data", "list"]) == 0
    assert "sgdd-tst" in capsys.readouterr().out


def test_tsv_refuses_texts_it_cannot_hold(tmp_path):
    records = [Record(id="1", source="a\tb", output="c", system="s"),
               Record(id="2", source="d", output="e", references=["r"], system="s", direction="x->y")]
    with pytest.raises(InputError, match="segment '1' has a text with a tab.*csv or .jsonl"):
        write_records_table(records, tmp_path / "o.tsv")
    assert not (tmp_path / "o.tsv").exists()
    for name in ("o.csv", "o.jsonl"):
        back = read_table(write_records_table(records, tmp_path / name))
        assert [(r.id, r.source, r.output, r.references, r.direction) for r in back] == \
               [(r.id, r.source, r.output, r.references, r.direction) for r in records]


def test_data_example_writes_the_bundled_example_as_files_and_one_table(tmp_path):
    from styleval.examples import get
    from styleval.readers import read_parallel
    from styleval.style_models import read_labelled

    assert cli_main.main(["data", "example", "formality", str(tmp_path), "-q"]) == 0
    example = get("formality")
    table = read_table(tmp_path / "outputs.tsv")
    plain = [r for path in sorted((tmp_path / "systems").glob("*.txt"))
             for r in read_parallel(path, tmp_path / "source.txt", [tmp_path / "ref0.txt", tmp_path / "ref1.txt"],
                                    system=path.stem, direction="informal:formal")]
    assert len(table) == 90 == len(plain)
    assert [(r.id, r.system, r.source, r.output, r.references, r.direction) for r in table] == \
        [(r.id, r.system, r.source, r.output, r.references, r.direction) for r in plain]
    assert (tmp_path / "source.txt").read_bytes() == example.source.read_bytes()
    styles = read_labelled(tmp_path / "styles.tsv")
    assert styles.labels.count("informal") == styles.labels.count("formal") == 30
    assert cli_main.main(["data", "example", "nope", str(tmp_path)]) == 2
