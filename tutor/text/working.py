"""A cell's working as text: the one place that writes how a cell is made, in numbers.

The engine says which cells feed cell (i, j) (``Step.sources``) and how they combine
(``Step.combine``); this module says how a student writes that down: the numbers first, as
they read them off the tables (``1·0 + 0·1 + 1·1 + 0·0 = 1``, ``e^1.41 / (e^1.41 + …)``), then
the exact form for those who want it (``= 1/(2 + e^√2)``), and the notes that keep rounded
working honest. Nothing here is Rich, Markdown or LaTeX: the working is a small tree of
plain pieces (a number, a product, e^x, a fraction, a cell's name) that ``plain`` prints as a
student writes it and the LaTeX answer key prints with its own spelling, so the walk, explain,
the quiz, the grade report and the answer keys dress the same working and never rebuild it.

A new kind of step is described here (``working``) and in the engine, and nowhere else.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from decimal import Decimal
from typing import NamedTuple, Union

from tutor.core import engine as en
from tutor.core.decode import Append
from tutor.core.engine import Ref, Step
from tutor.core.positions import Rotate
from tutor.core.records import record
from tutor.text import format as fmt
from tutor.text.cells import cell_name, dot_phrase, said, the_row
from tutor.text.words import matmul_shape

# ---------------------------------------------------------------------------------------------
# the pieces of a line of working


@record(slots=True)
class Num:
    """A number as the student reads it off a table (``1.41``, ``−2``, ``−∞``)."""

    text: str


@record(slots=True)
class Name:
    """A cell, by its name (``head1.Z[cats, 1]``)."""

    step: Step
    i: int
    j: int


@record(slots=True)
class Gap:
    """The terms a long sum leaves out: ``(n more terms)``."""

    more: int


@record(slots=True)
class Etc:
    """The rest of a sum that does not matter here: ``…``."""


@record(slots=True)
class Prod:
    """``a·b``."""

    a: Num
    b: Num


@record(slots=True)
class Exp:
    """``e^x``."""

    x: Num


@record(slots=True)
class Root:
    """``√n``."""

    n: int


@record(slots=True)
class Sum:
    """``t₁ + t₂ + …``."""

    terms: tuple[Node, ...]


@record(slots=True)
class Div:
    """``a / b`` written on one line (a score over √d_k)."""

    top: Node
    bottom: Node


@record(slots=True)
class Frac:
    """A share: ``top / (bottom)`` on a line, a fraction bar where there is one."""

    top: Node
    bottom: Node


Node = Union[Num, Name, Gap, Etc, Prod, Exp, Root, Sum, Div, Frac]  # noqa: UP007 (a runtime alias)


def factor(text: str) -> str:
    """A number inside a product or a power: in brackets when negative."""
    return f"({text})" if text.startswith(fmt.MINUS) else text


def plain(node: Node) -> str:
    """The piece as a student writes it: ``1·1 + 0·0``, ``e^(−1.41) / (e^1.41 + …)``, ``√2``."""
    match node:
        case Num(text):
            return text
        case Name(step, i, j):
            return cell_name(step, i, j)
        case Gap(more):
            return f"({fmt.plural(more, 'more term')})"
        case Etc():
            return "…"
        case Prod(a, b):
            return f"{factor(a.text)}·{factor(b.text)}"
        case Exp(x):
            return f"e^{factor(x.text)}"
        case Root(n):
            return f"√{n}"
        case Sum(terms):
            return " + ".join(plain(t) for t in terms)
        case Div(top, bottom):
            return f"{plain(top)} / {plain(bottom)}"
        case Frac(top, bottom):
            below = plain(bottom)
            return (
                f"{plain(top)} / ({below})"
                if isinstance(bottom, Sum)
                else f"{plain(top)} / {below}"
            )
    raise TypeError(node)


def _has_sum(node: Node) -> bool:
    if isinstance(node, (Div, Frac)):
        return _has_sum(node.top) or _has_sum(node.bottom)
    return isinstance(node, Sum)


def stages_text(stages: Sequence[Node]) -> str:
    """Stages of working as a student writes them, ``=`` between them."""
    return " = ".join(plain(n) for n in stages)


# ---------------------------------------------------------------------------------------------
# one cell


MAX_EXACT = 50  # characters of an exact form worth showing beside the rounded value


@record
class Working:
    """How one cell is made, as pieces for every dresser.

    ``how`` says it in words or symbols (``row cats of X · column 1 of W_Q``), ``work`` in the
    numbers a student reads off the tables, stage by stage (each stage equals the next), then
    ``rel`` and ``shown`` give the result as its table shows it. ``hand`` is what the rounded
    inputs shown give when that differs from the result.
    """

    step: Step
    i: int
    j: int
    how: str
    work: tuple[Node, ...]
    rel: str  # "=" when the result is shown exactly, "≈" when it is rounded
    shown: str
    places: int
    hand: Decimal | None = None
    blanks: str | None = None  # the working with the arithmetic left to the student
    aside: str | None = None  # a word after the working: ``visible (chase is not after cats)``
    exact_is_short: bool = False  # the exact form is as short as the working (a score over √d_k)

    @property
    def name(self) -> str:
        return cell_name(self.step, self.i, self.j)

    @property
    def rounded(self) -> bool:
        """Whether a number in the working is shown rounded."""
        src = self.step.sources(self.i, self.j)
        return any(fmt.is_rounded(r.step.cells[r.i][r.j], self.places) for r in src)

    @property
    def numbers(self) -> str:
        """The stages of the working as a student writes them, ``=`` between them."""
        return stages_text(self.work)

    def exact(self, limit: int | None = None) -> str | None:
        """The exact form of a rounded result (``1/(2 + e^√2)``), built on first use; None when
        the result is shown exactly or the form is longer than ``limit`` characters."""
        if self.rel == "=":
            return None
        text = fmt.exact_form(self.step, self.i, self.j)  # None when too large to build
        if text is None:
            return None
        return None if limit is not None and len(text) > limit else text

    def result(self, exact: bool = True, limit: int | None = MAX_EXACT) -> str:
        """``= 2``, ``= 2√2 ≈ 2.83`` or ``≈ 0.49``: with the exact form when asked and short."""
        form = self.exact(limit) if exact else None
        return f"= {form} ≈ {self.shown}" if form else f"{self.rel} {self.shown}"

    @property
    def hint(self) -> str | None:
        """The working with blanks to fill: on one line, or a line a stage when it has a sum."""
        if self.blanks is None:
            return None
        parts = [self.how, plain(self.work[0]), self.blanks]
        sums = any(
            isinstance(n, Sum) or isinstance(getattr(n, "bottom", None), Sum) for n in self.work
        )
        return f"{self.name} = " + ("\n  = " if sums else " = ").join(parts)

    @property
    def hand_text(self) -> str | None:
        return None if self.hand is None else fmt.decimal_text(self.hand)


Operand = Callable[[Ref], str]
Refs = tuple[Ref, ...] | None  # a cell's sources, when the caller has them already
Stages = tuple[Node, ...]


class Elide(NamedTuple):
    """A sum of more than ``most`` terms shows its ``first`` and ``last`` terms around
    ``(n more terms)``: its text then grows with its cells, not with d × its cells."""

    most: int
    first: int
    last: int


def table_operand(places: int) -> Operand:
    """Each operand as its table shows it: whole numbers as they are, others rounded."""
    return lambda r: fmt.operand(r.step.cells[r.i][r.j], places)


def numbers(
    step: Step,
    i: int,
    j: int,
    operand: Operand,
    terms: Elide | None = None,
    refs: tuple[Ref, ...] | None = None,
) -> tuple[Node, ...]:
    """The stages of cell (i, j)'s working from the operands ``operand`` writes (the tables'
    numbers, or a student's own); long sums cut short as ``terms`` says. ``refs``: the cell's
    ``sources`` when the caller has them already."""
    return rule_numbers(step, i, j, operand, terms, refs)


@functools.singledispatch
def rule_numbers(
    step: Step, i: int, j: int, operand: Operand, terms: Elide | None, refs: Refs
) -> Stages:
    """``numbers`` by the step's rule: what the rule writes (``Step.written``) from its
    sources' numbers, for a rule with no registration of its own."""
    written = step.written(i, j, [factor(operand(r)) for r in _refs(step, i, j, refs)])
    return (Num(written),)


