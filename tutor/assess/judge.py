"""Judging one answer for one cell: the one judge the quiz and the grader share.

The model (the README's "Tolerance" says it in a teacher's words): a written decimal stands for
every value it could be a rounding of, and a cell's *honest range* is what its step's rule
(``Step.combine``, the engine's one description of each cell) gives over the ranges of its
inputs, in ``tutor.assess.honest``'s arithmetic of intervals: every intermediate carried exactly or
rounded to the lesson's places or more, √d_k and each e^x rounded the same way, the row total
of a softmax too. An answer earns the point when it is a correct rounding (half up, or either
way at a tie) of some value in that range:

* from the true inputs (as a student may carry them) for ``correct``;
* from the student's own earlier answers for follow-through (``Judge.follows``).

A decimal with fewer places than the lesson asks is read padded with zeros (``0`` is 0.00);
the quiz also says when it is right to its own places (``kind == "fewer"``). An exact form
(``1/3``, ``4/sqrt(2)``) must equal the value (``same_value``). A named slip (``Judge.slips``) is
one whose own computation the answer is honest for, when the true one is not.

Ranges are remembered per ``Judge``, and a ``Judge`` per derivation (``judge_for``): the memory
goes when the derivation does.

The judge's other jobs each have a module beside it: exact values and the one exact comparison
(``tutor.assess.exact``), what a written answer stands for (``tutor.assess.ranges``) and the
slip catalogue (``tutor.assess.catalogue``). Their names are also read from here.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

import sympy
from sympy.polys.domains import QQ

from tutor.assess import honest as hn
from tutor.assess.catalogue import (  # noqa: F401 (the catalogue's names, read from the judge)
    SLIP_RULES,
    TRUNCATED,
    Slip,
    alternatives,
    rule_slips,
)
from tutor.assess.exact import (  # noqa: F401 (exact values, read from the judge)
    cell_from,
    exact_value,
    same_value,
    shown_root,
    shown_value,
    true_value,
)
from tutor.assess.honest import Interval, Range
from tutor.assess.ranges import (  # noqa: F401 (the answer's range, read from the judge)
    Lookup,
    Remap,
    answer_range,
    written_places,
    written_range,
)
from tutor.core.engine import Derivation, Product, Ref, Scale, Softmax, Step
from tutor.core.numbers import Answer
from tutor.core.rounding import scaled_half_up
from tutor.text import format as fmt

_UNSET = object()  # not yet worked
MINUS_INF = sympy.S.NegativeInfinity  # a singleton: ``is`` asks what ``==`` asks, without sympify

# ---------------------------------------------------------------------------------------------
# verdicts


@dataclass(frozen=True)
class Verdict:
    """How one answer fared against one cell."""

    right: bool
    exact: bool  # the answer was an exact form equal to the value
    kind: str  # "exact" | "rounded" | "hand" | "fewer" | "wrong"
    message: str
    way: str = ""  # for "hand": the way of working that gives it ("from scaled as shown (…)")


class Remembered:
    """A ``Lookup`` whose values hold still for a while (a sheet's own answers while one step is
    graded: its cells read only earlier steps, whose verdicts are settled). The judge remembers
    what it works from it cell by cell (a cell's range and enclosure, read without a slip's
    remap), so a row's other cells, asked again by each cell's slips, are worked once."""

    __slots__ = ("coarse", "lookup", "ranges", "steps")

    def __init__(self, lookup: Lookup) -> None:
        self.lookup = lookup
        self.ranges: dict[tuple[int, int, int], Range | None] = {}
        self.coarse: dict[tuple[int, int, int], hn.Fixed | None] = {}
        self.steps: dict[int, Step] = {}  # the steps remembered by id, kept alive (``Judge``)

    def __call__(self, ref: Ref) -> Range:
        return self.lookup(ref)


VERDICTS_KEPT = 20_000  # a judge's verdicts remembered (at least 4 a cell of its lesson)


class Judge:
    """The judge of one derivation at one precision; remembers the ranges it works out."""

    def __init__(self, d: Derivation, places: int) -> None:
        self.d = d
        self.places = places
        self.kit = hn.Honest(places)
        self._true: dict[tuple[int, int, int], Range] = {}
        # every step whose cells are remembered by id, kept alive so that no other step (a slip's
        # step made for the moment, like the scores divided by another root) takes its id
        self._steps: dict[int, Step] = {}
        self._carried: dict[tuple[int, int, int], Range] = {}
        self._coarse: dict[tuple[int, int, int], hn.Fixed | None] = {}
        self._given: dict[tuple[int, int, int], Interval] = {}
        self._verdicts: dict[tuple[int, int, int, Answer], Verdict] = {}
        # how many it keeps: a class's answers repeat (honest work agrees), so a few per cell
        # serve it; a class of random guesses repeats none, and would grow it by ~300 bytes
        # an answer for good (memory flat in the class size: issue 39, item 9)
        self._verdicts_kept = max(VERDICTS_KEPT, 4 * sum(len(d.asked(s)) for s in d.steps))
        self._reached: tuple[Answer, int | None, tuple[object, object] | None] | None = None
        self._ways = hn.ways(places)  # every way of working by hand, simplest first
        # a cell worked one way, by the way's parameters its working read (``way_value``)
        self._way_values: dict[tuple[object, ...], tuple[Range | None, frozenset[str]]] = {}
        self._way_read: dict[tuple[int, int, int], frozenset[str]] = {}
        # a cell as a way reads it: off the walk's table, or its worked value carried (by places)
        self._shown: dict[tuple[int | None, int, int, int], Range] = {}
        self._kept: dict[tuple[int | None, int], tuple[Range, Range]] = {}
        self._exp_only: dict[int, hn.Way] = {}  # a way with √d_k exact, by the way's id
        # a slip's coarse enclosure and range from the true inputs, by its computation (kept
        # alive here and in the catalogue's memory of a derivation's slips)
        self._remembered: dict[object, list[object]] = {}
        self._terms: dict[tuple[int, int, int], list[tuple[Range, Range, hn.Fixed | None]]] = {}

    def hides(self, step: Step, i: int, j: int) -> bool:
        """A scaled score the causal mask turns into −∞ (the walk shows −∞ there): the mask's
        own rule says which (``Derivation.fill``)."""
        return (fill := self.d.fill(step, i, j)) is not None and fill.masked

    # -- ranges ----------------------------------------------------------------------------

    def carried(self, ref: Ref) -> Range:
        """A true cell as a student may carry it: exactly, or rounded to the lesson's places
        (or more)."""
        key = (id(ref.step), ref.i, ref.j)
        got = self._carried.get(key)
        if got is None:
            got = hn.carried(hn.enclosed(ref.step.cells[ref.i][ref.j]), self.places)
            self._carried[key] = got
        return got

    def given(self, ref: Ref) -> Interval:
        """A number the lesson gives, as a point (one object per cell, so its coarse enclosure
        is made once)."""
        key = (id(ref.step), ref.i, ref.j)
        got = self._given.get(key)
        if got is None:
            got = self._given[key] = self.kit.given(ref.step.cells[ref.i][ref.j])
        return got

    def resolved(self, base: Lookup, remap: Remap | None = None) -> Lookup:
        """A lookup for ``combine``: inputs as the lesson gives them, the mask applied by its
        own rule, ``remap`` (a slip) first, and ``base`` for every other cell."""

        given = self._given  # (the judge's hottest path: every input of every cell it works)

        def value(ref: Ref) -> Range:
            if remap is not None:
                got = remap(ref)
                if not isinstance(got, Ref):
                    return got
                ref = got
            step = ref.step
            if step.given:
                return given.get((id(step), ref.i, ref.j)) or self.given(ref)
            # not written: read through to what it copies
            if step.reads_through_any and step.reads_through(ref.i, ref.j):
                return step.combine(ref.i, ref.j, value, self.kit)
            return base(ref)

        return value

    def range(self, step: Step, i: int, j: int, base: Lookup | None = None) -> Range | None:
        """The honest range of cell (i, j): from the true inputs (``base`` None, remembered)
        or from the cells ``base`` gives. None when it cannot be worked (a division by 0)."""
        if base is None:
            key = (id(step), i, j)
            if key not in self._true:
                self._steps[id(step)] = step
                self._true[key] = self.combined(step, i, j, self.resolved(self.carried))
            return self._true[key]
        if isinstance(base, Remembered):
            key = (id(step), i, j)
            if key not in base.ranges:
                base.steps[id(step)] = step
                base.ranges[key] = self.combined(step, i, j, self.resolved(base))
            return base.ranges[key]
        return self.combined(step, i, j, self.resolved(base))

    def combined(self, step: Step, i: int, j: int, value: Lookup) -> Range | None:
        """Cell (i, j) by its rule from the ranges ``value`` gives (None: a division by 0)."""
        try:
            return step.combine(i, j, value, self.kit)
        except ZeroDivisionError:
            return None

    def remembered(
        self, alt: object, answer: Answer | None, step: Step, i: int, j: int, remap: Remap
    ) -> Range | None:
        """A slip's range from the true inputs, read through ``remap`` (``catalogue._at``),
        worked once per judge: its coarse enclosure first, its exact range only when an answer's
        window meets that (None: the window misses it)."""
        got = self._remembered.get(alt)
        if got is None:
            got = self._remembered[alt] = [_UNSET, _UNSET]
        window = None if answer is None else self.reach(answer)
        if window is not None:
            if got[0] is _UNSET:
                got[0] = self.coarse(step, i, j, self.carried, remap)
            if got[0] is not None and not got[0].meets(*window):  # type: ignore[union-attr]
                return None
        if got[1] is _UNSET:
            got[1] = self.combined(step, i, j, self.resolved(self.carried, remap))
        return got[1]  # type: ignore[return-value]

    # -- a cheap screen before the exact range ----------------------------------------------------

    def coarse(
        self, step: Step, i: int, j: int, base: Lookup | None = None, remap: Remap | None = None
    ) -> hn.Fixed | None:
        """An integer enclosure of cell (i, j)'s range from ``base`` (the true inputs when None,
        remembered), read through ``remap``: a product's sum in a few integer operations, where
        its exact range costs hundreds of big rationals. For another rule, the bounds every cell
        of it keeps (``Step.bounds``: a weight lies in [0, 1]), or None (not screened)."""
        if not isinstance(step, Product):  # the rule's own bounds, when it has them
            return None if step.bounds is None else _bounds(step.bounds)
        key = (id(step), i, j)
        memo = None
        if remap is None:
            memo = self._coarse if base is None else getattr(base, "coarse", None)
        if memo is not None and key in memo:
            return memo[key]
        value = self.resolved(base or self.carried, remap)
        try:
            got = step.combine(i, j, lambda ref: hn.fixed(value(ref)), hn.COARSE)
        except hn.Unscreened:
            got = None
        if memo is not None:
            (self._steps if base is None else base.steps)[id(step)] = step  # type: ignore[union-attr]
            memo[key] = got
        return got

    def reach(self, answer: Answer, places: int | None = None) -> tuple[object, object] | None:
        """A window every range ``honest`` accepts the answer for meets: the answer, half a unit
        at its places, and the tenth of that a rounding one place further may add (None: −∞).
        The last answer's is remembered: each slip of a cell asks for it."""
        last = self._reached
        if last is not None and last[0] is answer and last[1] == places:
            return last[2]
        a = answer_range(answer.value)
        if isinstance(a, hn.Hidden):
            window = None
        elif (q := self._read_at(answer, places)) is None:
            window = a.lo, a.hi
        else:
            margin = QQ(11, 20 * 10**q)
            window = a.lo - margin, a.hi + margin
        self._reached = (answer, places, window)
        return window

    def honest_at(
        self,
        answer: Answer,
        step: Step,
        i: int,
        j: int,
        base: Lookup | None = None,
        places: int | None = None,
    ) -> bool:
        """``honest`` for cell (i, j)'s range from ``base`` (the true inputs when None); the
        exact range is worked only when the coarse one may meet the answer."""
        if base == self.carried:
            base = None
        window = self.reach(answer, places)
        coarse = self.coarse(step, i, j, base) if window is not None else None
        if coarse is not None and not coarse.meets(*window):  # type: ignore[misc]
            return False
        return self.honest(answer, self.range(step, i, j, base), places)

    def _read_at(self, answer: Answer, places: int | None) -> int | None:
        """The places ``honest`` reads a decimal at (None: an exact form, judged as itself)."""
        q = written_places(answer)
        if q is None and answer.exact_form:
            return None
        return max(q if q is not None else self.places, self.places) if places is None else places

    # -- is an answer honest for a range ------------------------------------------------------

    def honest(self, answer: Answer, r: Range | None, places: int | None = None) -> bool:
        """Whether ``answer`` is a correct rounding of some value in ``r``: at the answer's own
        places when it has more than the lesson's, else padded to the lesson's (or at
        ``places``). An exact form must lie in the range."""
        if r is None:
            return False
        a = answer_range(answer.value)
        if isinstance(r, hn.Hidden) or isinstance(a, hn.Hidden):
            return r is a
        q = self._read_at(answer, places)
        if q is None:
            return r.meets(a.lo, a.hi)
        half = QQ(1, 2 * 10**q)
        lo, hi = a.lo - half, a.hi + half
        if r.meets(lo, hi):
            return True
        if q + 1 > self.places + hn.EXTRA or not r.meets(lo - half / 10, hi + half / 10):
            return False  # rounding one place further moves a value by less than that
        wide = hn.carried(r, self.places, first=q + 1)  # carried one place or more past it
        return wide.meets(lo, hi)

    # -- against the true inputs ------------------------------------------------------------

    def judge(self, step: Step, i: int, j: int, answer: Answer) -> Verdict:
        """Right or wrong against the true inputs, and how (remembered: a class's sheets
        share their judge, and many of their answers)."""
        key = (id(step), i, j, answer)
        got = self._verdicts.get(key)
        if got is None:
            self._steps[id(step)] = step
            if len(self._verdicts) >= self._verdicts_kept:  # a class of guesses: start afresh
                self._verdicts.clear()
            got = self._verdicts[key] = self._judge(step, i, j, answer)
        return got

    def _judge(self, step: Step, i: int, j: int, answer: Answer) -> Verdict:
        cell = step.cells[i][j]
        p = self.places
        if answer.value is MINUS_INF:
            if self.hides(step, i, j) or cell.masked:
                return Verdict(True, True, "exact", "right: the causal mask makes it −∞")
            return Verdict(False, False, "wrong", "−∞ only where the causal mask hides a score")
        if answer.exact_form and same_value(answer.value, cell):
            return Verdict(True, True, "exact", "right, exactly")
        if answer.exact_form and not answer.value.is_Rational:  # claims exactness: √2 is not 1.41
            return Verdict(False, False, "wrong", "not the exact value")
        if not answer.plain or (answer.exact_form and not answer.value.is_Integer):
            return self._as_decimal(step, i, j, answer)
        q = max(written_places(answer) or p, p)
        half = QQ(1, 2 * 10**q)
        a = answer_range(answer.value)
        assert isinstance(a, Interval)
        tight = hn.enclosed(cell)
        # the true value surely rounds to the answer, and it lies in the honest range, so the
        # answer is honest without working that range. Not for a softmax: an e^x below the
        # 256-bit slack has a range whose lower end is 0, and a row of those has no range
        surely = (
            not isinstance(step, Softmax)
            and isinstance(tight, Interval)
            and a.lo - half <= tight.lo
            and tight.hi <= a.hi + half
        )
        if surely or self.honest_at(answer, step, i, j):
            if tight.meets(a.lo - half, a.hi + half):  # type: ignore[union-attr]
                return Verdict(True, False, "rounded", f"right to {q} places")
            # right only for rounded inputs: when a way of working gives it, named
            way = self.way_for(step, i, j, a.lo - half, a.hi + half)
            if way is not None:
                words = self.way_words(way, step, i, j)
                exact = fmt.decimal_text(fmt.round_half_up(cell, q))
                return Verdict(
                    True, False, "hand", f"right, {words}; the exact value rounds to {exact}", words
                )
        q = written_places(answer)
        if q is not None and 0 < q < p and self.honest_at(answer, step, i, j, places=q):
            return Verdict(False, False, "fewer", f"right to {_places(q)}; give {_places(p)}")
        return Verdict(False, False, "wrong", "no careful rounding gives that")

    # -- the ways of working by hand -----------------------------------------------------------

    def way_value(self, way: hn.Way, step: Step, i: int, j: int) -> Range | None:
        """Cell (i, j) worked one way from the lesson's inputs: each intermediate as the way
        carries it, the cell itself unrounded (None: the way cannot work it). Remembered by the
        way's parameters the cell's working read (``hn.Way``): ways that differ only in what the
        cell never reads share one working."""
        cell = (id(step), i, j)
        read = self._way_read.get(cell)
        if read is not None:
            got = self._way_values.get((cell, way.reading(read)))
            if got is not None:
                if way.log:
                    way.log[-1] |= got[1]
                return got[0]
        self._steps[id(step)] = step

        def value(ref: Ref) -> Range:
            s = ref.step
            if s.given:
                return way.given(s.cells[ref.i][ref.j])
            if way.table:  # read off the walk's table (each cell at each carry, once)
                key = (way.carry, id(s), ref.i, ref.j)
                shown = self._shown.get(key)
                if shown is None:
                    self._steps[id(s)] = s
                    cell = s.cells[ref.i][ref.j]
                    shown = self._shown[key] = hn.rounded_to(hn.enclosed(cell), key[0])
                return shown
            got = self.way_value(way, s, ref.i, ref.j)
            if got is None:
                raise ZeroDivisionError("an input this way cannot work")
            if s.reads_through(ref.i, ref.j):
                return got
            carry = way.carry
            kept = self._kept.get((carry, id(got)))  # (got is remembered: its id stays its)
            if kept is None:
                kept = self._kept[(carry, id(got))] = (got, hn.rounded_to(got, carry))
            return kept[1]

        way.log.append(set())
        try:
            r: Range | None = step.combine(i, j, value, way)
        except ZeroDivisionError:
            r = None
        finally:
            read = frozenset(way.log.pop())
        if way.log:
            way.log[-1] |= read
        self._way_read[cell] = read
        self._way_values[(cell, way.reading(read))] = (r, read)
        return r

    def way_for(self, step: Step, i: int, j: int, lo: object, hi: object) -> hn.Way | None:
        """The simplest way of working whose cell (i, j) meets [lo, hi] (None: no way does);
        with √d_k exact when only its e^x need rounding (so that the words say no more)."""
        for way in self._ways:
            r = self.way_value(way, step, i, j)
            if isinstance(r, Interval) and r.meets(lo, hi):
                if way.rounds is None:
                    return way
                bare = self._exp_only.get(id(way))
                if bare is None:
                    bare = hn.Way(way.carry, way.rounds, way.shifted, way.table, roots=False)
                    self._exp_only[id(way)] = bare
                r = self.way_value(bare, step, i, j)
                return bare if isinstance(r, Interval) and r.meets(lo, hi) else way
        return None

    def way_words(self, way: hn.Way, step: Step, i: int, j: int) -> str:
        """A way of working in a student's words: "from scaled as shown (2.83 and 1.41)",
        "subtracting the row's largest first, e^(x − m) to 2 places"."""
        parts = []
        if way.table and way.carry is not None:
            parts.append(self._shown_inputs(step, i, j, way.carry))
        elif way.carry is not None:
            parts.append(f"rounding each step to {_places(way.carry)} as you go")
        if way.rounds is not None:
            r = way.rounds
            upstream = _upstream(step)
            roots = sorted(
                {s.divisor for s in upstream if isinstance(s, Scale)} - {n * n for n in range(9)}
            )
            said = [f"√{n} as {fmt.decimal_text(fmt.sqrt_rounded(n, r))}" for n in roots]
            said = said if way.roots else []
            if any(isinstance(s, Softmax) for s in upstream):
                if way.shifted:
                    parts.append(f"subtracting the row's largest first, e^(x − m) to {_places(r)}")
                else:
                    said.append(f"each e^x to {_places(r)}")
            if said:
                parts.append("with " + " and ".join(said))
        return ", ".join(parts) or "for the rounded inputs shown"

    def _shown_inputs(self, step: Step, i: int, j: int, places: int) -> str:
        """The worked inputs of cell (i, j) as the walk shows them: "from scaled as shown
        (2.83 and 1.41)" (or rounded to more ``places``)."""
        refs = []
        for ref in step.sources(i, j):
            while (copy := ref.step.copy_of(ref.i, ref.j)) is not None:
                ref = copy
            cell = ref.step.cells[ref.i][ref.j]
            if not ref.step.given and not cell.masked and not cell.is_integer:
                refs.append(ref)
        if not refs:
            return f"from the inputs to {_places(places)}"
        texts = list(dict.fromkeys(fmt.number(r.step.cells[r.i][r.j], places) for r in refs))
        listed = texts[:4] + (["…"] if len(texts) > 4 else [])
        said = listed[0] if len(listed) == 1 else ", ".join(listed[:-1]) + " and " + listed[-1]
        shown = "as shown" if places == self.places else f"to {_places(places)}"
        return f"from {refs[0].step.key} {shown} ({said})"

    def _as_decimal(self, step: Step, i: int, j: int, answer: Answer) -> Verdict:
        """An expression, or a fraction that is not the exact value, judged as the decimal it
        gives (one rule, however the answer is typed): a terminating fraction as itself
        (``4/25`` is 0.16), anything else rounded to the lesson's places. Decimals inside an
        expression with fewer places than the lesson's are a too-early rounding, said so."""
        value = answer.value
        q = fmt.decimal_places(int(value.q)) if value.is_Rational else None
        places = self.places if q is None else max(q, self.places)
        text = fmt.expr_rounded(value, places)
        shown = sympy.Rational(text.replace(fmt.MINUS, "-"))
        decimal = Answer(text, shown, exact_form=shown.is_Integer, plain=True)
        what = "fraction" if answer.exact_form and value.is_Rational else "expression"
        v = self.judge(step, i, j, decimal)
        says = f"your {what} gives {decimal.text}"
        early = _literal_places(answer)
        if not v.right and early is not None and early < self.places:
            says += f"; rounding to {_places(early)} inside it is too early ({self.places} or more)"
        return Verdict(v.right, False, v.kind, f"{says}: {v.message}")

    def follows(self, step: Step, i: int, j: int, answer: Answer, own: Lookup) -> bool:
        """Whether the answer is honest for the student's own inputs (``own``)."""
        if answer.value is MINUS_INF:
            return self.hides(step, i, j)
        return self.honest_at(answer, step, i, j, own)

    # -- slips ------------------------------------------------------------------------------

    def slips(
        self, step: Step, i: int, j: int, answer: Answer, base: Lookup | None = None
    ) -> list[Slip]:
        """The slips whose computation the answer is honest for (from the true inputs, or the
        cells ``base`` gives), when the true computation is not: one is the explanation;
        several explain it equally well."""
        base = base or self.carried
        if answer.value is MINUS_INF or self.honest_at(answer, step, i, j, base):
            return []
        if self._truncated(step, i, j, answer, base):  # the right value, cut off: that is all
            return [TRUNCATED]
        out = []
        for slip, alt in alternatives(self.d, step, i, j):
            r = alt(self, base, answer)
            if r is not None and self.honest(answer, r):
                out.append(slip)
        return out

    def _truncated(self, step: Step, i: int, j: int, answer: Answer, base: Lookup) -> bool:
        """The answer is some value of the range cut off (not rounded) at its places (the
        lesson's or more)."""
        q = written_places(answer)
        if q is None or q < self.places:
            return False
        a = answer_range(answer.value)
        assert isinstance(a, Interval)
        u = QQ(1, 10**q)
        coarse = self.coarse(step, i, j, None if base == self.carried else base)
        if coarse is not None and not coarse.meets(a.lo - u, a.lo + u):  # the cut lies in there
            return False
        r = self.range(step, i, j, None if base == self.carried else base)
        if not isinstance(r, Interval):
            return False
        cut = Interval(a.lo, a.lo + u) if a.lo > 0 else Interval(a.lo - u, a.lo)
        if a.lo == 0:
            cut = Interval(-u, u)
        inside = r.meets(cut.lo, cut.hi) and not (r.hi == cut.lo or r.lo == cut.hi)
        return inside

    def near_miss(self, step: Step, i: int, j: int, answer: Answer) -> bool:
        """The answer is one slip of the pen from the true value as shown: one digit different,
        or one unit of its last place away (0.19 for 0.20). Such a difference explains an
        answer at least as well as a misconception that happens to land there."""
        cell = step.cells[i][j]
        q = written_places(answer)
        if q is None or cell.masked or answer.value is MINUS_INF:
            return False
        mine, true = _units(answer, cell, q)
        return abs(mine - true) == 1 or _one_digit(mine, true, q)

    def _products(self, step: Step, i: int, j: int) -> list[tuple[Range, Range, hn.Fixed | None]]:
        """The products of cell (i, j)'s sum from the true inputs (a bias term, last among the
        sources, is not one of them), each with its coarse enclosure: the same for every sheet,
        made once per cell."""
        key = (id(step), i, j)
        got = self._terms.get(key)
        if got is None:
            self._steps[id(step)] = step
            value = self.resolved(self.carried)
            got = []
            for a_ref, b_ref in (step.pair(i, j, k) for k in range(len(step.args[0].cols))):
                x, y = value(a_ref), value(b_ref)
                try:
                    t: hn.Fixed | None = hn.fixed(x) * hn.fixed(y)
                except hn.Unscreened:
                    t = None
                got.append((x, y, t))
            self._terms[key] = got
        return got

    def pen_slip(self, step: Step, i: int, j: int, answer: Answer) -> bool:
        """A slip of the pen, still a recognisable attempt at the cell: a digit or the sign
        away from the true value (not a lone digit for another, like 0 for 2), a term of a
        sum dropped or its sign flipped. A 0 never is: it is what a blank looks like."""
        if answer.value == 0:
            return False
        cell = step.cells[i][j]
        q = written_places(answer)
        if q is not None and not cell.masked and answer.value != 0:
            mine, true = _units(answer, cell, q)
            if mine == -true or (
                len(str(abs(true)).zfill(q + 1)) >= 2 and _one_digit(mine, true, q)
            ):
                return True
        if not isinstance(step, Product):  # a term of a sum dropped: a product's slip
            return False
        window = self.reach(answer)
        coarse = self.coarse(step, i, j)
        if window is not None and coarse is not None:
            w_lo, w_hi = coarse.outward(*window)
            # (sum - t) may meet the window only when t meets [t_lo, t_hi]
            t_lo, t_hi = coarse.lo - w_hi, coarse.hi - w_lo
        else:
            coarse = None
        r = None
        for x, y, t in self._products(step, i, j):
            if (  # rule the term (and twice the term) out cheaply first
                coarse is not None
                and t is not None
                and t.shift == coarse.shift
                and not (t.lo <= t_hi and t.hi >= t_lo)
                and not (2 * t.lo <= t_hi and 2 * t.hi >= t_lo)
            ):
                continue
            r = self.range(step, i, j) if r is None else r
            term = x * y  # type: ignore[operator]
            if term.lo == term.hi == 0 or not isinstance(r, Interval):
                continue
            if self.honest(answer, r - term) or self.honest(answer, r - term.scaled(2)):
                return True
        return False


