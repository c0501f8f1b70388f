"""One decoding step with a KV cache: the next token's attention, worked from the cache.

A decoder that has read N tokens keeps their keys and values (the KV cache). When token N+1
arrives, only its own row is new::

    q = x · W_Q        k = x · W_K        v = x · W_V          (1 × d each)
    K_cache = [K; k]   V_cache = [V; v]                          (N+1 rows: N reused, 1 new)
    scores_new  = q · K_cacheᵀ                                   (1 × (N+1))
    scaled_new  = scores_new / √d_k
    weights_new = softmax of the one row
    z_new       = weights_new · V_cache                          (1 × d_v)

No mask is needed: the newest token may look at every token before it and at itself. Under a
causal mask the row is exactly the last row of the whole attention worked again for N+1 tokens.

Several steps (``next:`` as a list of t tokens) stack the new tokens as rows of the same steps:
x_new, q_new, k_new, v_new, z_new t rows, the caches N + t, scores_new t × (N + t), and one
more step, ``masked_new``, hides from new token s the new tokens after it (they have not
arrived yet), so row s is what step s alone would give.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from types import MappingProxyType

from tutor.core.engine import (
    Derivation,
    Kit,
    Ref,
    Step,
    T,
    attend,
    concat,
    given,
    matmul,
)
from tutor.core.errors import AnswerError, UsageError
from tutor.core.lesson import Entry, Lesson, NextToken, unique_labels
from tutor.core.numbers import EXPECTED_ARGUMENT, LESSON_NUMBERS, read_rational
from tutor.core.records import record
from tutor.core.spec import MAX_DIM, NEXT_STEP_NAMES, refused

NEXT_STEPS = NEXT_STEP_NAMES  # named in cells like head1.q_new[it, 1]


@record(eq=False)
class Append(Step):
    """The cache with the new rows below it: rows 1…N are copied from the cache (``args[0]``),
    the rest are the new tokens' (``args[1]``)."""

    def copy_of(self, i: int, j: int) -> Ref:
        cache, new = self.args
        n = len(cache.rows)
        return Ref(cache, i, j) if i < n else Ref(new, i - n, j)

    def sources(self, i: int, j: int) -> tuple[Ref, ...]:
        return (self.copy_of(i, j),)

    def combine(self, i: int, j: int, value: Callable[[Ref], T], kit: Kit[T]) -> T:
        return value(self.copy_of(i, j))

    def numpy(self, args: Sequence[str]) -> str:
        return f"np.vstack([{', '.join(args)}])"

    def reused(self, i: int) -> bool:
        """Whether row i comes from the cache (not worked in this step)."""
        return i < len(self.args[0].rows)


def append(name: str, cache: Step, new: Step, rows: Sequence[str], head: int | None) -> Append:
    cells = cache.cells + new.cells
    return Append(name, head, tuple(rows), cache.cols, cells, (cache, new))


def next_steps(d: Derivation, tokens: Sequence[NextToken]) -> list[Step]:
    """The decoding steps' steps, after the lesson's own (``d``): reusing its W and K, V. With
    several ``tokens`` their rows are stacked (t of them): each step has t rows, the caches
    N + t, and ``masked_new`` hides from new token s the new tokens after it."""
    lesson = d.lesson
    labels = unique_labels((*lesson.tokens, *(t.token for t in tokens)))
    new_labels = labels[lesson.n :]
    x = given("x_new", tuple(t.x for t in tokens), new_labels)  # (t, d_model)
    steps: list[Step] = [x]
    made: dict[int, tuple[Step, Step]] = {}  # the head that owns a K, V -> its caches
    outputs = []
    for number in range(1, len(lesson.heads) + 1):
        h = number if lesson.multi_head else None
        scores = d.step("scores", h)
        Q, K = scores.args
        V = d.step("Z", h).args[1]
        W_Q = Q.args[1]
        q = matmul("q_new", x, W_Q, head=h, bias=Q.bias)  # (t, d_k), + b_Q (issue 41)
        steps.append(q)
        if K.head not in made:  # once per key/value head (a group's first head makes it)
            k = matmul("k_new", x, K.args[1], head=h, bias=K.bias)  # (t, d_k)
            v = matmul("v_new", x, V.args[1], head=h, bias=V.bias)  # (t, d_v)
            K_cache = append("K_cache", K, k, labels, h)  # (N+t, d_k): N rows reused
            V_cache = append("V_cache", V, v, labels, h)  # (N+t, d_v)
            made[K.head] = K_cache, V_cache  # type: ignore[index]
            steps += [k, v, K_cache, V_cache]
        K_cache, V_cache = made[K.head]  # type: ignore[index]
        shift = lesson.n if len(tokens) > 1 else None  # new token s sees up to itself
        scaled = d.step("scaled", h) if d.has("scaled", h) else None  # (scale: none: no step)
        divisor = None if scaled is None else scaled.by or scaled.divisor  # type: ignore[attr-defined]
        of = "d_k" if scaled is None else scaled.of or "d_k"  # type: ignore[attr-defined]
        rows = attend(q, K_cache, V_cache, divisor, h, shift, suffix="_new", of=of)  # same rules
        steps += rows
        z = rows[-1]
        outputs.append(z)
    if lesson.multi_head:
        joined = concat("concat_new", outputs)  # (t, h·d_v)
        steps.append(joined)
        if lesson.W_O is not None:
            output = d.step("output")
            steps.append(
                matmul("output_new", joined, d.step("W_O"), bias=output.bias)
            )  # (t, d_out)
    return steps


