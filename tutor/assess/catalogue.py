"""The slip catalogue: the classic slips of each rule of the arithmetic, each a computation by a
step's own rule (another cell, other cells read in place of the right ones, another divisor).

``rule_slips`` dispatches on the rule (one registration per rule class; a rule with no slips
says so, and tests/test_rules.py fails when one is missing). The judge (``Judge.slips``) names
the slips whose computation a wrong answer is honest for. What each slip id says in a student's
progress, with the right method, is beside this in ``tutor.assess.slips`` (kept free of sympy,
so ``progress`` loads without it).
"""

from __future__ import annotations

import dataclasses
import functools
import math
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sympy.polys.domains import QQ

from tutor.assess import honest as hn
from tutor.assess.honest import HIDDEN, Interval, Range
from tutor.assess.ranges import Lookup, Remap
from tutor.core import kinds, rules
from tutor.core.engine import Derivation, Ref, Step
from tutor.core.numbers import Answer
from tutor.text import format as fmt
from tutor.text import steps
from tutor.text import working as wk

if TYPE_CHECKING:
    from tutor.assess.judge import Judge


@dataclass(frozen=True)
class Slip:
    """A classic mistake a wrong answer matches."""

    name: str  # a stable id, e.g. "not-scaled"
    message: str  # what happened, said to the student


TRUNCATED = Slip("truncated", "that is cut off, not rounded: round the last digit")
FORGOT_MASK = Slip(
    "forgot-mask",
    "that forgets the causal mask: the scores above the diagonal are −∞, so their weights "
    "are 0 and the rest share all of 1",
)
MASK_AFTER = Slip(
    "mask-after-softmax",
    "that applies the mask after the softmax without sharing out again; mask first, then softmax",
)


def _family(step: Step) -> str | None:
    """The family of slips of the part a step plays (its words' ``slips``; a decoding row's are
    those of the step it repeats): "projection", "scores", "blend", "scale", "softmax"."""
    words = steps.STEPS.get(kinds.repeated(step.name))
    return words.slips if words else None


def _decoding(step: Step) -> bool:
    """A row of the decoding step (``next:``), as the kinds table says."""
    kind = kinds.BY_NAME.get(step.name)
    return kind is not None and kind.decoding


# what a product of each family reads as its right operand, in a student's words
READS = {"scores": "keys", "blend": "values"}


def _projection_weights(d: Derivation, head: int | None) -> list[Step]:
    """The W of each of a head's projections (X · W), in the engine's order: W_Q, W_K, W_V
    (a grouped head that shares its group's K and V has only its W_Q)."""
    out: list[Step] = []
    for s in d.steps:
        if s.head == head and not _decoding(s) and _family(s) == "projection":
            out.append(s.args[1])
    return out


def _read_by(d: Derivation, step: Step) -> str | None:
    """What ``step`` is to the products that read it as their right operand: "keys" for the
    scores, "values" for Z (None: neither)."""
    for s in d.steps:
        what = READS.get(_family(s) or "")
        if what is not None and s.args[1] is step:
            return what
    return None


# a slip's range from ``base``; given an answer, None also when a cheap enclosure shows the
# answer cannot be honest for it (the exact range is then not worked)
Alternative = Callable[..., "Range | None"]


def _at(step: Step, i: int, j: int, remap: Remap | None = None) -> Alternative:
    """Cell (i, j) of ``step`` by its own rule, reading the cells ``remap`` says instead."""

    def alt(judge: Judge, base: Lookup, answer: Answer | None = None) -> Range | None:
        if remap is not None and base == judge.carried:  # the same for every sheet: once
            return judge.remembered(alt, answer, step, i, j, remap)
        true = remap is None and base == judge.carried
        window = None if answer is None else judge.reach(answer)
        if window is not None:
            coarse = judge.coarse(step, i, j, None if true else base, remap)
            if coarse is not None and not coarse.meets(*window):
                return None
        if remap is None:  # another cell's own range: remembered (``Judge.range``)
            return judge.range(step, i, j, None if true else base)
        return judge.combined(step, i, j, judge.resolved(base, remap))

    return alt


