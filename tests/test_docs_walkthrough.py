"""The documented commands run as written: a scripted walk-through of the README and docs/.

Convention (stated in CONTRIBUTING.md): every ```bash and ```python block of README.md and docs/*.md is run, in
order, one document at a time, in a fresh folder outside the project that holds the bundled example's files
(``styleval data example formality .``, as the documents say) and sees the shared data as
``../shared/data``, as the project root does. A block preceded by ``<!-- walkthrough: skip: REASON -->`` is not
run and must give its reason; a synopsis (options in brackets) is a ```text block. The README's set-up command runs
from the project root and from another folder (its install step is CI's first step, so it is not repeated).
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
        return f"{self.document.relative_to(ROOT)}:{self.line}"


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
    if SHARED.is_dir():
        (tmp_path / "shared").symlink_to(SHARED, target_is_directory=True)
    done = subprocess.run(["styleval", "data", "example", "formality", "."], cwd=folder,
                          env=environment(), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return folder


@pytest.mark.parametrize("document", WORKED, ids=[d.name for d in WORKED])
def test_document_examples_run_as_written(document: Path, workspace: Path) -> None:
    for block in runnable(document):
        if "../shared/data" in block.code and not SHARED.is_dir():
            pytest.skip("the shared data folder is absent")
        done = run_block(block, workspace)
        assert done.returncode == 0, failure(block, done)


def test_readme_examples_run_as_written(workspace: Path) -> None:
    setup, *rest = runnable(ROOT / "README.md")
    assert setup.code.startswith("bash scripts/install.sh && "), "the README's first block is the set-up command"
    for block in rest:
        if "pytest" in block.code:  # the test command itself
            continue
        done = run_block(block, workspace)
        assert done.returncode == 0, failure(block, done)


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
