"""The answer's range: what a written entry stands for, as an interval of ``tutor.assess.honest``.

A decimal with ``q`` places stands for every value that rounds to it, ±½ unit of its last place
(padded with zeros to the lesson's places when it has fewer); an exact form is itself; −∞ is the
hidden value. The judge meets these against a cell's honest range; the grader reads a student's
own answers through them (``Lookup``) to work the next step from them.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable

import sympy
from sympy.polys.domains import QQ

from tutor.assess import honest as hn
from tutor.assess.honest import HIDDEN, Interval, Range
from tutor.core.engine import MP, Ref
from tutor.core.numbers import Answer

Lookup = Callable[[Ref], Range]  # a cell -> the range a student may use for it
Remap = Callable[[Ref], "Ref | Range"]  # a slip: which cell is read instead (or what value)

_PLAIN = re.compile(r"[+-]?(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?")


@functools.lru_cache(maxsize=8192)  # asked of each answer by every slip the judge tries
def written_places(answer: Answer) -> int | None:
    """The decimal places of a written number (``0.50`` has 2, ``2e-3`` has 3, ``2`` has 0);
    None for a fraction, another exact form or an expression."""
    if not answer.plain or (answer.exact_form and not answer.value.is_Integer):
        return None
    m = _PLAIN.fullmatch(answer.text.replace("\u2212", "-").replace(" ", ""))
    if m is None:
        return None
    return max(0, len(m[2] or "") - int(m[3] or 0))


@functools.lru_cache(maxsize=8192, typed=True)  # (typed: 1/2 and 0.5 are not one key)
def answer_range(value: sympy.Expr) -> Range:
    """An answer's exact value as a range: a point, −∞, or a tight range around it."""
    if value is sympy.S.NegativeInfinity:
        return HIDDEN
    if value.is_Rational:
        return Interval(QQ(int(value.p), int(value.q)))
    return hn.around(MP.mpf(value.evalf(60)._mpf_), 55)


def written_range(answer: Answer, places: int) -> Range:
    """Every value a written entry stands for: a decimal with ``q`` places is any value that
    rounds to it, [w − u/2, w + u/2] with u = 10^-q (padded with zeros to ``places``, the
    lesson's, when it has fewer); an exact form is itself."""
    r = answer_range(answer.value)
    q = written_places(answer)
    if q is None or isinstance(r, hn.Hidden):
        return r
    half = QQ(1, 2 * 10 ** max(q, places))
    return Interval(r.lo - half, r.hi + half)
