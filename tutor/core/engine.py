"""The exact engine: ``derive(lesson)`` works every step of self-attention as named data.

It reads like the formula it computes::

    Q = X · W_Q            K = X · W_K            V = X · W_V
    scores  = Q · Kᵀ
    scaled  = scores / √d_k
    masked  = scaled with −∞ above the diagonal        (only for mask: causal)
    weights = softmax of each row
    Z       = weights · V
    concat  = [Z₁ Z₂ …],   output = concat · W_O        (only for several heads)

Each cell holds three views of one number:

* ``q``: the exact value as a sympy rational (``QQ``) whenever the value is rational;
* ``approx``: a 40-digit mpmath value computed from the exact inputs (never from rounded ones),
  and ``value`` the nearest float to it;
* ``exact``: the exact sympy expression (``√2``, ``1/(2 + e^√2)``), built only when asked for,
  because building symbolic softmax forms for every cell of a large lesson is slow.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable, Sequence
from decimal import Decimal
from typing import ClassVar, NamedTuple, Protocol, TypeVar

import mpmath
import sympy
from mpmath.libmp import from_int, from_rational, mpf_div, mpf_sqrt, round_nearest
from sympy.polys.domains import QQ

from tutor.core import kinds
from tutor.core.lesson import Lesson, Matrix
from tutor.core.records import record
from tutor.core.rounding import half_up

MP = mpmath.MPContext()
MP.dps = 40  # working digits for every non-rational value
APPROX_DIGITS = 40  # every approx is good to this many significant digits
CARRIED = 50  # places a row of weights and its Z are worked to: sums of them may cancel
GUARD = 6  # digits worked beyond those asked for (covers sums of up to 10^5 terms: 16 × 512)
LOG2_10 = math.log2(10)


def mag10(x: mpmath.mpf) -> int:
    """An upper bound on log10|x| (for 0, a very negative number)."""
    if not x:
        return -(10**9)
    return math.ceil(MP.mag(x) / LOG2_10)


def quotient(p: int, q: int, places: int) -> mpmath.mpf:
    """p/q within 10^-places, however large or small p and q are (no rounding of p first)."""
    bits = max(p.bit_length() - q.bit_length() + 1, 0) + math.ceil(places * LOG2_10) + 8
    return MP.make_mpf(from_rational(p, q, max(bits, 8), round_nearest))


class Cell:
    """One number of one step: exact rational (if it is one), 40-digit approximation, exact form.

    ``near(places)`` gives the value to any number of decimal places, worked again from the
    exact inputs when 40 significant digits do not reach that far (a scaled score of 10^60/√2
    needs 62 digits to show 2 places).
    """

    __slots__ = ("_approx", "_build", "_exact", "_near", "_rounded", "q")

    def __init__(  # type: ignore[no-untyped-def]
        self,
        q=None,
        approx=None,
        build: Callable[[], sympy.Expr] | None = None,
        near: Callable[[int], mpmath.mpf] | None = None,
    ):
        self.q = q  # sympy QQ element, or None when the value is irrational or −∞
        self._approx = approx
        self._build = build
        self._exact = None
        self._near = near  # places -> the value within 10^-places, for an irrational cell
        self._rounded: dict[int, Decimal] | None = None  # places -> rounded value, remembered

    @property
    def approx(self) -> mpmath.mpf:
        """The value to 40 significant digits."""
        if self._approx is None:
            self._approx = MP.mpf(self.q.numerator) / self.q.denominator
        return self._approx

    def near(self, places: int) -> mpmath.mpf:
        """The value within 10^-places: ``approx`` when its digits reach that far (nearly always),
        else worked again from the exact inputs at the precision the magnitude needs."""
        x = self.approx
        if MP.isinf(x) or mag10(x) + places <= APPROX_DIGITS - 1:
            return x
        if self.q is not None:
            return quotient(self.q.numerator, self.q.denominator, places)
        if self._near is None:  # made from an approximation only: nothing better to give
            return x
        return self._near(places)

    @property
    def value(self) -> float:
        """The value as a double (−inf for a masked score), correctly rounded."""
        if self.q is not None:  # int / int true division rounds correctly, no mpf needed
            return int(self.q.numerator) / int(self.q.denominator)
        return float(self.approx)

    @property
    def exact(self) -> sympy.Expr:
        """The exact sympy value, built on first use."""
        if self._exact is None:
            if self.q is not None:
                self._exact = sympy.Rational(self.q.numerator, self.q.denominator)
            else:
                assert self._build is not None
                self._exact = self._build()
        return self._exact

    @property
    def is_rational(self) -> bool:
        """True when the value is a rational number, held exactly (``q``)."""
        return self.q is not None

    @property
    def is_integer(self) -> bool:
        return self.q is not None and self.q.denominator == 1

    def rounded(self, places: int) -> Decimal:
        """The exact value rounded to ``places`` decimals, half away from zero (see
        ``tutor.core.rounding``); remembered on the cell."""
        memo = self._rounded
        if memo is None:
            memo = self._rounded = {}
        if places not in memo:
            memo[places] = half_up(self, places)
        return memo[places]

    @property
    def masked(self) -> bool:
        return self._approx is not None and MP.isinf(self._approx)

    def __repr__(self) -> str:
        return f"Cell({self.q if self.q is not None else MP.nstr(self.approx, 10)})"


ZERO_PLACES = 400  # a sum still 0 to this many places is taken as exactly 0


def significant(near: Callable[[int], mpmath.mpf], digits: int, guess: int) -> mpmath.mpf:
    """A value to ``digits`` significant digits from its ``near`` (places -> value), starting
    from a guess of its magnitude (10^guess) and refining it when the value is smaller (a sum
    that cancels). A value still 0 at ``ZERO_PLACES`` places is taken as 0."""
    places = digits - guess
    for _ in range(6):
        x = near(places)
        if not x:
            if places >= ZERO_PLACES:
                break
            places = ZERO_PLACES
        elif digits - mag10(x) + 1 > places:
            places = digits - mag10(x) + 1
        else:
            break
    return x


NEG_INF = Cell(None, MP.ninf, lambda: -sympy.oo)


def _zero(cell: Cell) -> bool:
    """Exactly 0 (a sum of sin(1) · 0 terms is 0 without being a rational)."""
    if cell.q is not None:
        return cell.q == 0
    return not cell.masked and cell.approx == 0


def rational(p: int, q: int = 1) -> Cell:
    return Cell(QQ(p, q))


class Ref(NamedTuple):
    """One cell of one step: ``Ref(Q, 0, 1)`` is Q[cats, 2]."""

    step: Step
    i: int
    j: int


T = TypeVar("T")


class Kit(Protocol[T]):
    """The arithmetic ``Step.combine`` works in: numbers that support + (via ``total``), ·
    and ÷, plus the few operations attention needs."""

    zero: T
    hidden: T  # what a masked score is (−∞)

    def given(self, cell: Cell) -> T: ...  # a number the lesson gives
    def root(self, n: int) -> T: ...  # √n
    def exp(self, x: T) -> T: ...  # e^x
    def total(self, xs: list[T]) -> T: ...  # x₁ + x₂ + …
    def share(self, es: list[T], j: int) -> T: ...  # es[j] / Σ es
    def is_hidden(self, x: T) -> bool: ...
    def turn(self, angle: sympy.Expr) -> tuple[T, T]: ...  # (cos, sin) of an exact angle
    def whole(self, n: int) -> T: ...  # the whole number n (a mean's count, a constant)


def exp(x: sympy.Expr) -> sympy.Expr:
    """e^x exactly. sympy's own ``exp`` looks for a simpler form of its exponent, asking its
    sign and whether it is zero, which for a score made of sines and cosines (RoPE) means
    evaluating it: 86 ms an exponential, 76 of the 80 s of grading an all-wrong RoPE sheet at
    the limits. Our exponents are rational or sums of roots, sines and cosines, where it finds
    nothing to simplify; a rational one (and 0) is still evaluated as sympy does."""
    if x.is_Rational:
        return sympy.exp(x)
    return sympy.exp(x, evaluate=False)


class Exact:
    """``Kit`` of exact sympy values: ``combine`` then gives a cell's true value."""

    zero = sympy.Integer(0)
    hidden = -sympy.oo

    def __init__(self, root: Callable[[int], sympy.Expr] = sympy.sqrt) -> None:
        self._root = root  # √n exactly, or as a student rounds it

    def root(self, n: int) -> sympy.Expr:
        return self._root(n)

    def given(self, cell: Cell) -> sympy.Expr:
        return cell.exact

    def exp(self, x: sympy.Expr) -> sympy.Expr:
        return exp(x)

    def total(self, xs: list[sympy.Expr]) -> sympy.Expr:
        return sympy.Add(*xs)

    def share(self, es: list[sympy.Expr], j: int) -> sympy.Expr:
        return es[j] / sympy.Add(*es)

    def is_hidden(self, x: sympy.Expr) -> bool:
        return x == -sympy.oo

    def turn(self, angle: sympy.Expr) -> tuple[sympy.Expr, sympy.Expr]:
        return sympy.cos(angle), sympy.sin(angle)

    def whole(self, n: int) -> sympy.Expr:
        return sympy.Integer(n)


