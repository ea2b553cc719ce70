"""Progress on a terminal, silence elsewhere: the real CLI under a pseudo-terminal shows its stages with counts and
no third-party bars or warnings; --quiet prints nothing but results; a non-terminal stderr gets no progress unless
--progress asks; --verbose lets the libraries speak."""
from __future__ import annotations

import fcntl
import logging
import os
import pty
import select
import struct
import subprocess
import sys
import termios
import time
import warnings
from pathlib import Path

import pytest

import styleval
from styleval.cli import quiet
from styleval.examples import get
from styleval.readers import read_system_dir
from styleval.scoring import score

pytest.importorskip("sentence_transformers")

NEURAL = ["score", "--example", "formality", "-m", "bleu,style_accuracy", "--bootstrap", "100"]
OWN_FILE = str(Path(styleval.__file__).parent / "metrics" / "content" / "bertscore.py")
THIRD_PARTY = ("Loading weights", "FutureWarning", "UserWarning", "DeprecationWarning", "it/s]", "huggingface",
               "TOKENIZERS_PARALLELISM")


def run_on_pty(args: list[str], size: tuple[int, int] | None = (24, 100), timeout: float = 300) -> tuple[int, str]:
    """The CLI with stdout and stderr on a fresh pseudo-terminal of ``size`` (rows, columns; None leaves it
    unsized, 0 x 0, where tqdm draws nothing unless told a size); its exit status and everything it wrote."""
    master, slave = pty.openpty()
    if size is not None:
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", size[0], size[1], 0, 0))
    proc = subprocess.Popen([sys.executable, "-m", "styleval.cli.main", *args], stdin=subprocess.DEVNULL,
                            stdout=slave, stderr=slave, close_fds=True)
    os.close(slave)
    chunks, end = [], time.monotonic() + timeout
    try:
        while time.monotonic() < end:
            ready, _, _ = select.select([master], [], [], 0.5)
            if ready:
                try:
                    chunk = os.read(master, 65536)
                except OSError:  # the child closed the terminal
                    break
                if not chunk:
                    break
                chunks.append(chunk)
            elif proc.poll() is not None:
                break
        else:
            proc.kill()
    finally:
        os.close(master)
    return proc.wait(timeout=30), b"".join(chunks).decode("utf-8", "replace").replace("\r\n", "\n")


@pytest.fixture(scope="module")
def terminal_run() -> tuple[int, str]:
    return run_on_pty(NEURAL)


def test_terminal_shows_stages_with_counts(terminal_run) -> None:
    status, out = terminal_run
    assert status == 0, out
    for stage in ("scoring 1/3 bleu/src · copy", "scoring 3/3 style_accuracy · rewrite", "/30 segments",
                  "loading sentence encoder minilm", "encoding texts", "/30 texts", "intervals and tests",
                  "/3 metrics"):
        assert stage in out, stage
    assert "\r" in out  # redrawn in place ...
    results = out[out.index("metric "):]
    assert "\r" not in results.split("signatures:")[0]  # ... and erased before the results print
    assert "style_accuracy ↑" in results and "bleu/ref ↑" in results
    for text in THIRD_PARTY:
        assert text not in out, text


def test_unsized_terminal_shows_progress_too() -> None:
    status, out = run_on_pty(["score", "--example", "formality", "-m", "bleu"], size=None)
    assert status == 0 and "scoring 1/2 bleu/src · copy" in out and "/30 segments" in out


def test_quiet_prints_only_results(tmp_path) -> None:
    out_json = tmp_path / "scores.json"
    status, out = run_on_pty([*NEURAL, "--quiet", "--json", str(out_json)])
    assert status == 0, out
    assert out == ""  # score --quiet: the results go to the files asked for, nothing else is printed
    assert '"style_accuracy"' in out_json.read_text(encoding="utf-8")


def test_verbose_lets_libraries_print() -> None:
    """The bars the default run hides are really there: --verbose shows them."""
    status, out = run_on_pty(["score", "--example", "formality", "-m", "style_accuracy", "--bootstrap", "0",
                              "--no-progress", "--verbose"])
    assert status == 0, out
    assert "Loading weights" in out and "scoring" not in out


def test_no_progress_where_stderr_is_not_a_terminal() -> None:
    args = [sys.executable, "-m", "styleval.cli.main", "score", "--example", "formality", "-m", "bleu"]
    plain = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert plain.returncode == 0 and plain.stderr == "" and "bleu/src ↑" in plain.stdout
    asked = subprocess.run([*args, "--progress"], capture_output=True, text=True, timeout=120)
    assert asked.returncode == 0 and asked.stdout == plain.stdout
    lines = asked.stderr.splitlines()
    assert lines and all(line.startswith("styleval: [") for line in lines)
    assert any(line.endswith("scoring 1/2 bleu/src · copy (30 segments)") for line in lines)
    assert "\r" not in asked.stderr and "%|" not in asked.stderr  # plain lines, no bar


