"""The one input shape: a record per segment."""
from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field
from typing import Any, Iterable

from .errors import InputError


@dataclass(frozen=True)
class Direction:
    """A transfer direction, source style -> target style.

    Written ``informal:formal`` (safe in a shell, unquoted), ``informal->formal`` (quote it in a shell: ``>`` is a
    redirect), ``informal→formal`` or ``informal2formal``; every form parses to the same direction, and its text
    (``str``) is always the arrow form.
    """

    #: accepted separators, tried in this order ("2" last: it can be part of a style name)
    SEPARATORS = ("->", "→", ":", "2")

    source_style: str
    target_style: str

    @classmethod
    def parse(cls, text: str | "Direction" | None) -> "Direction | None":
        if text is None or isinstance(text, Direction):
            return text
        text = text.strip()
        if not text:
            return None
        for sep in cls.SEPARATORS:
            if sep in text:
                src, tgt = (part.strip() for part in text.split(sep, 1))
                if src and tgt:
                    return cls(src, tgt)
        raise InputError(f"direction {text!r} is not of the form source_style:target_style (e.g. informal:formal; "
                         "'informal->formal' works too)")

    def __str__(self) -> str:
        return f"{self.source_style}->{self.target_style}"


@dataclass
class Record:
    """One segment: a source, one system's output, zero or more references."""

    id: str
    source: str
    output: str
    references: list[str] = field(default_factory=list)
    system: str = "system"
    direction: Direction | None = None
    meta: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.direction = Direction.parse(self.direction)  # type: ignore[arg-type]
        if isinstance(self.system, str):
            self.system = canonical_name(self.system)
        if isinstance(self.id, str):
            self.id = canonical_name(self.id)
        for name in ("source", "output"):
            if not isinstance(getattr(self, name), str):
                got = type(getattr(self, name)).__name__
                raise InputError(f"record {self.id!r}: {name} must be a string, got {got}")
        if isinstance(self.references, str):
            self.references = [self.references]
        else:
            self.references = list(self.references)

    @property
    def is_empty_output(self) -> bool:
        return not self.output.strip()


#: what readers strip from the ends of a name cell: ASCII white space only (a no-break space stays, and is refused)
NAME_EDGE = " \t\r\n\f\v"


def canonical_name(name: str) -> str:
    """A system name or segment id in Unicode NFC, the one form names are compared in (``é`` typed as one character or
    as ``e`` plus a combining accent is the same name)."""
    return unicodedata.normalize("NFC", name)


def name_problem(name: object, what: str = "system name") -> str | None:
    """What is wrong with a system name or segment id as a table cell and a column label, or None: it must be a
    non-blank string without a tab, a line break or any other control character (they would break every table
    printed or written), without a format character (U+200B zero width space, U+202E right-to-left override,
    U+00AD soft hyphen ...: invisible, so two names would print alike) and without a space other than the plain one
    (U+00A0 no-break space ...) or space at either end."""
    if not isinstance(name, str):
        return f"{what} must be a string, got {type(name).__name__}"
    if not name.strip():
        return f"{what} is empty" if not name else f"{what} {name!r} is blank"
    for char in name:
        code = ord(char)
        if code < 0x20 or 0x7F <= code <= 0x9F or char in "\u2028\u2029\ufeff":
            return f"{what} {name!r} holds a control character (U+{code:04X}); use letters, digits and punctuation"
        if unicodedata.category(char) == "Cf":
            return (f"{what} {name!r} holds an invisible format character (U+{code:04X} "
                    f"{unicodedata.name(char, 'format character')}); names that print alike must be equal: remove it")
        if char.isspace() and char != " ":
            return (f"{what} {name!r} holds a space other than the plain one (U+{code:04X} "
                    f"{unicodedata.name(char, 'space')}); write a plain space or none")
    if name != name.strip():
        return f"{what} {name!r} starts or ends with a space; remove it"
    return None


def group_by_system(records: Iterable[Record]) -> dict[str, list[Record]]:
    """Records of each system, in first-seen order of systems and input order within a system."""
    groups: dict[str, list[Record]] = {}
    for rec in records:
        groups.setdefault(rec.system, []).append(rec)
    return groups

