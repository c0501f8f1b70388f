"""Honest ranges: every value careful hand work could give for a cell.

A ``Kit`` for ``Step.combine`` (the engine's one rule for each cell) whose numbers are closed
intervals with exact rational endpoints (sympy's ``QQ``). Hand work may, on the way:

* carry any intermediate value exactly, or rounded to the lesson's places or up to ``EXTRA``
  more (so a carried value's range is the hull of its range and its roundings at those places;
  rounding is monotone, so rounding the endpoints is enough);
* round √d_k and each e^x the same way (the row's total of e^x is their sum: rounding it
  too, when the e^x are small, would let 0.009 / 0.01 pass for 0.9996).

Irrational bounds (√n, e^x) come from a 256-bit evaluation, widened outward by far more than its
error, so every range contains the true value. No floats anywhere.
"""

from __future__ import annotations

import math

import mpmath
from sympy.polys.domains import QQ

from tutor.core.rounding import round_ratio

MPX = mpmath.MPContext()
MPX.prec = 256
EXTRA = 4  # a carried value keeps the lesson's places, or up to this many more
SLACK = QQ(1, 2**230)  # relative widening of a 256-bit evaluation: outward, with room to spare
# a value below 2^-TINY in size is held by [0, 2^-TINY]: no answer (30 digits, 1e-30 at the
# least) tells them apart, and a weight of e^(−10^60) has no exact bounds of sensible size
TINY = 1000
FAR = 300  # |exponent| beyond which a softmax row is shifted instead of evaluated as it stands


class Hidden:
    """A masked score: −∞."""

    def __repr__(self) -> str:
        return "−∞"


HIDDEN = Hidden()


class Interval:
    """The closed range [lo, hi], exact rational endpoints."""

    __slots__ = ("_fixed", "hi", "lo")  # _fixed: its ``Fixed`` enclosure, made on demand

    def __init__(self, lo, hi=None) -> None:  # type: ignore[no-untyped-def]
        self.lo = lo
        self.hi = lo if hi is None else hi

    def __add__(self, other: Interval) -> Interval:
        return Interval(self.lo + other.lo, self.hi + other.hi)

    def __sub__(self, other: Interval) -> Interval:
        return Interval(self.lo - other.hi, self.hi - other.lo)

    def __neg__(self) -> Interval:
        return Interval(-self.hi, -self.lo)

    def __mul__(self, other: Interval) -> Interval:
        if self.lo == self.hi and other.lo == other.hi:
            return Interval(self.lo * other.lo)
        ends = (self.lo * other.lo, self.lo * other.hi, self.hi * other.lo, self.hi * other.hi)
        return Interval(min(ends), max(ends))

    def __truediv__(self, other: Interval) -> Interval:
        if other.lo <= 0 <= other.hi:
            raise ZeroDivisionError("the divisor's range holds 0")
        return self * Interval(1 / other.hi, 1 / other.lo)

    def scaled(self, k: int) -> Interval:
        return Interval(self.lo * k, self.hi * k)

    def meets(self, lo, hi) -> bool:  # type: ignore[no-untyped-def]
        """Whether [lo, hi] and this range share a point."""
        return lo <= self.hi and hi >= self.lo

    def __repr__(self) -> str:
        return f"[{float(self.lo):.6g}, {float(self.hi):.6g}]"


Range = Interval | Hidden


# ---------------------------------------------------------------------------------------------
# a coarse screen: rule an answer out before its exact range is worked

BITS = 64  # binary places of a ``Fixed`` enclosure


class Unscreened(Exception):
    """A value the coarse screen does not handle (−∞): work the exact range instead."""


