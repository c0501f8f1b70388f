"""Simulated students for tests and bench/simclass.py: answer sheets worked by hand.

A student works every step from their own carried values by ``Step.combine`` (the engine's one
rule for each cell), in an arithmetic of their own: 50-digit decimals rounded the way their
habit says. The judge is never consulted, so the sheets are an independent check of it.

Habits: ``exact`` (carry everything exactly, round only what is written), ``round`` (round every
carried value to the lesson's places), ``carry1``/``carry2`` (carry one or two more places than
written), ``roots`` (like ``round``, and √d_k and each e^x rounded too). Slips change one cell
(or, for the mask slips, one row) and the student then works on honestly from it.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from decimal import ROUND_DOWN, ROUND_HALF_UP, Decimal, localcontext

import mpmath

from tutor.core.engine import Derivation, Mask, Product, Ref, Scale, Step, Sum

MPS = mpmath.MPContext()
MPS.dps = 50
FILL = (
    *("X", "Q", "K", "V", "Q_rot", "K_rot", "scores", "scaled", "weights", "Z"),
    *("concat", "output"),
    *("q_new", "k_new", "v_new", "scores_new", "scaled_new", "weights_new", "z_new"),
    *("concat_new", "output_new"),
)
HABITS = ("exact", "round", "carry1", "carry2", "roots")


def fill_steps(d: Derivation) -> list[Step]:
    return [s for s in d.steps if s.name in FILL and not s.given]


def dec(x: mpmath.mpf, places: int, how: str = ROUND_HALF_UP) -> Decimal:
    """``x`` rounded to ``places`` decimals (half away from zero, or cut off)."""
    digits = 400 + max(0, int(MPS.mag(x) * 0.302)) if x else 400  # a huge e^x keeps its digits
    with localcontext(prec=digits):
        return Decimal(MPS.nstr(x, 60, strip_zeros=False)).quantize(
            Decimal(1).scaleb(-places), rounding=how
        )


class Hand:
    """The arithmetic of one student: ``Step.combine``'s kit over 50-digit values."""

    zero = MPS.mpf(0)
    hidden = MPS.ninf

    def __init__(self, places: int | None) -> None:
        self.places = places  # round √d_k and each e^x to this many places (None: exactly)

    def _r(self, x: mpmath.mpf) -> mpmath.mpf:
        return x if self.places is None else MPS.mpf(str(dec(x, self.places)))

    def given(self, cell):  # type: ignore[no-untyped-def]
        if cell.q is None:  # a sinusoidal position, read off its table (rounded by habit)
            return self._r(MPS.mpf(cell.approx))
        return MPS.mpf(cell.q.numerator) / cell.q.denominator

    def turn(self, angle):  # type: ignore[no-untyped-def]
        import sympy

        c, s = (
            MPS.mpf(sympy.Float(sympy.N(f(angle), 60), 60)._mpf_) for f in (sympy.cos, sympy.sin)
        )
        return self._r(c), self._r(s)

    def root(self, n: int) -> mpmath.mpf:
        r = MPS.sqrt(n)
        return r if int(r) ** 2 == n else self._r(r)

    def exp(self, x: mpmath.mpf) -> mpmath.mpf:
        e = MPS.exp(x)
        return self._r(e) or e  # a tiny e^x is written with its digits, not as 0

    def total(self, xs: list) -> mpmath.mpf:  # type: ignore[type-arg]
        return MPS.fsum(xs)

    def share(self, es: list, j: int) -> mpmath.mpf:  # type: ignore[type-arg]
        return es[j] / MPS.fsum(es)

    def is_hidden(self, x: mpmath.mpf) -> bool:
        return MPS.isinf(x)


def text(x: Decimal | mpmath.mpf | str) -> str:
    if isinstance(x, str):
        return x
    if isinstance(x, Decimal):
        return str(x) if x != 0 else str(abs(x))
    return "-inf" if MPS.isinf(x) else str(x)


