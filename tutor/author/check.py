"""``check``: every problem of many lesson files, plus warnings about lessons that teach badly.

A lesson can be valid and still make a poor exercise. These are worth a warning:

* a row of weights that is uniform because every score in it is equal (nothing to learn from Z);
* scores so far apart that softmax is one-hot (largest weight above ``ONE_HOT``), or that most
  of a row's weights show as 0.00;
* scaled scores beyond ±``MAX_SCALED`` (e^x by hand, and a loud softmax);
* two different words with the same row of X (saying only what attention then gives them alike);
* entries that are unpleasant by hand: more than ``MAX_PLACES`` decimal places, or a fraction
  whose denominator is above ``MAX_DENOMINATOR``;
* a ``focus:`` on a uniform row, which the walk would then work while livelier rows exist.
* RoPE angles (position × θ) whose cos and sin a student does not know exactly (not a multiple
  of 30° or 45°), or no θ at all (the original 10000^(−2i/d_k) radians).
* ``scale: none`` with raw scores beyond ±``LARGE_SCORE`` (softmax all but one-hot).

Warnings never make a lesson invalid. They need the engine, so this module imports sympy.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tutor.core import kinds
from tutor.core.catalog import is_dir, resolve_lesson
from tutor.core.engine import Derivation, Step, derive, rational
from tutor.core.errors import LessonError, Problem
from tutor.core.lesson import Entry, Head, Lesson, Matrix
from tutor.core.lessonfile import check_lesson
from tutor.core.spec import MAX_ERRORS, refused
from tutor.text.format import MINUS, decimal_places, decimal_text, number, plural, round_half_up

ONE_HOT = 0.99
MAX_PLACES = 3
MAX_DENOMINATOR = 12


@dataclass(frozen=True)
class Report:
    """What ``check`` found in one file."""

    path: str
    lesson: Lesson | None  # None when the file has errors
    problems: list[Problem]
    note: str | None = None  # "using ./lessons/x.yaml (it shadows the bundled x)"

    @property
    def valid(self) -> bool:
        return self.lesson is not None


def check_lessons(names: list[str], extra: list[Path] | None = None) -> list[Report]:
    """Check each file, folder (its ``*.yaml``) or lesson name; never stop at the first bad one."""
    return [check_one(path, extra) for path in _expand(names)]


def _expand(names: list[str]) -> Iterator[str]:
    for name in names:
        if is_dir(Path(name)):  # a name too long to look up is checked (and reported) as a file
            yield from (str(p) for p in sorted(Path(name).glob("*.yaml")))
        else:
            yield name


def check_one(name: str, extra: list[Path] | None = None) -> Report:
    """Every problem of one lesson: errors, or (for a valid lesson) teaching warnings."""
    try:
        found = resolve_lesson(name, extra)
    except LessonError as err:
        return Report(name, None, err.problems)
    path = found.path
    lesson, problems = check_lesson(path, path.stem)  # errors stop at MAX_ERRORS
    if lesson is not None:
        problems = problems + capped(teaching_warnings(lesson))
    # in file order, as an editor lists them (stable: one place keeps the order found)
    ordered = sorted(problems, key=lambda p: (p.line, p.col))
    return Report(str(path), lesson, ordered, found.note)


def summary(reports: list[Report]) -> str:
    """One line: how many lessons, how many valid, how many errors and warnings."""
    errors = sum(p.severity == "error" for r in reports for p in r.problems)
    warnings = sum(p.severity == "warning" for r in reports for p in r.problems)
    invalid = sum(not r.valid for r in reports)
    n = len(reports)
    counts = [plural(errors, "error")] if errors else []
    counts += [plural(warnings, "warning")] if warnings else []
    verdict = f"{n - invalid} valid, {invalid} invalid" if invalid else "all valid"
    if n == 1:
        verdict = "invalid" if invalid else "valid"
    tail = f" ({', '.join(counts)})" if counts else ""
    return f"checked {plural(n, 'lesson')}: {verdict}{tail}"


# ---------------------------------------------------------------------------------------------
# teaching warnings


def capped(warnings: list[Problem]) -> list[Problem]:
    """The first ``MAX_ERRORS`` warnings and, when there are more, one that counts the rest."""
    if len(warnings) <= MAX_ERRORS:
        return warnings
    last = warnings[MAX_ERRORS - 1]
    rest = len(warnings) - MAX_ERRORS
    more = f"{plural(rest, 'more warning')} not shown"
    return [*warnings[:MAX_ERRORS], Problem(last.path, last.line, last.col, more, "warning")]


def teaching_warnings(lesson: Lesson) -> list[Problem]:
    """Warnings about a valid lesson that would teach badly, in file order."""
    found = list(_entry_warnings(lesson)) + list(_weight_warnings(lesson))
    found += _decoding_warnings(lesson)
    found += list(_angle_warnings(lesson))
    found += _scale_warnings(lesson)
    return sorted(found, key=lambda p: (p.line, p.col))


LARGE_SCORE = 10  # |score| above this, unscaled: softmax of it is all but one-hot


def _scale_warnings(lesson: Lesson) -> list[Problem]:
    """A lesson that does not scale (``scale: none``) whose raw scores are large."""
    if lesson.scale != "none":
        return []
    d = _derived(lesson)
    cells = [c for s in d.every("scores") for row in s.cells for c in row]
    top = max(cells, key=lambda c: abs(c.value))
    if abs(top.value) <= LARGE_SCORE:
        return []
    line, col = lesson.where.get("scale", (1, 1))
    why = (
        f"scale is none, and a score is {number(top, lesson.precision)} (|score| above "
        f"{LARGE_SCORE}): softmax of raw scores that large is all but one-hot; scale "
        "them (remove scale:, or scale: sqrt_d_k) or use smaller numbers"
    )
    return [Problem(lesson.path, line, col, why, "warning")]


def _decoding_warnings(lesson: Lesson) -> list[Problem]:
    """Issue 17's keys used in a way that teaches something else than they mean to."""
    out = []
    # advice only the loader would accept (spec.REFUSED_COMBINATIONS): never mask: causal where
    # a source sentence forbids it
    causal_allowed = not refused(lesson.features | {"causal"})
    if lesson.next is not None and lesson.mask != "causal" and causal_allowed:
        line, col = lesson.where.get("next", (1, 1))
        out.append(
            Problem(
                lesson.path,
                line,
                col,
                "next: without mask: causal; the new row is still right, but without the mask "
                "every earlier token would attend to the new one too, so a decoder could not "
                "keep their rows: add mask: causal to teach the KV cache as decoders use it",
                "warning",
            )
        )
    if lesson.kv_groups is not None and lesson.kv_groups == len(lesson.heads) > 1:
        line, col = lesson.where.get("kv_groups", (1, 1))
        out.append(
            Problem(
                lesson.path,
                line,
                col,
                f"kv_groups is {lesson.kv_groups}, one group per head: nothing is shared, which "
                "is plain multi-head attention; use fewer groups to teach grouped heads",
                "warning",
            )
        )
    return out


