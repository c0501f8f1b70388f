"""``new``: a complete, valid, hand-friendly lesson as commented YAML, the same for the same seed.

Entries are small integers (|x| ≤ 2, mostly 0 and 1). A lesson is drawn from
``random.Random(seed)``, then changed one entry at a time, keeping each change that adds no
teaching warning (see ``tutor.author.check``: no uniform row of weights, no one-hot softmax),
until none is left. With ``whole_root``, d_k is a perfect square, so √d_k is whole and the
scaled scores stay rational.
"""

from __future__ import annotations

import math
import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from tutor.author.budget import Budget
from tutor.core.errors import TutorError, UsageError
from tutor.core.lesson import Entry, Head, Lesson, Matrix
from tutor.core.lessonfile import token_problem
from tutor.core.spec import WEIGHT_KEYS
from tutor.text.lessonyaml import lesson_yaml as write_lesson

MAX_NEW_TOKENS = 16  # more than this is no longer a lesson worked by hand
ATTEMPTS = 300
# Entries: 0, or one of these. Wide shapes get more zeros, so the scores stay small enough for
# softmax to share (see _density).
X_NONZERO = (1, 1, 2)  # features
W_NONZERO = (-1, 1, 1, 2)
W_O_NONZERO = (-1, 1)
ZERO: Entry = (0, 1)
WHOLE_ROOTS = (1, 4, 9)
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")


@dataclass(frozen=True)
class Palette:
    """The non-zero entries a generator may write (exact, as (numerator, denominator)); a value
    listed twice is drawn twice as often."""

    x: tuple[Entry, ...] = tuple((v, 1) for v in X_NONZERO)  # features
    w: tuple[Entry, ...] = tuple((v, 1) for v in W_NONZERO)  # W_Q, W_K, W_V
    w_o: tuple[Entry, ...] = tuple((v, 1) for v in W_O_NONZERO)


SMALL_INTEGERS = Palette()


@dataclass(frozen=True)
class Shape:
    """What the instructor asked for."""

    tokens: tuple[str, ...]
    d_model: int = 4
    d_k: int = 2
    d_v: int = 2
    heads: int = 1
    causal: bool = False


def check_name(name: str) -> None:
    """A lesson name is a file stem: letters, digits, ``-`` and ``_``."""
    if name.endswith((".yaml", ".yml")):
        raise UsageError(
            f"NAME {name!r}: give the name without .yaml (use --output to choose the file)"
        )
    if not NAME.fullmatch(name):
        raise UsageError(
            f"NAME {name!r}: use letters, digits, - and _ (starting with a letter or digit, "
            "at most 64 characters), for example the-cat-sat"
        )


def parse_tokens(text: str) -> tuple[str, ...]:
    """``"the cat sat"`` → the tokens, checked by the same rule as lesson files."""
    tokens = tuple(text.split())
    if not tokens:
        raise UsageError('--tokens is empty; give words separated by spaces: --tokens "the cat"')
    if len(tokens) > MAX_NEW_TOKENS:
        raise UsageError(
            f"--tokens has {len(tokens)} words; at most {MAX_NEW_TOKENS}, since a lesson is "
            "worked by hand"
        )
    for i, word in enumerate(tokens, 1):
        problem = token_problem(word)
        if problem is not None:
            raise UsageError(f"--tokens: token {i} {problem}")
    return tokens


def pick_d_k(d_model: int, d_k: int | None, whole_root: bool) -> int:
    """d_k as asked; with ``whole_root`` a perfect square (default: the largest of 1, 4, 9 that
    is not above d_model)."""
    if not whole_root:
        return 2 if d_k is None else d_k
    if d_k is None:
        return max(r for r in WHOLE_ROOTS if r <= max(d_model, 1))
    if math.isqrt(d_k) ** 2 != d_k:
        raise UsageError(
            f"--whole-root needs a d_k whose square root is whole (1, 4, 9, 16); "
            f"--d-k {d_k} has √{d_k} ≈ {math.sqrt(d_k):.2f}"
        )
    return d_k


# ---------------------------------------------------------------------------------------------
# drawing the numbers


def _density(size: int) -> float:
    """The share of non-zero entries in a row of ``size``: 2/3 up to 4, then about 3 per row."""
    return min(2 / 3, 3 / size)


def _entry(rng, nonzero: tuple[Entry, ...], density: float) -> Entry:  # type: ignore[no-untyped-def]
    return rng.choice(nonzero) if rng.random() < density else ZERO


