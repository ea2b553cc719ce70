"""The documented commands run as written: a scripted walk-through of the README and docs/.

Convention (stated in CONTRIBUTING.md): every ```bash and ```python block of README.md and docs/*.md is run, in
order, one document at a time, in a fresh folder outside the project that holds the bundled example's files
(``styleval data example formality .``, as the documents say) and sees the shared data as
``../shared/data``, as the project root does. A block preceded by ``<!-- walkthrough: skip: REASON -->`` is not
run and must give its reason; a synopsis (options in brackets) is a ```text block. The README's set-up command runs
from the project root and from another folder (its install step is CI's first step, so it is not repeated).

Where the shared data is absent (``$STYLEVAL_SHARED_DATA`` or ``../shared/data``, as the datasets' readers look),
a block that reads it (:data:`NEEDS_DATA`) is skipped, and so is a later block that uses a file such a block would
have written (:func:`plan`); the other blocks run, and the test then reports itself skipped, naming each block left
out and why, as every test that needs the shared data does when it is absent.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
VENV_BIN = Path(sys.executable).parent
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```(\w*)\s*$")
SKIP = re.compile(r"^<!--\s*walkthrough:\s*skip:\s*(.*?)\s*-->\s*$")
BLOCK_TIMEOUT_S = 900


@dataclass(frozen=True)
class Block:
    document: Path
    line: int  # 1-based line of the opening fence
    language: str
    code: str
    skip_reason: str | None

    def where(self) -> str:
        shown = self.document.relative_to(ROOT) if self.document.is_relative_to(ROOT) else self.document.name
        return f"{shown}:{self.line}"


def blocks_of(document: Path) -> list[Block]:
    lines = document.read_text(encoding="utf-8").splitlines()
    found: list[Block] = []
    i = 0
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if not opening:
            i += 1
            continue
        end = i + 1
        while end < len(lines) and not lines[end].startswith("```"):
            end += 1
        previous = lines[i - 1] if i > 0 else ""
        skip = SKIP.match(previous)
        if previous.strip().startswith("<!-- walkthrough") and not skip:
            raise AssertionError(f"{document.name}:{i}: malformed walk-through marker {previous!r}")
        found.append(Block(document, i + 1, opening.group(1), "\n".join(lines[i + 1:end]) + "\n",
                           skip.group(1) if skip else None))
        i = end + 1
    return found


def runnable(document: Path) -> list[Block]:
    return [b for b in blocks_of(document) if b.language in ("bash", "python") and b.skip_reason is None]


#: what in a block reads the public datasets: their folder, the variable that moves it, the verb that exports them,
#: the Python modules that load them
NEEDS_DATA = re.compile(r"\.\./shared/data|STYLEVAL_SHARED_DATA|styleval data export|"
                        r"styleval\.(?:meta\.)?datasets|\bload_(?:lai2022|mir2019|sgdd_tst)\b")
#: a file a block names (reads or writes): a word with a data, text or report suffix
FILE_WORD = re.compile(r"(?<![\w/.$-])[\w./-]*\w\.(?:csv|tsv|jsonl|json|txt|html|md|tex|parquet)\b")
#: a folder or file a block writes with an output option
OUTPUT_WORD = re.compile(r"(?:^|\s)(?:-o|--out|--output)\s+(\S+)")


def shared_data() -> Path:
    """Where the documents' commands find the shared data: ``$STYLEVAL_SHARED_DATA``, else ``../shared/data``."""
    env = os.environ.get("STYLEVAL_SHARED_DATA")
    return Path(env) if env else SHARED / "data"


def _products(block: Block) -> set[str]:
    """The files and folders ``block`` names that an output option or a file name points at (as written, without a
    leading ``./``)."""
    words = set(FILE_WORD.findall(block.code)) | set(OUTPUT_WORD.findall(block.code))
    return {w[2:] if w.startswith("./") else w for w in words}


def _names(block: Block, word: str) -> bool:
    """Whether ``block`` names the file or folder ``word`` as a whole (alone or after ``./``)."""
    return re.search(rf"(?:(?<=\./)|(?<![\w/.-])){re.escape(word)}(?![\w/-])", block.code) is not None