@record(eq=False)
class Step:
    """A named matrix of the derivation. The class of a step is its rule of arithmetic: each
    subclass (``Given``, ``Product``, ``Sum``, ``Scale``, ``Times``, ``Mask``, ``Softmax``,
    ``Concat``, and ``Rotate`` and ``Append`` beside the steps that use them) owns what is true of
    its rule: the cells a cell is made from (``sources``), how it combines them in any arithmetic
    (``combine``), the cells it fills in whatever its sources (``hides``), and its NumPy line.
    Consumers ask the rule (a method, or ``functools.singledispatch`` on the class, the way
    sympy's printers have one ``_print_<Node>`` per node); a rule a consumer lacks fails loudly.
    """

    name: str  # "Q", "scores", ...
    head: int | None  # 1-based head number in a multi-head lesson, else None
    rows: tuple[str, ...]
    cols: tuple[str, ...]
    cells: tuple[tuple[Cell, ...], ...]
    args: tuple[Step, ...] = ()  # the steps this one is made from, in the rule's order

    given: ClassVar[bool] = False  # a matrix the lesson gives (no arithmetic of its own)
    helper: ClassVar[str | None] = None  # a NumPy function its line calls (``softmax``)
    # the rule's classic slips, as data the slip catalogue works (their words are in the words
    # table, ``tutor.text.steps``, under the step's name: core says no sentence)
    slips: ClassVar[tuple[RuleSlip, ...]] = ()
    # the least and most any cell of the rule can be, whatever its inputs (a softmax's weights
    # lie in [0, 1]), or None: an answer outside them is no rounding of any way of working it
    bounds: ClassVar[tuple[int, int] | None] = None

    @property
    def key(self) -> str:
        """How the step is named in cells: ``Q`` or ``head2.Q``."""
        return f"head{self.head}.{self.name}" if self.head else self.name

    @property
    def shape(self) -> tuple[int, int]:
        return len(self.rows), len(self.cols)

    @functools.cached_property
    def whole(self) -> bool:
        """True when every cell is an integer (or masked), so its table shows no decimals."""
        return all(c.is_integer or c.masked for row in self.cells for c in row)

    @functools.cached_property
    def columns(self) -> tuple[tuple[Cell, ...], ...]:
        """The cells column by column (made once: a sum's terms read a column of the right)."""
        return tuple(zip(*self.cells, strict=True))

    def column(self, j: int) -> list[Cell]:
        return [row[j] for row in self.cells]

    @property
    def inputs(self) -> tuple[Step, ...]:
        """Every step this one reads: its ``args``, and a product's bias (issue 41)."""
        return self.args

    # -- the rule: every subclass says how a cell is made ------------------------------------

    def sources(self, i: int, j: int) -> tuple[Ref, ...]:
        """The cells that cell (i, j) is made from, in the order ``combine`` reads them."""
        raise NotImplementedError(f"{type(self).__name__} has no sources")

    def combine(self, i: int, j: int, value: Callable[[Ref], T], kit: Kit[T]) -> T:
        """Cell (i, j) made from whatever ``value`` gives for each of its ``sources``, with the
        arithmetic of ``kit`` (exact sympy, intervals, …). This is the rule of each step as a
        student applies it; ``derive`` computes the same numbers by faster routes, and a test
        holds the two together for every cell of random lessons."""
        raise NotImplementedError(f"{type(self).__name__} has no combine")

    def numpy(self, args: Sequence[str]) -> str:
        """The right side of the step's line in a NumPy program, given its arguments' names."""
        raise NotImplementedError(f"{type(self).__name__} has no NumPy line")

    def hides(self, i: int, j: int) -> bool:
        """Whether the rule fills cell (i, j) in itself, whatever its sources hold (the mask's
        −∞); such a cell is given on a sheet, not asked."""
        return False

    def hidden(self, i: int, j: int) -> bool:
        """A cell forced to 0 because what it reads was hidden (a weight of a masked score)."""
        return False

    def copy_of(self, i: int, j: int) -> Ref | None:
        """The one cell that cell (i, j) copies unchanged (a mask's visible cell, a cache's
        row, a concatenation's column), or None when the cell is worked or given."""
        return None

    def forgets(self, source: Step) -> bool:
        """Whether writing ``source`` unchanged for this step is a classic slip of the rule (a
        sum with a term left out: X written as E forgets P), not a copy of the wrong matrix."""
        return False

    # -- what the generic consumers ask (a rule no consumer has heard of needs only these) ---

    def how(self, i: int, j: int, names: Sequence[str]) -> str:
        """How cell (i, j) is made, in words and symbols over its sources' names (``names[k]``
        names ``sources(i, j)[k]``): ``scaled[cats, chase] − the mean of row cats``. The
        working's first line wherever a consumer has no words of its own for the rule."""
        raise NotImplementedError(f"{type(self).__name__} does not say how a cell is made")

    def written(self, i: int, j: int, operands: Sequence[str]) -> str:
        """Cell (i, j)'s working in numbers, from its sources as written (``operands[k]`` is
        ``sources(i, j)[k]``, bracketed when negative): ``1.41 − (1.41 + 2.83 + 1.41)/3``."""
        raise NotImplementedError(f"{type(self).__name__} does not write its working")

    def products(self, i: int, j: int) -> int:
        """The products a student multiplies by hand for cell (i, j) (a variant's measure of
        work counts sums of products only)."""
        return 0

    def reads_through(self, i: int, j: int) -> bool:
        """Whether cell (i, j) is one no student writes that the rule makes from its sources
        unchanged or fills in itself (the mask's cells, a cache's rows): its value is the
        rule's, read through to what it copies. A copy a sheet asks (concat) is what the
        student wrote (the kinds table says where a sheet has a step)."""
        through = self._through
        got = through.get((i, j))
        if got is None:  # asked of every input the judge reads: worked once a cell
            kind = kinds.BY_NAME.get(self.name)
            got = kind is None or kind.sheet is None
            got = through[(i, j)] = got and (self.hides(i, j) or self.copy_of(i, j) is not None)
        return got

    @functools.cached_property
    def _through(self) -> dict[tuple[int, int], bool]:
        return {}

    @functools.cached_property
    def reads_through_any(self) -> bool:
        """Whether any cell of the step reads through (``reads_through``): most steps' none."""
        return any(
            self.reads_through(i, j) for i in range(len(self.rows)) for j in range(len(self.cols))
        )