def _swap_step(old: Step, new: Step) -> Remap:
    """Read ``new`` wherever the rule reads ``old``."""
    return lambda ref: Ref(new, ref.i, ref.j) if ref.step is old else ref


def _transposed(old: Step) -> Remap:
    """Read ``old`` across where the rule reads down (and the reverse)."""
    return lambda ref: Ref(old, ref.j, ref.i) if ref.step is old else ref


_VARIANTS: weakref.WeakKeyDictionary[Step, dict[tuple[tuple[str, object], ...], Step]] = (
    weakref.WeakKeyDictionary()
)


def _changed(step: Step, **fields: object) -> Step:
    """``step`` with ``fields`` changed (another divisor, no bias), made once per step and
    change: the judge remembers a cell's range by its step, so a slip's step made anew for
    each cell of each sheet would be worked anew every time, and kept for the judge's life."""
    made = _VARIANTS.setdefault(step, {})
    key = tuple(sorted(fields.items()))
    got = made.get(key)
    if got is None:
        got = made[key] = dataclasses.replace(step, **fields)  # type: ignore[arg-type]
    return got


_ZERO = Interval(QQ(0))  # one object: a row's ranges are remembered by their ids (``hn.Honest``)


def _hidden_as(mask: Step, value: Range) -> Remap:
    """The masked scores read as ``value`` instead of −∞ (the cells the mask's rule hides)."""
    return lambda ref: value if ref.step is mask and mask.hides(ref.i, ref.j) else ref


def _e_alone(src: Step, i: int, j: int) -> Alternative:
    def alt(judge: Judge, base: Lookup, answer: Answer | None = None) -> Range | None:
        x = judge.resolved(base)(Ref(src, i, j))
        if isinstance(x, hn.Hidden) or x.lo > hn.FAR:
            return None  # e^300 is past every answer (1e60 at most): not this slip
        # cut at e^300 for the same reason: e^(10^60) has no bounds of sensible size
        return judge.kit.e_to(Interval(x.lo, min(x.hi, hn.FAR)))

    return alt


def _projection_slips(d: Derivation, step: Step, i: int, j: int) -> list[tuple[Slip, Alternative]]:
    """Q, K, V: another W, or a row of W read for its column."""
    out: list[tuple[Slip, Alternative]] = []
    X, W = step.args
    for W_other in _projection_weights(d, step.head):
        other = W_other.name
        if other == W.name:
            continue
        if j < len(W_other.cols):
            slip = Slip(
                f"used-{other}",
                f"that is X·{other}: {step.key} is made with {W.key}, not {other}",
            )
            out.append((slip, _at(step, i, j, _swap_step(W, W_other))))
    if j < len(W.rows) and len(W.cols) == len(X.cols):
        slip = Slip(
            "row-of-W",
            f"that uses row {W.rows[j]} of {W.key}; the entry needs column "
            f"{W.cols[j]} (down the column, not across the row)",
        )
        out.append((slip, _at(step, i, j, _transposed(W))))
    return out


def _scores_slips(d: Derivation, step: Step, i: int, j: int) -> list[tuple[Slip, Alternative]]:
    """The scores: two queries, two keys, the cell across the diagonal, K not turned."""
    row_of = step.rows[i]
    out: list[tuple[Slip, Alternative]] = []
    Q, K = step.args
    col = step.cols[j]
    why = "a score is a query · a key"
    # (cross-attention's scores are N × N_src: a slip reading past either is left out)
    if j < len(Q.rows):
        out.append(
            (
                Slip("query-query", f"that is the query of {row_of} · the query of {col}; {why}"),
                _at(step, i, j, _swap_step(K, Q)),
            )
        )
    if i < len(K.rows):
        out.append(
            (
                Slip("key-key", f"that is the key of {row_of} · the key of {col}; {why}"),
                _at(step, i, j, _swap_step(Q, K)),
            )
        )
    if j < len(step.rows) and i < len(step.cols):
        out.append(
            (
                Slip(
                    "swapped",
                    f"that is the query of {col} · the key of {row_of}: the row is the "
                    "query, the column the key",
                ),
                _at(step, j, i),
            )
        )
    out += _typed_scaled(d, step, i, j)
    if len(K.rows) == len(Q.cols):  # Q · K (not Kᵀ) has the right shape only here
        slip = Slip(
            "k-not-transposed",
            "that multiplies by K, not Kᵀ: a score is the query's row · the key's row",
        )
        out.append((slip, _at(step, i, j, _transposed(K))))
    return out