def plan(blocks: list[Block], data_present: bool, workspace: Path) -> list[tuple[Block, str | None]]:
    """Each block with None (run it) or the reason it is skipped: with the shared data absent, a block that reads
    it (:data:`NEEDS_DATA`), and a later block naming a file or folder that such a skipped block names and that the
    workspace does not hold yet (the skipped block would have written it). A name is not told apart as read or
    written, so the rule errs towards leaving a block out, never towards running one whose input is missing."""
    if data_present:
        return [(block, None) for block in blocks]
    missing: dict[str, Block] = {}  # what a skipped block would have written -> that block
    out: list[tuple[Block, str | None]] = []
    for block in blocks:
        reason = None
        if NEEDS_DATA.search(block.code):
            reason = f"reads the shared data, absent at {shared_data()}"
        else:
            used = sorted(w for w in missing if _names(block, w))
            if used:
                reason = f"uses {used[0]}, which {missing[used[0]].where()} (skipped) writes from the shared data"
        if reason:
            missing.update({w: block for w in _products(block) if not (workspace / w).exists() and w not in missing})
        out.append((block, reason))
    return out


def run_planned(blocks: list[Block], workspace: Path) -> None:
    """Run the blocks :func:`plan` keeps, in order, asserting each succeeds; then skip the test, naming every block
    left out and why, if any was."""
    left_out = []
    for block, reason in plan(blocks, shared_data().is_dir(), workspace):
        if reason is not None:
            left_out.append(f"{block.where()} {reason}")
            continue
        done = run_block(block, workspace)
        assert done.returncode == 0, failure(block, done)
    if left_out:
        pytest.skip(f"ran the other blocks; left out {len(left_out)}: " + "; ".join(left_out))


def environment() -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{VENV_BIN}{os.pathsep}{env.get('PATH', '')}"
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", PYTHONUNBUFFERED="1")
    env.pop("PYTHONPATH", None)
    return env


def run_block(block: Block, cwd: Path) -> subprocess.CompletedProcess[str]:
    if block.language == "bash":
        command = ["bash", "-euo", "pipefail", "-c", block.code]
    else:
        command = [sys.executable, "-c", block.code]
    return subprocess.run(command, cwd=cwd, env=environment(), capture_output=True, text=True,
                          timeout=BLOCK_TIMEOUT_S)


def failure(block: Block, done: subprocess.CompletedProcess[str]) -> str:
    return (f"{block.where()} ({block.language}) exited {done.returncode}\n--- block ---\n{block.code}"
            f"--- stdout (tail) ---\n{done.stdout[-3000:]}\n--- stderr (tail) ---\n{done.stderr[-3000:]}")


def test_every_block_is_run_or_says_why_not() -> None:
    for document in DOCUMENTS:
        for block in blocks_of(document):
            if block.skip_reason is not None:
                assert len(block.skip_reason) >= 10, f"{block.where()}: say why the block is not run"
            if block.language in ("", "sh", "shell", "console"):
                raise AssertionError(f"{block.where()}: name the block's language (bash, python, or text for a "
                                     "synopsis or a listing)")
            if block.language == "text" and block.code.lstrip().startswith("styleval ") and "[" not in block.code:
                raise AssertionError(f"{block.where()}: a command without options in brackets is an example; "
                                     "make it a bash block so that it is run")


WORKED = [d for d in DOCUMENTS if d.name != "README.md" and runnable(d)]


@pytest.fixture()
def workspace(tmp_path: Path) -> Path:
    """A folder outside the project, prepared as the documents tell a reader to: the bundled example's files, and
    the shared data one level up (where it sits for the project root)."""
    folder = tmp_path / "work"
    folder.mkdir()
    if shared_data().is_dir():
        (tmp_path / "shared").mkdir()
        (tmp_path / "shared" / "data").symlink_to(shared_data().resolve(), target_is_directory=True)
    done = subprocess.run(["styleval", "data", "example", "formality", "."], cwd=folder,
                          env=environment(), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return folder


@pytest.mark.parametrize("document", WORKED, ids=[d.name for d in WORKED])
def test_document_examples_run_as_written(document: Path, workspace: Path) -> None:
    run_planned(runnable(document), workspace)


def test_readme_examples_run_as_written(workspace: Path) -> None:
    setup, *rest = runnable(ROOT / "README.md")
    assert setup.code.startswith("bash scripts/install.sh && "), "the README's first block is the set-up command"
    run_planned([block for block in rest if "pytest" not in block.code], workspace)  # not the test command itself


def test_readme_setup_command_runs_from_the_root_and_from_another_folder(tmp_path: Path) -> None:
    setup = runnable(ROOT / "README.md")[0]
    command = setup.code.strip().split(" && ", 1)[1]  # after the install step, which CI runs first
    assert command.startswith(".venv/bin/styleval ")
    if not (ROOT / ".venv" / "bin" / "styleval").exists():
        pytest.skip("no .venv in the project root (run scripts/install.sh)")
    written = [ROOT / word for word in command.split() if word.endswith((".html", ".json"))]
    existed = {path: path.exists() for path in written}
    try:
        done = subprocess.run(["bash", "-euo", "pipefail", "-c", command], cwd=ROOT, env=environment(),
                              capture_output=True, text=True, timeout=BLOCK_TIMEOUT_S)
        assert done.returncode == 0, done.stderr[-3000:]
        assert all(path.exists() for path in written)
    finally:
        for path, was_there in existed.items():
            if not was_there and path.exists():
                path.unlink()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", command.replace(".venv/bin/", f"{ROOT}/.venv/bin/")],
                          cwd=elsewhere, env=environment(), capture_output=True, text=True, timeout=BLOCK_TIMEOUT_S)
    assert done.returncode == 0, done.stderr[-3000:]
    assert all((elsewhere / path.name).exists() for path in written)