class Fixed:
    """The range [lo, hi] · 2^-shift with integer ends: an enclosure of an ``Interval``, rounded
    outward, whose sums and products are plain integer arithmetic (no gcd). Only ever used to
    show that a range surely misses a window; what it cannot rule out is worked exactly."""

    __slots__ = ("hi", "lo", "shift")

    def __init__(self, lo: int, hi: int, shift: int) -> None:
        self.lo, self.hi, self.shift = lo, hi, shift

    def __add__(self, other: Fixed) -> Fixed:
        a, b = self._at(other.shift), other._at(self.shift)
        return Fixed(a.lo + b.lo, a.hi + b.hi, a.shift)

    def __sub__(self, other: Fixed) -> Fixed:
        a, b = self._at(other.shift), other._at(self.shift)
        return Fixed(a.lo - b.hi, a.hi - b.lo, a.shift)

    def __mul__(self, other: Fixed) -> Fixed:
        a, b, c, d = self.lo, self.hi, other.lo, other.hi
        if a >= 0 and c >= 0:
            return Fixed(a * c, b * d, self.shift + other.shift)
        ends = (a * c, a * d, b * c, b * d)
        return Fixed(min(ends), max(ends), self.shift + other.shift)

    def scaled(self, k: int) -> Fixed:
        return Fixed(self.lo * k, self.hi * k, self.shift)

    def _at(self, shift: int) -> Fixed:
        """The same range with at least ``shift`` binary places (exact: a left shift)."""
        if shift <= self.shift:
            return self
        up = shift - self.shift
        return Fixed(self.lo << up, self.hi << up, shift)

    def outward(self, lo, hi) -> tuple[int, int]:  # type: ignore[no-untyped-def]
        """[lo, hi] (exact rationals) in this range's units, rounded outward."""
        s = self.shift
        return (lo.numerator << s) // lo.denominator, -((-hi.numerator << s) // hi.denominator)

    def meets(self, lo, hi) -> bool:  # type: ignore[no-untyped-def]
        """False only when [lo, hi] (exact rationals) surely misses this range."""
        s = self.shift
        return self.lo * hi.denominator <= hi.numerator << s and (
            self.hi * lo.denominator >= lo.numerator << s
        )