def _angle_warnings(lesson: Lesson) -> Iterator[Problem]:
    """RoPE angles that are not worked exactly by hand."""
    if lesson.positions != "rope":
        return
    if lesson.theta is None:
        line, col = lesson.where.get("positions", (1, 1))
        yield Problem(
            lesson.path,
            line,
            col,
            "positions: rope without theta turns pair i by position × 10000^(−2i/d_k) "
            "radians, whose cos and sin are not worked by hand; give theta in degrees, one "
            "angle per pair of columns (e.g. [90] or [60, 90]), so every angle is a multiple "
            "of 30° or 45°",
            "warning",
        )
        return
    import sympy

    from tutor.core.positions import friendly

    units = lesson.theta_units or ("deg",) * len(lesson.theta)
    for k, ((p, q), unit) in enumerate(zip(lesson.theta, units, strict=True), 1):
        if unit == "rad":  # radians were asked for: cos(1) is what the lesson means to show
            continue
        theta = sympy.Rational(p, q)
        bad = [pos for pos in range(1, lesson.n) if not friendly(pos * theta)]
        if bad:
            line, col = lesson.where.get(f"theta.{k}", lesson.where.get("theta", (1, 1)))
            pos = bad[0]
            angle = fmt_degrees(pos * theta)
            yield Problem(
                lesson.path,
                line,
                col,
                f"theta entry {k} is {fmt_degrees(theta)}°, so the token at position {pos} "
                f"turns by {angle}°, whose cos and sin are not known by heart; multiples of 30° "
                "or 45° give 0, ±1/2, ±√2/2, ±√3/2 or ±1 (e.g. 90° or 60°)",
                "warning",
            )


