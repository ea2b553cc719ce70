"""The command line, end to end, on the bundled example and on bad input."""
from __future__ import annotations

import json
import subprocess
import sys


from styleval.cli.main import main


def test_score_example_prints_table_and_signatures(capsys):
    assert main(["score", "--example", "formality", "--metrics", "bleu,chrf", "--bootstrap", "100"]) == 0
    out = capsys.readouterr().out
    assert "bleu/src" in out and "bleu/ref" in out
    for system in ("copy", "tidy", "rewrite"):
        assert system in out
    assert "signatures:" in out and "nrefs:2" in out and "sacrebleu:" in out


def test_score_writes_files(tmp_path, capsys):
    j, c, s, lines = (tmp_path / n for n in ("a.json", "a.csv", "seg.csv", "seg.jsonl"))
    rc = main(["score", "--example", "formality", "--metrics", "bleu", "--against", "references",
               "--significance", "approx-randomization", "--baseline", "copy", "--bootstrap", "50",
               "--json", str(j), "--csv", str(c), "--segments-csv", str(s), "--jsonl", str(lines)])
    assert rc == 0
    data = json.loads(j.read_text())
    assert {x["system"] for x in data["comparisons"]} == {"tidy", "rewrite"}
    assert len(lines.read_text().splitlines()) == 3 * 30
    assert len(s.read_text().splitlines()) == 1 + 3 * 30
    assert len(c.read_text().splitlines()) == 1 + 3


def test_missing_file_is_a_clear_error(tmp_path, capsys):
    rc = main(["score", "--system", str(tmp_path / "nope.txt"), "--source", str(tmp_path / "src.txt")])
    assert rc == 2
    err = capsys.readouterr().err
    assert "nope.txt" in err or "src.txt" in err


def test_length_mismatch_names_both_files(tmp_path, capsys):
    (tmp_path / "src.txt").write_text("a\nb\nc\n")
    (tmp_path / "out.txt").write_text("a\nb\n")
    rc = main(["score", "--system", str(tmp_path / "out.txt"), "--source", str(tmp_path / "src.txt"),
               "--metrics", "bleu"])
    assert rc == 2
    err = capsys.readouterr().err
    assert "out.txt" in err and "src.txt" in err and "2" in err and "3" in err


def test_metrics_verb_lists_lexical_battery(capsys):
    assert main(["metrics"]) == 0
    out = capsys.readouterr().out
    for name in ("bleu", "chrf", "chrf++", "ter", "rouge1", "rougeL", "meteor", "pinc", "levenshtein"):
        assert name in out


def test_console_script_runs():
    proc = subprocess.run([sys.executable, "-m", "styleval.cli.main", "--version"], capture_output=True, text=True)
    assert proc.returncode == 0 and "styleval" in proc.stdout


def test_score_gyafc_layout(tmp_path, capsys):
    folder = tmp_path / "GYAFC" / "Family_Relationships" / "test"
    folder.mkdir(parents=True)
    informal = ["my bf is sooo sweet", "idk what 2 do"]
    (folder / "informal").write_text("\n".join(informal) + "\n")
    (folder / "formal").write_text("My boyfriend is very kind.\nI do not know what to do.\n")
    for k in range(4):
        (folder / f"informal.ref{k}").write_text(f"My boyfriend is kind {k}.\nI do not know what to do.\n")
        (folder / f"formal.ref{k}").write_text("my bf is nice\nidk what to do\n")
    out = tmp_path / "sys.txt"
    out.write_text("My boyfriend is so sweet.\nI do not know what to do.\n")
    rc = main(["score", "--gyafc", str(tmp_path / "GYAFC"), "--domain", "Family_Relationships",
               "--direction", "informal->formal", "--system", f"mine={out}", "--metrics", "bleu",
               "--bootstrap", "0", "--json", str(tmp_path / "s.json")])
    assert rc == 0
    data = json.loads((tmp_path / "s.json").read_text())
    ref = next(c for c in data["corpus"] if c["metric"] == "bleu/ref")
    assert ref["signature"]["nrefs"] == 4 and ref["n_segments"] == 2
    assert "mine" in capsys.readouterr().out
    # unnamed systems are refused with GYAFC (names identify the outputs)
    assert main(["score", "--gyafc", str(tmp_path / "GYAFC"), "--system", str(out)]) == 2
    assert "NAME=FILE" in capsys.readouterr().err


def test_score_with_style_mask_adds_masked_variants(tmp_path, capsys, shared_data):
    lexicon = shared_data / "mir2019" / "style_lexicon" / "style_words_and_weights.json"
    src = tmp_path / "src.txt"
    out = tmp_path / "out.txt"
    src.write_text("the food was terrible and the staff rude .\n")
    out.write_text("the food was great and the staff friendly .\n")
    rc = main(["score", "--system", f"A={out}", "--source", str(src), "--metrics", "bleu", "--bootstrap", "0",
               "--style-mask", str(lexicon), "--json", str(tmp_path / "s.json")])
    assert rc == 0
    data = json.loads((tmp_path / "s.json").read_text())
    scores = {c["metric"]: c["score"] for c in data["corpus"]}
    assert set(scores) == {"bleu/src", "bleu+style_mask/src"}
    # masking the sentiment words makes source and output agree more
    assert scores["bleu+style_mask/src"] > scores["bleu/src"]
    masked = next(c for c in data["corpus"] if c["metric"] == "bleu+style_mask/src")
    assert "style_mask.placeholder" in masked["signature"]["params"]


def test_score_entity_and_sentiment_aware_variants(tmp_path, capsys):
    src = tmp_path / "src.txt"
    src.write_text("I will meet John in Paris on Monday.\nThe food was great.\n")
    keep, lose = tmp_path / "keep.txt", tmp_path / "lose.txt"
    keep.write_text("I shall meet John in Paris on Monday.\nThe food was great.\n")
    lose.write_text("I shall meet Mary in Rome on Friday.\nThe food was awful.\n")
    rc = main(["score", "--system", f"keep={keep}", "--system", f"lose={lose}", "--source", str(src),
               "--metrics", "chrf,ter", "--bootstrap", "0", "--entity-aware", "--sentiment-aware", "vader",
               "--json", str(tmp_path / "s.json")])
    assert rc == 0
    data = json.loads((tmp_path / "s.json").read_text())
    scores = {(c["system"], c["metric"]): c["score"] for c in data["corpus"]}
    # lower-is-better TER gets no entity- or sentiment-aware variant
    assert {m for _, m in scores} == {"chrf/src", "chrf+ne/src", "chrf+sam/src", "ter/src"}
    # losing the entities and flipping the sentiment costs more with the aware variants
    drop = {m: scores[("keep", m)] - scores[("lose", m)] for m in ("chrf/src", "chrf+ne/src", "chrf+sam/src")}
    assert drop["chrf+ne/src"] > drop["chrf/src"]
    assert drop["chrf+sam/src"] > drop["chrf/src"]