class RuleSlip(NamedTuple):
    """A classic slip of a rule, as data: the cell worked by the rule with some of its fields
    changed (``changed``: a divisor, an axis), or with its first source's own cell written
    unchanged (``skipped``: the step left out). Its words are the words table's ``slips_said``
    under the step's name, keyed by ``id``."""

    id: str
    changed: tuple[tuple[str, object], ...] = ()
    skipped: bool = False


@record(eq=False)
class Given(Step):
    """A matrix the lesson gives (X, W_Q, …), or one worked from a formula (sinusoidal P)."""

    given: ClassVar[bool] = True

    def sources(self, i: int, j: int) -> tuple[Ref, ...]:
        return ()

    def combine(self, i: int, j: int, value: Callable[[Ref], T], kit: Kit[T]) -> T:
        return kit.given(self.cells[i][j])

    def numpy(self, args: Sequence[str]) -> str:
        raise ValueError(f"{self.name} is given: its line is the matrix itself")


@record(eq=False)
class Product(Step):
    """``A · B`` (or ``A · Bᵀ``): every cell is a dot product of a row of A and a column of B
    (a row of B when it is transposed)."""

    transpose: bool = False  # the right operand transposed (Q · Kᵀ)
    # a given row added to every row (issue 41: Q = X · W_Q + b_Q), or None
    bias: Step | None = None

    @property
    def inputs(self) -> tuple[Step, ...]:
        return self.args if self.bias is None else (*self.args, self.bias)

    def terms(self, i: int, j: int) -> list[tuple[Cell, Cell]]:
        """The products that add up to cell (i, j)."""
        left, right = self.args
        col = right.cells[j] if self.transpose else right.columns[j]
        return list(zip(left.cells[i], col, strict=True))

    def pair(self, i: int, j: int, k: int) -> tuple[Ref, Ref]:
        """The k-th product of cell (i, j): ``(A, i, k), (B, k, j)`` (``(B, j, k)`` when B is
        transposed). ``sources`` is these pairs in order; a long sum shown cut short reads
        only the pairs it shows."""
        A, B = self.args
        return Ref(A, i, k), (Ref(B, j, k) if self.transpose else Ref(B, k, j))

    def sources(self, i: int, j: int) -> tuple[Ref, ...]:
        got = self._sources.get((i, j))
        if got is None:  # made once a cell: the judge asks a cell's sources again and again
            pairs = tuple(r for k in range(len(self.args[0].cols)) for r in self.pair(i, j, k))
            got = pairs if self.bias is None else (*pairs, Ref(self.bias, 0, j))
            self._sources[(i, j)] = got
        return got

    @functools.cached_property
    def _sources(self) -> dict[tuple[int, int], tuple[Ref, ...]]:
        return {}

    def combine(self, i: int, j: int, value: Callable[[Ref], T], kit: Kit[T]) -> T:
        refs = self.sources(i, j)
        bias = [] if self.bias is None else [value(refs[-1])]  # the bias term comes last
        vals = [value(r) for r in (refs if self.bias is None else refs[:-1])]
        return kit.total([a * b for a, b in zip(vals[::2], vals[1::2], strict=True)] + bias)

    def numpy(self, args: Sequence[str]) -> str:
        line = f"{args[0]} @ {args[1]}.T" if self.transpose else f"{args[0]} @ {args[1]}"
        return line if len(args) < 3 else f"{line} + {args[2]}"  # (+ the bias row)

    def products(self, i: int, j: int) -> int:
        return sum(not _zero(a) and not _zero(b) for a, b in self.terms(i, j))


@record(eq=False)
class Sum(Step):
    """``E + P``, cell by cell."""

    def sources(self, i: int, j: int) -> tuple[Ref, ...]:
        return tuple(Ref(a, i, j) for a in self.args)

    def combine(self, i: int, j: int, value: Callable[[Ref], T], kit: Kit[T]) -> T:
        return kit.total([value(r) for r in self.sources(i, j)])

    def numpy(self, args: Sequence[str]) -> str:
        return " + ".join(args)

    def forgets(self, source: Step) -> bool:
        return source in self.args


@record(eq=False)
class Scale(Step):
    """Every cell of one step divided by √divisor (``scaled = scores / √d_k``)."""

    divisor: int = 1  # n, dividing by √n
    # a lesson's own number (issue 41: ``scale: 8``), p/q, divided by as it is (no root)
    by: tuple[int, int] | None = None
    of: str = "d_k"  # what the divisor is the root of: "d_k", or "d_model" (``scale:``)

    def sources(self, i: int, j: int) -> tuple[Ref, ...]:
        return (Ref(self.args[0], i, j),)

    def combine(self, i: int, j: int, value: Callable[[Ref], T], kit: Kit[T]) -> T:
        if self.by is not None:  # a number the lesson gives, in the kit's own arithmetic
            return value(Ref(self.args[0], i, j)) / kit.given(rational(*self.by))  # type: ignore[operator, no-any-return]
        return value(Ref(self.args[0], i, j)) / kit.root(self.divisor)  # type: ignore[operator, no-any-return]

    @property
    def divides(self) -> bool:
        """Whether the step changes the scores at all (÷√1 does not)."""
        return self.by != (1, 1) if self.by is not None else self.divisor != 1

    def numpy(self, args: Sequence[str]) -> str:
        if self.by is not None:
            p, q = self.by
            return f"{args[0]} / {p}" if q == 1 else f"{args[0]} / ({p} / {q})"
        return f"{args[0]} / np.sqrt({self.divisor})"


