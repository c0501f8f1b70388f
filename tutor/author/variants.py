"""``variants``: one lesson per student, each with its own numbers, the same teaching intent and
the same amount of work.

A variant keeps everything of the lesson but the numbers a student starts from: X (E when the
lesson adds positions; P, the sinusoidal table and RoPE's θ stay as given), X_src, every head's
W_Q and every key/value group's W_K and W_V, and the next token's x. It is a random walk from the
lesson: one entry at a time is changed to another of the lesson's own entry values (or those of
``--entries``), and a change is kept only while every constraint holds, measured against the
original (``faults``):

* each row of every head's weights, and the decoding row, meets
  ``tutor.author.check.row_faults`` (the strongest key stays put with a clear margin; no
  uniform row, no more than 0.9 on one key, no row mostly 0.00 and no |scaled| above 4, each
  unless the original has it);
* the non-zero products a student works by hand stay within ±10 % of the original's (``work``);
* no two different words gain equal rows of X or X_src, and no matrix a row of zeros.

A walk ends only where two more hold (``end_faults``), which it may break on the way:

* what each classic slip costs (``slip_costs``: forgetting √d_k, softmax down the columns) is
  within ±10 % of the original's (never narrower than ±1 cell), so no student's variant makes a
  slip cheaper or dearer than a classmate's. Held inside that range all the way, walks stayed
  near the original (the-cake's variants shared 81 % of their shown cells, pair by pair; two of
  14 shared 310 of 320), so a neighbour's sheet would pass as one's own. Walked through, drawn
  back to the range (``PULL``) and ended in it, they share 64 % (61 % unbounded);
* at least ``DISTINCT`` of the shown cells (``shown_cells``) differ from the original's, whose
  every cell ``walk`` shows. Not checked between variants: a student's variant depends only on
  the seed and their id, and a check against classmates' would make it depend on the class.

The file is the original's own text with the changed entries written in place, so the
instructor's comments, ``focus:``, ``quiz:``, ``points:`` and every key of the lesson stay;
the notes that are still true of the new numbers are kept (``kept_notes``). The same seed gives
the same variants; no two are the same, and none is the original.
"""

from __future__ import annotations

import random
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from tutor.author import budget as bg
from tutor.author.new import faults_of, notes_of
from tutor.core import kinds
from tutor.core.engine import MP, Cell, Derivation, Softmax, Step
from tutor.core.errors import TutorError
from tutor.core.lesson import Entry, Focus, Lesson, Matrix
from tutor.core.roster import Student
from tutor.text.lessonyaml import entry_text, yaml_text

TRIES = 40  # walks for one variant before saying which constraints could not be met
# the search's budget (``budget.Budget``): budget.SECONDS of CPU for up to this many variants,
# and as much again for each as many more, so a class of any size fits where one variant takes
# under 0.8 s, and at the README's limits (seconds a variant) the search gives up by 25 s
BUDGET_VARIANTS = 30
STEPS = 60  # changes proposed in one walk (each kept only if every constraint still holds)
# a small lesson walks longer (``walk_steps``): its changes cost little, and its few ways to keep
# a slip's price make short walks meet (cats-chase-mice, 30 variants: 169 of 435 pairs alike in
# over 80 % of their shown cells with 60 proposals, 79 with 200; 78 before the price held)
STEPS_MOST = 200
WALK_PRODUCTS = 9000  # walk_steps: proposals × the original's products, at STEPS_MOST
EXTRA = 120  # then up to this many more, until the walk stands where it may end (``end_faults``)
WORK_SPREAD = 0.10  # a variant's products, and each classic slip's cost, within this share
# on the way, a change that takes a slip's cost further outside its range is refused this
# often (at the end, always): a walk drifts back to the range without being held inside it,
# which kept the-cake's variants near the original (81 % of shown cells shared, pairs' mean);
# 0.8 made the-cake's pairs share 68 %, 0.5 64 %, none 60 % but twice the CPU (bench/README)
PULL = 0.5
# a variant shows at least this share of its shown cells (and DISTINCT_LEAST of them) otherwise
# than the original, whose every cell the walk shows: the share (and count) by which integrity's
# other-variant flag calls a sheet another's numbers (its FIT_MARGIN, FIT_LEAST). Before, the
# original and a variant shared up to 90-100 % of the cells; 35 % apart ran the-cake-two-heads
# out of its budget (bench/README.md)
DISTINCT = 0.2
DISTINCT_LEAST = 3
N_BY_N = kinds.SQUARE  # the steps whose columns are tokens


@dataclass(frozen=True)
class Variant:
    """One student's lesson."""

    id: str  # "variant-07"
    student: Student | None
    lesson: Lesson

    @property
    def file_name(self) -> str:
        slug = ""
        if self.student:
            slug = _slug(self.student.name) or _slug(self.student.id)
        return f"{self.id}-{slug}.yaml" if slug else f"{self.id}.yaml"


# letters that are not a base letter with marks, so NFKD cannot take them apart
_LETTERS = str.maketrans(
    {"ß": "ss", "ẞ": "ss", "æ": "ae", "Æ": "ae", "œ": "oe", "Œ": "oe", "þ": "th", "Þ": "th"}
    | {c: "o" for c in "øØ"}
    | {c: "d" for c in "đĐðÐ"}
    | {c: "l" for c in "łŁ"}
    | {c: "h" for c in "ħĦ"}
    | {"ı": "i"}
)