class Student:
    """Works a lesson by hand with one habit; ``slip`` changes one cell (see ``SLIPS``)."""

    def __init__(
        self,
        d: Derivation,
        habit: str,
        slip: str | None = None,
        seed: int = 0,
        at: tuple[str, int, int] | None = None,
    ) -> None:
        self.d, self.habit, self.slip = d, habit, slip
        self.at = at  # a pen slip (``PEN``): the cell (step key, row, column) it goes into
        self.places = d.lesson.precision
        self.carry = {"exact": None, "round": 0, "carry1": 1, "carry2": 2, "roots": 0}[habit]
        self.kit = Hand(self.places if habit == "roots" else None)
        self.values: dict[tuple[int, int, int], mpmath.mpf] = {}  # (id(step), i, j) -> carried
        self.written: dict[str, list[list[str]]] = {}
        self.slipped: tuple[Step, int, int] | None = None  # the cell the slip went into
        self.rng = random.Random(seed)

    def value(self, ref: Ref) -> mpmath.mpf:
        s = ref.step
        if s.given:
            return self.kit.given(s.cells[ref.i][ref.j])
        if s.name not in FILL:  # the mask, a cache: read through by its rule
            return s.combine(ref.i, ref.j, self.value, self.kit)
        return self.values[(id(s), ref.i, ref.j)]

    def work(self) -> dict[str, list[list[str]]]:
        for step in fill_steps(self.d):
            rows = []
            for i in range(len(step.rows)):
                row = []
                for j in range(len(step.cols)):
                    v = step.combine(i, j, self.value, self.kit)
                    shown = self._slip(step, i, j, v)
                    if shown is None:
                        carried = v if self.carry is None or MPS.isinf(v) else self._round(v)
                        shown = text(v if MPS.isinf(v) else dec(carried, self.places))
                    else:
                        carried = MPS.mpf(shown) if shown != "-inf" else MPS.ninf
                    self.values[(id(step), i, j)] = carried
                    row.append(shown)
                rows.append(row)
            self.written[step.key] = rows
        return self.written

    def _round(self, v: mpmath.mpf) -> mpmath.mpf:
        return MPS.mpf(str(dec(v, self.places + self.carry)))

    def _slip(self, step: Step, i: int, j: int, v: mpmath.mpf) -> str | None:
        if self.slip in PEN:
            if self.at != (step.key, i, j) or MPS.isinf(v):
                return None
            alt = PEN[self.slip](self, step, i, j, dec(v, self.places))
            if alt is None or alt == dec(v, self.places):
                return None
            self.slipped = (step, i, j)
            return text(alt)
        if self.slip is None or (self.slipped and self.slipped[0] is not step):
            return None
        if self.slipped and self.slip not in ROW_SLIPS + STEP_SLIPS:
            return None
        if self.slipped and self.slip in ROW_SLIPS and self.slipped[1] != i:
            return None
        alt = SLIPS[self.slip](self, step, i, j, v)
        if alt is None:
            return None
        shown = text(alt) if isinstance(alt, str) else text(dec(alt, self.places))
        true = text(dec(v, self.places)) if not MPS.isinf(v) else "-inf"
        if alt is not None and not isinstance(alt, str) and abs(alt - v) < 3 * 10**-self.places:
            return None  # too close to the truth to be a visible slip
        if shown == true:
            return None
        self.slipped = (step, i, j)
        return shown


def _dot(a: list, b: list) -> mpmath.mpf:  # type: ignore[type-arg]
    return MPS.fsum(x * y for x, y in zip(a, b, strict=True))


def _row(st: Student, s: Step, i: int) -> list:  # type: ignore[type-arg]
    return [st.value(Ref(s, i, k)) for k in range(len(s.cols))]


def _col(st: Student, s: Step, j: int) -> list:  # type: ignore[type-arg]
    return [st.value(Ref(s, k, j)) for k in range(len(s.rows))]


