"""The protocol data types."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

AspectKind = Literal["scale", "choice", "rank"]
Layout = Literal["single", "pair", "multi"]


@dataclass(frozen=True)
class Question:
    """One question.

    ``scale``: a number in ``[low, high]`` per candidate (``widget`` slider or radio, ``labels`` name points);
    ``rank``: a rank 1..k per candidate (1 = best, ties allowed); ``choice``: one candidate (or a tie) per item.
    ``masked``: the candidates and source are shown with style words masked (content judged apart from style).
    ``anchors``: what the lowest and the highest value mean (shown next to the widget on every item page).
    """

    name: str
    kind: AspectKind
    question: str
    low: float = 0
    high: float = 100
    step: float = 1
    widget: Literal["slider", "radio", "select"] = "radio"
    labels: tuple[tuple[int, str], ...] = ()
    masked: bool = False
    allow_tie: bool = True
    anchors: tuple[str, ...] = ()  # (meaning of low, meaning of high)

    @property
    def per_candidate(self) -> bool:
        return self.kind != "choice"

    def points(self) -> list[int]:
        """The integer points of a radio scale, low to high."""
        return list(range(int(self.low), int(self.high) + 1))

    def label(self, value: int) -> str:
        return dict(self.labels).get(value, "")

    @property
    def start(self) -> int:
        """Where a slider starts (the middle); a value left there unmoved is refused."""
        return int((self.low + self.high) / 2)

    def ends(self) -> list[tuple[str, str]]:
        """``[(value, meaning)]`` for the two ends of the scale (empty when nothing says what they mean)."""
        if self.kind == "rank":
            return [("1", "best")]
        if self.kind != "scale":
            return []
        low, high = self.anchors or (self.label(int(self.low)), self.label(int(self.high)))
        if not (low and high):
            return []
        return [(f"{self.low:g}", low), (f"{self.high:g}", high)]


@dataclass(frozen=True)
class Example:
    """A worked example in the guidelines: a source, candidate text(s) and the expected judgment explained."""

    source: str
    candidates: tuple[str, ...]
    judgment: str
    #: the pair of styles the example transfers between (lower-case, e.g. ``{"formal", "informal"}``); empty
    #: for an example that fits any direction (content only)
    styles: frozenset[str] = frozenset()

    def fits(self, styles: "set[str] | frozenset[str]") -> bool:
        """Whether the example suits a campaign whose directions use ``styles`` (empty: the campaign names no
        direction, and every example is shown)."""
        return not self.styles or not styles or {s.lower() for s in styles} <= self.styles


@dataclass(frozen=True)
class Protocol:
    """A published human-evaluation design, reduced to what the web app needs.

    ``controls`` maps a control kind (``copy``: the candidate is the source itself; ``unrelated``: the candidate
    is the text of another segment) to the expected answers ``{aspect: (low, high)}`` for the first candidate.
    ``degrade`` says how degraded items are made (``scramble``: words shuffled and some dropped; ``copy_source``:
    the source unchanged, i.e. no transfer). ``qc_aspects`` are the aspects the degraded-item test compares.
    """

    name: str
    title: str
    citation: str
    layout: Layout
    aspects: tuple[Question, ...]
    instructions: tuple[str, ...]
    examples: tuple[Example, ...]
    controls: dict[str, dict[str, tuple[float, float]]] = field(default_factory=dict)
    degrade: Literal["scramble", "copy_source"] = "scramble"
    qc_aspects: tuple[str, ...] = ()
    training: bool = False

    def examples_for(self, styles: "set[str] | frozenset[str]") -> tuple[Example, ...]:
        """The worked examples that suit a campaign's styles: a negative->positive campaign shows no formality
        example (none at all, rather than one of another direction)."""
        return tuple(ex for ex in self.examples if ex.fits(styles))

    def aspect(self, name: str) -> Question:
        for a in self.aspects:
            if a.name == name:
                return a
        raise KeyError(name)

    @property
    def quality_aspects(self) -> tuple[Question, ...]:
        names = self.qc_aspects or tuple(a.name for a in self.aspects if a.kind == "scale")
        return tuple(self.aspect(n) for n in names)