def _slug(text: str) -> str:
    """``García Íñez`` → ``garcia-inez``, ``Weiß`` → ``weiss``: safe in a file name (letters
    and digits), accented letters written without their marks."""
    plain = unicodedata.normalize("NFKD", text.translate(_LETTERS))
    plain = "".join(c for c in plain if not unicodedata.combining(c))
    return re.sub(r"[^a-z0-9]+", "-", plain.lower()).strip("-")[:40]


# ---------------------------------------------------------------------------------------------
# the numbers a variant changes


def numbers_of(lesson: Lesson) -> dict[str, Matrix]:
    """The given matrices a variant may change, by name: ``X`` (E with positions), ``X_src``,
    ``W_Q.h`` per query head, ``W_K.g`` and ``W_V.g`` per key/value group (a head's own when
    the heads are not grouped), and ``x_new`` (one row) for the next token."""
    out = {"X": lesson.X}
    if lesson.X_src is not None:
        out["X_src"] = lesson.X_src
    for h, head in enumerate(lesson.heads, 1):
        g = lesson.group_of(h)
        out[f"W_Q.{h}"] = head.W_Q
        out.setdefault(f"W_K.{g}", head.W_K)
        out.setdefault(f"W_V.{g}", head.W_V)
    if lesson.next is not None:
        out["x_new"] = (lesson.next.x,)
    return out


def with_numbers(lesson: Lesson, numbers: dict[str, Matrix]) -> Lesson:
    """The lesson with these matrices (``numbers_of``'s names); the heads of a group share
    its W_K and W_V."""
    heads = tuple(
        replace(
            head,
            W_Q=numbers[f"W_Q.{h}"],
            W_K=numbers[f"W_K.{lesson.group_of(h)}"],
            W_V=numbers[f"W_V.{lesson.group_of(h)}"],
        )
        for h, head in enumerate(lesson.heads, 1)
    )
    nxt = replace(lesson.next, x=numbers["x_new"][0]) if lesson.next is not None else None
    return replace(lesson, X=numbers["X"], X_src=numbers.get("X_src"), heads=heads, next=nxt)


def _kind(name: str) -> str:
    """Which entry values a matrix draws from: a W's (``w``) or the features' (``x``)."""
    return "w" if name.startswith("W_") else "x"


def entry_values(lesson: Lesson, entries: tuple[Entry, ...] | None = None) -> dict[str, tuple]:
    """The values a variant's entries may take, for the features and for the W's: the set of
    the lesson's own entries (a 0/1 lesson stays 0/1, no negatives where it has none), or
    ``entries``."""
    found = set(entries or ())
    if not entries:
        found = {e for m in numbers_of(lesson).values() for row in m for e in row}
    ordered = tuple(sorted(found, key=lambda e: e[0] / e[1]))
    return {"x": ordered, "w": ordered}


def values_text(values: tuple[Entry, ...]) -> str:
    return ", ".join(entry_text(e).strip('"') for e in values)


def _tweak(rng: random.Random, lesson: Lesson, numbers: dict, values: dict) -> dict:
    """One entry changed to another allowed value; a repeated word (of X or the source)
    keeps one row, so its rows change together."""
    name = rng.choices(list(numbers), weights=[len(m) * len(m[0]) for m in numbers.values()])[0]
    m = numbers[name]
    i, j = rng.randrange(len(m)), rng.randrange(len(m[0]))
    choices = [v for v in values[_kind(name)] if v != m[i][j]]
    if not choices:
        return numbers
    value = rng.choice(choices)
    words = {"X": lesson.tokens, "X_src": lesson.source}.get(name)
    rows = [a for a in range(len(m)) if words[a] == words[i]] if words else [i]
    changed = tuple(
        tuple(value if (a in rows and b == j) else e for b, e in enumerate(row))
        for a, row in enumerate(m)
    )
    return {**numbers, name: changed}


# ---------------------------------------------------------------------------------------------
# equal work, said and measured


def products(step: Step, d: Derivation) -> int:
    """The non-zero products a student multiplies by hand in the cells a sheet asks of the
    step, as its rule counts them (``Step.products``): a variant's measure of work counts the
    sums of products only."""
    return sum(step.products(i, j) for i, j in d.asked(step))


def work(d: Derivation) -> int:
    """The non-zero products a student multiplies by hand: every sum of products (Q, K, V,
    scores, Z, and the heads' output and decoding step), over the cells a sheet asks."""
    return sum(products(step, d) for step in d.steps)


def work_range(original: int) -> tuple[int, int]:
    """The products (or a slip's cost in cells) a variant may have: within ``WORK_SPREAD`` of
    the original's, and never narrower than the original's own count ± 1 (a slip that costs 6
    cells may cost 5 or 7: ±10 % of 6 is less than a cell)."""
    low = int(original * (1 - WORK_SPREAD) + 0.999999)
    high = int(original * (1 + WORK_SPREAD))
    return min(low, max(original - 1, 0)), max(high, original + 1)


# the classic slips whose cost each variant says: a student who makes one loses the slipped
# step's cells that it changes (follow-through keeps the steps after it)
SLIPS = {"not-scaled": "forgetting √d_k", "softmax-column": "softmax down the columns"}
SHORT = {"not-scaled": "√d_k", "softmax-column": "columns"}  # in a variant's line