def _softmax(xs: list, j: int, kit: Hand) -> mpmath.mpf:  # type: ignore[type-arg]
    seen = [k for k, x in enumerate(xs) if not MPS.isinf(x)]
    if j not in seen:
        return MPS.mpf(0)
    es = [kit.exp(xs[k]) for k in seen]
    return es[seen.index(j)] / MPS.fsum(es)


def _digit(st: Student, step: Step, i: int, j: int, v: mpmath.mpf) -> str | None:
    if step.name != "Q" or MPS.isinf(v):
        return None
    shown = dec(v, st.places)
    step_ = 1 if int(abs(shown)) % 10 != 9 else -1  # the units digit, one up (9 goes down)
    return text(shown + (step_ if shown >= 0 else -step_))


def _sign(st: Student, step: Step, i: int, j: int, v: mpmath.mpf) -> str | None:
    if step.name != "K" or abs(v) < 0.5:
        return None
    return text(-dec(v, st.places))


def _truncated(st: Student, step: Step, i: int, j: int, v: mpmath.mpf):  # type: ignore[no-untyped-def]
    if step.name not in ("weights", "Z") or MPS.isinf(v):
        return None
    cut = dec(v, st.places, ROUND_DOWN)
    return None if cut == dec(v, st.places) else text(cut)


def _scaled(divisor: Callable[[Step, Student], int]):  # type: ignore[no-untyped-def]
    def slip(st: Student, step: Step, i: int, j: int, v: mpmath.mpf):  # type: ignore[no-untyped-def]
        if step.name != "scaled":
            return None
        n = divisor(step, st)
        if n == step.divisor:
            return None
        return st.value(Ref(step.args[0], i, j)) / st.kit.root(n)

    return slip


def _scores(pick: str):  # type: ignore[no-untyped-def]
    def slip(st: Student, step: Step, i: int, j: int, v: mpmath.mpf):  # type: ignore[no-untyped-def]
        if step.name != "scores":
            return None
        Q, K = step.args
        if pick == "qq":
            return _dot(_row(st, Q, i), _row(st, Q, j))
        if pick == "kk":
            return _dot(_row(st, K, i), _row(st, K, j))
        if pick == "swapped":
            return _dot(_row(st, Q, j), _row(st, K, i))
        if len(K.rows) != len(Q.cols):  # K without the transpose: the shapes must allow it
            return None
        return _dot(_row(st, Q, i), _col(st, K, j))

    return slip


def _weights(kind: str):  # type: ignore[no-untyped-def]
    def slip(st: Student, step: Step, i: int, j: int, v: mpmath.mpf):  # type: ignore[no-untyped-def]
        if step.name != "weights":
            return None
        (src,) = step.args
        masked = isinstance(src, Mask)
        full = src.args[0] if masked else src
        if kind == "column":
            return _softmax(_col(st, src, j), i, st.kit)
        if kind == "unnormalised":
            x = st.value(Ref(src, i, j))
            return None if MPS.isinf(x) else st.kit.exp(x)
        if kind == "raw":
            scaled = full
            if not isinstance(scaled, Scale) or scaled.divisor == 1:
                return None
            raw = _row(st, scaled.args[0], i)
            if masked:
                raw = [x if k <= i else MPS.ninf for k, x in enumerate(raw)]
            return _softmax(raw, j, st.kit)
        if not masked or i == len(step.rows) - 1:
            return None
        if kind == "inf-as-zero":
            row = [x if k <= i else MPS.mpf(0) for k, x in enumerate(_row(st, full, i))]
            return _softmax(row, j, st.kit)
        if kind == "forgot-mask":
            return _softmax(_row(st, full, i), j, st.kit)
        return None

    return slip