def _refs(step: Step, i: int, j: int, refs: Refs) -> tuple[Ref, ...]:
    return step.sources(i, j) if refs is None else refs


@rule_numbers.register(en.Given)
def _(step: en.Given, i: int, j: int, operand: Operand, terms: Elide | None, refs: Refs) -> Stages:
    return ()  # given: nothing to work


@rule_numbers.register(en.Product)
def _(
    step: en.Product, i: int, j: int, operand: Operand, terms: Elide | None, refs: Refs
) -> Stages:
    def product(k: int) -> Prod:  # only the pairs shown are looked up: a sum may have d_model
        a, b = step.pair(i, j, k)
        return Prod(Num(operand(a)), Num(operand(b)))

    shown = _some(range(len(step.args[0].cols)), terms, product)
    if step.bias is not None:  # + the bias entry of the column (issue 41)
        shown = (*shown, Num(operand(Ref(step.bias, 0, j))))
    return (Sum(shown),)


@rule_numbers.register(en.Scale)
def _(step: en.Scale, i: int, j: int, operand: Operand, terms: Elide | None, refs: Refs) -> Stages:
    score = Num(operand(_refs(step, i, j, refs)[0]))
    if step.by is not None:  # the lesson's own number: divided by as it is
        return (Div(score, Num(number_text(step.by))),)
    root = fmt.whole_root(step.divisor)
    whole = () if root is None else (Div(score, Num(str(root))),)
    return (Div(score, Root(step.divisor)), *whole)


