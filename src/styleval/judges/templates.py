"""Prompt templates: plain-text files with named sections, shipped in ``templates/`` (one per aspect) or given by
path, identified in signatures by the sha256 of their bytes.

Format: comment lines (``#``) before the first section, then sections, each opened by a line holding only its name
in brackets (``[system]``, ``[user]``, ...) and running to the next such line; leading and trailing blank lines of a
section are dropped. Placeholders are Python format fields (``{output}``); a literal brace is doubled (``{{``).

* a judge template (:func:`judge_template`) has ``[user]``, optionally ``[system]`` and ``[scale]`` (``1-5``:
  the ratings are the single digits from the first to the last number); its placeholders are ``source``,
  ``output``, ``source_style`` and ``target_style``;
* a LogProp template (:func:`logprop_template`) has ``[system]``, ``[paraphrase]``, ``[rewrite]`` and ``[repeat]``,
  with placeholders ``source`` and ``target_style``.
"""
from __future__ import annotations

import hashlib
import string
from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError

SHIPPED_DIR = Path(__file__).resolve().parent / "templates"
JUDGE_ASPECTS = ("style", "content", "fluency")
JUDGE_FIELDS = frozenset({"source", "output", "source_style", "target_style"})
LOGPROP_FIELDS = frozenset({"source", "target_style"})
LOGPROP_CONTEXTS = ("paraphrase", "rewrite", "repeat")


@dataclass(frozen=True)
class TemplateFile:
    """A template's sections as read, where it came from and the hash of its bytes."""

    name: str  # "shipped:<stem>" or the path as given
    path: Path
    sections: dict[str, str]
    sha256: str

    @property
    def short_hash(self) -> str:
        return self.sha256[:12]

    def render(self, section: str, values: dict[str, str]) -> str:
        return self.sections[section].format_map(values)


def read_template(spec: str | Path, *, default: str, required: tuple[str, ...], optional: tuple[str, ...],
                  fields: frozenset[str]) -> TemplateFile:
    """Read ``spec`` (a path; empty: the shipped ``templates/<default>.txt``) and check its sections and fields."""
    text_spec = str(spec).strip()
    if text_spec:
        path = Path(text_spec).expanduser()
        name = text_spec
    else:
        path, name = SHIPPED_DIR / f"{default}.txt", f"shipped:{default}"
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read the prompt template: {exc.strerror or exc}", path) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"the prompt template is not UTF-8 (byte {exc.start})", path) from None
    sections, lines_of = _sections(text, path, set(required) | set(optional))
    missing = [s for s in required if s not in sections]
    if missing:
        raise InputError(f"the prompt template has no [{missing[0]}] section (it needs "
                         f"{', '.join(f'[{s}]' for s in required)})", path)
    for section, body in sections.items():
        if section == "scale":
            continue
        for offset, line in enumerate(body.splitlines(), start=1):
            for field in _fields(line, path, lines_of[section] + offset):
                if field not in fields:
                    raise InputError(f"unknown placeholder {{{field}}} in [{section}]; known: "
                                     f"{', '.join('{' + f + '}' for f in sorted(fields))}", path,
                                     lines_of[section] + offset)
        _fields(body, path, lines_of[section])  # the section as a whole (a brace may span lines)
    return TemplateFile(name=name, path=path, sections=sections, sha256=hashlib.sha256(data).hexdigest())


def _sections(text: str, path: Path, allowed: set[str]) -> tuple[dict[str, str], dict[str, int]]:
    sections: dict[str, list[str]] = {}
    first_line: dict[str, int] = {}
    current: str | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if stripped.startswith("[") and stripped.endswith("]") and " " not in stripped:
            current = stripped[1:-1].lower()
            if current not in allowed:
                raise InputError(f"unknown section [{current}]; this template takes "
                                 f"{', '.join(f'[{s}]' for s in sorted(allowed))}", path, number)
            if current in sections:
                raise InputError(f"section [{current}] appears twice", path, number)
            sections[current] = []
            first_line[current] = number
        elif current is None:
            if stripped and not stripped.startswith("#"):
                raise InputError("text before the first section (start with a section such as [user]; comments "
                                 "start with #)", path, number)
        else:
            sections[current].append(line)
    bodies: dict[str, str] = {}
    for k, lines in sections.items():
        body = "\n".join(lines)
        if not body.strip():
            raise InputError(f"section [{k}] is empty", path, first_line[k])
        leading = len(body) - len(body.lstrip("\n"))
        bodies[k] = body.strip("\n")
        first_line[k] += leading  # so that line k of the body is first_line + k
    return bodies, first_line


def _fields(body: str, path: Path, line: int) -> list[str]:
    try:
        return [f for _, f, _, _ in string.Formatter().parse(body) if f is not None]
    except ValueError as exc:
        raise InputError(f"bad placeholder ({exc}); write a literal brace as {{{{ or }}}}", path, line) from None


@dataclass(frozen=True)
class JudgeTemplate:
    """A judge prompt: system and user messages and the rating scale."""

    file: TemplateFile
    scale: tuple[int, ...]

    def messages(self, values: dict[str, str]) -> list[dict[str, str]]:
        out = []
        if "system" in self.file.sections:
            out.append({"role": "system", "content": self.file.render("system", values)})
        out.append({"role": "user", "content": self.file.render("user", values)})
        return out


def judge_template(aspect: str, spec: str | Path = "") -> JudgeTemplate:
    """The shipped template of ``aspect`` (``spec`` empty) or the file ``spec``."""
    if aspect not in JUDGE_ASPECTS:
        raise InputError(f"judge aspect must be one of {', '.join(JUDGE_ASPECTS)}, not {aspect!r}")
    file = read_template(spec, default=aspect, required=("user",), optional=("system", "scale"),
                         fields=JUDGE_FIELDS)
    return JudgeTemplate(file=file, scale=_scale(file))


def _scale(file: TemplateFile) -> tuple[int, ...]:
    text = file.sections.get("scale", "1-5").strip()
    lo, sep, hi = text.partition("-")
    try:
        first, last = int(lo), int(hi)
    except ValueError:
        first = last = -1
    if not sep or not (0 <= first < last <= 9):
        raise InputError(f"[scale] must be two single digits such as 1-5, not {text!r}", file.path)
    return tuple(range(first, last + 1))


@dataclass(frozen=True)
class LogPropTemplate:
    """LogProp's system prompt and its three user contexts."""

    file: TemplateFile

    def messages(self, context: str, values: dict[str, str]) -> list[dict[str, str]]:
        return [{"role": "system", "content": self.file.render("system", values)},
                {"role": "user", "content": self.file.render(context, values)}]


def logprop_template(spec: str | Path = "") -> LogPropTemplate:
    """The shipped LogProp template (``spec`` empty) or the file ``spec``."""
    return LogPropTemplate(read_template(spec, default="logprop", required=("system", *LOGPROP_CONTEXTS),
                                         optional=(), fields=LOGPROP_FIELDS))