def _z(kind: str):  # type: ignore[no-untyped-def]
    def slip(st: Student, step: Step, i: int, j: int, v: mpmath.mpf):  # type: ignore[no-untyped-def]
        if step.name != "Z":
            return None
        W, V = step.args
        if kind == "column":
            if len(V.cols) < 2:
                return None
            other = (j + 1) % len(V.cols)
            return _dot(_row(st, W, i), _col(st, V, other))
        if len(W.rows) != len(V.rows) or i >= len(W.cols):  # (cross-attention: not square)
            return None
        return _dot(_col(st, W, i), _col(st, V, j))

    return slip


def _forgot_position(st: Student, step: Step, i: int, j: int, v: mpmath.mpf):  # type: ignore[no-untyped-def]
    """X written as E: the position left out, all over the step."""
    if not isinstance(step, Sum):
        return None
    return st.value(Ref(step.args[0], i, j))


def _row_of_w(st: Student, step: Step, i: int, j: int, v: mpmath.mpf):  # type: ignore[no-untyped-def]
    """Q[i, j] made with row j of W_Q (W read across, not down), when W is square."""
    if step.name != "Q" or step.given:
        return None
    X, W = step.args
    if j >= len(W.rows) or len(W.cols) != len(X.cols):
        return None
    return _dot(_row(st, X, i), _row(st, W, j))


def _used(other: str):  # type: ignore[no-untyped-def]
    def slip(st: Student, step: Step, i: int, j: int, v: mpmath.mpf):  # type: ignore[no-untyped-def]
        if step.name != "Q" or not st.d.has(other, step.head):
            return None
        W = st.d.step(other, step.head)
        if j >= len(W.cols):
            return None
        return _dot(_row(st, step.args[0], i), _col(st, W, j))

    return slip


# slip id -> how the student makes it (None where it does not apply to this cell)
SLIPS: dict[str, Callable] = {  # type: ignore[type-arg]
    "digit": _digit,
    "sign": _sign,
    "truncated": _truncated,
    "used-W_K": _used("W_K"),
    "row-of-W": _row_of_w,
    "forgot-position": _forgot_position,
    "not-scaled": _scaled(lambda s, st: 1),
    "divided-by-dk": _scaled(lambda s, st: s.divisor**2),
    "dmodel-for-dk": _scaled(lambda s, st: len(st.d.step("X").cols)),
    "query-query": _scores("qq"),
    "key-key": _scores("kk"),
    "swapped": _scores("swapped"),
    "k-not-transposed": _scores("kt"),
    "softmax-column": _weights("column"),
    "unnormalised": _weights("unnormalised"),
    "softmax-of-raw-scores": _weights("raw"),
    "inf-as-zero": _weights("inf-as-zero"),
    "forgot-mask": _weights("forgot-mask"),
    "wrong-V-column": _z("column"),
    "weights-column": _z("wcol"),
}


def _digits(how: str):  # type: ignore[no-untyped-def]
    """A wrong digit (the last one, one up, 9 goes down) or two neighbouring digits swapped
    (the last two that differ)."""

    def slip(st: Student, step: Step, i: int, j: int, shown: Decimal) -> Decimal | None:
        sign, digits, exp = shown.as_tuple()
        ds = list(digits)
        if how == "digit":
            ds[-1] = ds[-1] + 1 if ds[-1] != 9 else 8
        else:
            k = next((k for k in range(len(ds) - 1, 0, -1) if ds[k] != ds[k - 1]), None)
            if k is None:
                return None
            ds[k], ds[k - 1] = ds[k - 1], ds[k]
        return Decimal((sign, tuple(ds), exp))

    return slip


def _dropped(st: Student, step: Step, i: int, j: int, shown: Decimal) -> Decimal | None:
    """A sum of products with one (non-zero) term left out."""
    if not isinstance(step, Product):
        return None
    pairs = (step.pair(i, j, k) for k in range(len(step.args[0].cols)))
    terms = [st.value(a) * st.value(b) for a, b in pairs]
    nonzero = [t for t in terms if t != 0]
    if len(nonzero) < 2:
        return None
    bias = [] if step.bias is None else [st.value(step.sources(i, j)[-1])]  # given: kept
    return dec(MPS.fsum(terms + bias) - nonzero[-1], st.places)


