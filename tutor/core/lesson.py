"""The lesson, as frozen data: exact inputs (integer pairs) and the instructor's words.

No YAML here: ``tutor.core.lessonfile`` reads and validates a file into a ``Lesson``, and the
engine needs only this module.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

Entry = tuple[int, int]  # exact value as (numerator, denominator), denominator > 0
Matrix = tuple[tuple[Entry, ...], ...]


@dataclass(frozen=True)
class Head:
    """One attention head's learned matrices."""

    name: str | None
    W_Q: Matrix
    W_K: Matrix
    W_V: Matrix


@dataclass(frozen=True)
class QuizDefaults:
    """The lesson's ``quiz:`` settings; the command line's ``--steps`` and ``--count`` win."""

    steps: tuple[str, ...] = ()  # empty: every step of the lesson that a quiz can ask about
    count: int = 8  # how many cells to ask


@dataclass(frozen=True)
class Lesson:
    """A validated lesson: exact inputs and the instructor's words."""

    name: str
    path: str
    title: str
    description: str
    tokens: tuple[str, ...]
    X: Matrix
    heads: tuple[Head, ...]
    multi_head: bool = False
    W_O: Matrix | None = None
    mask: str = "none"
    precision: int = 2
    # positions (issue 17): "none"; "given" or "sinusoidal", where X holds the token embeddings
    # E and the engine adds P (given, or the sin/cos table); "rope", rotating Q and K by
    # position × theta (degrees per pair of columns; None: the original 10000^(-2i/d_k) radians)
    positions: str = "none"
    P: Matrix | None = None
    theta: tuple[Entry, ...] | None = None
    # cross-attention (issue 17): a second sentence; keys and values come from its X_src
    source: tuple[str, ...] | None = None
    X_src: Matrix | None = None
    # notes and where are read-only views (the loader builds them), so a frozen lesson stays so
    notes: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    quiz: QuizDefaults = QuizDefaults()
    # (line, col) of each top-level key's value, and of rows and entries: "X.2" is row 2 of X,
    # "X.2.3" its third entry, "heads.1.W_Q.2.3" the same in head 1, "tokens.2" a token
    where: Mapping[str, tuple[int, int]] = field(default_factory=lambda: MappingProxyType({}))

    @property
    def labels(self) -> tuple[str, ...]:
        """Row labels that tell repeated tokens apart: ``the#1``, ``dog``, ``the#2``."""
        return unique_labels(self.tokens)

    @property
    def source_labels(self) -> tuple[str, ...]:
        """The source sentence's row labels (cross-attention), repeats numbered."""
        return unique_labels(self.source or ())

    @property
    def embedded(self) -> bool:
        """Whether X is worked as E + P (the lesson gives E and its positions)."""
        return self.positions in ("given", "sinusoidal")

    @property
    def n(self) -> int:
        return len(self.tokens)

    @property
    def d_model(self) -> int:
        return len(self.X[0])

    @property
    def d_k(self) -> int:
        return len(self.heads[0].W_K[0])

    @property
    def d_v(self) -> int:
        return len(self.heads[0].W_V[0])

    @property
    def fingerprint(self) -> str:
        """Eight hex digits that change when any number a student works with changes.

        Made from the tokens, every given matrix, the mask, the heads and the precision (not
        the title, notes or file path), so a sheet can tell whether the lesson it was made
        for still has the same numbers.
        """
        return fingerprint_of(self)


def fingerprint_of(lesson: Lesson) -> str:
    import hashlib

    def mat(m: Matrix | None) -> str:
        if m is None:
            return "-"
        return ";".join(",".join(f"{p}/{q}" for p, q in row) for row in m)

    parts = [
        "tokens=" + "\x1f".join(lesson.tokens),
        "X=" + mat(lesson.X),
        f"mask={lesson.mask}",
        f"precision={lesson.precision}",
        f"multi_head={lesson.multi_head}",
        "W_O=" + mat(lesson.W_O),
    ]
    for h in lesson.heads:
        parts.append(f"head={mat(h.W_Q)}|{mat(h.W_K)}|{mat(h.W_V)}")
    # issue 17's numbers, only when present: older lessons keep their fingerprints
    if lesson.positions != "none":
        parts.append(f"positions={lesson.positions}")
        parts.append("P=" + mat(lesson.P))
        theta = "-" if lesson.theta is None else ",".join(f"{p}/{q}" for p, q in lesson.theta)
        parts.append("theta=" + theta)
    if lesson.source is not None:
        parts.append("source=" + "\x1f".join(lesson.source))
        parts.append("X_src=" + mat(lesson.X_src))
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:8]


def unique_labels(tokens: tuple[str, ...] | list[str]) -> tuple[str, ...]:
    """Number the repeats of a token (``the#1`` … ``the#2``); leave unique tokens alone."""
    counts: dict[str, int] = {}
    for t in tokens:
        counts[t] = counts.get(t, 0) + 1
    seen: dict[str, int] = {}
    labels = []
    for t in tokens:
        if counts[t] > 1:
            seen[t] = seen.get(t, 0) + 1
            labels.append(f"{t}#{seen[t]}")
        else:
            labels.append(t)
    return tuple(labels)