def _typed_scaled(d: Derivation, step: Step, i: int, j: int) -> SlipList:
    """The scores: the scaled score written where the raw one is asked (divided too early)."""
    out: SlipList = []
    for s in d.steps:
        if isinstance(s, rules.Scale) and s.args[0] is step and s.divides:
            by = f"√{s.divisor}" if s.by is None else wk.divisor_text(s)
            then = "√d_k" if s.by is None and s.of == "d_k" else "the lesson's scale"
            slip = Slip(
                "typed-scaled",
                f"that is the score already divided by {by}; this step asks for the raw "
                f"score, the query · the key (the next step divides by {then})",
            )
            out.append((slip, _at(s, i, j)))
    return out


def _scale_slips(d: Derivation, step: Step, i: int, j: int) -> list[tuple[Slip, Alternative]]:
    """The scaled scores: divided by another number than √d_k (or the lesson's own scale)."""
    if step.by is not None or step.of != "d_k":
        return _own_scale_slips(d, step, i, j)
    out: list[tuple[Slip, Alternative]] = []
    d_k = step.divisor
    lesson = d.lesson
    d_model = len(lesson.X[0])
    d_v = len(lesson.heads[(step.head or 1) - 1].W_V[0])
    by = [(1, "not-scaled"), (d_k * d_k, "divided-by-dk"), (d_model, "dmodel-for-dk")]
    by.append((d_v, "dv-for-dk"))
    says = {
        "not-scaled": f"that is the raw score; divide it by √d_k = √{d_k}",
        "divided-by-dk": f"that divides by d_k = {d_k}"
        + (f" (here also √d_model = √{d_model})" if d_model == d_k * d_k else "")
        + f"; divide by √d_k = √{d_k}",
        "dmodel-for-dk": f"that divides by √d_model = √{d_model}; divide by √d_k = √{d_k}",
        "dv-for-dk": f"that divides by √d_v = √{d_v}; divide by √d_k = √{d_k}",
    }
    seen = {d_k}
    for n, slip_id in by:
        if n not in seen:  # one divisor, one slip: where d_k = √d_model the advice is said once
            seen.add(n)
            other = _changed(step, divisor=n)
            out.append((Slip(slip_id, says[slip_id]), _at(other, i, j)))
    if math.isqrt(d_k) ** 2 != d_k:
        shown = fmt.sqrt_rounded(d_k, lesson.precision)
        for q in range(lesson.precision - 1, -1, -1):  # √d_k cut short: 1.4 or 1 for √2
            early = fmt.sqrt_rounded(d_k, q)
            if early == shown or early <= 1:  # by 1: not scaled at all, its own slip
                continue
            slip = Slip(
                "root-too-early",
                f"that divides by √{d_k} rounded to {fmt.decimal_text(early)}, too early; "
                f"carry √{d_k} to {lesson.precision} places or more ({fmt.decimal_text(shown)})",
            )
            out.append(
                (
                    slip,
                    _by_root(
                        step,
                        i,
                        j,
                        Interval(QQ(early.as_integer_ratio()[0], early.as_integer_ratio()[1])),
                    ),
                )
            )
    return out


def _own_scale_slips(d: Derivation, step: Step, i: int, j: int) -> list[tuple[Slip, Alternative]]:
    """A lesson's own scale (``scale: sqrt_d_model`` or a number): the raw score, or the usual
    √d_k where the lesson chooses another divisor."""
    lesson = d.lesson
    d_k = len(lesson.heads[(step.head or 1) - 1].W_K[0])
    own = f"√{step.of} = √{step.divisor}" if step.by is None else wk.divisor_text(step)  # type: ignore[attr-defined]
    plain = _changed(step, by=None, of="d_k")
    out: list[tuple[Slip, Alternative]] = [
        (
            Slip("not-scaled", f"that is the raw score; this lesson divides it by {own}"),
            _at(_changed(plain, divisor=1), i, j),
        )
    ]
    if step.by is not None or step.divisor != d_k:
        slip = Slip("usual-scale", f"that divides by √d_k = √{d_k}; this lesson divides by {own}")
        out.append((slip, _at(_changed(plain, divisor=d_k), i, j)))
    return out