@rule_numbers.register(en.Times)
def _(step: en.Times, i: int, j: int, operand: Operand, terms: Elide | None, refs: Refs) -> Stages:
    score = Num(operand(_refs(step, i, j, refs)[0]))
    t = factor_text(step)
    return (Prod(score, Num(t if step.factor[1] == 1 else f"({t})")),)  # 1.41·(3/2)


@rule_numbers.register(en.Softmax)
def _(
    step: en.Softmax, i: int, j: int, operand: Operand, terms: Elide | None, refs: Refs
) -> Stages:
    refs = _refs(step, i, j, refs)
    top = operand(refs[j])
    if top == fmt.NEG_INF_TEXT:
        return (Frac(Exp(Num(top)), Etc()),)
    return (Frac(Exp(Num(top)), exp_sum(tuple(operand(r) for r in refs), terms)),)


@rule_numbers.register(en.Mask)
@rule_numbers.register(en.Concat)
@rule_numbers.register(Append)
def _(step: Step, i: int, j: int, operand: Operand, terms: Elide | None, refs: Refs) -> Stages:
    return tuple(Name(*r) for r in _refs(step, i, j, refs))  # a copy: the cell it copies


@rule_numbers.register(en.Sum)
def _(step: en.Sum, i: int, j: int, operand: Operand, terms: Elide | None, refs: Refs) -> Stages:
    return (Sum(tuple(Num(factor(operand(r))) for r in _refs(step, i, j, refs))),)


