"""Where a token sits in its sentence (issue 17): the steps that bring position into attention.

Self-attention by itself does not know word order: shuffle the rows of X and every row of Z is
shuffled the same way. Two classic remedies, each a step of its own here:

* add a position vector to each token's embedding, ``X = E + P``: P given by the lesson, or
  the original Transformer's table ``P[pos, 2i] = sin(pos / 10000^(2i/d))``,
  ``P[pos, 2i+1] = cos(pos / 10000^(2i/d))`` (exact: sympy's sin and cos of those angles);
* rotate each pair of columns of Q and K by the angle ``pos × θ_i`` (RoPE), so a score depends
  on how far apart two tokens are: ``Q_rot``, ``K_rot``.

Positions count from 0: the first token's angle is 0 (it is not turned) and its sinusoidal row
is [0, 1, 0, 1, …]. Like the rest of the engine, every cell is exact, approximated from the
exact value, and only rounded for display.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Sequence
from typing import ClassVar

import mpmath
import sympy
from sympy.polys.domains import QQ

from tutor.core.engine import GUARD, MP, Cell, Kit, Ref, Step, Sum, T, mag10
from tutor.core.records import record

# ---------------------------------------------------------------------------------------------
# exact values with an approximation good to any number of places


def _near_expr(expr: sympy.Expr, places: int) -> mpmath.mpf:
    """An exact (irrational) value within 10^-places, by sympy's own evaluation."""
    size = max(mag10(MP.mpf(sympy.N(expr, 20)._mpf_)), 0)  # type: ignore[attr-defined]
    digits = max(places + size + GUARD, 45)
    with MP.workdps(digits):
        return MP.mpf(sympy.N(expr, digits)._mpf_)  # type: ignore[attr-defined]


def exact_cell(expr: sympy.Expr) -> Cell:
    """A cell holding an exact value: rational when it simplifies to one."""
    if expr.is_Rational:
        return Cell(QQ(int(expr.p), int(expr.q)))
    return Cell(None, _near_expr(expr, 40), lambda: expr, functools.partial(_near_expr, expr))


# ---------------------------------------------------------------------------------------------
# X = E + P