def test_score_reports_stages_to_a_callback() -> None:
    ex = get("formality")
    records = read_system_dir(str(ex.systems_dir), str(ex.source), [str(r) for r in ex.references],
                              direction=ex.direction)
    heard: list[tuple[str, int, int]] = []
    score(records, ["bleu", "chrf"], against=["references"], bootstrap=10,
          progress=lambda *call: heard.append(call))
    # each system's stage counts that system's 30 segments (not the corpus's 90)
    assert heard[:3] == [("scoring 1/2 bleu/ref · copy [segments]", 0, 30),
                         ("scoring 1/2 bleu/ref · rewrite [segments]", 0, 30),
                         ("scoring 1/2 bleu/ref · tidy [segments]", 0, 30)]
    assert heard[-1] == ("intervals and tests [metrics]", 2, 2)


def test_silenced_filters_third_party_warnings_and_logs(caplog) -> None:
    before = os.environ.get("TOKENIZERS_PARALLELISM")
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        with quiet.silenced():
            assert os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] == "1"
            warnings.warn_explicit("old API", FutureWarning, "torch/nn.py", 1, module="torch.nn")
            warnings.warn_explicit("deprecated", UserWarning, "sklearn/base.py", 1, module="sklearn.base")
            warnings.warn_explicit("3 texts truncated", UserWarning, OWN_FILE, 1, module="styleval.metrics.bertscore")
            warnings.filterwarnings("default", category=DeprecationWarning)  # as Ray does when imported
            warnings.warn_explicit("deprecated argument", DeprecationWarning, OWN_FILE, 3, module="styleval.engine")
            logging.getLogger("sentence_transformers.util").warning("a library log line")
            logging.getLogger("styleval.human.web").warning("a styleval log line")
        with quiet.silenced(quiet=True):
            warnings.warn_explicit("3 texts truncated", UserWarning, OWN_FILE, 2, module="styleval.metrics.bertscore")
        with quiet.silenced(verbose=True):
            warnings.warn_explicit("old API", FutureWarning, "torch/nn.py", 2, module="torch.nn")
    assert [str(w.message) for w in seen] == ["3 texts truncated", "old API"]
    logged = [r.getMessage() for r in caplog.records]
    assert "a library log line" not in logged and "a styleval log line" in logged
    assert os.environ.get("TOKENIZERS_PARALLELISM") == before  # put back


def test_every_verb_takes_quiet_and_verbose() -> None:
    from styleval.cli.main import PROGRESS_VERBS, build_parser

    verbs = next(a for a in build_parser()._actions if a.dest == "verb").choices
    for name, parser in verbs.items():
        flags = set(parser._option_string_actions)
        assert {"--quiet", "--verbose"} <= flags, name
        assert ({"--progress", "--no-progress"} <= flags) == (name in PROGRESS_VERBS), name


