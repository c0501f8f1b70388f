"""The lesson, as frozen data: exact inputs (integer pairs) and the instructor's words.

No YAML here: ``tutor.core.lessonfile`` reads and validates a file into a ``Lesson``, and the
engine needs only this module.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field
from types import MappingProxyType

from tutor.core.records import record
from tutor.core.spec import BIASES

Entry = tuple[int, int]  # exact value as (numerator, denominator), denominator > 0
Matrix = tuple[tuple[Entry, ...], ...]


@record
class Focus:
    """The cell a lesson works by default (``focus:``): a token's row, and optionally a step
    and a column (a token for the N × N steps, a 1-based number for the others)."""

    row: str  # a token's label (``the#2`` for a repeat)
    step: str | None = None  # ``weights`` in ``weights[it, cake]``; None for a bare token
    col: str | None = None  # ``cake``, or ``2`` in ``Q[it, 2]``


@record
class Head:
    """One attention head's learned matrices."""

    name: str | None
    W_Q: Matrix
    W_K: Matrix
    W_V: Matrix
    focus: Focus | None = None  # the head's own worked cell (the rows it links)
    # biases (issue 41): one row each, added to every row of Q, K, V (None: no bias)
    b_Q: tuple[Entry, ...] | None = None
    b_K: tuple[Entry, ...] | None = None
    b_V: tuple[Entry, ...] | None = None


@record
class NextToken:
    """One decoding step: the token that comes next and its row of X (``next:`` or
    ``walk --next-token``)."""

    token: str
    x: tuple[Entry, ...]


@record
class QuizDefaults:
    """The lesson's ``quiz:`` settings; the command line's ``--steps`` and ``--count`` win."""

    steps: tuple[str, ...] = ()  # empty: every step of the lesson that a quiz can ask about
    count: int = 8  # how many cells to ask


@record
class VariantOf:
    """What a variant file says about itself (its ``variant:`` key): for a sheet to copy."""

    id: str  # "variant-07"
    of: str = ""  # the lesson it was made from
    student: str = ""
    student_id: str = ""


