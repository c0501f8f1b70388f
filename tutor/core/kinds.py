"""Every kind of step, once: what the rest of the program needs to know about a step by its name.

The engine (``tutor.core.engine``) says how a step is worked; this table says where it goes:
whether a quiz asks it, where a sheet has it, what ``focus:`` and ``points:`` may name, which
steps repeat per head, which lesson step a decoding row repeats. Its words (titles, why,
formulas, colour, slips) are in ``tutor.text.steps``, keyed by the same names. Every list of
step names elsewhere is read from here, and tests/test_step_kinds.py walks every kind through
every consumer, so a new kind of step is one line here and one entry there.

Import-free: ``spec`` (and so ``attn-tutor --help`` and ``schema``) reads it without sympy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tutor.core.records import record

if TYPE_CHECKING:
    from tutor.core.engine import Derivation, Step


@record
class Kind:
    """One kind of step. The flags say which consumers take it; the table's order is the order
    the engine works the steps in, and so the order every list read from it keeps."""

    name: str
    lesson: bool = True  # a lesson's own step (not only the explorer's)
    decoding: bool = False  # a row of the decoding step (``next:``)
    repeats: str | None = None  # the lesson step a decoding row repeats (its slips, its words)
    per_head: bool = False  # one per head in a multi-head lesson
    asked: bool = False  # a quiz may ask it (when the lesson works it, not gives it)
    priority: int | None = None  # where a quiz's extra questions go first (0: first)
    chosen: bool = False  # ``quiz --steps`` and a course's ``steps:`` may name it
    sheet: str | None = None  # where a sheet has it: "first" (before the heads), "head", "top"
    points: bool = False  # ``points:`` may name it (a step a student fills)
    focus: bool = False  # ``focus:`` may name it
    token_rows: bool = False  # one row per token (``--row`` picks one)
    square: bool = False  # a column per token too (N × N, or N × N_src)
    code: bool = False  # a step a student's NumPy function returns (``check-code``)
    editable: bool = False  # the explorer lets you change its numbers
    grouped: bool = False  # the keys' and values' side: one per group when heads are grouped
    causal: bool = False  # only in a lesson with a causal mask
    columns: str | None = None  # the given matrix whose width it has (concat: every head's)
    # the lesson's field holding a given matrix (a head's, a token's); Q, K and V only when the
    # lesson gives them (qkv: held as the head's W's, X = I)
    held: str | None = None
    instead: str | None = None  # the step shown in its place when a lesson has none (X_src: X)


K = Kind
# a head's step a student works and is asked (a row per token), and a decoding row's
WORKED = {"per_head": True, "asked": True, "sheet": "head", "points": True}
HEAD = WORKED | {"chosen": True, "focus": True, "token_rows": True, "code": True}
NEW = WORKED | {"decoding": True}
KINDS: tuple[Kind, ...] = (
    K("E", editable=True, held="X"),
    K("P", editable=True, held="P"),
    K("X", asked=True, priority=10, sheet="first", token_rows=True, editable=True, held="X"),
    K("X_src", editable=True, held="X_src", instead="X"),
    K("W_Q", per_head=True, editable=True, held="W_Q"),
    K("W_K", per_head=True, editable=True, held="W_K", grouped=True),
    K("W_V", per_head=True, editable=True, held="W_V", grouped=True),
    # biases (issue 41): a given row added to every row of X·W (and of concat·W_O)
    K("b_Q", per_head=True),
    K("b_K", per_head=True, grouped=True),
    K("b_V", per_head=True, grouped=True),
    K("Q", **HEAD, priority=4, columns="W_Q", held="W_Q"),
    K("K", **HEAD, priority=7, grouped=True, columns="W_K", held="W_K"),
    K("V", **HEAD, priority=6, grouped=True, columns="W_V", held="W_V"),
    K("Q_rot", per_head=True, asked=True, priority=8, sheet="head", columns="W_Q"),
    K("K_rot", per_head=True, asked=True, priority=9, sheet="head", grouped=True, columns="W_K"),
    K("scores", **HEAD, priority=2, square=True),
    K("scaled", **HEAD, priority=3, square=True),
    K("tempered", lesson=False, per_head=True),  # the explorer's scaled × t
    K("masked", per_head=True, focus=True, token_rows=True, square=True, causal=True),
    K("weights", **HEAD, priority=1, square=True),
    K("Z", **HEAD, priority=0, columns="W_V"),
    K("concat", sheet="top", points=True, focus=True, token_rows=True, columns="W_V"),
    K("W_O", editable=True, held="W_O"),
    K("b_O"),
    K(
        "output",
        **(HEAD | {"per_head": False, "sheet": "top", "code": False}),
        priority=5,
        columns="W_O",
    ),
    # one decoding step with the KV cache (next:; tutor.core.decode): x_new is given, the
    # caches are read (the earlier rows) and extended (the new row), the rest repeat a step
    K("x_new", decoding=True, editable=True, held="x"),
    K("q_new", **NEW, repeats="Q", priority=15, columns="W_Q"),
    K("k_new", **NEW, repeats="K", priority=17, columns="W_K"),
    K("v_new", **NEW, repeats="V", priority=16, columns="W_V"),
    K("K_cache", decoding=True, per_head=True),
    K("V_cache", decoding=True, per_head=True),
    K("scores_new", **NEW, repeats="scores", priority=13),
    K("scaled_new", **NEW, repeats="scaled", priority=14),
    # several new tokens at once (next: as a list): each sees the cache and the new ones before it
    K("masked_new", decoding=True, repeats="masked", per_head=True, causal=True),
    K("weights_new", **NEW, repeats="weights", priority=12),
    K("z_new", **NEW, repeats="Z", priority=11, columns="W_V"),
    K("concat_new", decoding=True, repeats="concat", sheet="top", points=True, columns="W_V"),
    K("output_new", decoding=True, repeats="output", sheet="top", points=True, columns="W_O"),
)
del K, WORKED, HEAD, NEW
BY_NAME = {k.name: k for k in KINDS}


@record
class Tab:
    """One of the explorer's tabs: rows of steps side by side (a step the lesson lacks is left
    out, or shown as its ``instead``), and the steps it is home to: following a cell of theirs
    goes there, and the first the lesson has takes the cursor."""

    id: str
    title: str
    rows: tuple[tuple[str, ...], ...]
    home: tuple[str, ...]
    when: str | None = None  # the tab is there only when the lesson has this step


# the explorer's tabs, in order: where each step is shown (tutor.explore.views)
TABS: tuple[Tab, ...] = (
    Tab("x", "X = E + P", (("E", "P", "X"),), ("X", "E", "P"), when="E"),
    Tab("q", "Q", (("X", "W_Q", "Q"), ("b_Q", "Q_rot")), ("Q", "W_Q", "X", "b_Q", "Q_rot")),
    Tab("k", "K", (("X_src", "W_K", "K"), ("b_K", "K_rot")), ("K", "W_K", "b_K", "K_rot", "X_src")),
    Tab("v", "V", (("X_src", "W_V", "V"), ("b_V",)), ("V", "W_V", "b_V")),
    Tab("scores", "scores", (("Q_rot", "K_rot"), ("Q", "K"), ("scores",)), ("scores",)),
    Tab(
        "scaled",
        "scaled",
        (("scores", "scaled"), ("tempered", "masked")),
        ("scaled", "tempered", "masked"),
    ),
    Tab("weights", "weights · Z", (("weights",), ("V", "Z")), ("weights", "Z")),
    Tab(
        "output",
        "output",
        (("concat",), ("W_O", "output"), ("b_O",)),
        ("concat", "output", "b_O"),
        when="concat",
    ),
    Tab(
        "next",
        "next token",
        (
            ("x_new", "q_new", "k_new", "v_new"),
            ("K_cache", "V_cache"),
            ("scores_new", "scaled_new", "masked_new"),
            ("weights_new", "z_new"),
            ("concat_new", "output_new"),
        ),
        (
            *("x_new", "q_new", "k_new", "v_new", "K_cache", "V_cache"),
            *("scores_new", "scaled_new", "masked_new", "weights_new", "z_new"),
            *("concat_new", "output_new"),
        ),
        when="x_new",
    ),
)


def names(**flags: object) -> tuple[str, ...]:
    """The step names whose fields equal ``flags``, in the engine's order: ``names(asked=True)``."""
    return tuple(k.name for k in KINDS if all(getattr(k, f) == v for f, v in flags.items()))


