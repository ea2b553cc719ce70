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


# ---------------------------------------------------------------------- issue 33: what an output may replace
import os  # noqa: E402
import stat  # noqa: E402
import threading  # noqa: E402

import pytest  # noqa: E402

needs_root = pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                                reason="making device nodes (mknod) needs root")


def _tiny(tmp_path):
    """Three-line source, output and reference files."""
    paths = {}
    for name, text in (("src", "a cat sat\nthe dog ran\nbirds sing\n"),
                       ("out", "a cat sits\nthe dog runs\nbirds sang\n"),
                       ("ref", "a cat is sitting\nthe dog is running\nbirds are singing\n")):
        paths[name] = tmp_path / f"{name}.txt"
        paths[name].write_text(text)
    return paths


def _score(paths, *extra):
    return ["score", "--system", f"A={paths['out']}", "--source", str(paths["src"]), "-r", str(paths["ref"]),
            "-m", "bleu", "--bootstrap", "0", *extra]


def _one_error(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("styleval: error: "), err
    return err[0]


@needs_root
def test_output_to_a_character_device_is_written_through_never_replaced(tmp_path, capsys):
    """Finding 1: `--csv /dev/full` turned the device node into a regular file and said `wrote`."""
    paths = _tiny(tmp_path)
    null, full = tmp_path / "null", tmp_path / "full"
    os.mknod(null, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    os.mknod(full, stat.S_IFCHR | 0o666, os.makedev(1, 7))
    assert main(_score(paths, "--csv", str(null), "--json", str(tmp_path / "ok.json"), "-q")) == 0
    assert stat.S_ISCHR(os.lstat(null).st_mode) and os.lstat(null).st_rdev == os.makedev(1, 3)
    capsys.readouterr()
    for option in ("--csv", "--json", "--segments-csv"):
        assert main(_score(paths, option, str(full), "-q")) == 2
        line = _one_error(capsys)
        assert str(full) in line and "No space left on device" in line
        assert stat.S_ISCHR(os.lstat(full).st_mode) and os.lstat(full).st_rdev == os.makedev(1, 7)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["full", "null", "ok.json", "out.txt", "ref.txt", "src.txt"]


@needs_root
def test_output_to_a_block_device_is_refused_and_left_alone(tmp_path, capsys):
    paths = _tiny(tmp_path)
    block = tmp_path / "block"
    os.mknod(block, stat.S_IFBLK | 0o600, os.makedev(7, 250))
    assert main(_score(paths, "--json", str(block))) == 2
    assert "block device" in _one_error(capsys)
    assert stat.S_ISBLK(os.lstat(block).st_mode)


def test_output_to_a_named_pipe_is_written_through(tmp_path, capsys):
    paths = _tiny(tmp_path)
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()), daemon=True)
    reader.start()
    assert main(_score(paths, "--csv", str(fifo), "-q")) == 0
    reader.join(30)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    text = received[0].decode()
    assert text.splitlines()[0].startswith("system,metric,")
    assert len(text.splitlines()) == 1 + 2  # bleu/src and bleu/ref for system A


def test_dash_writes_to_standard_output(tmp_path, capsys):
    paths = _tiny(tmp_path)
    assert main(_score(paths, "--jsonl", "-", "-q")) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 2 * 3 and all(json.loads(line)["system"] == "A" for line in out)
    assert not (tmp_path / "-").exists() and not os.path.exists("-")


def test_symlinked_output_is_followed_and_the_link_kept(tmp_path, capsys):
    paths = _tiny(tmp_path)
    target, link = tmp_path / "real.csv", tmp_path / "link.csv"
    target.write_text("old\n")
    link.symlink_to(target)
    dangling, missing = tmp_path / "dangling.json", tmp_path / "made-by-styleval.json"
    dangling.symlink_to(missing)
    assert main(_score(paths, "--csv", str(link), "--json", str(dangling), "-q")) == 0
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_text().splitlines()[0].startswith("system,metric,") and len(target.read_text().splitlines()) == 3
    assert dangling.is_symlink() and json.loads(missing.read_text())["corpus"]