def fmt_degrees(x) -> str:  # type: ignore[no-untyped-def]
    """An exact number of degrees as text: ``60``, ``22.5``, ``40/3``."""
    places = decimal_places(int(x.q))
    if places is None:
        return f"{MINUS if x < 0 else ''}{abs(x.p)}/{x.q}"
    return decimal_text(round_half_up(rational(int(x.p), int(x.q)), places))


def _matrices(lesson: Lesson) -> Iterator[tuple[str, str, Matrix]]:
    """Every given matrix, in the order kinds has them: (position key prefix, name in
    messages, matrix)."""
    x = "E" if lesson.embedded else "X"
    if not lesson.qkv:  # given Q, K, V: X is the identity the lesson does not write
        yield x, x, lesson.X
    heads = False
    for kind in kinds.KINDS:
        if not kind.editable or kind.decoding or kind.held == kinds.BY_NAME[x].held:
            continue
        if not kind.per_head:
            m = getattr(lesson, kind.held or kind.name)
            if m is not None:
                yield kind.name, kind.name, m
        elif not heads:  # each head's W's, head by head
            heads = True
            yield from _head_matrices(lesson)


def _head_matrices(lesson: Lesson) -> Iterator[tuple[str, str, Matrix]]:
    for h, head in enumerate(lesson.heads, 1):
        key, shown = (f"heads.{h}.", f" of head {h}") if lesson.multi_head else ("", "")
        for w in kinds.WEIGHTS:  # given Q, K, V are held as the W's
            written = next(k for k in kinds.KINDS if k.held == w and not k.editable).name
            written = written if lesson.qkv else w
            yield f"{key}{written}", f"{written}{shown}", getattr(head, w)


def hard_entry(entry: Entry) -> str | None:
    """Why an entry is unpleasant by hand, or None when it is fine."""
    p, q = entry
    places = decimal_places(q)
    if places is not None and places > MAX_PLACES:
        text = decimal_text(round_half_up(rational(p, q), places))
        return (
            f"is {text}, with {places} decimal places; entries with at most {MAX_PLACES} "
            "keep the working readable by hand"
        )
    if places is None and q > MAX_DENOMINATOR:
        text = f"{MINUS if p < 0 else ''}{abs(p)}/{q}"
        return (
            f"is {text}; a denominator of {q} is hard to work with by hand (halves, thirds, "
            f"… up to twelfths are fine)"
        )
    return None


def _entry_warnings(lesson: Lesson) -> Iterator[Problem]:
    for key, shown, m in _matrices(lesson):
        for i, row in enumerate(m, 1):
            for j, entry in enumerate(row, 1):
                why = hard_entry(entry)
                if why:
                    line, col = lesson.where.get(f"{key}.{i}.{j}", lesson.where.get(key, (1, 1)))
                    yield Problem(
                        lesson.path, line, col, f"{shown} row {i}, column {j} {why}", "warning"
                    )


def attention(lesson: Lesson, head: Head) -> tuple[Step, Step, Step]:
    """One head's scores, scaled scores (masked, under a causal mask) and weights: the steps of
    the lesson's own derivation (``engine.derive``, the one pipeline), so every lesson kind is
    checked as the walk works it."""

    d = _derived(lesson)
    h = next(k for k, x in enumerate(lesson.heads, 1) if x is head) if lesson.multi_head else None
    weights = d.step("weights", h)
    return d.step("scores", h), weights.args[0], weights  # what the softmax reads


_DERIVED: dict[int, tuple[Lesson, Derivation]] = {}