def _by_root(step: Step, i: int, j: int, root: Interval) -> Alternative:
    """Cell (i, j) of the scaled scores divided by ``root`` in place of √d_k."""

    def alt(judge: Judge, base: Lookup, answer: Answer | None = None) -> Range | None:
        x = judge.resolved(base)(Ref(step.args[0], i, j))
        return x if isinstance(x, hn.Hidden) else x / root

    return alt


def _no_exp(src: Step, i: int, j: int) -> Alternative:
    """x_j / Σ x_k over the row's visible scores: the softmax without its e^."""

    def alt(judge: Judge, base: Lookup, answer: Answer | None = None) -> Range | None:
        value = judge.resolved(base)
        row = [value(Ref(src, i, k)) for k in range(len(src.cols))]
        seen = [x for x in row if not isinstance(x, hn.Hidden)]
        x = row[j]
        if isinstance(x, hn.Hidden) or len(seen) < 2:
            return None
        others = [y for k, y in enumerate(row) if k != j and not isinstance(y, hn.Hidden)]
        rest = Interval(sum((y.lo for y in others), QQ(0)), sum((y.hi for y in others), QQ(0)))
        # x / (x + rest) is monotone in x and in rest on each side of a zero total: its ends
        ends = []
        for a in (x.lo, x.hi):
            for b in (rest.lo, rest.hi):
                if a + b == 0:
                    return None
                ends.append(a / (a + b))
        if (x + rest).lo <= 0 <= (x + rest).hi:
            return None  # the total may be 0: no sensible share
        return Interval(min(ends), max(ends))

    return alt


def _softmax_slips(d: Derivation, step: Step, i: int, j: int) -> list[tuple[Slip, Alternative]]:
    """The weights: softmax down the column, e^x alone, of the raw scores, the mask misread."""
    row_of = step.rows[i]
    out: list[tuple[Slip, Alternative]] = []
    (src,) = step.args
    masked = isinstance(src, rules.Mask)
    scaled = src.args[0] if masked else src
    if len(step.rows) == len(step.cols):  # (cross-attention's weights need not be square)
        slip = Slip(
            "softmax-column",
            f"that is softmax down column {step.cols[j]}; softmax runs along the "
            f"row of {row_of}, so the row adds up to 1",
        )
        out.append((slip, _at(step, j, i, _transposed(src))))
    out.append(
        (
            Slip("unnormalised", "that is e^x alone; divide it by the total of e^x over the row"),
            _e_alone(src, i, j),
        )
    )
    out.append(
        (
            Slip(
                "no-exp",
                "that is x / Σx, the score over the row's total: softmax takes e^x of each "
                "score first, then e^x / Σe^x",
            ),
            _no_exp(src, i, j),
        )
    )
    if isinstance(scaled, rules.Scale) and scaled.divides:
        by = "√d_k" if scaled.by is None and scaled.of == "d_k" else "the lesson's scale"
        slip = Slip(
            "softmax-of-raw-scores",
            "that is the softmax of the raw scores; take it of the scaled scores "
            f"(divided by {by})",
        )
        out.append((slip, _at(step, i, j, _swap_step(scaled, scaled.args[0]))))
    if masked:
        out += [
            (
                Slip(
                    "inf-as-zero",
                    "that takes −∞ as 0, so each hidden score adds e^0 = 1 to the total; "
                    "e^−∞ is 0: the hidden ones add nothing",
                ),
                _at(step, i, j, _hidden_as(src, _ZERO)),
            ),
            (FORGOT_MASK, _at(step, i, j, _swap_step(src, scaled))),
        ]
        if not src.hides(i, j):  # where the mask hides, it gives the true 0
            out.append((MASK_AFTER, _at(step, i, j, _swap_step(src, scaled))))
    return out