def _matrix(rng, rows: int, cols: int, nonzero: tuple[Entry, ...]) -> Matrix:  # type: ignore[no-untyped-def]
    p = _density(rows)
    return tuple(tuple(_entry(rng, nonzero, p) for _ in range(cols)) for _ in range(rows))


def _x_row(
    rng, d_model: int, avoid: list[tuple[Entry, ...]], palette: Palette
) -> tuple[Entry, ...]:  # type: ignore[no-untyped-def]
    """A row of features, never all zero (it would score 0 against everything), and unlike the
    rows in ``avoid`` while there are enough rows to go round."""
    distinct = len(avoid) < (len(set(palette.x)) + 1) ** d_model // 4
    row = (ZERO,) * d_model
    while row.count(ZERO) == d_model or (distinct and row in avoid):
        row = tuple(_entry(rng, palette.x, _density(d_model)) for _ in range(d_model))
    return row


def _x(rng, groups: tuple, d_model: int, palette: Palette) -> Matrix:  # type: ignore[no-untyped-def]
    """X: one row per token; tokens of one group (a repeated word) share their row."""
    rows: dict = {}
    for g in groups:
        if g not in rows:
            rows[g] = _x_row(rng, d_model, list(rows.values()), palette)
    return tuple(rows[g] for g in groups)


def draw(rng, shape: Shape, name: str) -> Lesson:  # type: ignore[no-untyped-def]
    """One candidate lesson."""
    p = SMALL_INTEGERS
    heads = tuple(
        Head(
            f"head {h}" if shape.heads > 1 else None,
            _matrix(rng, shape.d_model, shape.d_k, p.w),
            _matrix(rng, shape.d_model, shape.d_k, p.w),
            _matrix(rng, shape.d_model, shape.d_v, p.w),
        )
        for h in range(1, shape.heads + 1)
    )
    X = _x(rng, shape.tokens, shape.d_model, p)
    W_O = None
    if shape.heads > 1:
        W_O = _matrix(rng, shape.heads * shape.d_v, shape.d_model, p.w_o)
    return Lesson(
        name=name,
        path=f"{name}.yaml",
        title=title_of(shape.tokens),
        description=description_of(shape),
        tokens=shape.tokens,
        X=X,
        heads=heads,
        multi_head=shape.heads > 1,
        W_O=W_O,
        mask="causal" if shape.causal else "none",
    )


def fresh_values(rng, lesson: Lesson, palette: Palette, share: float = 0.5) -> Lesson:  # type: ignore[no-untyped-def]
    """The lesson with about ``share`` of each head's W_V drawn afresh: W_V moves Z only, so no
    constraint on the weights can mind."""

    def fresh(m: Matrix) -> Matrix:
        p = _density(len(m))
        return tuple(
            tuple(_entry(rng, palette.w, p) if rng.random() < share else e for e in row)
            for row in m
        )

    return replace(lesson, heads=tuple(replace(h, W_V=fresh(h.W_V)) for h in lesson.heads))


def tweak(rng, lesson: Lesson, palette: Palette = SMALL_INTEGERS, groups: tuple = ()) -> Lesson:  # type: ignore[no-untyped-def]
    """The lesson with one change that can move the weights: the row of X of one group of
    tokens (``groups`` names each row's group, by default its word: a repeated word keeps one
    row), or one entry of a head's W_Q or W_K."""
    if rng.random() < 1 / 3:
        groups = groups or lesson.tokens
        group = rng.choice(groups)
        others = [r for g, r in zip(groups, lesson.X, strict=True) if g != group]
        row = _x_row(rng, lesson.d_model, list(dict.fromkeys(others)), palette)
        X = tuple(row if g == group else r for g, r in zip(groups, lesson.X, strict=True))
        return replace(lesson, X=X)
    h = rng.randrange(len(lesson.heads))
    key = rng.choice(WEIGHT_KEYS[:2])  # W_Q or W_K
    m = getattr(lesson.heads[h], key)
    i, j = rng.randrange(len(m)), rng.randrange(len(m[0]))
    value = rng.choice([w for w in (ZERO, *palette.w) if w != m[i][j]])
    changed = tuple(
        tuple(value if (a, b) == (i, j) else e for b, e in enumerate(row))
        for a, row in enumerate(m)
    )
    heads = list(lesson.heads)
    heads[h] = replace(heads[h], **{key: changed})
    return replace(lesson, heads=tuple(heads))