def test_symlink_to_standard_output_writes_there(tmp_path):
    """Finding 1: a link to /proc/self/fd/1 became a regular file and nothing reached stdout."""
    if not os.path.exists("/proc/self/fd/1"):
        pytest.skip("no /proc")
    paths = _tiny(tmp_path)
    link = tmp_path / "stdout.csv"
    link.symlink_to("/proc/self/fd/1")
    proc = subprocess.run([sys.executable, "-m", "styleval.cli.main", *_score(paths, "--csv", str(link), "-q")],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[0].startswith("system,metric,") and len(proc.stdout.splitlines()) == 3
    assert link.is_symlink() and os.readlink(link) == "/proc/self/fd/1"


def test_output_that_is_an_input_is_refused_before_any_work(tmp_path, capsys):
    """Finding 2: `--system A=out2.txt ... --csv out2.txt` turned the 3-line input into a 3-line CSV."""
    paths = _tiny(tmp_path)
    before = {k: p.read_bytes() for k, p in paths.items()}
    hard = tmp_path / "hard.txt"
    os.link(paths["ref"], hard)
    soft = tmp_path / "soft.txt"
    soft.symlink_to(paths["src"])
    cases = [("--csv", str(paths["out"]), "--system"), ("--json", str(hard), "--reference"),
             ("--segments-csv", str(soft), "--source"), ("--jsonl", str(tmp_path / "." / "out.txt"), "--system")]
    for option, path, role in cases:
        assert main(_score(paths, option, path)) == 2
        line = _one_error(capsys)
        assert f"the {option} output is the same file as the {role} input" in line, line
    assert {k: p.read_bytes() for k, p in paths.items()} == before and soft.is_symlink()


@pytest.mark.parametrize("argv, role", [
    (["evaluate", "--system", "{out}", "--source", "{src}", "--fast", "--json", "{out}"], "--system"),
    (["evaluate", "--system", "{out}", "--source", "{src}", "--fast", "--markdown", "{src}"], "--source"),
    (["report", "{out}", "--html", "{out}"], "evaluation"),
    (["errors", "{out}", "-m", "bleu", "--json", "{out}"], "table"),
    (["meta", "--human", "{src}", "--scores", "{out}", "--csv", "{out}"], "--scores"),
    (["meta", "--human", "{src}", "--scores", "{out}", "--latex", "{src}"], "--human"),
    (["score", "--input", "{out}", "--json", "{out}"], "--input"),
    (["score", "--input", "{out}", "--stream", "--csv", "{out}"], "--input"),
    (["score", "--systems-dir", "{dir}", "--source", "{src}", "--csv", "{dir}/out.txt"], "--systems-dir file"),
    (["transfer", "--rules", "formality", "--direction", "informal->formal", "{src}", "-o", "{src}"], "input"),
    (["train-lm", "--kind", "ngram", "--style", "formal", "--data", "{src}", "--out", "{src}"], "--data"),
])
def test_every_writing_verb_refuses_an_output_that_is_an_input(tmp_path, capsys, argv, role):
    paths = _tiny(tmp_path)
    before = {k: p.read_bytes() for k, p in paths.items()}
    fill = {"out": str(paths["out"]), "src": str(paths["src"]), "dir": str(tmp_path)}
    assert main([a.format(**fill) for a in argv]) == 2
    line = _one_error(capsys)
    assert f"is the same file as the {role} input" in line, line
    assert {k: p.read_bytes() for k, p in paths.items()} == before


def test_reference_with_too_few_lines_is_called_a_reference(tmp_path, capsys):
    """Finding 13: the error called a short reference file "the sources file"."""
    paths = _tiny(tmp_path)
    paths["ref"].write_text("only one line\n")
    assert main(_score(paths)) == 2
    line = _one_error(capsys)
    assert f"{paths['ref']}: this reference file has 1 line, but the sources file {paths['src']} has 3 lines" in line


def test_empty_metric_list_is_named_as_such(tmp_path, capsys):
    """Finding 13: `-m ""` said the metrics need references although references were given."""
    paths = _tiny(tmp_path)
    args = _score(paths)
    args[args.index("bleu")] = ""
    assert main(args) == 2
    line = _one_error(capsys)
    assert "--metrics names no metric" in line and "references" not in line


def test_stream_segment_file_is_never_put_in_place_of_a_pipe(tmp_path, capsys):
    """Finding 1 for `score --stream --segments`: the engine renames its file into place, so a pipe is refused
    (and stays a pipe) and a symbolic link is followed (and stays a link)."""
    table = tmp_path / "t.tsv"
    table.write_text("source\toutput\tref\tsystem\na cat sat\ta cat sits\ta cat is sitting\tA\n"
                     "the dog ran\tthe dog runs\tthe dog is running\tA\n")
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    base = ["score", "--input", str(table), "--stream", "-m", "bleu", "--bootstrap", "0", "-q"]
    assert main([*base, "--segments", str(fifo)]) == 2
    assert "needs a file name" in _one_error(capsys) and stat.S_ISFIFO(os.lstat(fifo).st_mode)
    target, link = tmp_path / "real.jsonl", tmp_path / "link.jsonl"
    link.symlink_to(target)
    assert main([*base, "--segments", str(link)]) == 0
    assert link.is_symlink() and len(target.read_text().splitlines()) == 2 * 2  # bleu/src and bleu/ref