@record(eq=False)
class Times(Step):
    """Every cell of one step times a constant p/q (the explorer's ``tempered = scaled × t``)."""

    factor: tuple[int, int] = (1, 1)

    def sources(self, i: int, j: int) -> tuple[Ref, ...]:
        return (Ref(self.args[0], i, j),)

    def combine(self, i: int, j: int, value: Callable[[Ref], T], kit: Kit[T]) -> T:
        p, q = self.factor
        return value(Ref(self.args[0], i, j)) * sympy.Rational(p, q)  # type: ignore[operator, no-any-return]

    def numpy(self, args: Sequence[str]) -> str:
        p, q = self.factor
        return f"{args[0]} * {p}" if q == 1 else f"{args[0]} * ({p} / {q})"


@record(eq=False)
class Mask(Step):
    """The causal mask: row i sees the columns up to i + shift, the rest become −∞. ``shift``
    is 0 for a lesson's own tokens; for new tokens stacked after a cache of N rows it is N
    (new token s sees the cache and the new tokens up to itself). The one home of the
    comparison of a cell against the diagonal."""

    shift: int = 0

    def hides(self, i: int, j: int) -> bool:
        return j > i + self.shift

    def sources(self, i: int, j: int) -> tuple[Ref, ...]:
        return () if self.hides(i, j) else (Ref(self.args[0], i, j),)

    def combine(self, i: int, j: int, value: Callable[[Ref], T], kit: Kit[T]) -> T:
        return kit.hidden if self.hides(i, j) else value(Ref(self.args[0], i, j))

    def copy_of(self, i: int, j: int) -> Ref | None:
        return None if self.hides(i, j) else Ref(self.args[0], i, j)

    def numpy(self, args: Sequence[str]) -> str:
        n, m = self.shape
        return (
            f"np.where(np.triu(np.ones(({n}, {m}), dtype=bool), k={1 + self.shift}), "
            f"-np.inf, {args[0]})"
        )


SOFTMAX_HELPER = '''def softmax(x):
    """Each row through softmax: subtract the row's largest, e^x, divide by the row's total."""
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)
'''


@record(eq=False)
class Softmax(Step):
    """Each row through softmax: e^x over the row's total (a hidden score's weight is 0)."""

    helper: ClassVar[str | None] = SOFTMAX_HELPER
    bounds: ClassVar[tuple[int, int] | None] = (0, 1)

    def hidden(self, i: int, j: int) -> bool:
        return self.args[0].cells[i][j].masked

    def sources(self, i: int, j: int) -> tuple[Ref, ...]:
        got = self._row_sources.get(i)
        if got is None:  # a row's cells, made once (every weight of the row reads them all)
            (src,) = self.args
            got = self._row_sources[i] = tuple(Ref(src, i, k) for k in range(len(src.cols)))
        return got

    @functools.cached_property
    def _row_sources(self) -> dict[int, tuple[Ref, ...]]:
        return {}

    def combine(self, i: int, j: int, value: Callable[[Ref], T], kit: Kit[T]) -> T:
        row = [value(r) for r in self.sources(i, j)]
        if kit.is_hidden(row[j]):
            return kit.zero
        seen = [k for k, x in enumerate(row) if not kit.is_hidden(x)]
        return kit.share([kit.exp(row[k]) for k in seen], seen.index(j))

    def exp_terms(
        self, i: int, less: Cell | None = None
    ) -> tuple[dict[int, mpmath.mpf], mpmath.mpf]:
        """Row i worked by hand: e^x of each visible score, by its column (e^(x − m) when
        ``less`` is given: m is then the row's largest score, and the differences come from
        the exact scores, however large), and their total."""
        row = self.args[0].cells[i]
        seen = [k for k, c in enumerate(row) if not c.masked]
        if less is not None:
            values = exp_shifted([row[k] for k in seen], CARRIED)
        else:
            values = [MP.exp(row[k].approx) for k in seen]
        exps = dict(zip(seen, values, strict=True))
        return exps, MP.fsum(exps.values())

    def numpy(self, args: Sequence[str]) -> str:
        return f"softmax({args[0]})"


@record(eq=False)
class Concat(Step):
    """The heads' outputs side by side: row i is [Z₁[i] | Z₂[i] | …]."""

    def source_of_column(self, j: int) -> tuple[Step, int]:
        """Which head's Z (and which of its columns) column j comes from."""
        for Z in self.args:
            if j < len(Z.cols):
                return Z, j
            j -= len(Z.cols)
        raise IndexError(j)

    def copy_of(self, i: int, j: int) -> Ref | None:
        Z, k = self.source_of_column(j)
        return Ref(Z, i, k)

    def sources(self, i: int, j: int) -> tuple[Ref, ...]:
        return (self.copy_of(i, j),)  # type: ignore[return-value]

    def combine(self, i: int, j: int, value: Callable[[Ref], T], kit: Kit[T]) -> T:
        return value(self.sources(i, j)[0])

    def numpy(self, args: Sequence[str]) -> str:
        return f"np.hstack([{', '.join(args)}])"