def repeated(name: str) -> str:
    """The lesson step a decoding row repeats (``z_new`` → ``Z``); any other name is itself."""
    kind = BY_NAME.get(name)
    return kind.repeats if kind is not None and kind.repeats else name


def fill_steps(d: Derivation) -> list[Step]:
    """The steps a student fills in on a sheet, in the order they are computed (X only when it
    is worked, as E + P)."""
    return [s for s in d.steps if BY_NAME[s.name].sheet is not None and not s.given]


# the lists the consumers read, each in the engine's order (made by ``_lists`` from KINDS)
STEP_NAMES: tuple[str, ...]  # every step a lesson can have (the explorer's tempered aside)
NEXT_STEP_NAMES: tuple[str, ...]
QUIZ_STEPS: tuple[str, ...]
PRIORITY: tuple[str, ...]  # where a quiz's extra questions go first
CHOSEN_STEPS: tuple[str, ...]
FILLED_STEPS: tuple[str, ...]
FILLED_NEXT_STEPS: tuple[str, ...]
FOCUS_STEPS: tuple[str, ...]
TOKEN_ROWS: tuple[str, ...]
SQUARE: tuple[str, ...]
PER_HEAD: frozenset[str]
CODE_STEPS: tuple[str, ...]
EDITABLE: tuple[str, ...]
WEIGHTS: tuple[str, ...]
GROUPED: tuple[str, ...]
KEY_ROWS: tuple[str, ...]
FILL_FIRST: tuple[str, ...]
FILL: tuple[str, ...]
FILL_TOP: tuple[str, ...]
NEXT_FILL: tuple[str, ...]
NEXT_FILL_TOP: tuple[str, ...]