def _derived(lesson: Lesson) -> Derivation:
    """The lesson's derivation, worked once for all its heads' warnings."""

    got = _DERIVED.get(id(lesson))
    if got is None or got[0] is not lesson:
        _DERIVED.clear()
        got = _DERIVED[id(lesson)] = (lesson, derive(lesson))
    return got[1]


def _weight_warnings(lesson: Lesson) -> Iterator[Problem]:
    yield from _duplicate_rows(lesson)
    yield from value_warnings(lesson)
    yield from key_warnings(lesson)
    for h, head in enumerate(lesson.heads, 1):
        worked = attention_rows(lesson, head)  # once per head, for both checks
        yield from head_warnings(lesson, h, head, worked)
        yield from _focus_warnings(lesson, h, head, worked[1])


def _focus_warnings(lesson: Lesson, h: int, head: Head, rows: list[Row]) -> Iterator[Problem]:
    """A focus (the head's own, else the lesson's) on a row whose weights are all equal."""
    focus, key = (head.focus, f"heads.{h}.focus") if head.focus else (lesson.focus, "focus")
    if focus is None:
        return
    i = lesson.labels.index(focus.row)
    if any(r.i == i and r.uniform for r in rows) and not all(r.uniform for r in rows):
        line, col = lesson.where.get(key, (1, 1))
        of_head = f" (head {h})" if lesson.multi_head else ""
        yield Problem(
            lesson.path,
            line,
            col,
            f"focus works the row of {focus.row}{of_head}, whose weights are uniform: every "
            "step would show a plain average while other rows have something to teach; focus "
            "on one of those (or leave focus out and the walk picks the most decisive row)",
            "warning",
        )


@dataclass(frozen=True)
class Row:
    """One row of one head's attention, as doubles (``Cell.value``): what the teaching checks
    read. ``seen`` are the columns the row's token sees (all, or up to itself when causal)."""

    i: int
    seen: tuple[int, ...]
    uniform: bool  # every score it sees is exactly equal
    scaled: tuple[float, ...]  # over seen
    weights: tuple[float, ...]  # over seen

    @property
    def top(self) -> int:
        """The column of its largest weight (the first of equals)."""
        return self.seen[max(range(len(self.seen)), key=self.weights.__getitem__)]

    @property
    def tops(self) -> frozenset[int]:
        """Every column whose weight ties the largest."""
        peak = max(self.weights)
        return frozenset(j for j, w in zip(self.seen, self.weights, strict=True) if peak - w < TIE)

    @property
    def margin(self) -> float:
        """The largest weight minus the next: how clearly the row prefers one key."""
        ordered = sorted(self.weights, reverse=True)
        return ordered[0] - ordered[1] if len(ordered) > 1 else 1.0

    @property
    def peak(self) -> float:
        return max(self.weights)

    @property
    def loudest(self) -> float:
        """The largest |scaled| it sees."""
        return max(abs(x) for x in self.scaled)

    def zeros(self, precision: int) -> int:
        """How many of its weights show as 0.00 at ``precision``."""
        return sum(w < 0.5 * 10**-precision for w in self.weights)

    @property
    def mostly_zero_at(self) -> int:
        """More than half its weights are below this many decimals' 0.5 unit: see ``zeros``."""
        return len(self.weights) // 2 + 1


TIE = 1e-12  # weights closer than this are equal scores' (exact ties round to the same double)
MAX_SCALED = 4.0  # |scaled| above this: e^x is no longer worked by hand, softmax turns loud


def attention_rows(lesson: Lesson, head: Head) -> tuple[tuple[Step, Step, Step], list[Row]]:
    """One head's scores, scaled and weights steps, and each row with a choice to make (it sees
    at least two tokens) as numbers."""
    steps = attention(lesson, head)
    scores, scaled, weights = steps
    causal = lesson.mask == "causal"
    rows = []
    for i in range(lesson.n):
        seen = tuple(range(i + 1)) if causal else tuple(range(len(scores.cols)))
        if len(seen) < 2:
            continue  # one visible token: a weight of 1 is the only possible answer
        first = scores.cells[i][seen[0]]
        rows.append(
            Row(
                i,
                seen,
                all(_same(scores.cells[i][j], first) for j in seen),
                tuple(scaled.cells[i][j].value for j in seen),
                tuple(weights.cells[i][j].value for j in seen),
            )
        )
    return steps, rows