def slip_costs(d: Derivation) -> dict[str, int]:
    """The cells each classic slip costs in ``d``: the asked cells whose value at the lesson's
    places the slip changes. Forgetting √d_k writes each score as its scaled value; softmax down
    the columns shares each column's e^x (each worked from the scaled score's 40 digits,
    rounded half away from zero as every shown value is). Lessons without the step: absent."""
    from tutor.core.rounding import half_up, mp_decimal, round_decimal

    places = d.lesson.precision
    out = {}
    scaled = d.every("scaled")
    if scaled:
        out["not-scaled"] = sum(
            half_up(step.cells[i][j], places) != half_up(step.args[0].cells[i][j], places)
            for step in scaled
            for i, j in d.asked(step)
            if not step.cells[i][j].masked
        )
    weights = [w for w in d.every("weights") if isinstance(w, Softmax)]
    if weights:
        cost = 0
        for step in weights:
            source = step.args[0]
            ex = [[None if c.masked else MP.exp(c.approx) for c in row] for row in source.cells]
            totals = [sum(e for e in col if e is not None) for col in zip(*ex, strict=True)]
            for i, j in d.asked(step):
                if ex[i][j] is None:
                    continue
                down = round_decimal(mp_decimal(ex[i][j] / totals[j]), places)
                cost += down != half_up(step.cells[i][j], places)
        out["softmax-column"] = cost
    return out


def shown_cells(d: Derivation) -> tuple:
    """Every cell a sheet asks of ``d``, as its table shows it at the lesson's places (in the
    steps' order): what a copied sheet carries over from its variant."""
    from tutor.text.format import as_shown

    places = d.lesson.precision
    return tuple(
        as_shown(step.cells[i][j], places)
        for step in kinds.fill_steps(d)
        for i, j in d.asked(step)
        if not step.cells[i][j].masked
    )


@dataclass(frozen=True)
class Work:
    """One lesson's work, for the table ``variants`` prints."""

    products: int
    scaled: tuple[Cell, Cell]  # the smallest and largest |scaled| a student works
    Z: tuple[Cell, Cell]  # the smallest and largest entry of Z
    slips: dict[str, int]  # ``slip_costs``

    def line(self, places: int, original: int) -> str:
        from tutor.text.format import MINUS, number

        change = round(100 * (self.products - original) / original) if original else 0
        low, high = (number(c, places).lstrip(MINUS) for c in self.scaled)
        z_low, z_high = (number(c, places) for c in self.Z)
        costs = ", ".join(f"{n} ({SHORT[k]})" for k, n in self.slips.items())
        costs = f" · slips cost {costs}" if costs else ""
        return (
            f"products {self.products} ({change:+d} %){costs} · |scaled| {low}–{high} · "
            f"Z {z_low} to {z_high}"
        )


def work_of(d: Derivation) -> Work:
    scaled = [
        s.cells[i][j] for s in d.every("scaled") for i, j in d.asked(s) if not s.cells[i][j].masked
    ]
    z = [c for s in d.every("Z") for row in s.cells for c in row]
    by_size = sorted(scaled, key=lambda c: abs(c.value))
    by_value = sorted(z, key=lambda c: c.value)
    return Work(work(d), (by_size[0], by_size[-1]), (by_value[0], by_value[-1]), slip_costs(d))


def _zero_rows(m: Matrix) -> int:
    return sum(all(p == 0 for p, _ in row) for row in m)


def _equal_rows(m: Matrix, words: tuple[str, ...]) -> int:
    """Pairs of different words with the same row: attention cannot tell them apart."""
    return sum(
        m[a] == m[b] and words[a] != words[b] for a in range(len(m)) for b in range(a + 1, len(m))
    )


def decoding_rows(d: Derivation) -> list:
    """The decoding step's one row of weights per head, as ``check.Row``s."""
    from tutor.author.check import Row, _same

    rows = []
    for s in d.every("weights_new"):
        scaled = s.args[0]
        first = scaled.cells[0][0]
        seen = tuple(range(len(s.cols)))
        rows.append(
            Row(
                0,
                seen,
                all(_same(scaled.cells[0][j], first) for j in seen),
                tuple(scaled.cells[0][j].value for j in seen),
                tuple(s.cells[0][j].value for j in seen),
            )
        )
    return rows


def faults(original: Lesson) -> Callable[[Lesson], list[str]]:
    """What keeps a candidate from being a variant of ``original``, named (none: it is one)."""
    from tutor.author.check import _derived, row_faults, value_warnings
    from tutor.core.engine import derive

    d = derive(original)
    constant_z = len(list(value_warnings(original)))
    rows = faults_of(original)
    products = work(d)
    low, high = work_range(products)
    old_decoding = decoding_rows(d)
    before = numbers_of(original)
    zero_rows = {k: _zero_rows(m) for k, m in before.items()}
    words = {"X": original.tokens, "X_src": original.source}
    equal = {k: _equal_rows(before[k], w) for k, w in words.items() if w is not None}

    def found(lesson: Lesson) -> list[str]:
        out = []
        numbers = numbers_of(lesson)
        for k, m in numbers.items():
            if _zero_rows(m) > zero_rows[k]:
                out.append(f"{_shown(k, lesson)} has a row of zeros")
        for k, n in equal.items():
            if _equal_rows(numbers[k], words[k]) > n:  # type: ignore[arg-type]
                out.append(f"two different words have the same row of {_shown(k, lesson)}")
        if out:  # cheap: no need to work the lesson
            return out
        out = rows(lesson)
        if out:
            return out
        if len(list(value_warnings(lesson))) > constant_z:
            out.append("V's rows (or columns) are all equal: Z would not show the weights")
        worked = _derived(lesson)
        for h, (new, old) in enumerate(zip(decoding_rows(worked), old_decoding, strict=True), 1):
            of_head = f" (head {h})" if lesson.multi_head else ""
            out += [f"the next token{of_head}: {f}" for f in row_faults(new, lesson.precision, old)]
        n = work(worked)
        if not low <= n <= high:
            out.append(
                f"{n} non-zero products to work by hand, outside {low}–{high} "
                f"(±{WORK_SPREAD:.0%} of the original's {products})"
            )
        return out

    return found