def test_meta_reports_tasks_and_metrics(tmp_path, capsys) -> None:
    from styleval.cli.main import main

    human, scores = tmp_path / "human.csv", tmp_path / "scores.csv"
    rows = [(system, i, 0.1 * i + (system == "B")) for system in "ABC" for i in range(8)]
    human.write_text("system,segment,annotator,aspect,score\n" + "".join(
        f"{s},{i},{a},content,{h + 0.01 * k}\n" for s, i, h in rows for k, a in enumerate("xy")), encoding="utf-8")
    scores.write_text("system,segment,metric,score\n" + "".join(
        f"{s},{i},{m},{h * w}\n" for s, i, h in rows for m, w in (("m1", 1), ("m2", -1))), encoding="utf-8")
    assert main(["meta", "--human", str(human), "--scores", str(scores), "--ci", "50", "--progress"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert any(line.endswith("task 1/2 (content, segment kendall_tau_like): correlating · m1 (2 metrics)")
               for line in err), err
    assert any("bootstrap intervals · m2" in line for line in err)
    assert main(["meta", "--human", str(human), "--scores", str(scores), "--ci", "50"]) == 0
    assert capsys.readouterr().err == ""  # not a terminal, not asked: no progress


def test_plain_lines_show_counts_share_and_time_left_in_long_stages(monkeypatch) -> None:
    """--progress where stderr is not a terminal: a stage prints once when it starts and then, while it runs, a
    line with its counts, share and time left every ``interval`` seconds (here a fake clock, 20 s a call)."""
    import io

    from styleval.cli import progress as display

    clock = iter(range(0, 10_000, 20))
    monkeypatch.setattr(display.time, "monotonic", lambda: float(next(clock)))
    stream = io.StringIO()
    bar = display.ProgressDisplay(stream=stream, force=True, interval=15)
    bar("scoring 3/9 perplexity · A: language model log-probs [texts]", 0, 2000)
    bar("scoring 3/9 perplexity · A: language model log-probs [texts]", 500, 2000)
    bar("scoring 3/9 perplexity · A: language model log-probs [texts]", 1000, 2000)
    bar("scoring 4/9 acceptability · A: language model log-probs [texts]", 100, 2000)  # the count restarts ...
    bar("scoring 4/9 acceptability · A: language model log-probs [texts]", 900, 2000)  # ... and so does its rate
    bar("scoring, 24,000 records so far [bytes]", 15_830_623, 41_200_000)
    bar("scoring, 48,000 records so far [bytes]", 31_661_246, 41_200_000)
    lines = [line.split("] ", 1)[1] for line in stream.getvalue().splitlines()]
    assert lines == ["scoring 3/9 perplexity · A: language model log-probs (2,000 texts)",
                     "scoring 3/9 perplexity · A: language model log-probs: 500/2,000 texts "
                     "(25%, about 1 min 0 s left)",
                     "scoring 3/9 perplexity · A: language model log-probs: 1,000/2,000 texts (50%, about 40 s left)",
                     "scoring 4/9 acceptability · A: language model log-probs: 100/2,000 texts (5%)",
                     "scoring 4/9 acceptability · A: language model log-probs: 900/2,000 texts "
                     "(45%, about 28 s left)",
                     "scoring, 24,000 records so far: 15.8 MB of 41.2 MB read (38%)",
                     "scoring, 48,000 records so far: 31.7 MB of 41.2 MB read (77%, about 12 s left)"]


def test_python_api_shows_progress_and_no_library_bars() -> None:
    """styleval.score from Python: terminal_progress() shows the stages (plain lines: stderr is a pipe here), and
    the encoders' transformers "Loading weights" bars, which leaked before, do not print."""
    code = ("import styleval\n"
            "from styleval.examples import get\n"
            "from styleval.readers import read_system_dir\n"
            "ex = get('formality')\n"
            "records = read_system_dir(str(ex.systems_dir), str(ex.source), direction=ex.direction)\n"
            "with styleval.terminal_progress() as bar:\n"
            "    r = styleval.score(records, ['bertscore', 'sentence_cosine'], against=['source'], bootstrap=0,\n"
            "                       progress=bar)\n"
            "print(round(r.get('bertscore/src', 'copy').corpus_score, 6))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "1.0"  # copy against its own source
    lines = proc.stderr.splitlines()
    assert "Loading weights" not in proc.stderr and "it/s]" not in proc.stderr, proc.stderr
    assert lines and all(line.startswith("styleval: [") for line in lines), lines
    assert any(line.endswith("scoring 1/2 bertscore/src · copy (30 segments)") for line in lines)
    assert any("loading encoder minilm" in line for line in lines)


def test_a_library_s_bare_tqdm_bar_is_silenced_unless_verbose():
    """transformers' GGUF reader (the first conversion of SmolLM2) calls tqdm itself, past transformers' own switch:
    its bar is swapped for a disabled one while the conversion runs, and shows again with --verbose."""
    import io
    import types

    from tqdm.auto import tqdm
    from transformers import modeling_gguf_pytorch_utils

    from styleval.models.encoder import plain_tqdm_silenced
    from styleval.progress import library_output

    assert modeling_gguf_pytorch_utils.tqdm is not None  # the name the conversion swaps still exists
    reader = types.SimpleNamespace(tqdm=tqdm)

    def drawn() -> str:
        out = io.StringIO()
        for _ in reader.tqdm(range(3), desc="Converting", file=out):
            pass
        return out.getvalue()

    with plain_tqdm_silenced(reader):
        assert drawn() == ""
    assert reader.tqdm is tqdm and "Converting" in drawn()
    with library_output(True), plain_tqdm_silenced(reader):
        assert "Converting" in drawn()


def test_a_silent_stage_such_as_loading_a_model_still_shows_its_time() -> None:
    """--progress where stderr is not a terminal: a stage that reports nothing for ``interval`` seconds (loading a
    model: 0 of 1 at its start, 1 of 1 at its end) gets a "still running" line with its time, and none once done."""
    import io

    from styleval.cli import progress as display

    stream = io.StringIO()
    bar = display.ProgressDisplay(stream=stream, force=True, interval=0.2)
    try:
        bar("loading language model smollm2-135m", 0, 1)
        time.sleep(0.9)
        bar("loading language model smollm2-135m", 1, 1)
        done_at = len(stream.getvalue().splitlines())
        time.sleep(0.6)
    finally:
        bar.close()
    lines = [line.split("] ", 1)[1] for line in stream.getvalue().splitlines()]
    assert lines[0] == "loading language model smollm2-135m"
    still = [line for line in lines[1:] if line.startswith("loading language model smollm2-135m: still running (")]
    assert len(still) >= 2 and len(still) == len(lines) - 1
    assert len(lines) == done_at  # nothing more once the stage is done