@functools.cache
def _bounds(ends: tuple[int, int]) -> hn.Fixed:
    return hn.fixed(Interval(QQ(ends[0]), QQ(ends[1])))


def _units(answer: Answer, cell, q: int) -> tuple[int, int]:  # type: ignore[no-untyped-def]
    """The answer and the cell's true value in units of the answer's last place, half up."""
    true = scaled_half_up(hn.enclosed(cell).lo if cell.q is None else cell.q, q)
    return scaled_half_up(QQ(int(answer.value.p), int(answer.value.q)), q), true


def _one_digit(mine: int, true: int, q: int) -> bool:
    """Two numbers (in units of the last place) of one sign and length, one digit apart."""
    a, b = str(abs(mine)).zfill(q + 1), str(abs(true)).zfill(q + 1)
    same_sign = (mine >= 0) == (true >= 0)
    return same_sign and len(a) == len(b) and sum(map(str.__ne__, a, b)) == 1


def _upstream(step: Step) -> list[Step]:
    """The step and every step it is made from."""
    out: list[Step] = []
    todo = [step]
    while todo:
        s = todo.pop()
        if all(s is not t for t in out):
            out.append(s)
            todo += list(s.args)
    return out


def _literal_places(answer: Answer) -> int | None:
    """The fewest decimal places of the decimals written inside an expression (None: none)."""
    found = [len(m[1]) for m in re.finditer(r"\d\.(\d+)", answer.text)]
    return min(found) if found else None


def _places(q: int) -> str:
    return f"{q} place" if q == 1 else f"{q} places"


def judge_for(d: Derivation, places: int | None = None) -> Judge:
    """The judge of ``d`` at ``places`` (the lesson's by default), made once per derivation
    and dropped with it: kept on the derivation itself (a judge refers to its derivation, so a
    weak dictionary keyed by the derivation would keep both alive for good)."""
    places = d.lesson.precision if places is None else places
    judges: dict[int, Judge] = d.__dict__.setdefault("_judges", {})
    if places not in judges:
        judges[places] = Judge(d, places)
    return judges[places]
