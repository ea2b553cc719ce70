"""Small example data written for styleval (no corpus text), used by the README's first command."""
from __future__ import annotations

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
