"""Small example data written for styleval (no corpus text), used by the README's first command and by the
documentation's examples (``styleval data export example DIR`` writes its files into a folder)."""
from __future__ import annotations

import csv
import shutil
from dataclasses import dataclass
from pathlib import Path

from ..errors import UnknownNameError

ROOT = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Example:
    name: str
    systems_dir: Path
    source: Path
    references: tuple[Path, ...]
    direction: str


EXAMPLES = {
    "formality": Example("formality", ROOT / "formality" / "systems", ROOT / "formality" / "source.txt",
                         (ROOT / "formality" / "ref0.txt", ROOT / "formality" / "ref1.txt"), "informal->formal"),
}


def get(name: str) -> Example:
    try:
        return EXAMPLES[name]
    except KeyError:
        raise UnknownNameError("example", name, list(EXAMPLES)) from None


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def write_files(name: str, folder: str | Path) -> list[Path]:
    """Write an example's files into ``folder`` (created if needed) and return their paths, in the names the
    documentation uses:

    - ``source.txt``, ``ref0.txt``, ``ref1.txt`` and ``systems/NAME.txt``: plain text, one sentence a line;
    - ``outputs.tsv``: the same as one table (id, system, direction, source, output, ref0, ref1), ids are line
      numbers from 1;
    - ``styles.tsv``: labelled text to train a style model on (text, label: the sources under the direction's
      source style, the first references under its target style);
    - ``pairs.tsv``: scored pairs to train a content preservation model on (source, output, score): each source
      with its first reference (meaning kept, 1) and with the next sentence's reference (meaning lost, 0). A toy
      set for trying the commands, not for a model to rely on.

    Existing files of the same names are overwritten; nothing else in the folder is touched."""
    example = get(name)
    out = Path(folder)
    (out / "systems").mkdir(parents=True, exist_ok=True)
    written = []
    for path in (example.source, *example.references):
        written.append(Path(shutil.copyfile(path, out / path.name)))
    systems = sorted(example.systems_dir.glob("*.txt"))
    for path in systems:
        written.append(Path(shutil.copyfile(path, out / "systems" / path.name)))

    source = _lines(example.source)
    refs = [_lines(path) for path in example.references]
    table = out / "outputs.tsv"
    with table.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle, delimiter="\t", lineterminator="\n", quoting=csv.QUOTE_MINIMAL)
        writer.writerow(["id", "system", "direction", "source", "output",
                         *(f"ref{k}" for k in range(len(refs)))])
        for path in systems:
            for i, output in enumerate(_lines(path)):
                writer.writerow([i + 1, path.stem, example.direction, source[i], output, *(r[i] for r in refs)])
    written.append(table)

    low, high = example.direction.split("->")
    styles = out / "styles.tsv"
    with styles.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle, delimiter="\t", lineterminator="\n", quoting=csv.QUOTE_MINIMAL)
        writer.writerow(["text", "label"])
        writer.writerows([text, low] for text in source)
        writer.writerows([text, high] for text in refs[0])
    written.append(styles)

    pairs = out / "pairs.tsv"
    with pairs.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle, delimiter="\t", lineterminator="\n", quoting=csv.QUOTE_MINIMAL)
        writer.writerow(["source", "output", "score"])
        for i, text in enumerate(source):
            writer.writerow([text, refs[0][i], 1])
            writer.writerow([text, refs[0][(i + 1) % len(source)], 0])
    written.append(pairs)
    return written