def test_skip_markers_are_parsed(tmp_path: Path) -> None:
    doc = tmp_path / "doc.md"
    doc.write_text("text\n<!-- walkthrough: skip: needs a GPU to finish -->\n```bash\nstyleval x\n```\n"
                   "```bash\nstyleval metrics\n```\n", encoding="utf-8")
    first, second = blocks_of(doc)
    assert first.skip_reason == "needs a GPU to finish" and second.skip_reason is None
    assert [b.code for b in runnable(doc)] == ["styleval metrics\n"]


def test_blocks_that_need_absent_shared_data_are_left_out_with_a_reason(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STYLEVAL_SHARED_DATA", str(tmp_path / "nowhere"))
    assert shared_data() == tmp_path / "nowhere"
    work = tmp_path / "work"
    work.mkdir()
    (work / "outputs.tsv").write_text("id\tsource\toutput\n", encoding="utf-8")
    (work / "systems").mkdir()
    (work / "systems" / "a.txt").write_text("an output\n", encoding="utf-8")
    doc = tmp_path / "doc.md"
    doc.write_text("```bash\nstyleval metrics\n```\n"
                   "```bash\nstyleval data export lai2022 --human h.csv --outputs outputs.tsv\n```\n"
                   "```bash\nstyleval meta --human h.csv --scores lai.scores.json\n```\n"
                   "```bash\nstyleval score --input outputs.tsv --json s.json\n```\n"
                   "```python\nfrom styleval.meta.datasets import load_mir2019\n```\n"
                   "```bash\nP=../shared/data/pt16\nstyleval train-style $P/train.csv -o ./my-reg\n```\n"
                   "```bash\nstyleval score --system systems/a.txt -m style_accuracy:model=./my-reg\n```\n"
                   "```bash\nstyleval score --system systems/a.txt -m style_accuracy:model=./my-reg2\n```\n",
                   encoding="utf-8")
    reasons = [reason for _, reason in plan(runnable(doc), shared_data().is_dir(), work)]
    absent = f"reads the shared data, absent at {tmp_path / 'nowhere'}"
    assert reasons == [None, absent, "uses h.csv, which doc.md:4 (skipped) writes from the shared data",
                       None,  # outputs.tsv was there before the skipped export
                       absent, absent, "uses my-reg, which doc.md:16 (skipped) writes from the shared data", None]
    assert [reason for _, reason in plan(runnable(doc), True, work)] == [None] * 8


def test_the_documents_leave_out_only_what_needs_the_shared_data(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    from styleval.examples import write_files

    monkeypatch.setenv("STYLEVAL_SHARED_DATA", str(tmp_path / "nowhere"))
    write_files("formality", tmp_path)
    left_out = {block.where(): reason for document in DOCUMENTS
                for block, reason in plan(runnable(document), False, tmp_path) if reason}
    # docs/meta-cli.md: the export, then the examples that read its files
    meta = [where for where in left_out if where.startswith("docs/meta-cli.md")]
    assert len(meta) == len(runnable(ROOT / "docs" / "meta-cli.md")) >= 2  # every block of it reads the export
    assert left_out[meta[0]].startswith("reads the shared data") and "uses lai.human.csv" in left_out[meta[1]]
    for where, reason in left_out.items():
        assert reason.startswith(("reads the shared data", "uses ")), where
    # a document whose blocks all use the bundled example loses none
    assert not any(where.startswith("docs/scale.md") for where in left_out)


def test_the_walkthrough_skips_a_document_of_shared_data_when_it_is_absent(tmp_path: Path) -> None:
    env = dict(os.environ, STYLEVAL_SHARED_DATA=str(tmp_path / "nowhere"))
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider",
                           f"{Path(__file__)}::test_document_examples_run_as_written[meta-cli.md]"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    n = len(runnable(ROOT / "docs" / "meta-cli.md"))
    assert "1 skipped" in done.stdout and f"left out {n}: docs/meta-cli.md:" in done.stdout
    assert f"reads the shared data, absent at {tmp_path / 'nowhere'}" in done.stdout