# slips of the pen at a chosen cell, then honest work from it: each should cost that cell alone
PEN: dict[str, Callable] = {  # type: ignore[type-arg]
    "plus1": lambda st, s, i, j, x: x + 1,
    "minus1": lambda st, s, i, j, x: x - 1,
    "plus10": lambda st, s, i, j, x: x + 10,
    "times10": lambda st, s, i, j, x: x * 10 if x else None,
    "pen-digit": _digits("digit"),
    "swapped-digits": _digits("swap"),
    "pen-sign": lambda st, s, i, j, x: -x if x else None,
    "zero": lambda st, s, i, j, x: Decimal(0) if x else None,
    "dropped-term": _dropped,
}
ROW_SLIPS = ("inf-as-zero", "forgot-mask")  # made along a whole row of the weights
STEP_SLIPS = ("forgot-position",)  # made all over the step
UNNAMED = ("digit", "sign")  # slips of the pen: recognisable, but not a misconception


def sheet_text(d: Derivation, written: dict[str, list[list[str]]], student: str = "") -> str:
    """The answer sheet (JSON is YAML) for the student's entries."""
    top: dict[str, object] = {"lesson": d.lesson.name, "student": student}
    if d.lesson.multi_head:
        heads: list[dict[str, object]] = [{} for _ in range(d.head_count)]
        for s in fill_steps(d):
            if s.head is not None:
                heads[s.head - 1][s.name] = written[s.key]
        top["heads"] = heads
        for s in fill_steps(d):
            if s.head is None:
                top[s.name] = written[s.key]
    else:
        for s in fill_steps(d):
            top[s.name] = written[s.key]
    return json.dumps(top)


def junk(d: Derivation, kind: str, seed: int = 0) -> dict[str, list[list[str]]]:
    """A sheet of zeros, of ones, or of random two-place numbers."""
    rng = random.Random(seed)

    def one() -> str:
        if kind == "zeros":
            return "0"
        if kind == "ones":
            return "1"
        return f"{rng.randint(-300, 300) / 100:.2f}"

    return {s.key: [[one() for _ in s.cols] for _ in s.rows] for s in fill_steps(d)}


def honest_report(run, path, tmp_path) -> dict:  # type: ignore[no-untyped-def, type-arg]
    """``grade --json`` of the lesson at ``path`` on a sheet of its true values, written by a
    student with the first habit (``run``: the CliRunner fixture); the exit code checked."""
    from tutor.core.engine import derive
    from tutor.core.lessonfile import load_lesson

    d = derive(load_lesson(path))
    sheet = tmp_path / "sheet.yaml"
    sheet.write_text(sheet_text(d, Student(d, HABITS[0]).work()))
    result = run("grade", str(path), str(sheet), "--json")
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)  # type: ignore[no-any-return]


def near_truth(text: str, cell) -> bool:  # type: ignore[no-untyped-def]
    """``text`` one digit, or one unit of its last place, from the cell's true value: what a
    slip of the pen explains as well as any misconception (issue 39, item 6)."""
    if cell.masked or not Decimal(text).is_finite():
        return False
    places = max(0, -Decimal(text).as_tuple().exponent)  # type: ignore[operator]
    unit = Decimal(1).scaleb(-places)
    true = Decimal(str(cell.approx)).quantize(unit, rounding=ROUND_HALF_UP)
    a, b = int(Decimal(text) / unit), int(true / unit)
    if abs(a - b) == 1:
        return True
    x, y = str(abs(a)).zfill(places + 1), str(abs(b)).zfill(places + 1)
    return (a >= 0) == (b >= 0) and len(x) == len(y) and sum(map(str.__ne__, x, y)) == 1