@record(eq=False)
class Derivation:
    """Every step of one lesson, in the order they are computed."""

    lesson: Lesson
    steps: tuple[Step, ...]

    def step(self, name: str, head: int | None = None) -> Step:
        for s in self.steps:
            if s.name == name and s.head == head:
                return s
        raise KeyError(f"{name} (head {head})" if head else name)

    def has(self, name: str, head: int | None = None) -> bool:
        return any(s.name == name and s.head == head for s in self.steps)

    def every(self, name: str) -> list[Step]:
        """The step ``name`` of every head that has it (or the lesson's one), in order."""
        return [s for s in self.steps if s.name == name]

    @property
    def head_count(self) -> int:
        return len(self.lesson.heads)

    def mask_fills(self, step: Step, i: int, j: int) -> bool:
        """A cell the causal mask fills in, by the mask step's own rule: −∞ in the scaled
        scores it hides (the walk's masked table), 0 in the weights they give. Worksheets and
        sheets show these given; grading does not ask them."""
        if step.hidden(i, j):
            return True
        mask = self._masks.get(step)
        return mask is not None and mask.hides(i, j)

    def fill(self, step: Step, i: int, j: int) -> Cell | None:
        """What the mask fills cell (i, j) of ``step`` in with (−∞ in the scores it hides, 0 in
        their weights), or None when the cell is worked: a sheet shows these given."""
        if step.hidden(i, j):
            return step.cells[i][j]
        mask = self._masks.get(step)
        return NEG_INF if mask is not None and mask.hides(i, j) else None

    @functools.cached_property
    def _masks(self) -> dict[Step, Step]:
        """The mask step over each scaled step it hides cells of (steps hash by identity)."""
        return {s.args[0]: s for s in self.steps if isinstance(s, Mask)}

    @functools.cached_property
    def _asked(self) -> dict[Step, list[tuple[int, int]]]:
        return {}

    def asked(self, step: Step) -> list[tuple[int, int]]:
        """The cells of a step a sheet asks for: all but the ones the mask fills in (worked once
        a step: grading asks it for every cell)."""
        got = self._asked.get(step)
        if got is None:
            got = self._asked[step] = [
                (i, j)
                for i in range(len(step.rows))
                for j in range(len(step.cols))
                if not self.mask_fills(step, i, j)
            ]
        return got

    def step_points(self, step: Step) -> int:
        """What a step is worth: the lesson's ``points:`` for it, else one per cell asked (the
        one rule for ``grade``, its reports and the printed sheets)."""
        given = self.lesson.step_points(step.name)
        return len(self.asked(step)) if given is None else given


# ---------------------------------------------------------------------------------------------
# primitives


def numbered(n: int) -> tuple[str, ...]:
    return tuple(str(i) for i in range(1, n + 1))


def given(name: str, m: Matrix, rows: Sequence[str], head: int | None = None) -> Step:
    """A matrix the lesson gives."""
    cells = tuple(tuple(rational(p, q) for p, q in row) for row in m)
    return Given(name, head, tuple(rows), numbered(len(m[0])), cells)