# ---------------------------------------------------------------------------------------------
# what the cache saves


@record
class Saving:
    """Multiplications of one decoding step against working all N+1 tokens again."""

    cached: int
    full: int
    reused_rows: int  # rows of K and V read from the cache, per key/value head

    @property
    def saved(self) -> int:
        return self.full - self.cached


def saving(lesson: Lesson, step: int = 1) -> Saving:
    """Count the multiplications of decoding step ``step`` (1: the first new token; each
    product of two numbers once; divisions and e^x aside).

    With the cache: q, k, v of one row, one row of scores and one z (k and v once per
    key/value group). Without: Q, K, V of all N+step rows, every score (only the visible ones
    under a causal mask) and every row of Z, and W_O for every row.
    """
    n = lesson.n + step
    d, d_k, d_v = lesson.d_model, lesson.d_k, lesson.d_v
    heads = len(lesson.heads)
    groups = lesson.kv_groups or heads
    pairs = n * (n + 1) // 2 if lesson.mask == "causal" else n * n  # scores worked
    rows_out = 0
    if lesson.W_O is not None:
        rows_out = heads * d_v * len(lesson.W_O[0])
    cached = heads * (d * d_k + n * d_k + n * d_v) + groups * d * (d_k + d_v) + rows_out
    full = (
        heads * (n * d * d_k + pairs * d_k + pairs * d_v)
        + groups * n * d * (d_k + d_v)
        + n * rows_out
    )
    return Saving(cached, full, n - 1)


def savings(lesson: Lesson) -> list[Saving]:
    """One ``saving`` per decoding step, in order: step s reads N + s − 1 rows from the cache."""
    return [saving(lesson, s) for s in range(1, len(lesson.decoding) + 1)]


# ---------------------------------------------------------------------------------------------
# the command line's --next-token and --x


MAX_ROW_CHARS = 2000


def read_row(text: str, width: int) -> tuple[Entry, ...]:
    """``"[1, 0, 2, 1]"`` (brackets optional) as exact entries, each read by the safe number
    reader (never eval); ``UsageError`` saying what was found and what was expected."""
    if len(text) > MAX_ROW_CHARS:
        raise UsageError(f"--x is {len(text)} characters long; at most {MAX_ROW_CHARS}")
    body = text.strip()
    if body.startswith("[") != body.endswith("]"):
        raise UsageError(f"--x {text!r}: a bracket is not closed; write it like [1, 0, 2, 1]")
    body = body.removeprefix("[").removesuffix("]").strip()
    if not body:
        raise UsageError(f"--x is empty; expected {width} numbers, like [1, 0, 2, 1]")
    parts = [p.strip() for p in body.split(",")]
    if len(parts) > MAX_DIM:
        raise UsageError(f"--x has {len(parts)} entries; at most {MAX_DIM} are allowed")
    out = []
    for k, part in enumerate(parts, 1):
        try:
            out.append(read_rational(part, EXPECTED_ARGUMENT, LESSON_NUMBERS))
        except AnswerError as err:  # say which entry
            raise UsageError(f"--x entry {k}: {err}") from None
    if len(out) != width:
        raise UsageError(
            f"--x has {len(out)} {'entry' if len(out) == 1 else 'entries'}, but X has {width} "
            f"{'column' if width == 1 else 'columns'}; the new token's row needs {width}"
            + _comma_note(body, width)
        )
    return tuple(out)


def _comma_note(body: str, width: int) -> str:
    """``; looks like a decimal comma: write 1.5`` for ``[1, 0, 0,5]``, as a lesson's row says.
    The text is only composed as YAML (nodes and positions: nothing is built or run), and every
    entry was already read as a number."""
    import yaml

    from tutor.core.decimal_comma import comma_note

    try:
        node = yaml.compose(f"[{body}]", Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        return ""
    return comma_note(node, width) if node is not None else ""


def next_token(lesson: Lesson, token: str, x: str) -> NextToken:
    """The command line's next token and row, checked like a lesson's ``next:``."""
    from tutor.core.lessonfile import token_problem

    word = token.strip()
    problem = token_problem(word) if word else "is empty"
    if problem is not None:
        raise UsageError(f"--next-token {problem}")
    return NextToken(word, read_row(x, lesson.d_model))


def with_next_token(lesson: Lesson, token: str | None, x: str | None) -> Lesson:
    """The lesson with the command line's decoding step (``--next-token`` and ``--x``, which go
    together) in place of its own ``next:``; the lesson itself when neither is given."""
    if token is None and x is None:
        return lesson
    if token is None or x is None:
        given, missing = ("--next-token", "--x") if x is None else ("--x", "--next-token")
        raise UsageError(f"{given} needs {missing} too: the next token and its row of X")
    new = next_token(lesson, token, x)
    # the loader's table of what combines (spec.REFUSED_COMBINATIONS), for the command line's step
    for _, _, why in refused(lesson.features | {"next"}):
        raise UsageError(f"--next-token: {why}")
    notes = lesson.notes
    if lesson.decoding and lesson.decoding != (new,):
        # the lesson's notes on its decoding steps speak of its own next token, not this one
        notes = MappingProxyType({k: v for k, v in notes.items() if k not in NEXT_STEP_NAMES})
    return replace(lesson, next=new, next_after=(), notes=notes)  # in place of a list too