def fixed(r: Range) -> Fixed:
    """The ``Fixed`` enclosure of a range (remembered on it)."""
    if not isinstance(r, Interval):
        raise Unscreened
    try:
        return r._fixed
    except AttributeError:
        lo, hi = r.lo, r.hi
        r._fixed = Fixed(
            (lo.numerator << BITS) // lo.denominator,
            -((-hi.numerator << BITS) // hi.denominator),
            BITS,
        )
        return r._fixed


class Coarse:
    """The ``Kit`` of ``Fixed`` enclosures, for sums of products (``matmul``) only."""

    def total(self, xs: list[Fixed]) -> Fixed:
        shift = max((x.shift for x in xs), default=0)
        xs = [x._at(shift) for x in xs]
        return Fixed(sum(x.lo for x in xs), sum(x.hi for x in xs), shift)


COARSE = Coarse()


def from_mpf(x: mpmath.mpf):  # type: ignore[no-untyped-def]
    """An mpmath number as an exact rational (its binary value)."""
    sign, man, exp, _ = x._mpf_
    man = -int(man) if sign else int(man)  # (mpmath's mantissa is gmpy2's mpz where it can be)
    return QQ(man * 2**exp) if exp >= 0 else QQ(man, 2**-exp)


def around(x: mpmath.mpf, digits: int = 0) -> Interval:
    """A range surely holding the value ``x`` approximates (to 256 bits, or ``digits`` digits)."""
    if x and MPX.mag(x) < -TINY:  # e^(−10^60) as a fraction would need 10^60 bits
        edge = QQ(1, 2**TINY)
        return Interval(QQ(0), edge) if x > 0 else Interval(-edge, QQ(0))
    mid = from_mpf(x)
    width = abs(mid) * SLACK + SLACK
    if digits:
        width += abs(mid) * QQ(1, 10 ** (digits - 2))
    return Interval(mid - width, mid + width)


def enclosed(cell) -> Range:  # type: ignore[no-untyped-def]
    """A cell's exact value as a range: itself when rational, −∞ when masked, else its
    40-digit value widened outward (to 38 digits)."""
    if cell.masked:
        return HIDDEN
    return Interval(cell.q) if cell.q is not None else around(cell.approx, 38)


def _to_mpf(q) -> mpmath.mpf:  # type: ignore[no-untyped-def]
    return MPX.mpf(q.numerator) / q.denominator


MPQ = QQ.dtype  # sympy's rational type (QQ(...) is the same, with a slower front door)


def nearest(x, places: int, up: bool):  # type: ignore[no-untyped-def]
    """``x`` rounded to ``places`` decimals; a tie goes up (``up``) or down."""
    s = 10**places
    return MPQ(round_ratio(x.numerator * s, x.denominator, "up" if up else "down"), s)


def carried(r: Range, places: int, first: int | None = None) -> Range:
    """Every value a student may carry for a value in ``r``: itself, or it rounded to
    ``first``..``places + EXTRA`` places (``first`` defaults to ``places``)."""
    if isinstance(r, Hidden):
        return r
    lo, hi = r.lo, r.hi
    for q in range(places if first is None else first, places + EXTRA + 1):
        lo = min(lo, nearest(r.lo, q, up=False))
        hi = max(hi, nearest(r.hi, q, up=True))
    return Interval(lo, hi)


class Enclosure:
    """The ``Kit`` of enclosures: each number a narrow range surely holding one exact value (a
    true cell's 40-digit value or a written exact form's 60-digit one, widened outward; √n, e^x,
    cos and sin from 256 bits), with no rounding of a student's anywhere. When a whole range
    rounds to one decimal, so does the value it holds: a value made from irrational cells is
    rounded without building its exact form (``tutor.assess.grade.Report.own_shown``).
    ``Honest`` is this arithmetic with a student's roundings added."""

    hidden = HIDDEN

    def __init__(self) -> None:
        self.zero = Interval(QQ(0))
        # a row's ranges (kept alive, for their ids), its e^(x − m) and their totals
        self._shares: dict[tuple[int, ...], tuple[list[Interval], list[Interval], MPQ, MPQ]] = {}

    def given(self, cell) -> Range:  # type: ignore[no-untyped-def]
        return enclosed(cell)

    def root(self, n: int) -> Interval:
        whole = math.isqrt(n)
        return Interval(QQ(whole)) if whole * whole == n else around(MPX.sqrt(n))

    def whole(self, n: int) -> Interval:
        return Interval(QQ(n))

    def turn(self, angle) -> tuple[Interval, Interval]:  # type: ignore[no-untyped-def]
        (cos, _), (sin, _) = turned(angle)
        return cos, sin

    def exp(self, x: Range) -> Range:
        # e^x waits for its row (``share`` gets the exponents): a row far from 0 is shifted
        # first, since e^1000 has no sensible rational bounds
        return x

    def total(self, xs: list[Interval]) -> Interval:
        lo = sum((x.lo for x in xs), QQ(0))
        hi = sum((x.hi for x in xs), QQ(0))
        return Interval(lo, hi)

    def share(self, xs: list[Interval], j: int) -> Interval:
        """e^x_j / Σ e^x_k, worked as e^(x − m) with m the row's largest upper end (the same
        share exactly), its least with the others at their most (as ``Honest.share``). A
        row's e^x are worked once (a row is its range objects, kept for their ids: the
        lookup that gives them remembers them)."""
        key = tuple(map(id, xs))
        got = self._shares.get(key)
        if got is None:
            m = max(x.hi for x in xs)
            es = [Interval(_exp_end(x.lo - m, up=False), _exp_end(x.hi - m, up=True)) for x in xs]
            all_lo, all_hi = sum((e.lo for e in es), QQ(0)), sum((e.hi for e in es), QQ(0))
            got = self._shares[key] = (list(xs), es, all_lo, all_hi)  # xs kept: their ids
        _, es, all_lo, all_hi = got
        e = es[j]
        others_lo, others_hi = all_lo - e.lo, all_hi - e.hi  # type: ignore[operator]
        high = e.hi / (e.hi + others_lo) if e.hi + others_lo > 0 else QQ(1)
        return Interval(e.lo / (e.lo + others_hi), high)

    def is_hidden(self, x: Range) -> bool:
        return isinstance(x, Hidden)


def turned(angle) -> tuple[tuple[Interval, bool], tuple[Interval, bool]]:  # type: ignore[no-untyped-def]
    """cos and sin of an exact angle, each as an enclosure and whether that is the exact value
    (cos 60° = 1/2)."""
    import sympy

    out = []
    for f in (sympy.cos, sympy.sin):
        v = f(angle)
        if v.is_Rational:
            out.append((Interval(QQ(int(v.p), int(v.q))), True))
        else:
            out.append((around(MPX.mpf(sympy.N(v, 90)._mpf_)), False))
    return out[0], out[1]


class Honest(Enclosure):
    """The ``Kit`` of honest ranges at ``places`` decimals: the enclosures with a student's
    roundings added (one per judge: it remembers its square roots and exponentials)."""

    def __init__(self, places: int) -> None:
        super().__init__()
        self.places = places
        self._roots: dict[int, Interval] = {}
        self._exps: dict[tuple[object, object], Interval] = {}
        # a row's ranges (kept alive, for their ids) and its ways: (e^x each, Σ lo, Σ hi)
        self._rows: dict[tuple[int, ...], tuple[list[Interval], list[tuple]]] = {}  # type: ignore[type-arg]

    def given(self, cell) -> Interval:  # type: ignore[no-untyped-def]
        if cell.q is None:  # a sinusoidal position (sin 1): read off its table, maybe rounded
            return carried(enclosed(cell), self.places)  # type: ignore[return-value]
        return Interval(cell.q)

    def turn(self, angle) -> tuple[Interval, Interval]:  # type: ignore[no-untyped-def]
        """cos and sin of an exact angle (RoPE): exact when rational (cos 60° = 1/2), else
        as a student may carry them (√3/2 exactly, or rounded to the lesson's places or more)."""
        (cos, cos_exact), (sin, sin_exact) = turned(angle)
        return (
            cos if cos_exact else carried(cos, self.places),
            sin if sin_exact else carried(sin, self.places),
        )

    def root(self, n: int) -> Interval:
        """√n, exactly or rounded to the lesson's places (or more)."""
        if n not in self._roots:
            self._roots[n] = carried(super().root(n), self.places)  # type: ignore[assignment]
        return self._roots[n]

    def e_to(self, x: Interval, rounded: bool = True) -> Interval:
        """e^x over the range, each end rounded to the lesson's places or more if ``rounded``."""
        key = (x.lo, x.hi, rounded)
        got = self._exps.get(key)
        if got is None:
            got = Interval(_exp_end(x.lo, up=False), _exp_end(x.hi, up=True))
            if rounded:
                got = carried(got, self.places)
            self._exps[key] = got
        return got

    def share(self, xs: list[Interval], j: int) -> Interval:
        """e^x_j / Σ e^x_k. The share grows with e^x_j and falls with every other e^x_k, so its
        least is e^x_j at its least over the others at their most (and the reverse). (Naive
        interval division would count e^x_j twice.)"""
        lo = hi = None
        for es, all_lo, all_hi in self._row(xs):  # each way of working the row
            e = es[j]
            others_lo, others_hi = all_lo - e.lo, all_hi - e.hi
            low = e.lo / (e.lo + others_hi)
            high = e.hi / (e.hi + others_lo) if e.hi + others_lo > 0 else QQ(1)
            lo = low if lo is None else min(lo, low)
            hi = high if hi is None else max(hi, high)
        return Interval(lo, hi)

    def _row(self, xs: list[Interval]):  # type: ignore[no-untyped-def]
        """A row's e^x as ``share`` takes them, and their totals, for each honest way of
        working it: e^x as they stand, each rounded; and e^(x − m) after subtracting the row's
        largest score m, each rounded (as ``attn-tutor softmax`` teaches; the shares are the
        same exactly, not once rounded). Worked once per row (a row is its range objects,
        kept here so that their ids stay theirs)."""
        key = tuple(map(id, xs))
        got = self._rows.get(key)
        if got is None:
            ways = []
            top = max(xs, key=lambda x: x.hi)
            if top.hi <= FAR and min(x.lo for x in xs) >= -FAR:
                es = [self.e_to(x) for x in xs]
                if sum(e.lo for e in es) <= 0:  # every e^x rounds to 0: not how anyone works
                    es = [self.e_to(x, rounded=False) for x in xs]
                if sum(e.lo for e in es) > 0:
                    ways.append(es)
            m = Interval(top.hi)  # the row's largest score, as a point: e^(x − m) ≤ 1
            shifted = [x - m for x in xs]
            if not ways:
                # far from 0, or so far below it that e^x's lower bound is 0 (a score of −184
                # alone in its row): e^(x − m) unrounded (the shares are the same)
                ways.append([self.e_to(x, rounded=False) for x in shifted])
            if top.hi != 0:  # worked as softmax teaches: e^(x − m), each rounded
                es = [self.e_to(x) for x in shifted]
                if sum(e.lo for e in es) > 0:
                    ways.append(es)
            got = self._rows[key] = (
                list(xs),
                [
                    (es, sum((e.lo for e in es), QQ(0)), sum((e.hi for e in es), QQ(0)))
                    for es in ways
                ],
            )
        return got[1]


def _exp_end(q, up: bool):  # type: ignore[no-untyped-def]
    """e^q rounded outward (down for a lower end, up for an upper end); 0 below e^-2000."""
    if q < -2000:
        return QQ(0) if not up else from_mpf(MPX.exp(-2000))
    r = around(MPX.exp(_to_mpf(q)))
    return r.hi if up else max(r.lo, QQ(0))


def rounded_to(r: Range, places: int | None) -> Range:
    """``r`` rounded to ``places`` (None: as it stands): an exact value half away from zero, as
    every number is shown; an enclosure's ends outward (both roundings, if it holds a tie)."""
    if places is None or isinstance(r, Hidden):
        return r
    s = 10**places
    if r.lo == r.hi:
        return Interval(MPQ(round_ratio(r.lo.numerator * s, r.lo.denominator), s))
    lo, hi = nearest(r.lo, places, up=False), nearest(r.hi, places, up=True)
    if lo != hi and r.hi - r.lo < MPQ(1, 10 ** (places + 20)):
        # an enclosure this narrow across a tie holds the tie itself (a weight of exactly 1/8
        # worked through e^x): rounded as the tie is shown, half away from zero
        x = nearest((r.lo + r.hi) / 2, places + 10, up=True)
        return Interval(MPQ(round_ratio(x.numerator * s, x.denominator), s))
    return Interval(lo, hi)


def _way_param(name: str) -> property:
    """A parameter of a ``Way`` whose every read is logged (``Way.log``): a cell's value depends
    on the parameters its working read, and on no others."""

    def get(self: Way) -> object:
        if self.log:
            self.log[-1].add(name)
        return self.params[name]

    return property(get)


class Way(Enclosure):
    """The ``Kit`` of one way of working by hand, each number a tight range (an enclosure, or
    two roundings at a tie): √d_k, each e^x and every sin or cos exactly or rounded to
    ``rounds`` places, the softmax as e^x or as e^(x − m) with m the row's largest score
    (``shifted``, as ``attn-tutor softmax`` teaches). What each written intermediate is
    carried as (``carry`` places) is the caller's (``Judge.way_value``): the kit works one cell.
    One way follows each shared input once (the same √d_k in every scaled score, the same e^x
    in a weight's numerator and its row's total), where ``Honest`` widens each on its own.

    Every read of a parameter is logged in the innermost set of ``log`` while the judge works a
    cell (``Judge.way_value``): two ways that agree on the parameters a cell's working read give
    that cell the same value (a product of given numbers reads none; Q·Kᵀ reads only how Q and K
    were carried), so it is worked once for all of them."""

    carry = _way_param("carry")
    rounds = _way_param("rounds")
    shifted = _way_param("shifted")
    roots = _way_param("roots")  # √d_k rounded with the e^x (False: the e^x alone)
    # ``table``: the cell's inputs read off the walk's tables (their exact values rounded to
    # ``carry`` places); else each carried from the student's own work, step by step
    table = _way_param("table")

    def __init__(
        self,
        carry: int | None,
        rounds: int | None,
        shifted: bool,
        table: bool = False,
        roots: bool = True,
    ) -> None:
        super().__init__()
        self.log: list[set[str]] = []
        self.params: dict[str, object] = {
            "carry": carry,
            "rounds": rounds,
            "shifted": shifted,
            "roots": roots,
            "table": table,
        }

    def reading(self, names: frozenset[str]) -> tuple[tuple[str, object], ...]:
        """The values of the parameters ``names``, as a key (not logged)."""
        return tuple((n, self.params[n]) for n in sorted(names))

    def given(self, cell) -> Range:  # type: ignore[no-untyped-def]
        return rounded_to(enclosed(cell), self.rounds) if cell.q is None else Interval(cell.q)

    def turn(self, angle) -> tuple[Interval, Interval]:  # type: ignore[no-untyped-def]
        (cos, cos_exact), (sin, sin_exact) = turned(angle)
        return (
            cos if cos_exact else rounded_to(cos, self.rounds),  # type: ignore[return-value]
            sin if sin_exact else rounded_to(sin, self.rounds),
        )

    def root(self, n: int) -> Interval:
        whole = math.isqrt(n)
        if whole * whole == n:
            return Interval(QQ(whole))
        return rounded_to(around(MPX.sqrt(n)), self.rounds if self.roots else None)  # type: ignore[return-value]

    def share(self, xs: list[Interval], j: int) -> Interval:
        """e^x_j / Σ e^x_k, each e^x (or e^(x − m)) rounded as the way says: the e^x_j of the
        numerator is the one in the total."""
        if any(x.lo < -FAR or x.hi > FAR for x in xs) and not self.shifted:
            raise ZeroDivisionError("e^x past any hand table: not worked this way")
        m = max(x.hi for x in xs) if self.shifted else QQ(0)
        es = [
            rounded_to(
                Interval(_exp_end(x.lo - m, up=False), _exp_end(x.hi - m, up=True)), self.rounds
            )
            for x in xs
        ]
        e = es[j]
        others_lo = sum((x.lo for k, x in enumerate(es) if k != j), QQ(0))  # type: ignore[union-attr]
        others_hi = sum((x.hi for k, x in enumerate(es) if k != j), QQ(0))  # type: ignore[union-attr]
        if e.lo + others_hi <= 0 or e.hi + others_lo <= 0:  # type: ignore[union-attr]
            raise ZeroDivisionError("every e^x rounds to 0")
        return Interval(e.lo / (e.lo + others_hi), e.hi / (e.hi + others_lo))  # type: ignore[union-attr]


def ways(places: int) -> list[Way]:
    """Every way of working by hand at ``places`` (the lesson's) or up to ``EXTRA`` more,
    simplest first: one rounding (the intermediates as shown, √d_k or e^x rounded, e^(x − m)
    rounded), then two. The way with nothing rounded is the exact value's, left out."""
    options = [None, *range(places, places + EXTRA + 1)]
    out = [
        Way(c, r, shifted, table)
        for table in (True, False)
        for c in options
        for r in options
        for shifted in (False, True)
        if (c is not None or r is not None) and (r is not None or not shifted)
        if c is not None or not table
    ]
    # the inputs as the tables show them first: the way the walk invites
    return sorted(
        out,
        key=lambda w: (
            (w.carry is not None) + (w.rounds is not None),
            not w.table,
            w.carry is None,
            w.shifted,
        ),
    )