def _blend_slips(d: Derivation, step: Step, i: int, j: int) -> list[tuple[Slip, Alternative]]:
    """Z: another column of V, or a column of the weights."""
    row_of = step.rows[i]
    out: list[tuple[Slip, Alternative]] = []
    W, V = step.args
    for other in range(len(V.cols)):
        if other != j:
            slip = Slip(
                "wrong-V-column",
                f"that blends column {V.cols[other]} of V; {step.key}[{row_of}, "
                f"{step.cols[j]}] blends column {V.cols[j]}",
            )
            out.append((slip, _at(step, i, other)))
    if i < len(W.cols) and len(W.cols) <= len(W.rows):
        slip = Slip(
            "weights-column",
            f"that uses column {W.cols[i]} of the weights; use the row of {row_of}",
        )
        out.append((slip, _at(step, i, j, _transposed(W))))
    return out


SlipList = list[tuple[Slip, Alternative]]
Slips = Callable[[Derivation, Step, int, int], SlipList]
# a product's slips by the part it plays (X · W, Q · Kᵀ or weights · V): its words' ``slips``
PRODUCT_SLIPS: dict[str, Slips] = {
    "projection": _projection_slips,
    "scores": _scores_slips,
    "blend": _blend_slips,
}
# every family of slips the words table (tutor.text.steps) may name
SLIP_RULES: dict[str, Slips] = {**PRODUCT_SLIPS, "scale": _scale_slips, "softmax": _softmax_slips}


_ALTERNATIVES: weakref.WeakKeyDictionary[
    Derivation, dict[tuple[int, int, int], tuple[Step, SlipList]]
] = weakref.WeakKeyDictionary()


def alternatives(d: Derivation, step: Step, i: int, j: int) -> SlipList:
    """The classic slips for cell (i, j), each a computation by a step's own rule: another
    cell, other cells read in place of the right ones, or another divisor (``rule_slips``).
    Made once per derivation and cell (a class's sheets ask the same cells), so that the
    judge can remember what each works out from the true inputs (``Judge.remembered``)."""
    made = _ALTERNATIVES.setdefault(d, {})
    key = (id(step), i, j)
    got = made.get(key)
    if got is None or got[0] is not step:  # (the step kept beside its slips: its id stays its)
        got = made[key] = (step, rule_slips(step, d, i, j))
    return got[1]


@functools.singledispatch
def rule_slips(step: Step, d: Derivation, i: int, j: int) -> SlipList:
    """The slip catalogue: the classic slips of cell (i, j) of ``step``, by its rule. The
    generic machinery works the slips a rule declares as data (``Step.slips``: fields
    changed, or the step left out), worded by the words table; a rule whose slips need the
    lesson (which divisors are near d_k, which products read which) registers its own. Given,
    the explorer's factor, the mask, a concatenation and a cache declare none (a copy is judged
    by what it copies; the mask's slips show in the weights)."""
    return [(_slip_of(step, s), _declared(step, s, i, j)) for s in step.slips]


def _slip_of(step: Step, slip: rules.RuleSlip) -> Slip:
    """A declared slip with its words (the words table's ``slips_said``, by the slip's id)."""
    return Slip(slip.id, steps.slip_said(kinds.repeated(step.name), slip.id))


def _declared(step: Step, slip: rules.RuleSlip, i: int, j: int) -> Alternative:
    """A declared slip's computation: the cell by the rule with its fields changed, or its
    first source's own cell written unchanged (the step left out)."""
    if slip.skipped:
        return _at(step.args[0], i, j)
    return _at(_changed(step, **dict(slip.changed)), i, j)