@rule_numbers.register(Rotate)
def _(step: Rotate, i: int, j: int, operand: Operand, terms: Elide | None, refs: Refs) -> Stages:
    a, b = (Num(operand(r)) for r in _refs(step, i, j, refs))
    cos, sin = turn_texts(step, i, j // 2)
    minus_sin = Num(
        sin[1:] if sin.startswith(fmt.MINUS) else sin if sin == "0" else fmt.MINUS + sin
    )
    if j % 2 == 0:  # a·cos − b·sin, written as a sum: a·cos + b·(−sin)
        return (Sum((Prod(a, Num(cos)), Prod(b, minus_sin))),)
    return (Sum((Prod(a, Num(sin)), Prod(b, Num(cos)))),)


# ---------------------------------------------------------------------------------------------
# positions (issue 17): the angle of a rotation, and a sinusoidal position's formula


def degrees(step: Step, i: int, pair: int) -> object:
    """The angle row i turns pair ``pair`` by, in degrees (exact sympy), for a rotate step."""
    import sympy

    from tutor.core.positions import angle

    return sympy.simplify(angle(step, i, pair) * 180 / sympy.pi)


degree_text = fmt.degree_text  # (its home is format: exact forms write degrees too)


def angle_text(step: Step, i: int, pair: int, places: int = 4) -> str:
    """``1 × 60° = 60°``, or in radians when θ is not a whole number of degrees."""
    import sympy

    pos = i + step.shift
    deg = degrees(step, i, pair)
    theta_deg = sympy.simplify(step.angles[pair] * 180 / sympy.pi)
    if deg.is_Rational and theta_deg.is_Rational:  # type: ignore[attr-defined]
        return f"{pos} × {degree_text(theta_deg)}° = {degree_text(deg)}°"
    theta = fmt.exact_text(step.angles[pair])
    turned = pos * step.angles[pair]
    if turned.is_Rational:  # θ given in radians: 2 × 1 rad = 2 rad, nothing rounded
        return f"{pos} × {theta} rad = {fmt.exact_text(turned)} rad"
    value = fmt.expr_rounded(turned, places)
    return f"{pos} × {theta} rad ≈ {value} rad"


MAX_TURN = 12  # characters of an exact cos or sin worth writing in working (√3/2, −√2/2)


def turn_texts(step: Step, i: int, pair: int) -> tuple[str, str]:
    """cos and sin of row i's angle for ``pair`` as working writes them: exactly when short
    (``1/2``, ``√3/2``), else rounded to 4 places (a student looks them up or keys them in)."""
    import sympy

    from tutor.core.positions import angle

    a = angle(step, i, pair)
    out = []
    for f in (sympy.cos, sympy.sin):
        v = f(a)
        text = fmt.tidy_minus(fmt.exact_text(v))
        if len(text) > MAX_TURN or any(name in text for name in ("cos", "sin")):
            text = fmt.expr_rounded(v, 4)
        out.append(text)
    return out[0], out[1]


def turn_phrase(step: Step, i: int, j: int) -> str:
    """How a rotated cell is made: ``Q[b, 1]·cos 60° − Q[b, 2]·sin 60°``."""
    a, b = step.sources(i, j)
    deg = degrees(step, i, j // 2)
    at = (
        f" {degree_text(deg)}°"
        if deg.is_Rational  # type: ignore[attr-defined]
        else f"({fmt.exact_text(step.angles[j // 2] * (i + step.shift))})"  # cos(1), radians
    )
    first, second = cell_name(*a), cell_name(*b)
    if j % 2 == 0:
        return f"{first}·cos{at} − {second}·sin{at}"
    return f"{first}·sin{at} + {second}·cos{at}"


def sinusoid_phrase(i: int, j: int, d: int) -> str:
    """A sinusoidal position's formula: ``sin(1 / 10000^(0/4))``, position i, column j + 1."""
    fn = "sin" if j % 2 == 0 else "cos"
    return f"{fn}({i} / 10000^({2 * (j // 2)}/{d}))"


def exp_sum(row: tuple[str, ...], terms: Elide | None) -> Sum:
    """A softmax row's denominator, ``e^x₁ + e^x₂ + …``, over its visible scores."""
    seen = [x for x in row if x != fmt.NEG_INF_TEXT]
    return Sum(_some(seen, terms, lambda x: Exp(Num(x))))


@functools.lru_cache(maxsize=1024)  # the same for every cell of a row: built once per row
def _table_exp_sum(step: Step, i: int, places: int, terms: Elide | None) -> Sum:
    return exp_sum(tuple(fmt.operand(c, places) for c in step.args[0].cells[i]), terms)


def _some(items: Sequence, terms: Elide | None, node: Callable) -> tuple[Node, ...]:  # type: ignore[type-arg]
    if terms is None or len(items) <= terms.most:
        return tuple(node(x) for x in items)
    _, first, last = terms
    tail = [node(x) for x in items[len(items) - last :]] if last else []
    return (*(node(x) for x in items[:first]), Gap(len(items) - first - last), *tail)


def working(step: Step, i: int, j: int, places: int, terms: Elide | None = None) -> Working:
    """Cell (i, j)'s working from the numbers its tables show (see ``numbers``)."""
    return rule_working(step, i, j, places, terms)


@functools.singledispatch
def rule_working(step: Step, i: int, j: int, places: int, terms: Elide | None) -> Working:
    """``working`` by the step's rule: for a rule with no registration of its own, what it
    says of a cell over its sources' names (``Step.how``) and writes in their numbers."""
    src = step.sources(i, j)
    how = step.how(i, j, [cell_name(*r) for r in src])
    return _made(step, i, j, places, _table(step, i, j, places, terms, src), how=how)


def _made(step: Step, i: int, j: int, places: int, work: Stages, **how: object) -> Working:
    """Cell (i, j)'s Working: the stages ``work``, the result as its table shows it, and what
    the rule says of it (``how``, ``blanks``, …)."""
    cell = step.cells[i][j]
    rel = "≈" if fmt.is_rounded(cell, places) else "="
    shown = fmt.shown(cell, step, places)
    return Working(step, i, j, work=work, rel=rel, shown=shown, places=places, **how)  # type: ignore[arg-type]


def _table(
    step: Step, i: int, j: int, places: int, terms: Elide | None, src: Refs = None
) -> Stages:
    """``numbers`` from the tables' own numbers."""
    return numbers(step, i, j, table_operand(places), terms, src)


@rule_working.register(en.Given)
def _(step: en.Given, i: int, j: int, places: int, terms: Elide | None) -> Working:
    # (a lesson's numbers are fractions: a given step with others is the sinusoidal P)
    if any(c.q is None for row in step.cells for c in row):
        return _made(step, i, j, places, (), how=sinusoid_phrase(i, j, len(step.cols)))
    return _made(step, i, j, places, (), how="given in the lesson")


@rule_working.register(en.Product)
def _(step: en.Product, i: int, j: int, places: int, terms: Elide | None) -> Working:
    hand = None
    # the trap of rounding early: say so, so it is not taken for a slip (whole operands
    # are never rounded: nothing to check, which keeps an answer key of Q, K, V quick)
    if not all(fmt.step_is_whole(a) for a in step.args):
        by_hand = fmt.rounded_dot(step.terms(i, j), places)
        hand = by_hand if by_hand != fmt.round_half_up(step.cells[i][j], places) else None
    blanks = " + ".join(["__"] * len(step.args[0].cols))
    return _made(
        step,
        i,
        j,
        places,
        _table(step, i, j, places, terms),  # a product reads its pairs itself
        how=dot_phrase(step, i, j),
        hand=hand,
        blanks=f"{blanks}  (multiply each pair, then add)",
    )


@rule_working.register(en.Scale)
def _(step: en.Scale, i: int, j: int, places: int, terms: Elide | None) -> Working:
    src = step.sources(i, j)
    score = fmt.operand(step.args[0].cells[i][j], places)
    return _made(
        step,
        i,
        j,
        places,
        _table(step, i, j, places, terms, src),
        how=f"{cell_name(*src[0])} / {'s' if step.by is not None else '√' + step.of}",
        blanks=f"{score} / __",
        exact_is_short=True,
    )


def factor_text(step: en.Times) -> str:
    """The factor t of a Times step as a student reads it: ``2``, ``3/2``."""
    p, q = step.factor
    return str(p) if q == 1 else f"{p}/{q}"


@rule_working.register(en.Times)
def _(step: en.Times, i: int, j: int, places: int, terms: Elide | None) -> Working:
    src = step.sources(i, j)
    return _made(
        step,
        i,
        j,
        places,
        _table(step, i, j, places, terms, src),
        how=f"{cell_name(*src[0])} × {factor_text(step)}",
        exact_is_short=True,
    )


@rule_working.register(en.Softmax)
def _(step: en.Softmax, i: int, j: int, places: int, terms: Elide | None) -> Working:
    if step.hidden(i, j):
        src = step.sources(i, j)
        why = f"{cell_name(*src[j])} = {fmt.NEG_INF_TEXT}: {said(step.cols[j])} is hidden"
        work = _table(step, i, j, places, terms, src)
        return _made(step, i, j, places, work, how="", aside=f"since {why}")
    top = Exp(Num(fmt.operand(step.args[0].cells[i][j], places)))
    work = (Frac(top, _table_exp_sum(step, i, places, terms)),)  # a row's denominator made once
    how = f"softmax of {the_row(step.rows[i])} of {step.args[0].key}"
    return _made(step, i, j, places, work, how=how, blanks="__ / __")


@rule_working.register(en.Mask)
def _(step: en.Mask, i: int, j: int, places: int, terms: Elide | None) -> Working:
    work = _table(step, i, j, places, terms)
    if step.hides(i, j):
        how = f"{said(step.cols[j])} comes after {said(step.rows[i])}, so it is hidden"
        return _made(step, i, j, places, work, how=how)
    aside = f"visible ({said(step.cols[j])} is not after {said(step.rows[i])})"
    return _made(step, i, j, places, work, how="", aside=aside)


@rule_working.register(en.Concat)
def _(step: en.Concat, i: int, j: int, places: int, terms: Elide | None) -> Working:
    aside = f"column {j + 1} of {len(step.cols)} side by side"
    return _made(step, i, j, places, _table(step, i, j, places, terms), how="", aside=aside)


@rule_working.register(Append)
def _(step: Append, i: int, j: int, places: int, terms: Elide | None) -> Working:
    where = "from the cache" if step.reused(i) else "the new row"  # the KV cache
    return _made(step, i, j, places, _table(step, i, j, places, terms), how="", aside=where)


@rule_working.register(en.Sum)
def _(step: en.Sum, i: int, j: int, places: int, terms: Elide | None) -> Working:
    src = step.sources(i, j)
    by_hand = sum((fmt.as_shown(r.step.cells[r.i][r.j], places) for r in src), Decimal(0))
    hand = fmt.round_decimal(by_hand, places)
    return _made(
        step,
        i,
        j,
        places,
        _table(step, i, j, places, terms, src),
        how=" + ".join(cell_name(*r) for r in src),
        hand=None if hand == fmt.round_half_up(step.cells[i][j], places) else hand,
        blanks="__ + __  (the embedding plus the position)",
    )


@rule_working.register(Rotate)
def _(step: Rotate, i: int, j: int, places: int, terms: Elide | None) -> Working:
    cos, sin = turn_texts(step, i, j // 2)
    return _made(
        step,
        i,
        j,
        places,
        _table(step, i, j, places, terms),
        how=turn_phrase(step, i, j),
        blanks=f"__·{cos} − __·{sin}" if j % 2 == 0 else f"__·{sin} + __·{cos}",
    )


def rounding_note(places: int) -> str:
    return (
        f"(numbers in the working are shown rounded to {places} places; the result is "
        "computed from the exact values)"
    )


def hand_note(hand: str) -> str:
    """What a quiz says under working whose rounded inputs give another result."""
    return (
        f"(the rounded inputs shown give {hand}; carry one more decimal to land on the exact value)"
    )


# ---------------------------------------------------------------------------------------------
# a step's shape


@functools.singledispatch
def rule_shape(step: Step) -> str:
    """The shape arithmetic of a step in plain text, by its rule (``words.shape_text``): a
    rule worked cell by cell (or given) has the shape it has; a product and a concatenation
    say how theirs comes about."""
    n, m = step.shape
    return f"{n} × {m}"


@rule_shape.register(en.Product)
def _(step: en.Product) -> str:
    return matmul_shape(step)


@rule_shape.register(en.Concat)
def _(step: en.Concat) -> str:
    n, m = step.shape
    parts = " + ".join(str(s.shape[1]) for s in step.args)
    return f"{parts} = {m} columns, {n} × {m}"


# ---------------------------------------------------------------------------------------------
# one row: Z as a blend of value rows, a concat row, a softmax row


@record
class Blend:
    """Row i of weights · V as a blend of V's rows: ``0.16 × [2, 1] + … = [0.49, 1.67]``."""

    name: str
    terms: tuple[tuple[str, tuple[str, ...]], ...]  # (weight, the value row it scales)
    shown: tuple[str, ...]
    hand: tuple[str, ...] | None  # what the rounded weights give, when that differs
    rounded: bool  # a weight is shown rounded

    @property
    def numbers(self) -> str:
        return " + ".join(f"{w} × [{', '.join(v)}]" for w, v in self.terms)

    def note(self, places: int) -> str | None:
        if self.hand is not None:
            return (
                f"Note: multiplying the rounded weights shown gives [{', '.join(self.hand)}]. "
                f"The exact weights give [{', '.join(self.shown)}]; the difference comes from "
                f"rounding the weights to {places} places, not from a slip. Carry one more "
                "decimal when working by hand."
            )
        return rounding_note(places) if self.rounded else None


def blend(step: Step, i: int, places: int) -> Blend:
    """Row i of a weights · V step, as the walk writes it."""
    weights, V = step.args
    row_w = weights.cells[i]
    terms = tuple(
        (fmt.operand(w, places), tuple(fmt.operand(v, places) for v in V.cells[k]))
        for k, w in enumerate(row_w)
        if not weights.hidden(i, k)
    )
    shown = tuple(fmt.shown(c, step, places) for c in step.cells[i])
    by_hand = [fmt.rounded_dot(step.terms(i, j), places) for j in range(len(step.cols))]
    exact = [fmt.round_half_up(c, places) for c in step.cells[i]]
    hand = tuple(fmt.decimal_text(x) for x in by_hand) if by_hand != exact else None
    rounded = any(fmt.is_rounded(w, places) for w in row_w)
    return Blend(f"{step.key}[{step.rows[i]}]", terms, shown, hand, rounded)


def concat_row(step: Step, i: int, places: int) -> tuple[str, str, str]:
    """A concat row: its name, the heads' rows it joins, and their numbers
    (``concat[cats]``, ``head1.Z[cats] | head2.Z[cats]``, ``0.49, 1.67 | 1.00, 0.50``)."""
    parts = step.args
    pieces = " | ".join(", ".join(fmt.shown(c, Z, places) for c in Z.cells[i]) for Z in parts)
    names = " | ".join(f"{Z.key}[{step.rows[i]}]" for Z in parts)
    return f"{step.key}[{step.rows[i]}]", names, pieces


def number_text(entry: tuple[int, int]) -> str:
    """A lesson's exact number as it reads: ``8``, ``2.5``, ``5/3``."""
    p, q = entry
    places = fmt.decimal_places(q)
    if places is None:
        return f"{p}/{q}"
    digits = str(abs(p) * (10**places // q)).rjust(places + 1, "0")
    text = digits if not places else f"{digits[:-places]}.{digits[-places:]}"
    return ("−" if p < 0 else "") + text


def divisor_text(step: en.Scale) -> str:
    """What a scaled step divides by, as the walk writes it: ``√4``, ``8``."""
    return number_text(step.by) if step.by is not None else f"√{step.divisor}"


def scale_note(step: en.Scale, places: int) -> str:
    """What dividing by √d_k (or the lesson's own ``scale:``) does to every score."""
    if step.by is not None:
        by = number_text(step.by)
        return f"This lesson chooses its own scale: every score is divided by {by}."
    d_k = step.divisor
    root = fmt.whole_root(d_k)
    divisor = (
        f"√{d_k} = {root}, and the scaled scores stay exact"
        if root is not None
        else f"√{d_k} ≈ {fmt.decimal_text(fmt.sqrt_rounded(d_k, places))}"
    )
    if step.of != "d_k":  # sqrt_d_model: the lesson's choice, said as such
        root_of = f"√{d_k}, the root of {step.of}, as this lesson chooses"
        shown = f" = {root}" if root is not None else ""
        return f"{step.of} = {d_k}, so every score is divided by {root_of}{shown}."
    return f"d_k = {d_k}, so every score is divided by {divisor}."


def times_note(step: en.Times) -> str:
    """What multiplying by t does to every cell of a Times step (the explorer's tempered)."""
    t = factor_text(step)
    return f"t = {t}, so every {step.args[0].name} score is multiplied by {t}."


SHIFT_ABOVE, SHIFT_BELOW = 10, -2  # outside this range the largest x is subtracted first


@record
class SoftmaxRow:
    """One row of a softmax worked by hand: each key's score, e^x and share, the total, and
    the notes that explain what the rounded numbers shown do not."""

    power: str  # "x", or "x − m" when the largest score m is subtracted first
    rows: tuple[tuple[str, str, str, str], ...]  # key, score, e^x, "e^x / total ≈ share"
    total: str
    notes: tuple[str, ...]


def softmax_row(step: Step, i: int, places: int) -> SoftmaxRow:
    """Row i of a softmax step: when its largest score is big (or very negative), e^x would be
    unreadable or overflow, so the largest score m is subtracted first: e^(x−m) / Σ e^(x−m) is
    the same share."""
    (scores,) = step.args
    row = scores.cells[i]
    seen = [k for k, c in enumerate(row) if not c.masked]
    from tutor.core.engine import CARRIED

    top = max(seen, key=lambda k: row[k].near(CARRIED))  # 10^60 + 3 beats 10^60 + 1
    shift = not SHIFT_BELOW <= row[top].approx <= SHIFT_ABOVE
    exps, total = step.exp_terms(i, row[top] if shift else None)
    e_shown = {k: fmt.round_decimal(fmt.mp_decimal(e), places) for k, e in exps.items()}
    total_shown = fmt.round_decimal(fmt.mp_decimal(total), places)
    total_text = fmt.decimal_text(total_shown)
    lines = []
    for k in seen:
        e_text = fmt.decimal_text(e_shown[k])
        share = step.cells[i][k]
        eq = "≈" if fmt.is_rounded(share, places) else "="
        share_text = f"{e_text} / {total_text} {eq} {fmt.number(share, places)}"
        lines.append((step.cols[k], fmt.operand(row[k], places), e_text, share_text))
    notes = [_share_sum(step, i, places)]
    added = sum(e_shown.values(), Decimal(0))
    if added != total_shown:  # the same trap as Z's: rounded parts, exact total
        power = "e^(x − m)" if shift else "e^x"
        notes.append(
            f"Note: the {power} shown add up to {fmt.decimal_text(added)}; the total "
            f"{total_text} adds the exact values, then rounds. The difference comes from rounding "
            f"each {power} to {places} places, not from a slip."
        )
    if shift:
        notes.append(
            f"m = {fmt.operand(row[top], places)} is the largest x. Subtracting it changes no "
            "share (e^(−m) cancels above and below the line) and keeps every e^x readable: "
            "no overflow, no rounding to 0."
        )
    hidden = [step.cols[k] for k, c in enumerate(row) if c.masked]
    if hidden:
        notes.append(
            f"Masked keys ({', '.join(hidden)}) have e^(−∞) = 0, so they get no weight "
            "and are left out of the total."
        )
    return SoftmaxRow("x − m" if shift else "x", tuple(lines), total_text, tuple(notes))


def _share_sum(step: Step, i: int, places: int) -> str:
    shares = [fmt.round_half_up(c, places) for c in step.cells[i]]
    total = sum(shares, Decimal(0))
    text = f"The shares add up to {fmt.decimal_text(total)}"
    return text + (" ✓" if total == 1 else "; exactly 1 before rounding ✓")


def full_text(step: Step, i: int, j: int, places: int) -> str:
    """The full working of cell (i, j) as lines of plain text, ending in its value (the quiz's
    "show me" and the grade report's "from the true inputs")."""
    w = working(step, i, j, places)
    name = cell_name(step, i, j)
    if not w.work:
        return f"{name} {w.result()}"
    text = f"{name} = {w.numbers}\n  {w.result()}"
    if w.hand_text is not None:
        text += "\n  " + hand_note(w.hand_text)
    return text


# ---------------------------------------------------------------------------------------------
# the first term of a cell: the hint after a miss on the learning path (issue 40)


def first_term(step: Step, i: int, j: int, places: int) -> str:
    """Cell (i, j)'s first term worked, from the numbers its tables show, and what is left to
    do: ``first term 1·2 = 2; then the other 3 products, and add them``. A hint that works a
    piece of the cell, never the question said again."""
    return rule_first_term(step, i, j, places)


@functools.singledispatch
def rule_first_term(step: Step, i: int, j: int, places: int) -> str:
    """``first_term`` by the step's rule; a rule with no words of its own here says how the
    cell is made (``Step.how``) and where to start: its first source, as its table shows it."""
    refs = step.sources(i, j)
    how = step.how(i, j, [cell_name(*r) for r in refs])
    if not refs:
        return f"{cell_name(step, i, j)} = {how}"
    first = refs[0]
    shown = fmt.operand(first.step.cells[first.i][first.j], places)
    return f"{cell_name(step, i, j)} = {how}: start from {cell_name(*first)} = {shown}"


def _shown(ref: Ref, places: int) -> Decimal:
    return fmt.as_shown(ref.step.cells[ref.i][ref.j], places)


@rule_first_term.register(en.Given)
def _(step: en.Given, i: int, j: int, places: int) -> str:
    return f"{cell_name(step, i, j)} is given: read it off its table"


@rule_first_term.register(en.Product)
def _(step: en.Product, i: int, j: int, places: int) -> str:
    a, b = step.pair(i, j, 0)
    value = fmt.decimal_text(_shown(a, places) * _shown(b, places))
    left = len(step.args[0].cols) - 1
    others = "the other product" if left == 1 else f"the other {left} products"
    rest = f"; then {others}, and add them" if left else ""
    first = f"{factor(table_operand(places)(a))}·{factor(table_operand(places)(b))}"
    return f"{dot_phrase(step, i, j)}: the first term is {first} = {value}{rest}"


@rule_first_term.register(en.Scale)
def _(step: en.Scale, i: int, j: int, places: int) -> str:
    import sympy

    whole = fmt.whole_root(step.divisor)
    score = fmt.operand(step.args[0].cells[i][j], places)
    if whole:
        return f"first √d_k = √{step.divisor} = {whole}; then {score} / {whole}"
    root = fmt.expr_rounded(sympy.sqrt(step.divisor), places + 2)
    return (
        f"first √d_k = √{step.divisor} ≈ {root} (keep more places than the answer); "
        f"then {score} / √{step.divisor}"
    )


@rule_first_term.register(en.Times)
def _(step: en.Times, i: int, j: int, places: int) -> str:
    score = fmt.operand(step.args[0].cells[i][j], places)
    return f"the score is {score}; multiply it by t = {factor_text(step)}"


@rule_first_term.register(en.Softmax)
def _(step: en.Softmax, i: int, j: int, places: int) -> str:
    row = step.args[0].cells[i]
    if row[j].masked:
        return f"{cell_name(*step.sources(i, j)[j])} = {fmt.NEG_INF_TEXT}: e^(−∞) = 0"
    exps, _ = step.exp_terms(i)
    top = fmt.decimal_text(fmt.round_decimal(fmt.mp_decimal(exps[j]), places))
    x = fmt.operand(row[j], places)
    return (
        f"the top first: e^{factor(x)} ≈ {top}; then e^x of every score of "
        f"{the_row(step.rows[i])} of {step.args[0].key}, added, is the bottom"
    )


@rule_first_term.register(en.Mask)
@rule_first_term.register(en.Concat)
@rule_first_term.register(Append)
def _(step: Step, i: int, j: int, places: int) -> str:
    (ref,) = step.sources(i, j)[:1]
    return f"{cell_name(step, i, j)} copies {cell_name(*ref)}: read it off its table"


@rule_first_term.register(en.Sum)
def _(step: en.Sum, i: int, j: int, places: int) -> str:
    a, *rest = step.sources(i, j)
    more = " + ".join(cell_name(*r) for r in rest)
    value = fmt.decimal_text(_shown(a, places))
    return f"the first term is {cell_name(*a)} = {value}; then add {more}"


@rule_first_term.register(Rotate)
def _(step: Rotate, i: int, j: int, places: int) -> str:
    a, b = step.sources(i, j)
    cos, sin = turn_texts(step, i, j // 2)
    number = cos if j % 2 == 0 else sin
    a_text = table_operand(places)(a)
    return (
        f"{turn_phrase(step, i, j)}: the first term is {factor(a_text)}·{factor(number)}; "
        f"then the term with {cell_name(*b)}"
    )