def apart(cells: int) -> int:
    """How many of its ``cells`` shown cells a variant shows otherwise than any other."""
    return max(DISTINCT_LEAST, -(-cells * int(DISTINCT * 100) // 100))


def differ(a: tuple, b: tuple) -> int:
    """How many cells two variants (``shown_cells``) show otherwise."""
    return sum(x != y for x, y in zip(a, b, strict=True))


def walk_steps(products: int) -> int:
    """The changes one walk proposes before it may end, for a lesson of so many products:
    ``STEPS``, and up to ``STEPS_MOST`` where each change costs little."""
    return min(STEPS_MOST, max(STEPS, WALK_PRODUCTS // max(products, 1)))


def _outside(costs: dict[str, int], ranges: dict[str, tuple[int, int]]) -> int:
    """How many cells the slips' costs lie outside their ranges, in all."""
    return sum(max(ranges[k][0] - c, c - ranges[k][1], 0) for k, c in costs.items())


def end_faults(original: Lesson) -> Callable[[Derivation], list[str]]:
    """What keeps a lesson that meets ``faults`` from being where a walk ends, named: a classic
    slip that costs more or fewer cells than ``work_range`` of the original's cost, or fewer
    than ``apart`` of its shown cells shown otherwise than the original's."""
    from tutor.core.engine import derive

    d = derive(original)
    costs = slip_costs(d)
    own = shown_cells(d)
    need = apart(len(own))

    def found(worked: Derivation) -> list[str]:
        out = []
        for slip, cost in slip_costs(worked).items():
            low, high = work_range(costs[slip])
            if not low <= cost <= high:
                out.append(
                    f"{SLIPS[slip]} costs {cost} cells, outside {low}–{high} "
                    f"(±{WORK_SPREAD:.0%} of the original's {costs[slip]})"
                )
        if out:
            return out
        cells = shown_cells(worked)
        n = differ(cells, own)
        if n < need:
            out.append(
                f"it shows {len(cells) - n} of its {len(cells)} cells as the original does, "
                f"more than {len(cells) - need}"
            )
        return out

    return found


def _shown(name: str, lesson: Lesson) -> str:
    """A ``numbers_of`` name as the lesson's reader knows it."""
    key, _, n = name.partition(".")
    kind = kinds.BY_NAME[key]
    if kind.decoding:
        return f"the next token's {kind.held}"
    if lesson.embedded:  # the lesson's X holds E (X = E + P): the first step held there
        key = kinds.names(held=kind.held)[0]
    if not n or not lesson.multi_head:
        return key
    grouped = lesson.kv_groups and kinds.BY_NAME[key].grouped
    return f"{key} of group {n}" if grouped else f"{key} of head {n}"


# ---------------------------------------------------------------------------------------------
# making variants


def student_key(student: Student) -> str:
    """What a student's numbers are drawn from, with the seed: their id, else their name,
    normalised as the platforms compare them (NFKC, case-folded, runs of spaces as one)."""
    text = student.id or student.name
    return ("id:" if student.id else "name:") + " ".join(
        unicodedata.normalize("NFKC", text).casefold().split()
    )


def make_variants(
    lesson: Lesson,
    students: list[Student] | None,
    count: int,
    seed: int,
    entries: tuple[Entry, ...] | None = None,
    first: int = 1,
    width: int | None = None,
    taken: frozenset[tuple] = frozenset(),
) -> list[Variant]:
    """One variant per student (or ``count`` of them), the same for the same seed; raise
    ``TutorError`` naming the constraints that could not be met rather than return a poor one.
    ``entries``: the values entries may take (default: the lesson's own).

    A student's numbers depend only on the seed and their id (``student_key``), never on their
    place in the roster: adding, removing or reordering students changes no one else's. (Only
    when two students' walks meet on the same numbers does the one later in id order walk
    again.) Without a roster, variant k's numbers come from the seed and k. ``first`` and
    ``width`` number the variants (``variants --add`` goes on from a folder's last one);
    ``taken``: numbers already handed out (``_key``)."""
    if lesson.qkv:  # a variant is written as new numbers for X and the W's
        raise TutorError(
            f"{lesson.path}: variants cannot yet make new numbers for a lesson with Q, K and V "
            "given; copy the lesson and change its numbers by hand (attn-tutor check keeps it "
            "valid)"
        )
    if lesson.next_after:  # the x_new of a variant is one row, the single next: mapping's
        line, col = lesson.where.get("next", (1, 1))
        raise TutorError(
            f"{lesson.path}:{line}:{col}: variants cannot yet make new numbers for next: given "
            "as a list of tokens; give next as one {token, x} mapping, or change the numbers "
            "by hand"
        )
    total = len(students) if students else count
    width = width or max(2, len(str(first - 1 + total)))
    values = entry_values(lesson, entries)
    from tutor.author.check import _derived

    unmet = faults(lesson)
    unfit = end_faults(lesson)
    base = work(_derived(lesson))
    steps = walk_steps(base)
    ranges = {k: work_range(c) for k, c in slip_costs(_derived(lesson)).items()}
    start = numbers_of(lesson)
    seen = {_key(start), *taken}
    keys = [student_key(s) for s in students] if students else [str(k) for k in range(1, total + 1)]
    chosen: dict[int, Lesson] = {}
    budget = bg.Budget(bg.SECONDS * max(1.0, total / BUDGET_VARIANTS))
    for k in sorted(range(total), key=lambda k: keys[k]):  # collisions settled in id order
        vid = f"variant-{first + k:0{width}d}"
        found = None
        left: list[str] = []
        for attempt in range(TRIES):
            rng = random.Random(f"{seed}:{keys[k]}:{attempt}")  # str seeds: stable across runs
            numbers, away, checked, strays = start, 0, start, 0
            # a walk never leaves the lessons that meet ``faults``; it may pass through ones
            # where a slip costs more or less than ``ranges`` allow, but ends only where none
            # does and the cells are the original's no more (``end_faults``): after ``steps``
            # proposals, at the first such lesson of up to EXTRA more, else it walks again
            for step in range(steps + EXTRA):
                budget.check(
                    f"variants of {lesson.name}: the search for {total} variants "
                    f"({len(chosen)} found)",
                    "ask for fewer variants at a time (--count, or --add with part of the "
                    "roster), or make variants of a smaller lesson",
                )
                if step >= steps and numbers is not checked:
                    checked = numbers
                    worked = _derived(with_numbers(lesson, numbers))
                    strays = _outside(slip_costs(worked), ranges)
                    left = unfit(worked)
                    if not left and _key(numbers) not in seen:
                        found = with_numbers(lesson, numbers)
                        break
                candidate = _tweak(rng, lesson, numbers, values)
                if candidate is numbers:
                    continue
                made = with_numbers(lesson, candidate)
                if unmet(made):
                    continue
                # a step further from the original's work is taken one time in five, so the
                # class spreads around the original's work rather than drifting to a bound
                worked = _derived(made)
                further = abs(work(worked) - base)
                if further > away and rng.random() < 0.8:
                    continue
                outside = _outside(slip_costs(worked), ranges)  # cells out, all slips
                if outside > strays and (step >= steps or rng.random() < PULL):
                    continue
                numbers, away, strays = candidate, further, outside
            if found is not None:
                break
        if found is None:
            raise TutorError(_unmet(lesson, vid, left, values))
        seen.add(_key(numbers_of(found)))
        chosen[k] = found
    out = []
    for k in range(total):
        variant = Variant(
            f"variant-{first + k:0{width}d}", students[k] if students else None, chosen[k]
        )
        name = Path(variant.file_name).stem  # as the file will be loaded
        lesson_k = replace(chosen[k], name=name, path=variant.file_name)
        out.append(replace(variant, lesson=lesson_k))
    return out


def _key(numbers: dict[str, Matrix]) -> tuple:
    """What makes two variants the same: their given matrices."""
    return tuple(sorted(numbers.items()))


def _unmet(lesson: Lesson, vid: str, left: list[str], values: dict) -> str:
    shown = values_text(values["x"])
    if values["w"] != values["x"]:
        shown = f"{shown} (features) and {values_text(values['w'])} (W's)"
    from tutor.author.check import _derived

    slips = [SLIPS[k] for k in slip_costs(_derived(lesson))]
    costs = f" and each classic slip's cost ({', '.join(slips)})" if slips else ""
    last = f"; the last walk ended where {left[0]}" if left else ""
    return (
        f"could not make {vid} of {lesson.name} different from the variants before it in "
        f"{TRIES} tries with entries {shown}, keeping every row's strongest key and calm "
        f"scores, the work{costs} within ±{WORK_SPREAD:.0%} of the original's, and at least "
        f"{DISTINCT:.0%} of the shown cells unlike the original's{last}. This lesson has too "
        "few distinct variants for so many students; writing none. Widen the entries on "
        'purpose (--entries "-1,0,1,2") or ask for fewer'
    )


def spread(variants: list[Variant], original: Lesson) -> tuple[list[str], str]:
    """One line of work per variant (its products, what each classic slip costs, its scaled
    scores and Z), and a closing line with the spread of the products and of each slip's cost,
    each with the range allowed."""
    from tutor.core.engine import derive

    base = work_of(derive(original)).products
    works = [work_of(derive(v.lesson)) for v in variants]
    width = max(len(v.id) for v in variants)
    lines = [
        f"{v.id.ljust(width)}  {w.line(original.precision, base)}"
        for v, w in zip(variants, works, strict=True)
    ]
    counts = [w.products for w in works]
    low, high = work_range(base)
    tail = (
        f"work: {_span(counts)} products per variant (the original's {base}; "
        f"allowed {low}–{high}, ±{WORK_SPREAD:.0%})"
    )
    for slip, cost in slip_costs(derive(original)).items():
        spent = _span([w.slips[slip] for w in works])
        low, high = work_range(cost)
        tail += f"; {SLIPS[slip]} costs {spent} cells (the original's {cost}; allowed {low}–{high})"
    return lines, tail


def _span(counts: list[int]) -> str:
    return f"{min(counts)}–{max(counts)}" if min(counts) < max(counts) else str(counts[0])


# ---------------------------------------------------------------------------------------------
# the instructor's words


_NUMBER = re.compile(r"(?<![\w.#])[-\u2212]?\d+(?:\.\d+)?(?![\w#])")
_EVEN = re.compile(r"\b(even|evenly|uniform|equal|equally|same weight)\b", re.IGNORECASE)


def _cells_spoken_of(d: Derivation, step: str, words: set[str]) -> dict[tuple, str]:
    """The cells a note on ``step`` may speak of, as shown: those of the step and of the steps
    it is made from, in the rows of the tokens the note names (every row when it names none).
    Keyed by (step, head, row, column)."""
    from tutor.text.format import shown

    todo = [s for s in d.steps if s.name == step]
    scope, seen = [], set()
    while todo:
        s = todo.pop()
        if id(s) not in seen:
            seen.add(id(s))
            scope.append(s)
            todo += list(s.args)
    named = {r for s in scope for r in s.rows if r in words}
    return {
        (s.name, s.head, r, c): shown(cell, s, d.lesson.precision).replace("\u2212", "-")
        for s in scope
        for r, row in zip(s.rows, s.cells, strict=True)
        if not named or r in named
        for c, cell in zip(s.cols, row, strict=True)
    }


def _uniform_rows(d: Derivation) -> set[tuple[str, int | None]]:
    """(token, head) of every row of weights whose scores are all equal."""
    from tutor.author.check import attention_rows

    found = set()
    for h, head in enumerate(d.lesson.heads, 1):
        of = h if d.lesson.multi_head else None
        found |= {
            (d.lesson.labels[r.i], of) for r in attention_rows(d.lesson, head)[1] if r.uniform
        }
    return found


def kept_notes(original: Lesson, variant: Lesson) -> dict[str, str]:
    """The lesson's notes that are still true of the variant's numbers, then generated ones
    for the other steps. A note is dropped when it names a value of its step that the
    variant's step no longer shows, or speaks of an even split of a token's row that is no
    longer even."""
    from tutor.core.engine import derive

    old, new = derive(original), derive(variant)
    uniform_before, uniform_after = _uniform_rows(old), _uniform_rows(new)
    kept = {}
    for step, text in original.notes.items():
        values = {n.replace("\u2212", "-") for n in _NUMBER.findall(text)}
        words = set(re.findall(r"[^\s,.:;!?\"'()]+", text))
        before, after = _cells_spoken_of(old, step, words), _cells_spoken_of(new, step, words)
        # a number the note names is gone when no cell that showed it still does
        gone = any(
            any(shown == x for shown in before.values())
            and not any(after.get(k) == x for k, shown in before.items() if shown == x)
            for x in values
        )
        even = _EVEN.search(text) and any(
            (t, h) not in uniform_after for t, h in uniform_before if t in words
        )
        if not gone and not even:
            kept[step] = text
    generated = notes_of(variant)
    order = list(dict.fromkeys(s.name for s in new.steps))
    notes = {**generated, **kept}
    return dict(sorted(notes.items(), key=lambda kv: order.index(kv[0]) if kv[0] in order else 99))


def moved_focus(original: Lesson, variant: Lesson) -> dict[int | None, tuple[Focus, Focus, str]]:
    """Each ``focus:`` (the lesson's: None, a head's: its number) whose key no longer fits:
    it was the original row's strongest key and is not the variant's. Gives (old, new, why)."""
    from tutor.author.check import attention_rows

    out: dict[int | None, tuple[Focus, Focus, str]] = {}
    for h, (a, b) in enumerate(zip(original.heads, variant.heads, strict=True), 1):
        own = a.focus is not None
        focus = a.focus or original.focus
        if focus is None or focus.col is None or focus.step not in N_BY_N:
            continue
        if (h if own else None) in out:
            continue
        (_, _, weights), rows_a = attention_rows(original, a)
        _, rows_b = attention_rows(variant, b)
        i = original.labels.index(focus.row)
        col = weights.cols.index(focus.col) if focus.col in weights.cols else None
        old = next((r for r in rows_a if r.i == i), None)
        new = next((r for r in rows_b if r.i == i), None)
        if old is None or new is None or col is None or col not in old.tops or col in new.tops:
            continue
        key = weights.cols[new.top]
        why = f"{focus.col} is no longer the strongest key of {focus.row}; {key} is"
        out[h if own else None] = (focus, replace(focus, col=key), why)
    return out


def focus_text(focus: Focus) -> str:
    if focus.step is None:
        return focus.row
    return f"{focus.step}[{focus.row}, {focus.col}]" if focus.col else f"{focus.step}[{focus.row}]"


# ---------------------------------------------------------------------------------------------
# writing them: the original's text with the new numbers in place


def variant_yaml(variant: Variant, original: Lesson, command: str, seed: int) -> str:
    """The variant as the original's own file (its comments and keys) with the new numbers,
    its notes still true, and its id and student in the first comment lines."""
    import yaml

    from tutor.core.yamlsrc import compose, read_text

    text = read_text(original.path)
    root = compose(text, original.path)
    assert isinstance(root, yaml.MappingNode)
    edits: list[tuple[int, int, str]] = []  # (start, end, new text), by character index
    before, after = numbers_of(original), numbers_of(variant.lesson)
    for name, node in _matrix_nodes(root, original).items():
        is_row = all(isinstance(v, yaml.ScalarNode) for v in node.value)  # x_new: one row
        rows = [node] if is_row else node.value
        for row_node, old_row, new_row in zip(rows, before[name], after[name], strict=True):
            for cell, old, new in zip(row_node.value, old_row, new_row, strict=True):
                if old != new:
                    edits.append((cell.start_mark.index, cell.end_mark.index, entry_text(new)))
    keys = _keys(root)
    for h, (old, new, why) in moved_focus(original, variant.lesson).items():
        found = keys.get("focus") if h is None else _keys(_heads_node(root, h)).get("focus")
        if found is None:
            continue
        k, v = found
        line_start = k.start_mark.index - k.start_mark.column
        note = " " * k.start_mark.column + f"# focus moved from {focus_text(old)}: {why}\n"
        edits.append((line_start, line_start, note))
        written = focus_text(new) if not v.style else _quoted(focus_text(new))  # plain stays
        edits.append((v.start_mark.index, v.end_mark.index, written))
    notes = "notes:  # the lesson's notes that are still true of these numbers, and new ones\n"
    notes += "".join(
        f"  {step}: {_quoted(note)}\n"
        for step, note in kept_notes(original, variant.lesson).items()
    )
    tail = ""
    for key, new_text in (("notes", notes), ("variant", "")):
        if key in keys:
            k, v = keys[key]
            start = k.start_mark.index - k.start_mark.column
            end = v.end_mark.index
            ends_line = text[start:end].endswith("\n")
            edits.append((start, end, new_text if ends_line else new_text.rstrip("\n")))
        else:
            tail += new_text
    for start, end, new in sorted(edits, key=lambda e: (e[0], e[1]), reverse=True):
        text = text[:start] + new + text[end:]
    if not text.endswith("\n"):
        text += "\n"
    if original.variant is not None:  # a variant of a variant: its header was ours, not the
        # instructor's, and its student must not be read as this file's
        lines = text.splitlines(keepends=True)
        while lines and lines[0].startswith("#"):
            lines.pop(0)
        text = "".join(lines)
    header = [
        f"# {variant.lesson.name}: a variant of {original.name} for attn-tutor (format version 1).",
        f"# variant: {variant.id}",
        *([f"# student: {variant.student.shown}"] if variant.student else []),
        f"# seed: {seed}",
        f"# Made with: {command}",
        f"# The numbers are this student's; every other word is the lesson's. Check it: "
        f"attn-tutor check {variant.file_name}",
    ]
    text = "\n".join(header) + "\n" + text + tail
    # what a sheet made from this file copies, so grade finds this variant again
    text += "variant:  # written by attn-tutor variants; answer sheets copy it\n"
    text += f"  id: {yaml_text(variant.id)}\n"
    text += f"  of: {yaml_text(original.name)}\n"
    if variant.student is not None:
        text += f"  student: {yaml_text(variant.student.name)}\n"
        text += f"  student_id: {yaml_text(variant.student.id)}\n"
    return text


def _quoted(text: str) -> str:
    import json

    return json.dumps(text, ensure_ascii=False)


def _keys(node) -> dict:  # type: ignore[no-untyped-def]
    """A mapping node's keys: name → (key node, value node)."""
    import yaml

    if not isinstance(node, yaml.MappingNode):
        return {}
    return {k.value: (k, v) for k, v in node.value if isinstance(k, yaml.ScalarNode)}


def _heads_node(root, h: int, key: str = "heads"):  # type: ignore[no-untyped-def]
    return _keys(root)[key][1].value[h - 1]


def _matrix_nodes(root, lesson: Lesson) -> dict:  # type: ignore[no-untyped-def]
    """The YAML node of every matrix ``numbers_of`` names (``x_new``: its row)."""
    keys = _keys(root)
    out = {"X": keys["E" if lesson.embedded else "X"][1]}
    if lesson.X_src is not None:
        out["X_src"] = keys["X_src"][1]
    for h in range(1, len(lesson.heads) + 1):
        g = lesson.group_of(h)
        head = keys if not lesson.multi_head else _keys(_heads_node(root, h))
        out[f"W_Q.{h}"] = head["W_Q"][1]
        if f"W_K.{g}" not in out:
            if lesson.kv_groups is not None:
                head = _keys(_heads_node(root, g, "kv_heads"))
            out[f"W_K.{g}"], out[f"W_V.{g}"] = head["W_K"][1], head["W_V"][1]
    if lesson.next is not None:
        out["x_new"] = _keys(keys["next"][1])["x"][1]
    return out


# ---------------------------------------------------------------------------------------------
# folders of variants


def earlier_variants(folder: Path, of: str) -> list[Path]:
    """The lessons in ``folder`` that ``variants`` wrote from the lesson named ``of``."""
    from tutor.core.lessonfile import load_lesson

    if not folder.is_dir():
        return []
    found = []
    for path in sorted(p for p in folder.iterdir() if p.suffix in (".yaml", ".yml")):
        try:
            lesson = load_lesson(path, name=path.stem)
        except (TutorError, OSError):
            continue  # not a lesson: never ours to remove
        if lesson.variant is not None and lesson.variant.of == of:
            found.append(path)
    return found


@dataclass(frozen=True)
class Folder:
    """A folder's variants of one lesson, as ``variants --add`` goes on from them."""

    keys: frozenset[str]  # ``student_key`` of each student who has a variant
    seeds: frozenset[int]  # the seeds their headers name
    last: int  # the highest variant number (0: none)
    width: int  # its digits (variant-07: 2)
    taken: frozenset[tuple]  # their numbers (``_key``), so no new variant repeats one


def folder_of(folder: Path, original: Lesson) -> Folder:
    """What ``folder`` already holds of ``original``'s variants; raise ``TutorError`` when it
    holds none (``--add`` goes on from a class, it does not start one)."""
    from tutor.core.lessonfile import load_lesson

    paths = earlier_variants(folder, original.name)
    if not paths:
        raise TutorError(
            f"{folder} holds no variants of {original.name}; make the class's first with "
            "--roster FILE, then add late students with --add FILE"
        )
    keys, seeds, numbers, taken, width = set(), set(), [], set(), 2
    for path in paths:
        lesson = load_lesson(path, name=path.stem)
        v = lesson.variant
        assert v is not None  # earlier_variants keeps only variants
        keys.add(student_key(Student(v.student or "", v.student_id or "", 0)))
        taken.add(_key(numbers_of(lesson)))
        digits = v.id.rpartition("-")[2]
        if digits.isdigit():
            numbers.append(int(digits))
            width = len(digits)
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.startswith("#"):
                break
            key, _, value = line[1:].partition(":")
            if key.strip() == "seed" and value.strip().isdigit():
                seeds.add(int(value))
    return Folder(frozenset(keys), frozenset(seeds), max(numbers, default=0), width,
                  frozenset(taken))  # fmt: skip


@dataclass(frozen=True)
class Written:
    """What ``write_variants`` did: the files it wrote, and how many of the folder's earlier
    variants of the lesson it removed (not written again) or replaced (written again)."""

    paths: list[Path]
    removed: int = 0
    replaced: int = 0


def write_variants(
    made: list[Variant],
    original: Lesson,
    output: Path,
    command: str,
    seed: int,
    force: bool = False,
) -> Written:
    """Write each variant into the folder ``output`` (made if missing), named by its
    ``file_name``, its header saying the ``command`` and ``seed`` that made it. Nothing is
    written when a file is in the way, unless ``force``: then the folder's earlier variants of
    the same lesson go too, since a class is one run and the last run's students must not
    linger."""
    from tutor.text.format import plural

    if output.exists() and not output.is_dir():
        raise TutorError(f"--output {output} is a file; give a folder")
    clashes = [v.file_name for v in made if (output / v.file_name).exists()]
    if clashes and not force:
        raise TutorError(
            f"{output / clashes[0]} already exists ({plural(len(clashes), 'file')} would be "
            "replaced); use --force to replace them, or another --output folder"
        )
    earlier = earlier_variants(output, original.name) if force else []
    texts = [(output / v.file_name, variant_yaml(v, original, command, seed)) for v in made]
    try:
        output.mkdir(parents=True, exist_ok=True)
        for path in earlier:
            path.unlink()
        for path, text in texts:
            path.write_text(text, encoding="utf-8")
    except OSError as err:
        raise TutorError(f"cannot write to {output}: {err.strerror}") from None
    written = {path.name for path, _ in texts}
    removed = sum(1 for p in earlier if p.name not in written)
    return Written([path for path, _ in texts], removed, len(earlier) - removed)


def folder_lessons(folder: Path) -> list[tuple[Path, str | None, str | None]]:
    """The lessons of a folder ``variants`` wrote, in name order, each with who it is for and
    its variant id (its ``# student:`` and ``# variant:`` lines; None when it has none)."""
    paths = sorted(p for p in folder.iterdir() if p.suffix in (".yaml", ".yml") and p.is_file())
    if not paths:
        raise TutorError(
            f"{folder} has no lesson files (.yaml); write some with attn-tutor variants"
        )
    found = []
    for path in paths:
        who: dict[str, str] = {}
        try:
            with path.open(encoding="utf-8", errors="replace") as f:
                for line in f:
                    if not line.startswith("#"):
                        break
                    key, sep, value = line[1:].partition(":")
                    if sep and key.strip() in ("student", "variant"):
                        who.setdefault(key.strip(), value.strip())
        except OSError as err:
            raise TutorError(f"cannot read {path}: {err.strerror or err}") from None
        found.append((path, who.get("student"), who.get("variant")))
    return found


def parse_entries(text: str, lesson: Lesson) -> tuple[Entry, ...]:
    """``--entries "-1,0,1,2"`` → the values, exact; it must hold the lesson's own values,
    since a variant is walked from the lesson one entry at a time."""
    from tutor.core.errors import AnswerError, UsageError
    from tutor.core.numbers import EXPECTED_ARGUMENT, parse_entry

    found = []
    for part in text.split(","):
        try:
            found.append(parse_entry(part, EXPECTED_ARGUMENT))
        except AnswerError as err:
            raise UsageError(f"--entries {text!r}: {err}") from None
    values = tuple(dict.fromkeys(found))
    own = entry_values(lesson)
    missing = tuple(e for e in dict.fromkeys(own["x"] + own["w"]) if e not in values)
    if missing:
        raise UsageError(
            f"--entries {text!r} leaves out {values_text(missing)}, which {lesson.name} uses; "
            "a variant is walked from the lesson one entry at a time, so give the lesson's own "
            f"values ({values_text(tuple(dict.fromkeys(own['x'] + own['w'])))}) and those to add"
        )
    return values