def _same(a, b) -> bool:  # type: ignore[no-untyped-def]
    """Two scores that are equal: exactly, or (irrational ones, from positions) to 30 digits."""
    if a.q is not None or b.q is not None:
        return a.q == b.q
    return abs(a.approx - b.approx) <= abs(a.approx) * 1e-30 + 1e-30


CALM_PEAK = 0.9  # new and variants put at most this on one key (check warns above ONE_HOT)
MARGIN = 0.05  # a row's strongest key leads the next by this much, to be clearly the strongest


def row_faults(row: Row, precision: int, like: Row | None = None) -> list[str]:
    """The constraints a row of a generated lesson breaks, named; ``new`` and ``variants`` aim
    for none. With ``like`` (the same row of the lesson a variant is made from), each is relaxed
    where that row has it too, and the strongest key must stay where ``like`` puts it."""
    faults = []
    if row.uniform and not (like and like.uniform):
        faults.append("uniform weights")
    if row.peak > CALM_PEAK and not (like and like.peak > CALM_PEAK):
        faults.append(f"more than {CALM_PEAK:g} on one key")
    zeros = row.zeros(precision) >= row.mostly_zero_at
    if zeros and not (like and like.zeros(precision) >= like.mostly_zero_at):
        faults.append("weights mostly 0")
    if row.loudest > MAX_SCALED and not (like and like.loudest > MAX_SCALED):
        faults.append(f"|scaled| above {MAX_SCALED:g}")
    if like is not None and not like.uniform:
        if not row.tops <= like.tops:  # (a new tie with another key moves it too)
            faults.append("strongest key moved")
        elif len(like.tops) == 1 and row.margin < min(MARGIN, like.margin):
            faults.append(f"strongest key leads by less than {min(MARGIN, like.margin):.2f}")
    return faults


def head_warnings(
    lesson: Lesson,
    h: int,
    head: Head,
    worked: tuple[tuple[Step, Step, Step], list[Row]] | None = None,
) -> Iterator[Problem]:
    """Uniform, one-hot or mostly-0.00 rows of weights, and loud scaled scores in head ``h``
    (``worked``: its ``attention_rows``, when the caller has them)."""
    labels = lesson.labels
    causal = lesson.mask == "causal"
    of_head = f" (head {h})" if lesson.multi_head else ""
    z = f"head{h}.Z" if lesson.multi_head else "Z"  # the cell's name, as explain takes it
    (scores, scaled_step, weights), rows = worked or attention_rows(lesson, head)
    zero = "0." + "0" * lesson.precision if lesson.precision else "0"
    what = "scores" if lesson.scale == "none" else "scaled scores"  # (scale: none: the raw ones)

    def at(row: Row, message: str) -> Problem:
        x = "E" if lesson.embedded else "X"
        if lesson.qkv:  # the row's query, as the lesson gives it
            x = f"heads.{h}.Q" if lesson.multi_head else "Q"
        line, col = lesson.where.get(f"{x}.{row.i + 1}", lesson.where.get(x, (1, 1)))
        return Problem(lesson.path, line, col, message, "warning")

    for row in rows:
        i, label = row.i, labels[row.i]
        if row.uniform:
            those = "all tokens" if not causal else f"the {len(row.seen)} tokens it sees"
            yield at(
                row,
                f"the weights of {label}{of_head} are uniform: every score in its row is "
                f"{number(scores.cells[i][row.seen[0]], 2, whole=True)}, so {those} get the "
                f"same weight and {z}[{label}] is a plain average; unless that is the point, "
                f"change this row of {'Q, or K' if lesson.qkv else 'X, or W_Q or W_K'}",
            )
            continue
        cells = [scaled_step.cells[i][j] for j in row.seen]
        low = number(min(cells, key=lambda c: c.value), 2, whole=True)
        high = number(max(cells, key=lambda c: c.value), 2, whole=True)
        if row.peak > ONE_HOT:
            yield at(
                row,
                f"the weights of {label}{of_head} are nearly one-hot: "
                f"{number(weights.cells[i][row.top], 3)} on {weights.cols[row.top]}, as "
                f"its {what} run from {low} to {high}; smaller entries in X, W_Q or "
                "W_K give softmax something to share",
            )
            continue
        if row.zeros(lesson.precision) >= row.mostly_zero_at:
            yield at(
                row,
                f"the weights of {label}{of_head} are mostly {zero}: "
                f"{row.zeros(lesson.precision)} of {len(row.seen)} show as {zero}, as its "
                f"{what} run from {low} to {high}; a student learns little from "
                f"weights that vanish, so smaller entries in {_qk(lesson)} share them out",
            )
        elif row.loudest > MAX_SCALED:  # (mostly 0.00 has said how loud they are)
            yield at(
                row,
                f"the {what} of {label}{of_head} run from {low} to {high}, beyond "
                f"±{MAX_SCALED:g}: e^x of such scores is not worked by hand and softmax turns "
                f"loud; smaller entries in {_qk(lesson)} keep them in a calm range",
            )