@rule_slips.register
def _product(step: rules.Product, d: Derivation, i: int, j: int) -> SlipList:
    """A product: the slips of the part it plays (a decoding row's, of the step it repeats),
    cross-attention's sentences swapped, another group's K or V, the old query."""
    family = PRODUCT_SLIPS.get(_family(step) or "")
    out = family(d, step, i, j) if family else []
    if d.lesson.source is not None:
        out += _cross_slips(d, step, i, j)
    if step.bias is not None:  # issue 41: the product alone, its bias not added
        A, B = step.args
        slip = Slip(
            "forgot-bias",
            f"that is {A.key}·{B.key} alone; add the bias: {step.bias.key}'s entry "
            f"{step.cols[j]} is added to every row",
        )
        out.append((slip, _at(_changed(step, bias=None), i, j)))
    return out + _other_group(d, step, i, j) + _old_query(d, step, i, j)


@rule_slips.register
def _scale(step: rules.Scale, d: Derivation, i: int, j: int) -> SlipList:
    return _scale_slips(d, step, i, j)


@rule_slips.register
def _softmax(step: rules.Softmax, d: Derivation, i: int, j: int) -> SlipList:
    return _softmax_slips(d, step, i, j) + _left_out_itself(d, step, i, j)


def _read_as(step: Step, value: Range) -> Remap:
    """Every cell of ``step`` read as ``value``."""
    return lambda ref: value if ref.step is step else ref


def _row_moved(step: Step, by: int) -> Remap:
    """Row i of ``step`` read from row i + by."""
    return lambda ref: Ref(step, ref.i + by, ref.j) if ref.step is step else ref


def _itself(src: Step, i: int, j: int) -> Alternative:
    """The input cell itself, as carried (a rotation left out)."""

    def alt(judge: Judge, base: Lookup, answer: Answer | None = None) -> Range | None:
        return judge.resolved(base)(Ref(src, i, j))

    return alt


_TARGET_KEYS: weakref.WeakKeyDictionary[Derivation, dict[int | None, Step]] = (
    weakref.WeakKeyDictionary()
)


def _target_keys(d: Derivation, K: Step) -> Step:
    """The keys ``K`` as they would be made from the target sentence (X · W_K, with K's own W_K:
    a grouped head reads its group's): the keys a student uses when they forget that
    cross-attention's keys come from the source. Made once per derivation and K."""
    from tutor.core.engine import matmul

    made = _TARGET_KEYS.setdefault(d, {})
    if K.head not in made:
        _, W_K = K.args
        made[K.head] = matmul(K.name, d.step("X"), W_K, head=K.head)
    return made[K.head]


@rule_slips.register
def _sum(step: rules.Sum, d: Derivation, i: int, j: int) -> SlipList:
    """X = E + P (issue 17): the position left out, or a neighbour's added."""
    out: SlipList = []
    row_of = step.rows[i]
    P = step.args[1]
    out.append(
        (
            Slip(
                "forgot-position",
                f"that is E alone; add the position: P[{row_of}, {step.cols[j]}]",
            ),
            _at(step, i, j, _read_as(P, Interval(QQ(0)))),
        )
    )
    for by in (-1, 1):
        if 0 <= i + by < len(P.rows):
            slip = Slip(
                "wrong-position",
                f"that adds row {P.rows[i + by]} of P (position {i + by}); {row_of} stands "
                f"at position {i}, so it takes row {i + 1} of P",
            )
            out.append((slip, _at(step, i, j, _row_moved(P, by))))
    return out


@rule_slips.register
def _rotate(step: rules.Rotate, d: Derivation, i: int, j: int) -> SlipList:
    """RoPE (issue 17): turned for another position, not turned, or turned backwards."""
    out: SlipList = []
    row_of = step.rows[i]
    (src,) = step.args
    for by, why in ((1, "counting positions from 1"), (-1, "one position too few")):
        if i + by >= 0:
            slip = Slip(
                "rotated-wrong-position",
                f"that turns {row_of} as if it stood at position {i + by} ({why}); "
                f"positions count from 0, so its angle is {i} × θ",
            )
            out.append((slip, _at(_changed(step, shift=step.shift + by), i, j)))
    if i + step.shift:
        out += [
            (
                Slip(
                    "not-rotated",
                    f"that is {src.key}[{row_of}, {step.cols[j]}] as it was; turn the pair by "
                    "the angle of its position",
                ),
                _itself(src, i, j),
            ),
            (
                Slip(
                    "rotated-backwards",
                    "that turns the pair the wrong way (sin with the other sign): "
                    "(a, b) → (a·cos − b·sin, a·sin + b·cos)",
                ),
                _at(_changed(step, angles=tuple(-a for a in step.angles)), i, j),
            ),
        ]
    return out