def faults_of(like: Lesson | None = None) -> Callable[[Lesson], list[str]]:
    """What keeps a lesson from teaching well (``lint.row_faults`` over every head's rows),
    remembered per head: a tweak changes one head (or X), the other heads are known. With
    ``like``, measured against that lesson's rows, as a variant of it must be."""
    from tutor.author.check import attention_rows, key_warnings, row_faults

    like_rows = [attention_rows(like, head)[1] for head in like.heads] if like else None
    memo: dict[tuple, list[str]] = {}

    def faults(lesson: Lesson) -> list[str]:
        found: list[str] = []
        for h, head in enumerate(lesson.heads, 1):
            # everything a head's weights read (keys from X_src in cross-attention)
            key = (lesson.X, lesson.X_src, lesson.P, head.W_Q, head.W_K, h)
            if key not in memo:
                rows = attention_rows(lesson, head)[1]
                olds = like_rows[h - 1] if like_rows else [None] * len(rows)
                of_head = f" (head {h})" if lesson.multi_head else ""
                memo[key] = [
                    f"{lesson.labels[row.i]}{of_head}: {fault}"
                    for row, old in zip(rows, olds, strict=True)
                    for fault in row_faults(row, lesson.precision, old)
                ]
            found += memo[key]
        if like is None and not found:  # two words tied for a row's largest weight by equal
            found += [w.message for w in key_warnings(lesson)]  # keys: check warns of it too
        return found

    return faults


def search(  # type: ignore[no-untyped-def]
    rng,
    lesson: Lesson,
    faults: Callable[[Lesson], list[str]],
    palette: Palette = SMALL_INTEGERS,
    groups: tuple = (),
    attempts: int = ATTEMPTS,
    budget: Budget | None = None,
) -> tuple[Lesson, list[str]]:
    """Change the lesson one entry at a time (see ``tweak``), keeping every change that adds no
    fault, until none is left or the attempts are spent: (lesson, faults left). A ``budget``
    of CPU seconds spent first: ``TutorError`` naming it."""
    left = faults(lesson)
    for _ in range(attempts):
        if not left:
            break
        if budget is not None:
            budget.check(
                "new: the search for hand-friendly numbers",
                "try fewer tokens or heads, a smaller d_model, or another --seed",
            )
        candidate = tweak(rng, lesson, palette, groups)
        found = faults(candidate)
        if len(found) <= len(left):
            lesson, left = candidate, found
    return lesson, left


def wander(  # type: ignore[no-untyped-def]
    rng,
    lesson: Lesson,
    faults: Callable[[Lesson], list[str]],
    palette: Palette,
    groups: tuple,
    steps: int,
) -> Lesson:
    """From a lesson without faults, ``steps`` proposed changes (see ``tweak``), each kept only
    when the lesson stays without faults: a random walk that never leaves the lessons that
    meet every constraint."""
    for _ in range(steps):
        candidate = tweak(rng, lesson, palette, groups)
        if not faults(candidate):
            lesson = candidate
    return lesson


def generate(name: str, shape: Shape, seed: int) -> tuple[Lesson, int]:
    """A lesson drawn from ``seed``, then searched (see ``search``) until it has no fault that
    keeps it from teaching well: (lesson, faults left); ``TutorError`` when the search spends
    its budget (``budget.SECONDS`` of CPU), so that no legal shape runs for minutes."""
    import random

    rng = random.Random(seed)
    budget = Budget()  # counted from here: the draw is part of the search
    lesson, left = search(rng, draw(rng, shape, name), faults_of(), budget=budget)
    return lesson, len(left)


def title_of(tokens: tuple[str, ...]) -> str:
    text = " ".join(tokens)
    return text[:1].upper() + text[1:]


NUMBER_WORDS = ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine")


def _count(n: int, word: str) -> str:
    spelled = NUMBER_WORDS[n - 1] if n <= len(NUMBER_WORDS) else str(n)
    return f"{spelled} {word}" + ("" if n == 1 else "s")


def description_of(shape: Shape) -> str:
    n = len(shape.tokens)
    text = (
        f"{_count(n, 'token')} with {_count(shape.d_model, 'feature')} each, projected to "
        f"d_k = {shape.d_k} and d_v = {shape.d_v}"
    )
    if shape.heads > 1:
        text += f" by {_count(shape.heads, 'head')}"
    if shape.causal:
        text += ", with a causal mask"
    return text[:1].upper() + text[1:] + "."


