"""Answers the judge calls right that no way of working gives (issue 40, item 4).

Run from the repository root:

    python bench/honest.py                       # the four lessons below, weights and Z
    python bench/honest.py --lessons the-cake --show 5

For every weights and Z cell of each lesson, every decimal within ``--span`` units of the true
value at the lesson's places (and at one more place) is judged by the quiz's judge. An answer
called right is *given by a way* when some way of working by hand rounds to it. The ways are
enumerated here, independently of the judge (50-digit decimals, ``Step.combine`` with a kit of
its own): every intermediate carried exactly or rounded to ``p``..``p + 4`` places (from the
student's own work, or read off the walk's tables, rounded from the exact values), √d_k and
each e^x exactly or rounded to ``p``..``p + 4`` places, the softmax worked as e^x or as
e^(x − m) with m the row's largest score. Prints, per lesson and in all, how many right answers
no way gives; the issue measured 54 at the lesson's places and 474 at one more.
"""

from __future__ import annotations

import argparse
import itertools
import sys
from decimal import ROUND_HALF_DOWN, ROUND_HALF_UP, Decimal
from pathlib import Path

import mpmath

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tutor.assess import judge as jd
from tutor.core.engine import Derivation, Ref, Step, derive
from tutor.core.lessonfile import load_lesson
from tutor.core.numbers import read_answer
from tutor.text.cells import cell_name

MPB = mpmath.MPContext()
MPB.dps = 50
ROOT = Path(__file__).resolve().parent.parent
LESSONS = ("cats-chase-mice", "the-cake", "the-cake-causal", "the-cake-two-heads")
EXTRA = 4


def rounded(x: mpmath.mpf, q: int) -> set[Decimal]:
    """``x`` rounded to ``q`` places: half up, and half down too (either way at a tie)."""
    d = Decimal(MPB.nstr(x, 45, strip_zeros=False))
    unit = Decimal(1).scaleb(-q)
    return {d.quantize(unit, rounding=ROUND_HALF_UP), d.quantize(unit, rounding=ROUND_HALF_DOWN)}


class Way:
    """One way of working: ``carry`` places for every intermediate (None: exactly), ``rounds``
    places for √d_k and each e^x (None: exactly), the softmax as e^x or as e^(x − m)."""

    zero = MPB.mpf(0)
    hidden = MPB.ninf

    def __init__(self, carry: int | None, rounds: int | None, shifted: bool, table: bool) -> None:
        self.carry, self.rounds, self.shifted = carry, rounds, shifted
        self.table = table  # the cell's inputs read off the walk's tables (rounded from exact)
        self.values: dict[tuple[int, int, int], mpmath.mpf] = {}

    def _r(self, x: mpmath.mpf, q: int | None) -> mpmath.mpf:
        if q is None or MPB.isinf(x):
            return x
        d = Decimal(MPB.nstr(x, 45, strip_zeros=False))  # carried half up, as it is shown
        return MPB.mpf(str(d.quantize(Decimal(1).scaleb(-q), rounding=ROUND_HALF_UP)))

    def given(self, cell):  # type: ignore[no-untyped-def]
        if cell.q is None:
            return self._r(MPB.mpf(cell.approx), self.rounds)
        return MPB.mpf(cell.q.numerator) / cell.q.denominator

    def turn(self, angle):  # type: ignore[no-untyped-def]
        import sympy

        c, s = (MPB.mpf(sympy.N(f(angle), 60)._mpf_) for f in (sympy.cos, sympy.sin))
        return self._r(c, self.rounds), self._r(s, self.rounds)

    def root(self, n: int) -> mpmath.mpf:
        r = MPB.sqrt(n)
        return r if int(r) ** 2 == n else self._r(r, self.rounds)

    def exp(self, x: mpmath.mpf) -> mpmath.mpf:
        return x  # worked in ``share``, with the row

    def total(self, xs: list) -> mpmath.mpf:  # type: ignore[type-arg]
        return MPB.fsum(xs)

    def share(self, xs: list, j: int) -> mpmath.mpf:  # type: ignore[type-arg]
        m = max(xs) if self.shifted else 0
        es = [self._r(MPB.exp(x - m), self.rounds) for x in xs]
        return es[j] / MPB.fsum(es)

    def is_hidden(self, x: mpmath.mpf) -> bool:
        return MPB.isinf(x)

    def value(self, ref: Ref) -> mpmath.mpf:
        s = ref.step
        if s.given:
            return self.given(s.cells[ref.i][ref.j])
        key = (id(s), ref.i, ref.j)
        if key not in self.values:
            copy = s.hides(ref.i, ref.j) or s.copy_of(ref.i, ref.j) is not None
            if self.table and not copy:
                v = MPB.mpf(s.cells[ref.i][ref.j].approx)
            else:
                v = s.combine(ref.i, ref.j, self.value, self)
            self.values[key] = v if copy else self._r(v, self.carry)
        return self.values[key]


def ways(p: int) -> list[Way]:
    places = [None, *range(p, p + EXTRA + 1)]
    return [
        Way(c, r, shifted, table)
        for c, r, shifted, table in itertools.product(places, places, (False, True), (False, True))
        if r is not None or not shifted  # e^(x − m) carried exactly: the same shares
        if c is not None or not table
    ]


def cells(d: Derivation) -> list[tuple[Step, int, int]]:
    out = []
    for s in d.steps:
        if s.name in ("weights", "Z"):
            out += [
                (s, i, j)
                for i in range(len(s.rows))
                for j in range(len(s.cols))
                if not s.cells[i][j].masked and not s.hidden(i, j)
            ]
    return out


def measure(name: str, span: int, show: int) -> dict[int, int]:
    d = derive(load_lesson(ROOT / "lessons" / f"{name}.yaml"))
    p = d.lesson.precision
    J = jd.judge_for(d)
    all_ways = ways(p)
    missed = {p: 0, p + 1: 0}
    for step, i, j in cells(d):
        values = [step.combine(i, j, w.value, w) for w in all_ways]  # the cell itself, uncarried
        true = MPB.mpf(step.cells[i][j].approx)
        for q in (p, p + 1):
            given = set().union(*(rounded(v, q) for v in values))
            unit = Decimal(1).scaleb(-q)
            centre = min(rounded(true, q))
            for k in range(-span * (q - p + 1), span * (q - p + 1) + 1):
                text = str(centre + k * unit)
                if Decimal(text) in given:
                    continue
                v = J.judge(step, i, j, read_answer(text))
                if v.right and v.kind != "exact":
                    missed[q] += 1
                    if show:
                        show -= 1
                        print(f"  {name} {cell_name(step, i, j)} = {text}: {v.message}")
    return missed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lessons", nargs="*", default=list(LESSONS))
    ap.add_argument("--span", type=int, default=12, help="units either side of the true value")
    ap.add_argument("--show", type=int, default=0, help="print the first N such answers")
    args = ap.parse_args()
    total: dict[str, int] = {"p": 0, "p+1": 0}
    for name in args.lessons:
        missed = measure(name, args.span, args.show)
        at_p, at_more = sorted(missed)
        print(f"{name}: {missed[at_p]} at its places, {missed[at_more]} at one more")
        total["p"] += missed[at_p]
        total["p+1"] += missed[at_more]
    print(f"all: {total['p']} at the lessons' places, {total['p+1']} at one more")


if __name__ == "__main__":
    main()