def _qk(lesson: Lesson) -> str:
    """What makes the scores, as the lesson writes it."""
    return "Q or K" if lesson.qkv else "X, W_Q or W_K"


def _duplicate_rows(lesson: Lesson) -> Iterator[Problem]:
    """Different words with the same row of X (or of E): what attention then gives the two
    alike, and only that. Without a mask and positions, everything; a causal mask or RoPE
    tells them apart after the queries and keys; added positions before them."""
    added = lesson.positions in ("given", "sinusoidal")  # the lesson's rows are E; X = E + P
    key = "E" if added else "X"
    first: dict[tuple, int] = {}
    for i, (word, row) in enumerate(zip(lesson.tokens, lesson.X, strict=True)):
        j = first.setdefault(row, i)
        if j != i and lesson.tokens[j] != word:
            line, col = lesson.where.get(f"{key}.{i + 1}", lesson.where.get(key, (1, 1)))
            a, b = lesson.labels[j], lesson.labels[i]
            alike = _alike(lesson, a, b, i - j)
            yield Problem(
                lesson.path,
                line,
                col,
                f"the row of {key} of {b} is the same as {a}'s, {alike}; unless "
                "that is the point, give them different features",
                "warning",
            )


def _alike(lesson: Lesson, a: str, b: str, apart: int) -> str:
    """What two tokens with the same row (``apart`` places after each other) share, said only
    as far as it is true."""
    if lesson.positions in ("given", "sinusoidal"):
        return (
            "the same embedding; their positions are added to it, so their rows of X, queries, "
            "keys and values differ by position alone"
        )
    if lesson.positions == "rope":
        return (
            "so the two have the same query, key and value before positions; RoPE turns them "
            "by different positions, so their scores, weights and Z can differ"
        )
    if lesson.source is not None:  # keys and values come from the source sentence
        return "so the two have the same query, and so the same scores, weights and Z"
    if lesson.mask == "causal":
        return (
            f"so the two have the same query, key and value; under mask: causal {b} sees "
            f"{plural(apart, 'token')} more than {a}, so their weights differ (and Z can)"
        )
    return (
        "so the two are the same token to attention (the same query, key and value, the same "
        "weights and Z)"
    )


def _head_steps(lesson: Lesson, name: str) -> Iterator[tuple[int, Step]]:
    """Each head's step ``name`` (K, K_rot, V), once per key/value group: (head, step)."""
    d = _derived(lesson)
    for h in range(1, len(lesson.heads) + 1):
        of = h if lesson.multi_head else None
        if d.has(name, of):  # a later head of a group reads its first head's K and V
            yield h, d.step(name, of)


def _w_at(lesson: Lesson, h: int, key: str) -> tuple[int, int]:
    """Where a head's W_K or W_V is written (its group's, with grouped heads)."""
    if lesson.kv_groups is not None:
        name = f"kv_heads.{lesson.group_of(h)}.{key}"
    else:
        name = f"heads.{h}.{key}" if lesson.multi_head else key
    return lesson.where.get(name, lesson.where.get(key, (1, 1)))