def notes_of(lesson: Lesson) -> dict[str, str]:
    """Notes that are true of these numbers: where the largest weight falls, what Z is."""
    from tutor.core.engine import derive
    from tutor.text.format import number

    notes = {
        "scaled": f"d_k = {lesson.d_k}, so every score is divided by √{lesson.d_k}"
        + (f" = {math.isqrt(lesson.d_k)}." if math.isqrt(lesson.d_k) ** 2 == lesson.d_k else ".")
    }
    if lesson.mask == "causal":
        notes["masked"] = "Each token sees only itself and the tokens before it."
    labels = lesson.labels
    if lesson.n == 1:
        notes["weights"] = "With one token there is one score to share: its weight is 1."
    elif lesson.kv_groups is not None:
        notes["weights"] = (
            "Each query head has its own W_Q; the heads of a group share its W_K, so each "
            "spreads its weights its own way over the same keys."
        )
    elif lesson.multi_head:
        notes["weights"] = (
            "Each head has its own W_Q and W_K, so each spreads its weights its own way."
        )
    else:
        weights = derive(lesson).step("weights")
        causal = lesson.mask == "causal"
        keys = len(weights.cols)  # the source sentence's tokens in cross-attention
        seen = {  # rows with a choice to make: all of them, or after the first when causal
            i: range(i + 1 if causal else keys) for i in range(int(causal), lesson.n)
        }

        def w(i: int, j: int) -> float:
            return float(weights.cells[i][j].approx)

        def tied(a: float, b: float) -> bool:  # equal scores give equal weights, to rounding
            return abs(a - b) <= 1e-12 * max(abs(a), abs(b))

        # a weight that is the largest of its row on its own; a tie is no one token's
        alone = [
            (i, j)
            for i, cols in seen.items()
            for j in cols
            if all(k == j or (not tied(w(i, j), w(i, k)) and w(i, j) > w(i, k)) for k in cols)
        ]
        if alone:
            i, j = max(alone, key=lambda ij: w(*ij))
            target = "itself" if i == j and lesson.source is None else weights.cols[j]
            notes["weights"] = (
                f"{labels[i]} puts its largest weight, {number(weights.cells[i][j], 2)}, "
                f"on {target}."
            )
        elif all(tied(w(i, j), w(i, cols[0])) for i, cols in seen.items() for j in cols):
            notes["weights"] = (
                "In every row the scores are equal, so each token spreads its weight evenly over "
                "the tokens it sees."
            )
        else:
            notes["weights"] = "No token puts its largest weight on one token alone: ties share it."
    notes["Z"] = "Each row of Z is a blend of the rows of V, mixed by that token's weights."
    return notes


# ---------------------------------------------------------------------------------------------
# writing YAML by hand, so every key carries its comment


def lesson_yaml(lesson: Lesson, command: str, file: str, header: tuple[str, ...] = ()) -> str:
    """The lesson as commented YAML, with notes made for its numbers (``notes_of``)."""
    return write_lesson(lesson, command, file, header, notes_of(lesson))


def command_line(name: str, shape: Shape, seed: int, whole_root: bool) -> str:
    """The ``attn-tutor new`` command that makes this lesson again."""
    parts = ["attn-tutor new", shlex.quote(name), "--tokens", shlex.quote(" ".join(shape.tokens))]
    parts += [f"--d-model {shape.d_model}", f"--d-k {shape.d_k}"]
    if shape.d_v != shape.d_k:
        parts.append(f"--d-v {shape.d_v}")
    if shape.heads > 1:
        parts.append(f"--heads {shape.heads}")
    if shape.causal:
        parts.append("--causal")
    if whole_root:
        parts.append("--whole-root")
    parts.append(f"--seed {seed}")
    return " ".join(parts)


def write_new(path: Path, text: str, force: bool) -> None:
    """Write the lesson; never replace an existing file unless ``force``, and then only whole
    (a new file beside it, renamed over it: a crash or a full disk keeps the old lesson)."""
    from tutor.core.files import replace_file

    if path.is_dir():
        raise TutorError(f"{path} is a folder; give --output a file name such as {path}/x.yaml")
    try:
        if force:
            replace_file(path, text)
            return
        with path.open("x", encoding="utf-8") as f:
            f.write(text)
    except FileExistsError:
        raise TutorError(
            f"{path} already exists; use --force to replace it, or --output to write elsewhere"
        ) from None
    except OSError as err:
        raise TutorError(f"cannot write {path}: {err.strerror or err}") from None