def sinusoid(pos: int, col: int, d: int) -> sympy.Expr:
    """The original Transformer's position table, exactly: sin for even columns, cos for odd,
    of pos / 10000^(2i/d) where i is the pair the column belongs to."""
    angle = sympy.Integer(pos) / sympy.Integer(10000) ** sympy.Rational(2 * (col // 2), d)
    return sympy.sin(angle) if col % 2 == 0 else sympy.cos(angle)


def sinusoidal_cells(n: int, d: int) -> tuple[tuple[Cell, ...], ...]:
    """The n × d table of sinusoidal positions, positions 0 … n − 1."""
    return tuple(tuple(exact_cell(sinusoid(pos, c, d)) for c in range(d)) for pos in range(n))


def sinusoidal_step(rows: tuple[str, ...], d: int) -> Step:
    """P, the sin/cos table of sinusoidal positions (a given matrix, worked from its formula)."""
    from tutor.core.engine import Given, numbered

    return Given("P", None, rows, numbered(d), sinusoidal_cells(len(rows), d))


def _sum_near(a: Cell, b: Cell, places: int) -> mpmath.mpf:
    with MP.workdps(max(places, 0) + GUARD + max(mag10(a.approx), mag10(b.approx), 0)):
        return a.near(places + 1) + b.near(places + 1)


def _plus(a: Cell, b: Cell) -> Cell:
    if a.q is not None and b.q is not None:
        return Cell(a.q + b.q)
    with MP.workdps(50):
        approx = a.approx + b.approx
    return Cell(None, approx, lambda: a.exact + b.exact, functools.partial(_sum_near, a, b))


def add(name: str, E: Step, P: Step) -> Sum:
    """E + P, cell by cell: each token's embedding plus its position's row."""
    cells = tuple(
        tuple(_plus(a, b) for a, b in zip(ra, rb, strict=True))
        for ra, rb in zip(E.cells, P.cells, strict=True)
    )
    return Sum(name, None, E.rows, E.cols, cells, (E, P))


# ---------------------------------------------------------------------------------------------
# RoPE: Q_rot, K_rot


ROTATE_HELPER = '''def rotate(M, angles, shift=0):
    """RoPE: turn each pair of columns (2p, 2p+1) of row i by (i + shift) * angles[p]."""
    out = M.astype(float)
    for i in range(M.shape[0]):
        for p, theta in enumerate(angles):
            a, b = M[i, 2 * p], M[i, 2 * p + 1]
            c, s = np.cos((i + shift) * theta), np.sin((i + shift) * theta)
            out[i, 2 * p], out[i, 2 * p + 1] = a * c - b * s, a * s + b * c
    return out
'''


@record(eq=False)
class Rotate(Step):
    """RoPE: each row's columns (1, 2), (3, 4), … turned by position × θ of their pair,
    ``(a, b) → (a·cos − b·sin, a·sin + b·cos)``; row i is at position i + ``shift``."""

    angles: tuple[sympy.Expr, ...] = ()  # θ of each pair of columns, in radians
    shift: int = 0  # row i is turned as position i + shift (0: positions count from 0)
    helper: ClassVar[str | None] = ROTATE_HELPER

    def sources(self, i: int, j: int) -> tuple[Ref, ...]:
        first = j - j % 2
        return (Ref(self.args[0], i, first), Ref(self.args[0], i, first + 1))

    def combine(self, i: int, j: int, value: Callable[[Ref], T], kit: Kit[T]) -> T:
        a, b = (value(r) for r in self.sources(i, j))
        cos, sin = kit.turn((i + self.shift) * self.angles[j // 2])
        return a * cos - b * sin if j % 2 == 0 else a * sin + b * cos  # type: ignore[operator, no-any-return]

    def numpy(self, args: Sequence[str]) -> str:
        angles = ", ".join(repr(float(x)) for x in self.angles)
        shift = f", shift={self.shift}" if self.shift else ""
        return f"rotate({args[0]}, [{angles}]{shift})"


def default_theta(d_k: int) -> tuple[sympy.Expr, ...]:
    """The original RoPE angles per pair, in radians: θ_i = 10000^(−2i/d_k)."""
    return tuple(sympy.Integer(10000) ** sympy.Rational(-2 * i, d_k) for i in range(d_k // 2))


def radians(
    theta: Sequence[tuple[int, int]] | None,
    d_k: int,
    units: Sequence[str] | None = None,
) -> tuple[sympy.Expr, ...]:
    """A lesson's θ per pair in radians, exact: degrees become a rational multiple of π, and an
    angle given in radians stays the number it is (1 rad is 1, so cos(1)); the original angles
    when None."""
    if theta is None:
        return default_theta(d_k)
    units = units or ("deg",) * len(theta)
    return tuple(
        sympy.Rational(p, q) if unit == "rad" else sympy.pi * sympy.Rational(p, q) / 180
        for (p, q), unit in zip(theta, units, strict=True)
    )


def angle(step: Rotate, i: int, pair: int) -> sympy.Expr:
    """The angle row i of a rotate step turns pair ``pair`` by: position × θ."""
    return (i + step.shift) * step.angles[pair]


def rotate(name: str, Q: Step, angles: tuple[sympy.Expr, ...], shift: int = 0) -> Rotate:
    """Each row's columns (1, 2), (3, 4), … turned by position × θ of their pair:
    ``(a, b) → (a·cos − b·sin, a·sin + b·cos)``, worked exactly."""
    step = Rotate(name, Q.head, Q.rows, Q.cols, (), (Q,), angles=angles, shift=shift)
    cells = tuple(
        tuple(_rotated(step, i, j) for j in range(len(Q.cols))) for i in range(len(Q.rows))
    )
    return dataclasses.replace(step, cells=cells)


@functools.lru_cache(maxsize=4096)
def turn(a: sympy.Expr) -> tuple[sympy.Expr, sympy.Expr]:
    """cos and sin of an exact angle, exactly (sympy evaluates 60° to 1/2 and √3/2)."""
    return sympy.cos(a), sympy.sin(a)


@functools.lru_cache(maxsize=4096)
def _turn_near(a: sympy.Expr, digits: int) -> tuple[mpmath.mpf, mpmath.mpf]:
    with MP.workdps(digits):
        x = MP.mpf(sympy.N(a, digits + 10)._mpf_) if a != 0 else MP.mpf(0)  # type: ignore[attr-defined]
        return MP.cos(x), MP.sin(x)


def _rotated_near(a: Cell, b: Cell, angle: sympy.Expr, even: bool, places: int) -> mpmath.mpf:
    digits = max(places + GUARD + max(mag10(a.approx), mag10(b.approx), 0), 45)
    cos, sin = _turn_near(angle, digits)
    with MP.workdps(digits):
        x, y = a.near(places + GUARD), b.near(places + GUARD)
        return x * cos - y * sin if even else x * sin + y * cos


def _rotated(step: Rotate, i: int, j: int) -> Cell:
    """One turned cell: exact (rational when the turn leaves it so: cos 90° = 0, or the √2 of
    a·cos 45° − a·sin 45° cancelling), its approximation from 50-digit cos and sin."""
    ra, rb = step.sources(i, j)
    a, b = ra.step.cells[ra.i][ra.j], rb.step.cells[rb.i][rb.j]
    angle = (i + step.shift) * step.angles[j // 2]
    cos, sin = turn(angle)
    even = j % 2 == 0
    value = a.exact * cos - b.exact * sin if even else a.exact * sin + b.exact * cos
    if value.is_Rational:
        return Cell(QQ(int(value.p), int(value.q)))
    near = functools.partial(_rotated_near, a, b, angle, even)
    return Cell(None, near(40), lambda: value, near)


def friendly(degrees: sympy.Expr) -> bool:
    """Whether cos and sin of an angle are values a student knows exactly: a multiple of 30°
    or 45° (0, ±1/2, ±√2/2, ±√3/2, ±1)."""
    from tutor.core.spec import FRIENDLY_DEGREES

    return any((degrees / k).is_Integer for k in FRIENDLY_DEGREES)


MAX_SIMPLIFIED = 2048  # products (cells × d_k) checked for an exact rational score: small lessons
MAX_EAGER = 128  # products worth combining at once in radians, to find the rational scores


def combined(x: sympy.Expr) -> sympy.Expr:
    """An exact score with its products of cos and sin combined: cos(1)² + sin(1)² is 1,
    cos(2)·cos(1) + sin(2)·sin(1) is cos(1). sympy's product-to-sum rule (``TR8``) on the
    expression the engine built (never on text); kept only when it is no longer than before
    (an angle in degrees can turn into nested radicals)."""
    from sympy.simplify.fu import TR8

    if not x.has(sympy.cos, sympy.sin):
        return x
    y = sympy.expand(TR8(sympy.expand(x)))
    return y if sympy.count_ops(y) <= sympy.count_ops(x) else x


def rational_where_exact(step: Step) -> Step:
    """The step with every cell that is exactly rational held as a fraction: turned queries
    and keys carry √3 and the like, but their products often cancel it (√3·√3 = 3), and a
    score of exactly 1 should read 1, not 1.00. With other angles (radians, 57.5°) the cells'
    exact forms are ``combined``: at once for a small lesson in radians (so cos²+sin² = 1 is
    held as 1), when first shown otherwise. Only for small lessons (sympy's expansion is
    slow): a large lesson's scores are shown as decimals, still computed from exact values."""
    n, m = step.shape
    size = n * m * len(step.args[0].cols)
    if size > MAX_SIMPLIFIED:
        return step
    turned = [a for a in step.args if isinstance(a, Rotate)]
    degrees = [sympy.nsimplify(t * 180 / sympy.pi) for a in turned for t in a.angles]
    friendly_only = all(d.is_Rational and friendly(d) for d in degrees)
    eager = friendly_only or (
        size <= MAX_EAGER and all(t.is_Rational for a in turned for t in a.angles)
    )

    def cell(i: int, j: int) -> Cell:
        c = step.cells[i][j]
        if c.q is not None or c.masked:
            return c
        value = sympy.Add(*(a.exact * b.exact for a, b in step.terms(i, j)))
        if not eager:  # combined when the form is first shown
            return Cell(None, c.approx, lambda: combined(value), c.near)
        value = sympy.expand(value) if friendly_only else combined(value)
        if value.is_Rational:
            return Cell(QQ(int(value.p), int(value.q)))
        return c if friendly_only else Cell(None, c.approx, lambda: value, c.near)

    cells = tuple(tuple(cell(i, j) for j in range(m)) for i in range(n))
    return dataclasses.replace(step, cells=cells)


def relative(scores: Step, i: int, j: int) -> tuple[tuple[sympy.Expr, ...], sympy.Expr] | None:
    """RoPE's point for one score: turning q by mθ and k by nθ is the same as leaving q and
    turning k by (n − m)θ, so ``scores[i, j] = q_i · R((n − m)θ) · k_jᵀ``. The angles of that
    one turn (one per pair) and the value of the right side, worked from the unturned Q and K
    (None when the scores are not of turned queries and keys)."""
    q_rot, k_rot = scores.args
    if not (isinstance(q_rot, Rotate) and isinstance(k_rot, Rotate)):
        return None
    q = [c.exact for c in q_rot.args[0].cells[i]]
    k = [c.exact for c in k_rot.args[0].cells[j]]
    apart = (j + k_rot.shift) - (i + q_rot.shift)  # n − m
    turns = tuple(apart * t for t in q_rot.angles)
    total = sympy.Integer(0)
    for p, a in enumerate(turns):
        cos, sin = turn(a)
        ka, kb = k[2 * p], k[2 * p + 1]
        total += q[2 * p] * (ka * cos - kb * sin) + q[2 * p + 1] * (ka * sin + kb * cos)
    return turns, combined(total)
