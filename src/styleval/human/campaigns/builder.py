"""From records of several systems to the items and ordered per-annotator assignments of one campaign."""
from __future__ import annotations

import random
import re
import unicodedata
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any, Sequence

from styleval.errors import InputError
from styleval.records import Record

from ..protocols import Protocol, get_protocol
from .degrade import scramble


@dataclass(frozen=True)
class CampaignLimits:
    """Bounds on what one campaign may ask for, the same for the CLI, the admin page, SQLite and PostgreSQL."""

    name_chars: int = 200
    annotators: int = 1000
    per_annotator_qc: int = 100  # controls, repeats, degraded and training items, each
    assignments: int = 2_000_000  # all annotators' items together


LIMITS = CampaignLimits()

_NUMBER = re.compile(r"\s*[+-]?\s*[0-9]+\s*")
_CONTROL_NAMES = {0x09: "tab", 0x0A: "line feed", 0x0D: "carriage return", 0x1B: "escape", 0x00: "null"}


def check_printable(what: str, name: str) -> None:
    """Raise :class:`InputError` when ``name`` holds a control or line-separator character (they would break the
    annotator<TAB>link files and print raw escape sequences on terminals), naming the character."""
    for position, ch in enumerate(name, start=1):
        if unicodedata.category(ch) in ("Cc", "Zl", "Zp"):
            label = _CONTROL_NAMES.get(ord(ch), "") or unicodedata.name(ch, "") or "control character"
            raise InputError(f"the {what} {name!r} contains U+{ord(ch):04X} ({label.lower()}) at character "
                             f"{position}; names must be printable text")


@dataclass
class CampaignSpec:
    """What to build. ``annotators`` is a count (names ``annotator-01``...) or a list of names.

    Per annotator: ``controls`` control items with known answers, ``repeats`` items shown twice, ``degraded``
    items whose output was damaged (paired with the annotator's own original), ``training`` training items shown
    first with feedback (default 3 when the protocol has training, else 0).
    """

    name: str
    protocol: str
    annotators: int | Sequence[str] = 3
    per_item: int = 1
    controls: int = 2
    repeats: int = 2
    degraded: int = 6
    training: int | None = None
    seed: int = 12345
    mask_words: Sequence[str] | None = None
    max_segments: int | None = None

    def annotator_names(self) -> list[str]:
        if isinstance(self.annotators, int):
            if not 1 <= self.annotators <= LIMITS.annotators:
                raise InputError(f"a campaign needs 1 to {LIMITS.annotators} annotators (got {self.annotators})")
            return [f"annotator-{i:02d}" for i in range(1, self.annotators + 1)]
        names = [str(n).strip() for n in self.annotators]
        if len(names) == 1 and _NUMBER.fullmatch(names[0]):
            raise InputError(f"annotators: {names[0]!r} is neither a count from 1 to {LIMITS.annotators} nor a list "
                             "of names; give a number like 3 or names like alice,bob")
        if not names or any(not n for n in names) or len(set(names)) != len(names):
            raise InputError("annotator names must be non-empty and distinct")
        for n in names:
            check_printable("annotator name", n)
        if len(names) > LIMITS.annotators:
            raise InputError(f"a campaign needs 1 to {LIMITS.annotators} annotators (got {len(names)})")
        return names

    def validate(self) -> None:
        """Raise :class:`InputError` for a name or count outside :data:`LIMITS` (before anything is built)."""
        name = self.name.strip() if isinstance(self.name, str) else ""
        if not name:
            raise InputError("give the campaign a name")
        if len(name) > LIMITS.name_chars:
            raise InputError(f"the campaign name has {len(name)} characters; at most {LIMITS.name_chars}")
        check_printable("campaign name", self.name)
        for field_name in ("controls", "repeats", "degraded", "training"):
            value = getattr(self, field_name)
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= LIMITS.per_annotator_qc:
                raise InputError(f"{field_name} must be a whole number from 0 to {LIMITS.per_annotator_qc} "
                                 f"(got {value!r})")
        if isinstance(self.per_item, bool) or not isinstance(self.per_item, int) or self.per_item < 1:
            raise InputError(f"per_item must be a whole number of at least 1 (got {self.per_item!r})")
        if self.max_segments is not None and (not isinstance(self.max_segments, int) or self.max_segments < 1):
            raise InputError(f"max_segments must be at least 1 (got {self.max_segments!r})")


@dataclass
class ItemSpec:
    """One screen: a source and candidates (system, text), in display order. ``truth`` is never shown."""

    key: str
    kind: str  # normal | control | repeat | degraded | training
    segment: str
    direction: str | None
    source: str
    candidates: list[dict[str, str]]
    truth: dict[str, Any] = field(default_factory=dict)


@dataclass
class BuiltCampaign:
    spec: CampaignSpec
    protocol: Protocol
    items: list[ItemSpec]
    assignments: dict[str, list[str]]  # annotator -> item keys in display order

    @property
    def systems(self) -> list[str]:
        return sorted({c["system"] for it in self.items if it.kind == "normal" for c in it.candidates})


def _segments(records: Sequence[Record]) -> list[tuple[str, dict[str, Record]]]:
    by_segment: dict[str, dict[str, Record]] = {}
    for rec in records:
        systems = by_segment.setdefault(rec.id, {})
        if rec.system in systems:
            raise InputError(f"system {rec.system!r} has two records for segment {rec.id!r}")
        systems[rec.system] = rec
    return list(by_segment.items())