def _lists() -> None:
    """Read the lists the consumers use from ``KINDS``, each in the engine's order (again
    after ``add`` or ``remove``)."""
    global STEP_NAMES, NEXT_STEP_NAMES, QUIZ_STEPS, PRIORITY, CHOSEN_STEPS, FILLED_STEPS
    global FILLED_NEXT_STEPS, FOCUS_STEPS, TOKEN_ROWS, SQUARE, PER_HEAD, CODE_STEPS, EDITABLE
    global WEIGHTS, GROUPED, KEY_ROWS, FILL_FIRST, FILL, FILL_TOP, NEXT_FILL, NEXT_FILL_TOP
    BY_NAME.clear()
    BY_NAME.update((k.name, k) for k in KINDS)
    STEP_NAMES = names(lesson=True)  # every step a lesson can have (the explorer's tempered aside)
    NEXT_STEP_NAMES = names(decoding=True)
    QUIZ_STEPS = names(asked=True)
    PRIORITY = tuple(sorted(QUIZ_STEPS, key=lambda n: BY_NAME[n].priority))  # type: ignore[arg-type, return-value]
    CHOSEN_STEPS = names(chosen=True)
    FILLED_STEPS = names(points=True, decoding=False)
    FILLED_NEXT_STEPS = names(points=True, decoding=True)
    FOCUS_STEPS = names(focus=True)
    TOKEN_ROWS = names(token_rows=True)
    SQUARE = names(square=True)
    PER_HEAD = frozenset(names(per_head=True))
    CODE_STEPS = names(code=True)
    EDITABLE = names(editable=True)
    WEIGHTS = names(per_head=True, editable=True)  # a head's given weights: W_Q, W_K, W_V
    GROUPED = names(grouped=True)  # what the heads of a group share (kv_groups)
    KEY_ROWS = tuple(n for n in GROUPED if n in TOKEN_ROWS)  # a row per key (a token looked at)
    # where a sheet has each step a student fills: X worked as E + P before every head, the steps of
    # each head (and the decoding row's), then concat and output after the heads
    FILL_FIRST = names(sheet="first")
    FILL = names(sheet="head", decoding=False)
    FILL_TOP = names(sheet="top", decoding=False)
    NEXT_FILL = names(sheet="head", decoding=True)
    NEXT_FILL_TOP = names(sheet="top", decoding=True)


_lists()


def add(kind: Kind, after: str) -> None:
    """Register a new kind of step in the table, right after the step ``after`` (the engine's
    order), and read every list again: with its rule class and its words entry
    (``tutor.text.steps.STEPS``) all a new kind of step needs (docs: Adding a rule)."""
    global KINDS
    if kind.name in BY_NAME:
        raise ValueError(f"a step called {kind.name} is in the table already")
    at = [k.name for k in KINDS].index(after) + 1
    KINDS = (*KINDS[:at], kind, *KINDS[at:])
    _lists()


def remove(name: str) -> None:
    """Take the kind ``name`` out of the table again (a test's toy step) and read every list."""
    global KINDS
    KINDS = tuple(k for k in KINDS if k.name != name)
    _lists()