def _as_integers(step: Step) -> tuple[list[list[int]], int] | None:
    """The step as integers over one common denominator, if every cell is rational."""
    den = 1
    for row in step.cells:
        for c in row:
            if c.q is None:
                return None
            den = math.lcm(den, c.q.denominator)
    return [[c.q.numerator * (den // c.q.denominator) for c in row] for row in step.cells], den


def matmul(
    name: str,
    A: Step,
    B: Step,
    cols: Sequence[str] | None = None,
    transpose: bool = False,
    head: int | None = None,
    bias: Step | None = None,
) -> Step:
    """A · B (or A · Bᵀ): every cell a dot product of a row of A and a column of B, plus
    ``bias``'s entry of the column when there is a bias row (issue 41)."""
    Bt = B.cells if transpose else tuple(zip(*B.cells, strict=True))  # columns of B
    ints_a, ints_b = _as_integers(A), _as_integers(B)
    if ints_a and ints_b:  # the common case: exact integer arithmetic, fast
        (a, da), (b, db) = ints_a, ints_b
        bt = b if transpose else [list(col) for col in zip(*b, strict=True)]
        den = da * db
        cells = tuple(
            tuple(Cell(QQ(sum(x * y for x, y in zip(row, col, strict=True)), den)) for col in bt)
            for row in a
        )
    elif ints_b:  # weights · V: irrational rows times a rational matrix
        (b, db) = ints_b
        bt = b if transpose else [list(col) for col in zip(*b, strict=True)]
        sizes = [sum(abs(y) for y in col).bit_length() for col in bt]  # each column's Σ|y|
        cells = tuple(_fixed_row(row, bt, sizes, db, Bt) for row in A.cells)
    else:
        cells = tuple(tuple(_dot(row, col) for col in Bt) for row in A.cells)
    labels = tuple(cols) if cols is not None else (B.rows if transpose else B.cols)
    if bias is not None:
        cells = tuple(
            tuple(_plus(c, b) for c, b in zip(row, bias.cells[0], strict=True)) for row in cells
        )
        return Product(name, head, A.rows, labels, cells, (A, B), transpose=transpose, bias=bias)
    return Product(name, head, A.rows, labels, cells, (A, B), transpose=transpose)


def _plus(c: Cell, b: Cell) -> Cell:
    """A cell plus a given (rational) bias entry, exactly."""
    if b.q == 0:
        return c
    if c.q is not None:
        return Cell(c.q + b.q)
    return Cell(
        None, c.approx + b.approx, lambda: c.exact + b.exact, functools.partial(_near_plus, c, b)
    )


def _near_plus(c: Cell, b: Cell, places: int) -> mpmath.mpf:
    """c + b within 10^-places (b a rational bias entry)."""
    size = max(mag10(c.approx), mag10(b.approx), 0)
    with MP.workdps(max(places, 0) + GUARD + size):
        return c.near(places + 1) + b.near(places + 1)


FIXED_BITS = 200  # bits kept below each row's largest entry: ~60 digits, more than CARRIED
LOST_BITS = math.floor((CARRIED - APPROX_DIGITS - 3) * LOG2_10)  # cancellation a sum may absorb


def _fixed(x: mpmath.mpf, base: int) -> int:
    """x as an integer count of 2^base (truncated: off by at most one unit)."""
    sign, m, e, _ = x._mpf_
    m = -m if sign else m
    return m << (e - base) if e >= base else m >> (base - e)


def _fixed_row(
    row: Sequence[Cell],
    cols: list[list[int]],
    sizes: list[int],
    den: int,
    col_cells: Sequence[Sequence[Cell]],
) -> tuple[Cell, ...]:
    """One row of A · B when B is rational: the row's values become integers over a common
    power of two, so every dot product is exact integer arithmetic (fast), and only the sum is
    rounded. A sum that cancels further than the row's carried digits allow (V = [10^60, −10^60])
    is worked again from the exact inputs. Exact forms are still built from the cells on demand.
    """
    if all(c.q is not None for c in row):
        return tuple(_dot(row, col) for col in col_cells)
    parts = [c.approx for c in row]
    top = max((MP.mag(x) for x in parts if x), default=0)
    base = top - FIXED_BITS
    fixed = [_fixed(x, base) for x in parts]
    out = []
    for col, size, cells in zip(cols, sizes, col_cells, strict=True):
        total = sum(x * y for x, y in zip(fixed, col, strict=True))
        spread = size + FIXED_BITS  # the size of the terms, in units of 2^base
        near = functools.partial(_dot_near, row, col, den)
        if spread - abs(total).bit_length() > LOST_BITS:
            guess = math.ceil((spread + base - den.bit_length() + 1) / LOG2_10)
            approx = significant(near, CARRIED, guess)
        else:
            with MP.workdps(CARRIED):
                approx = MP.mpf((total, base)) / den
        # the exact form keeps the row and column, not N pairs per cell (N²·d_v of them in all)
        build = functools.partial(_sum_of_products, row, cells)
        out.append(Cell(None, approx, build, near))
    return tuple(out)


def _dot_near(row: Sequence[Cell], col: Sequence[int], den: int, places: int) -> mpmath.mpf:
    """Σ row[k]·col[k] / den within 10^-places: each row value is asked for the places its
    factor needs, and the sum is exact integer arithmetic."""
    size = max(abs(y) for y in col).bit_length() - den.bit_length() + 1  # log2 max |col/den|
    worked = places + max(math.ceil(size / LOG2_10), 0) + GUARD
    bits = max(math.ceil(worked * LOG2_10), 0)
    total = sum(_fixed(c.near(worked), -bits) * y for c, y in zip(row, col, strict=True))
    return quotient(total, den << bits, places)


def _sum_of_products(row: Sequence[Cell], col: Sequence[Cell]) -> sympy.Expr:
    return sympy.together(sympy.Add(*(a.exact * b.exact for a, b in zip(row, col, strict=True))))


def _dot(row: Sequence[Cell], col: Sequence[Cell]) -> Cell:
    if all(a.q is not None for a in row) and all(b.q is not None for b in col):
        return Cell(sum((a.q * b.q for a, b in zip(row, col, strict=True)), QQ(0)))
    approx = MP.fsum(
        a.approx * b.approx for a, b in zip(row, col, strict=True) if a.q != 0 and b.q != 0
    )
    return Cell(None, approx, lambda: _sum_of_products(row, col))


@functools.lru_cache(maxsize=256)
def _root(n: int, prec: int) -> tuple:  # type: ignore[type-arg]
    return mpf_sqrt(from_int(n), prec, round_nearest)


def _surd(p: int, q: int, n: int, places: int) -> mpmath.mpf:
    """p / (q·√n) within 10^-places (mpmath's raw functions: a row asks for N of them)."""
    size = max(p.bit_length() - q.bit_length() + 1, 0)  # log2 of its size, at most
    prec = max(size + math.ceil((places + 3) * LOG2_10) + 10, 53)
    top = from_rational(p, q, prec, round_nearest)
    return MP.make_mpf(mpf_div(top, _root(n, prec), prec, round_nearest))


def _over_root(s: Cell, n: int, places: int) -> mpmath.mpf:
    """An irrational cell over √n within 10^-places."""
    with MP.workdps(max(places, 0) + GUARD + max(mag10(s.approx), 0)):
        return s.near(places + 1) / MP.sqrt(n)


def scale(
    name: str, scores: Step, d_k: int | tuple[int, int], head: int | None = None, of: str = "d_k"
) -> Step:
    """scores / √d_k, exactly: rational when d_k is a perfect square. A pair (p, q) is a
    number the lesson divides by as it is (``scale: 8``)."""
    if isinstance(d_k, tuple):
        p, q = d_k
        cells = tuple(tuple(_times_cell(c, q, p) for c in row) for row in scores.cells)
        return Scale(name, head, scores.rows, scores.cols, cells, (scores,), by=d_k, of="")
    root = math.isqrt(d_k)
    whole = root * root == d_k
    sqrt_dk = MP.sqrt(d_k)

    def cell(s: Cell) -> Cell:
        if s.q is None:  # a score made from positions (sin, cos, √3): irrational already
            return Cell(
                None,
                s.approx / sqrt_dk,
                lambda: s.exact / sympy.sqrt(d_k),
                functools.partial(_over_root, s, d_k),
            )
        if whole or s.q == 0:
            return Cell(s.q / root)
        p, q = s.q.numerator, s.q.denominator
        return Cell(
            None,
            s.approx / sqrt_dk,
            lambda: s.exact / sympy.sqrt(d_k),
            functools.partial(_surd, p, q, d_k),
        )

    cells = tuple(tuple(cell(s) for s in row) for row in scores.cells)
    return Scale(name, head, scores.rows, scores.cols, cells, (scores,), divisor=d_k, of=of)


def causal_mask(name: str, scaled: Step, head: int | None = None, shift: int = 0) -> Mask:
    """Hide the future: row i sees the columns up to i + ``shift`` (itself and the tokens
    before it, and a cache of ``shift`` rows), the rest become −∞ (the rule: ``Mask``)."""
    rule = Mask(name, head, scaled.rows, scaled.cols, (), (scaled,), shift=shift)
    cells = tuple(
        tuple(NEG_INF if rule.hides(i, j) else c for j, c in enumerate(row))
        for i, row in enumerate(scaled.cells)
    )
    return dataclasses.replace(rule, cells=cells)


def softmax(name: str, scaled: Step, head: int | None = None) -> Softmax:
    """Each row through softmax: e^x over the row total, so the row is positive and sums to 1."""
    cells = tuple(_softmax_row(row) for row in scaled.cells)
    return Softmax(name, head, scaled.rows, scaled.cols, cells, (scaled,))


def exp_shifted(xs: Sequence[Cell], places: int) -> list[mpmath.mpf]:
    """e^(x − m) for each (unmasked) x, m the largest: each within 10^-places relative.

    The differences x − m are taken from the exact scores, worked to ``places`` + ``GUARD``
    decimals, never from 40-digit roundings: scores 10^60 + {1, 2, 3} differ by 1 and 2.
    """
    worked = max(places, 0) + GUARD
    x = [c.near(worked) for c in xs]
    top = max(x)
    with MP.workdps(worked):
        return [MP.exp(MP.fsub(v, top, exact=True)) for v in x]


class _Shares:
    """One row's softmax shares to any number of places (remembered: Z asks again per column)."""

    def __init__(self, seen: Sequence[Cell]) -> None:
        self.seen = seen
        self.memo: dict[int, list[mpmath.mpf]] = {}

    def __call__(self, places: int) -> list[mpmath.mpf]:
        """Every share within 10^-places (relative, so tiny shares keep their digits too)."""
        if places not in self.memo:
            e = exp_shifted(self.seen, places)
            with MP.workdps(max(places, 0) + GUARD):
                total = MP.fsum(e)
                self.memo[places] = [v / total for v in e]
        return self.memo[places]

    def share(self, k: int, places: int) -> mpmath.mpf:
        return self(places)[k]


def _softmax_row(row: Sequence[Cell]) -> tuple[Cell, ...]:
    seen = [c for c in row if not c.masked]
    shares = _Shares(seen)
    approx = shares(CARRIED)  # from the exact scores' differences, however large the scores
    if all(w == approx[0] for w in approx) and all(c.exact == seen[0].exact for c in seen):
        share = QQ(1, len(seen))  # equal scores: an exactly even split
        return tuple(Cell(QQ(0)) if c.masked else Cell(share) for c in row)

    low = seen[min(range(len(seen)), key=approx.__getitem__)]  # the smallest share's score
    memo: list[sympy.Expr] = []

    def denominator() -> sympy.Expr:
        # exact form: divide top and bottom by e^(smallest score), so exponents are ≥ 0
        if not memo:
            memo.append(sympy.Add(*(exp(c.exact - low.exact) for c in seen)))
        return memo[0]

    out = []
    k = 0
    for c in row:
        if c.masked:
            out.append(Cell(QQ(0)))
            continue
        out.append(
            Cell(
                None,
                approx[k],
                lambda c=c: exp(c.exact - low.exact) / denominator(),
                functools.partial(shares.share, k),
            )
        )
        k += 1
    return tuple(out)


def concat(name: str, parts: Sequence[Step]) -> Step:
    """The heads' outputs side by side: row i is [Z₁[i] | Z₂[i] | …]."""
    cols = tuple(f"h{s.head}.{c}" for s in parts for c in s.cols)
    cells = tuple(tuple(c for s in parts for c in s.cells[i]) for i in range(len(parts[0].rows)))
    return Concat(name, None, parts[0].rows, cols, cells, tuple(parts))


def _near_expr(expr: sympy.Expr, places: int) -> mpmath.mpf:
    """An exact form's value within 10^-places."""
    digits = places + max(mag10(MP.mpf(str(sympy.N(expr, 20)))), 0) + GUARD
    return MP.mpf(str(sympy.N(expr, digits)))


def _cell_of(expr: sympy.Expr) -> Cell:
    """A cell holding an exact value: rational, −∞, or an exact form with its 40 digits."""
    if expr.is_Rational:
        return rational(int(expr.p), int(expr.q))  # type: ignore[attr-defined]
    if expr == -sympy.oo:
        return NEG_INF
    with MP.workdps(APPROX_DIGITS + GUARD):
        approx = MP.mpf(str(sympy.N(expr, APPROX_DIGITS + GUARD)))
    return Cell(None, approx, lambda: expr, functools.partial(_near_expr, expr))


def by_rule(rule: Step) -> Step:
    """The step ``rule`` (made with no cells) with every cell worked by its own ``combine``
    over its sources' exact values: how a rule with no faster route of its own (a new rule,
    written as a class and nothing else) gets its numbers. The pipeline's own rules have
    faster routes, which tests/test_rules.py holds to the same ``combine``."""
    kit = Exact()

    def value(r: Ref) -> sympy.Expr:
        return r.step.cells[r.i][r.j].exact

    n, m = len(rule.rows), len(rule.cols)
    cells = tuple(
        tuple(_cell_of(rule.combine(i, j, value, kit)) for j in range(m)) for i in range(n)
    )
    return dataclasses.replace(rule, cells=cells)


# ---------------------------------------------------------------------------------------------
# the whole derivation


@record
class Options:
    """What the explorer varies in the computation (the defaults are the lesson's own):
    ``mask`` on or off (None: the lesson's), the divisor of the scores (``lesson``: the lesson's
    own ``scale:``, ``root``: √d_k, ``one``: none, ``d_k``: d_k itself) and a factor (p, q) on
    the scaled scores (``tempered``)."""

    mask: bool | None = None
    divisor: str = "lesson"
    factor: tuple[int, int] = (1, 1)

    def divisor_square(self, d_k: int) -> int:
        """The n with scores ÷ √n equal to the chosen divisor: d_k, 1 or d_k²."""
        return {"root": d_k, "one": 1, "d_k": d_k * d_k}[self.divisor]

    def scaling(self, lesson: Lesson, d_k: int) -> tuple[int | tuple[int, int] | None, str]:
        """What a head's scores are divided by (as ``attend`` takes it) and what it is the root
        of: the lesson's own ``scale:`` unless the explorer chose another divisor."""
        if self.divisor != "lesson":
            return self.divisor_square(d_k), "d_k"
        return lesson.divisor(d_k), "d_model" if lesson.scale == "sqrt_d_model" else "d_k"


LESSON_OWN = Options()
Memo = dict  # a step by what it was made from (its inputs' numbers and the options)


def _near_times(c: Cell, p: int, q: int, places: int) -> object:
    extra = len(str(abs(p))) + 1  # places lost to the multiplication, at most
    return c.near(places + extra) * p / q


def _times_cell(c: Cell, p: int, q: int) -> Cell:
    if p == 0:
        return Cell(QQ(0))
    if c.q is not None:
        return Cell(c.q * QQ(p, q))
    return Cell(
        None,
        c.approx * p / q,
        lambda: c.exact * sympy.Rational(p, q),
        functools.partial(_near_times, c, p, q),
    )


def times(name: str, scaled: Step, factor: tuple[int, int], head: int | None = None) -> Times:
    """Every scaled score times ``factor`` (p, q)."""
    p, q = factor
    cells = tuple(tuple(_times_cell(c, p, q) for c in row) for row in scaled.cells)
    return Times(name, head, scaled.rows, scaled.cols, cells, (scaled,), factor=factor)


class _Made:
    """Steps made through a memo: a step found under the same key (what it was made from: its
    inputs' keys, its numbers, the options) in the last derivation's memo is reused, not worked
    again; without a memo every step is made afresh."""

    def __init__(self, memo: Memo | None) -> None:
        self.old = dict(memo) if memo else {}
        self.memo = memo
        if memo is not None:
            memo.clear()
        self.keys: dict[int, tuple] = {}  # type: ignore[type-arg]

    def key(self, x: object) -> object:
        if isinstance(x, Step):
            return self.keys[id(x)]
        if isinstance(x, list | tuple):
            return tuple(self.key(y) for y in x)
        return x

    def __call__(self, make: Callable[..., Step], *args: object, **kw: object) -> Step:
        if self.memo is None:
            return make(*args, **kw)
        key = (make.__module__, make.__name__, self.key(args), tuple(sorted(kw.items())))
        step = self.old.get(key)
        if step is None:
            step = make(*args, **kw)
        self.memo[key] = step
        self.keys[id(step)] = key
        return step


def attend(
    Q: Step,
    K: Step,
    V: Step,
    divisor: int | tuple[int, int] | None,
    head: int | None,
    mask: int | None = None,
    factor: tuple[int, int] = (1, 1),
    suffix: str = "",
    made: Callable[..., Step] | None = None,
    of: str = "d_k",
) -> list[Step]:
    """One head's attention from its queries, keys and values, as the formula reads::

        scores = Q · Kᵀ,  scaled = scores / √divisor,  [× t],  [masked],  weights = softmax,
        Z = weights · V

    ``divisor`` is n for √n, a number (p, q), or None for no scaled step at all (``scale:
    none``; ``of`` names what n is the root of); ``mask`` is the causal mask's shift (None: no
    mask); ``suffix`` names the decoding rows' steps (``scores_new`` …), which are made by this
    same function. Returns the steps made, Z last."""
    from tutor.core import positions  # (it builds on this module)

    make = made if made is not None else (lambda f, *a, **kw: f(*a, **kw))
    scores = make(matmul, "scores" + suffix, Q, K, transpose=True, head=head)  # (N, N_src)
    if isinstance(Q, positions.Rotate):  # turned queries and keys: √3·√3 = 3, keep it exact
        scores = make(positions.rational_where_exact, scores)
    scaled = scores
    steps = [scores]
    if divisor is not None:  # scale: none leaves the raw scores to the softmax
        kw = {"of": of} if of != "d_k" else {}  # (the memo's key stays as it was)
        scaled = make(scale, "scaled" + suffix, scores, divisor, head=head, **kw)  # (N, N_src)
        steps.append(scaled)
    if factor != (1, 1):  # the explorer's temperature: scaled × t
        scaled = make(times, "tempered" + suffix, scaled, factor, head=head)
        steps.append(scaled)
    if mask is not None:  # −∞ above the (shifted) diagonal
        scaled = make(causal_mask, "masked" + suffix, scaled, head=head, shift=mask)
        steps.append(scaled)
    weights = make(softmax, "weights" + suffix, scaled, head=head)  # (N, N_src), rows sum to 1
    Z = make(matmul, ("z" if suffix else "Z") + suffix, weights, V, head=head)  # (N, d_v)
    return [*steps, weights, Z]


def bias_step(
    made: Callable[..., Step], name: str, row: tuple[tuple[int, int], ...] | None, h: int | None
) -> Step | None:
    """A bias row the lesson gives, as a one-row given step (None: no bias)."""
    return None if row is None else made(given, name, (row,), ("b",), h)


def biased(bias: Step | None) -> dict[str, Step]:
    """``matmul``'s keyword for a bias (none without one: the memo's key stays as it was)."""
    return {} if bias is None else {"bias": bias}


def given_bias(*biases: Step | None) -> list[Step]:
    return [b for b in biases if b is not None]


def derive(lesson: Lesson, options: Options = LESSON_OWN, memo: Memo | None = None) -> Derivation:
    """Work every step of the lesson exactly, in order: the one pipeline, for the walk and every
    other consumer. ``options`` are the explorer's variations (the defaults give the lesson's
    own steps); ``memo`` lets a derivation of an edited lesson reuse the steps it shares with
    the last one (``_Made``)."""
    made = _Made(memo)
    tokens = lesson.labels
    if lesson.embedded:  # X = E + P (issue 17)
        from tutor.core import positions

        E = made(given, "E", lesson.X, tokens)  # (N, d_model), the token embeddings
        if lesson.P is not None:
            P = made(given, "P", lesson.P, tokens)  # (N, d_model)
        else:
            P = made(positions.sinusoidal_step, tokens, lesson.d_model)
        X = made(positions.add, "X", E, P)  # (N, d_model)
        steps = [E, P, X]
    elif lesson.qkv:  # Q, K and V given: no X (its identity stands in only for consumers)
        X = made(given, "X", lesson.X, tokens)
        steps = []
    else:
        X = made(given, "X", lesson.X, tokens)  # (N, d_model)
        steps = [X]
    source = X  # keys and values come from here: X, or the source sentence's X_src
    if lesson.X_src is not None:
        source = made(given, "X_src", lesson.X_src, lesson.source_labels)  # (N_src, d_model)
        steps.append(source)
    masked = lesson.mask == "causal" if options.mask is None else options.mask
    masked = masked and lesson.source is None  # (a source sentence has no "after")
    outputs = []
    shared: dict[int, tuple[Step, Step]] = {}  # grouped heads: each group's K and V, made once
    for number, head in enumerate(lesson.heads, 1):
        h = number if lesson.multi_head else None
        rope = False
        if lesson.qkv:  # Q, K and V given (issue 28): the head starts at its scores
            Q = made(given, "Q", head.W_Q, tokens, h)  # (N, d_k)
            K = made(given, "K", head.W_K, tokens, h)  # (N, d_k)
            V = made(given, "V", head.W_V, tokens, h)  # (N, d_v)
            steps += [Q, K, V]
        else:
            W_Q = made(given, "W_Q", head.W_Q, numbered(len(head.W_Q)), h)  # (d_model, d_k)
            b_Q = bias_step(made, "b_Q", head.b_Q, h)  # (1, d_k), or None
            Q = made(matmul, "Q", X, W_Q, head=h, **biased(b_Q))  # (N, d_k)
            rope = lesson.positions == "rope"  # turn each pair of columns by position × θ
            if rope:
                from tutor.core import positions

                angles = positions.radians(lesson.theta, len(head.W_Q[0]), lesson.theta_units)
            group = lesson.group_of(number)
            if group in shared:  # a later head of its group reads the group's K and V
                K, V = shared[group]
                steps += [W_Q, *given_bias(b_Q), Q]
                if rope:
                    Q = made(positions.rotate, "Q_rot", Q, angles)  # (N, d_k)
                    steps.append(Q)
            else:  # K and V of a group belong to its first head
                W_K = made(given, "W_K", head.W_K, numbered(len(head.W_K)), h)  # (d_model, d_k)
                W_V = made(given, "W_V", head.W_V, numbered(len(head.W_V)), h)  # (d_model, d_v)
                b_K = bias_step(made, "b_K", head.b_K, h)  # (1, d_k), or None
                b_V = bias_step(made, "b_V", head.b_V, h)  # (1, d_v), or None
                K = made(matmul, "K", source, W_K, head=h, **biased(b_K))  # (N_src, d_k)
                V = made(matmul, "V", source, W_V, head=h, **biased(b_V))  # (N_src, d_v)
                steps += [W_Q, W_K, W_V, *given_bias(b_Q, b_K, b_V), Q, K, V]
                if rope:
                    Q = made(positions.rotate, "Q_rot", Q, angles)  # (N, d_k)
                    K = made(positions.rotate, "K_rot", K, angles)  # (N, d_k)
                    steps += [Q, K]
                shared[group] = K, V
        n, of = options.scaling(lesson, len(head.W_K[0]))
        made_here = attend(Q, K, V, n, h, 0 if masked else None, options.factor, made=made, of=of)
        steps += made_here
        Z = made_here[-1]
        outputs.append(Z)
    if lesson.multi_head:
        joined = made(concat, "concat", outputs)  # (N, h·d_v)
        steps.append(joined)
        if lesson.W_O is not None:
            W_O = made(given, "W_O", lesson.W_O, joined.cols)  # (h·d_v, d_out)
            b_O = bias_step(made, "b_O", lesson.b_O, None)  # (1, d_out), or None
            output = made(matmul, "output", joined, W_O, **biased(b_O))  # (N, d_out)
            steps += [W_O, *given_bias(b_O), output]
    if lesson.next is not None:  # one decoding step with the KV cache (tutor.core.decode)
        from tutor.core.decode import next_steps

        steps += next_steps(Derivation(lesson, tuple(steps)), lesson.decoding)
    return Derivation(lesson, tuple(steps))