def _cells_text(cells) -> str:  # type: ignore[no-untyped-def]
    return "[" + ", ".join(number(c, 2, whole=True) for c in cells) + "]"


def value_warnings(lesson: Lesson) -> Iterator[Problem]:
    """Rows of V all equal (Z is the same row for every token) or columns of V all equal
    (each row of Z repeats one number): Z then shows nothing of the weights."""
    words = lesson.source or lesson.tokens
    rows = lesson.X_src or lesson.X
    if len(set(words)) < 2 or len(set(rows)) < 2:
        return  # one word repeated, or one row of X (said as such): equal values follow
    for h, V in _head_steps(lesson, "V"):
        of_head = f" (head {h})" if lesson.multi_head else ""
        z = f"head{h}.Z" if lesson.multi_head else "Z"
        rows = len({tuple(c.q for c in row) for row in V.cells}) == 1
        cols = len(V.cols) > 1 and all(
            all(_same(row[j], row[0]) for j in range(len(row))) for row in V.cells
        )
        if not rows and not cols:
            continue
        if rows:
            what = (
                f"every row of V{of_head} is {_cells_text(V.cells[0])}, so every row of {z} is "
                "that row whatever the weights"
            )
            if cols:
                what += f", and {z} is {number(V.cells[0][0], 2, whole=True)} everywhere"
        else:
            what = (
                f"in every row of V{of_head} the columns are equal, so each row of {z} repeats "
                "one number"
            )
        line, col = _w_at(lesson, h, "W_V")
        yield Problem(
            lesson.path,
            line,
            col,
            f"{what}: Z shows nothing of where the weights fall; unless that is the point, "
            "give the tokens different values (change W_V)",
            "warning",
        )


def key_warnings(lesson: Lesson) -> Iterator[Problem]:
    """Two different words (of the source sentence, in cross-attention) whose keys are equal
    and share the largest weight of a row that sees both: that row has no strongest key, and
    no query can ever prefer one of the two. (Equal rows of X are the same-row warning's.)"""
    source = lesson.X_src is not None
    words, labels = (
        (lesson.source, lesson.source_labels) if source else (lesson.tokens, lesson.labels)
    )
    rows_of = lesson.X_src if source else lesson.X
    x = "X_src" if source else ("E" if lesson.embedded else "X")
    name = "K_rot" if lesson.positions == "rope" else "K"
    groups = {lesson.group_of(h): h for h in range(len(lesson.heads), 0, -1)}
    for g, first in sorted(groups.items()):
        K = dict(_head_steps(lesson, name))[first]
        heads = [h for h in range(1, len(lesson.heads) + 1) if lesson.group_of(h) == g]
        rows = {h: attention_rows(lesson, lesson.heads[h - 1])[1] for h in heads}
        said: set[int] = set()
        for b in range(len(K.rows)):
            for a in range(b):
                if words[a] == words[b] or rows_of[a] == rows_of[b] or b in said:
                    continue
                if not all(_same(p, q) for p, q in zip(K.cells[a], K.cells[b], strict=True)):
                    continue
                tied = [
                    (h, r) for h in heads for r in rows[h] if not r.uniform and {a, b} <= r.tops
                ]
                if not tied:
                    continue  # equal, but never the row's choice: nothing is hidden
                said.add(b)
                h, row = tied[0]
                of_head = f" (head {h})" if lesson.multi_head else ""
                line, col = lesson.where.get(f"{x}.{b + 1}", lesson.where.get(x, (1, 1)))
                yield Problem(
                    lesson.path,
                    line,
                    col,
                    f"the keys of {labels[a]} and {labels[b]}{of_head} are equal "
                    f"({name}[{labels[a]}] = {name}[{labels[b]}] = {_cells_text(K.cells[a])}), "
                    f"so they share the largest weight of {lesson.labels[row.i]}: no query can "
                    f"prefer one of them; unless that is the point, change W_K or their rows "
                    f"of {x}",
                    "warning",
                )