def _cross_slips(d: Derivation, step: rules.Product, i: int, j: int) -> SlipList:
    """Cross-attention: keys and values taken from the target sentence, not the source."""
    out: SlipList = []
    row_of = step.rows[i]
    family = None if _decoding(step) else _family(step)
    X = d.step("X")  # the target sentence
    which = _read_by(d, step) if family == "projection" and step.args[0] is not X else None
    if which is not None and i < d.lesson.n:  # K or V, made from the source sentence
        X_src = step.args[0]
        slip = Slip(
            f"target-{which}",
            f"that uses row {X.rows[i]} of X, the target sentence; the {which} of "
            f"cross-attention come from X_src, the source sentence",
        )
        out.append((slip, _at(step, i, j, _swap_step(X_src, X))))
    elif family == "scores" and j < d.lesson.n:
        K = step.args[1]
        target = _target_keys(d, K)
        slip = Slip(
            "target-keys",
            f"that is the query of {row_of} · the key of {target.rows[j]} from the target "
            "sentence; in cross-attention the keys come from the source (K = X_src · W_K)",
        )
        out.append((slip, _at(step, i, j, _swap_step(K, target))))
    return out


def _other_group(d: Derivation, step: Step, i: int, j: int) -> list[tuple[Slip, Alternative]]:
    """Grouped heads: a head's scores read with another group's keys, or its Z blended from
    another group's values (the K or V a head reads is the one of its own group)."""
    lesson = d.lesson
    what = None if _decoding(step) else READS.get(_family(step) or "")
    if lesson.kv_groups is None or step.head is None or what is None:
        return []
    mine = step.args[1]  # the group's K (turned, with RoPE) or V
    # another group's, unturned
    name = (mine.args[0] if isinstance(mine, rules.Rotate) else mine).name
    group = lesson.group_of(step.head)
    out: list[tuple[Slip, Alternative]] = []
    for g in range(1, lesson.kv_groups + 1):
        owner = lesson.group_heads(g)[0]
        if g == group or not d.has(name, owner):
            continue
        theirs = d.step(name, owner)
        if theirs.shape != mine.shape:
            continue
        slip = Slip(
            f"other-group-{name}",
            f"that uses the {what} of group {g} ({theirs.key}); head {step.head} is in group "
            f"{group} and reads {mine.key}",
        )
        out.append((slip, _at(step, i, j, _swap_step(mine, theirs))))
    return out


def _old_query(d: Derivation, step: rules.Product, i: int, j: int) -> SlipList:
    """One decoding step: the new token's score worked with the last cached token's query (the
    old row worked again)."""
    q, _ = step.args
    name = kinds.repeated(q.name)  # the lesson's Q, which q_new repeats
    if not _decoding(step) or _family(step) != "scores" or not d.has(name, step.head):
        return []
    Q = d.step(name, step.head)
    last = len(Q.rows) - 1
    slip = Slip(
        "old-query",
        f"that uses the query of {Q.rows[last]} (the last cached token); the new row needs "
        f"the new token's own query, {q.key}",
    )

    def old(ref: Ref) -> Ref:
        return Ref(Q, last, ref.j) if ref.step is q else ref

    return [(slip, _at(step, i, j, old))]


def _left_out_itself(d: Derivation, step: rules.Softmax, i: int, j: int) -> SlipList:
    """One decoding step: the new token's weights shared out over the cache alone (its own key
    left out)."""
    if not _decoding(step) or j >= len(step.cols) - 1:
        return []
    (src,) = step.args
    own = len(step.cols) - 1
    slip = Slip(
        "left-out-itself",
        f"that shares the weights over the cached tokens only; the new token "
        f"({step.cols[own]}) also attends to itself, so its own score joins the row",
    )

    def alone(ref: Ref) -> Ref | Range:
        return HIDDEN if ref.step is src and ref.j == own else ref

    return [(slip, _at(step, i, j, alone))]