@record
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
    # each theta entry's unit, "deg" or "rad" (``1 rad``, ``theta_unit: radians``); None when
    # every angle is in degrees
    theta_units: tuple[str, ...] | None = None
    # cross-attention (issue 17): a second sentence; keys and values come from its X_src
    source: tuple[str, ...] | None = None
    X_src: Matrix | None = None
    # notes and where are read-only views (the loader builds them), so a frozen lesson stays so
    notes: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    quiz: QuizDefaults = QuizDefaults()
    focus: Focus | None = None  # the worked cell by default; None: the walk picks a lively row
    # (line, col) of each top-level key's value, and of rows and entries: "X.2" is row 2 of X,
    # "X.2.3" its third entry, "heads.1.W_Q.2.3" the same in head 1, "tokens.2" a token
    where: Mapping[str, tuple[int, int]] = field(default_factory=lambda: MappingProxyType({}))
    # grouped heads: the number of key/value groups (None: every head has its own W_K, W_V; the
    # heads of one group carry the group's W_K and W_V, so every head still has all three)
    kv_groups: int | None = None
    next: NextToken | None = None  # a decoding step to work after the lesson (the KV cache)
    # ``next:`` as a list: the tokens decoded after ``next``, one after another, the cache
    # growing by a row each (empty for the single mapping, which stays as it was)
    next_after: tuple[NextToken, ...] = ()
    # how many layers the attention stands for (None: not said); it multiplies the K/V weights
    # and KV-cache counts the header compares, never the arithmetic (so not in the fingerprint)
    layers: int | None = None
    # Q, K and V given (issue 28; tutor.core.givenqkv): each head's W_Q, W_K, W_V hold the given
    # Q, K, V and X is the N × N identity; the engine gives Q, K, V as inputs, no X or W steps
    qkv: bool = False
    # what the scores are divided by (issue 41): "sqrt_d_k" (as always), "none" (no scaled step),
    # "sqrt_d_model", or "number" with ``scale_by`` the exact number
    scale: str = "sqrt_d_k"
    scale_by: Entry | None = None
    b_O: tuple[Entry, ...] | None = None  # the output projection's bias (issue 41)
    layout: str = "rows"  # presentation only: "columns" shows every matrix turned on its side

    def group_of(self, head: int) -> int:
        """The 1-based key/value group that 1-based query head ``head`` reads."""
        if self.kv_groups is None:
            return head
        return (head - 1) // (len(self.heads) // self.kv_groups) + 1

    def group_heads(self, group: int) -> tuple[int, ...]:
        """The 1-based query heads that share key/value group ``group``."""
        return tuple(h for h in range(1, len(self.heads) + 1) if self.group_of(h) == group)

    # ``points:``: whole points per step name (every head's step of that name gets them)
    points: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))
    variant: VariantOf | None = None

    def step_points(self, step_name: str) -> int | None:
        """The points the lesson gives a step a student fills (``Q``, ``weights``…), or None
        when it gives none: then the step is worth one point per cell."""
        return self.points.get(step_name)

    def divisor(self, d_k: int) -> int | Entry | None:
        """What a head's scores are divided by: n for √n (d_k, or d_model), an exact number
        (p, q), or None when the lesson does not scale them."""
        if self.scale == "none":
            return None
        if self.scale == "number":
            return self.scale_by
        return self.d_model if self.scale == "sqrt_d_model" else d_k

    @property
    def decoding(self) -> tuple[NextToken, ...]:
        """Every token the decoding steps add, in order (none without ``next:``)."""
        return () if self.next is None else (self.next, *self.next_after)

    @property
    def labels(self) -> tuple[str, ...]:
        """Row labels that tell repeated tokens apart: ``the#1``, ``dog``, ``the#2``."""
        return unique_labels(self.tokens)

    @property
    def source_labels(self) -> tuple[str, ...]:
        """The source sentence's row labels (cross-attention), repeats numbered."""
        return unique_labels(self.source or ())

    @property
    def features(self) -> frozenset[str]:
        """The lesson's features, as ``spec.FEATURES`` names them (``spec.refused`` says which
        pairs do not combine)."""
        return features(
            positions=self.positions,
            source=self.source is not None,
            mask=self.mask,
            grouped=self.kv_groups is not None,
            heads=self.multi_head,
            W_O=self.W_O is not None,
            next=self.next is not None,
            layout=self.layout,
            qkv=self.qkv,
            bias=self.biased,
        )

    @property
    def biased(self) -> bool:
        """Whether any head has a bias, or the output projection (issue 41)."""
        return self.b_O is not None or any(
            h.b_Q is not None or h.b_K is not None or h.b_V is not None for h in self.heads
        )

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
    # added only when used, so the fingerprints of lessons without them stay as they were
    if lesson.kv_groups is not None:
        parts.append(f"kv_groups={lesson.kv_groups}")
    if lesson.qkv:  # the same numbers as X = I with W's would otherwise be the same lesson
        parts.append("qkv")
    if lesson.next is not None:
        parts.append("next=" + lesson.next.token + "|" + mat((lesson.next.x,)))
    for later in lesson.next_after:  # the list form's further tokens (the single form as it was)
        parts.append("then=" + later.token + "|" + mat((later.x,)))
    # issue 17's numbers, only when present: older lessons keep their fingerprints
    if lesson.positions != "none":
        parts.append(f"positions={lesson.positions}")
        parts.append("P=" + mat(lesson.P))
        theta = "-" if lesson.theta is None else ",".join(f"{p}/{q}" for p, q in lesson.theta)
        parts.append("theta=" + theta)
        if lesson.theta_units is not None:  # only with radians: degree lessons keep theirs
            parts.append("theta_units=" + ",".join(lesson.theta_units))
    for h, head in enumerate(lesson.heads, 1):  # biases, only where given (issue 41)
        for key in BIASES:
            row = getattr(head, key)
            if row is not None:
                parts.append(f"head{h}.{key}=" + mat((row,)))
    if lesson.b_O is not None:
        parts.append("b_O=" + mat((lesson.b_O,)))
    if lesson.scale != "sqrt_d_k":  # only when chosen: older lessons keep their fingerprints
        by = "" if lesson.scale_by is None else f"={lesson.scale_by[0]}/{lesson.scale_by[1]}"
        parts.append(f"scale={lesson.scale}{by}")
    if lesson.source is not None:
        parts.append("source=" + "\x1f".join(lesson.source))
        parts.append("X_src=" + mat(lesson.X_src))
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:8]


def features(
    positions: str,
    source: bool,
    mask: str,
    grouped: bool,
    heads: bool,
    W_O: bool,
    next: bool,
    layout: str,
    qkv: bool = False,
    bias: bool = False,
) -> frozenset[str]:
    """``spec.FEATURES`` names of a lesson's keys (the loader's, before a Lesson exists)."""
    on = {
        "positions": positions != "none",
        "rope": positions == "rope",
        "source": source,
        "causal": mask == "causal",
        "grouped": grouped,
        "heads": heads,
        "W_O": W_O,
        "next": next,
        "columns": layout == "columns",
        "qkv": qkv,
        "bias": bias,
    }
    return frozenset(name for name, yes in on.items() if yes)


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