def _normal_items(protocol: Protocol, segments: list[tuple[str, dict[str, Record]]],
                  rng: random.Random) -> list[ItemSpec]:
    items: list[ItemSpec] = []
    for seg, systems in segments:
        first = next(iter(systems.values()))
        direction = None if first.direction is None else str(first.direction)
        names = sorted(systems)
        if protocol.layout == "single":
            groups = [[s] for s in names]
        elif protocol.layout == "pair":
            groups = [list(p) for p in combinations(names, 2)]
        else:
            groups = [names]
        for group in groups:
            group = list(group)
            rng.shuffle(group)
            cands = [{"system": s, "text": systems[s].output} for s in group]
            key = f"{seg}|{'+'.join(sorted(group))}"
            items.append(ItemSpec(key, "normal", seg, direction, first.source, cands))
    return items


def _qc_item(kind: str, key: str, base: ItemSpec, slot: int, text: str, truth: dict[str, Any]) -> ItemSpec:
    cands = [dict(c) for c in base.candidates]
    cands[slot] = {"system": f"_{kind}", "text": text}
    return ItemSpec(key, kind, base.segment, base.direction, base.source, cands, {"slot": slot, **truth})


def _control(protocol: Protocol, kind: str, key: str, base: ItemSpec, other: ItemSpec, rng: random.Random,
             item_kind: str = "control") -> ItemSpec:
    slot = rng.randrange(len(base.candidates))
    text = base.source if kind == "copy" else other.source
    return _qc_item(item_kind, key, base, slot, text, {"control": kind, "expect": protocol.controls[kind]})


def _spread(order: list[str], pairs: dict[str, str], rng: random.Random) -> None:
    """Move a repeated/degraded item that directly follows its original somewhere else (best effort)."""
    for _ in range(3):
        moved = False
        for i in range(1, len(order)):
            if pairs.get(order[i]) == order[i - 1] and len(order) > 3:
                j = rng.randrange(len(order))
                if abs(j - i) > 1 and pairs.get(order[j]) is None:
                    order[i], order[j] = order[j], order[i]
                    moved = True
        if not moved:
            return


def build_campaign(spec: CampaignSpec, records: Sequence[Record]) -> BuiltCampaign:
    """Items, quality-control items and per-annotator orders, reproducible from ``spec.seed``.

    Every normal item goes to ``per_item`` distinct annotators, balancing load; each annotator's quality-control
    items are built from items they also see (repeats, degraded) or from any segment (controls, training).
    """
    spec.validate()
    protocol = get_protocol(spec.protocol)
    rng = random.Random(spec.seed)
    names = spec.annotator_names()
    if not records:
        raise InputError("no system outputs to evaluate")
    if not 1 <= spec.per_item <= len(names):
        raise InputError(f"per_item={spec.per_item} needs 1..{len(names)} (the number of annotators)")
    segments = _segments(records)
    if spec.max_segments is not None:
        segments = segments[:spec.max_segments]
    n_systems = len({r.system for r in records})
    if protocol.layout == "pair" and n_systems < 2:
        raise InputError(f"protocol {protocol.name!r} compares pairs of systems; give at least two systems")
    items = _normal_items(protocol, segments, rng)
    if not items:
        raise InputError("no items could be built from the records")
    n_training = spec.training if spec.training is not None else (3 if protocol.training else 0)
    planned = len(items) * spec.per_item + len(names) * (spec.controls + spec.repeats + spec.degraded + n_training)
    if planned > LIMITS.assignments:
        raise InputError(f"the campaign would hold {planned:,} assignments; at most {LIMITS.assignments:,} "
                         "(use fewer segments, annotators per item or quality-control items)")
    normal = list(items)
    load = {n: 0 for n in names}
    assignments: dict[str, list[str]] = {n: [] for n in names}
    shuffled = normal[:]
    rng.shuffle(shuffled)
    for item in shuffled:
        chosen = sorted(names, key=lambda n: (load[n], rng.random()))[:spec.per_item]
        for n in chosen:
            load[n] += 1
            assignments[n].append(item.key)
    by_key = {it.key: it for it in normal}
    orders: dict[str, list[str]] = {}
    for ai, name in enumerate(names):
        own = [by_key[k] for k in assignments[name]]
        extra: list[ItemSpec] = []
        pairs: dict[str, str] = {}

        def others(base: ItemSpec) -> ItemSpec:
            pool = [it for it in normal if it.segment != base.segment] or normal
            return rng.choice(pool)

        control_kinds = sorted(protocol.controls)
        for i in range(spec.controls if control_kinds else 0):
            base = rng.choice(normal)
            extra.append(_control(protocol, control_kinds[i % len(control_kinds)], f"control|{ai}|{i}", base,
                                  others(base), rng))
        for i, base in enumerate(rng.sample(own, min(spec.repeats, len(own)))):
            extra.append(ItemSpec(f"repeat|{ai}|{i}", "repeat", base.segment, base.direction, base.source,
                                  [dict(c) for c in base.candidates], {"of": base.key}))
            pairs[extra[-1].key] = base.key
        for i, base in enumerate(rng.sample(own, min(spec.degraded, len(own)))):
            slot = rng.randrange(len(base.candidates))
            original = base.candidates[slot]
            text = base.source if protocol.degrade == "copy_source" else scramble(original["text"], rng)
            extra.append(_qc_item("degraded", f"degraded|{ai}|{i}", base, slot, text,
                                  {"of": base.key, "system": original["system"]}))
            pairs[extra[-1].key] = base.key
        training: list[ItemSpec] = []
        for i in range(n_training if control_kinds else 0):
            base = normal[(ai + i) % len(normal)]
            training.append(_control(protocol, control_kinds[i % len(control_kinds)], f"training|{ai}|{i}", base,
                                     others(base), rng, item_kind="training"))
        items.extend(extra + training)
        body = [it.key for it in own + extra]
        rng.shuffle(body)
        _spread(body, pairs, rng)
        orders[name] = [it.key for it in training] + body
    return BuiltCampaign(spec, protocol, items, orders)
