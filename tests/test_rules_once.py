"""Issue 24, rules written once: the causal mask, half-up rounding of what the inputs shown give,
and work from the tutor's own shown numbers; issue 37: rounding half away from zero in one
module (``tutor/core/rounding.py``), which no other module does on its own. Each test would
catch a copy of the rule that drifted (the three mutations the issue planted survived every
test before these)."""

from __future__ import annotations

import ast
import re
from decimal import ROUND_HALF_UP, Decimal, localcontext
from fractions import Fraction
from pathlib import Path

import mpmath
import pytest
from sympy.polys.domains import QQ

from tests.conftest import LESSONS
from tutor.assess import judge as jd
from tutor.core import rounding
from tutor.core.engine import Cell, Product, Scale, derive
from tutor.core.lessonfile import load_lesson
from tutor.core.numbers import read_answer
from tutor.text import format as fmt
from tutor.text import working as wk

# eight tokens, every score 0: each weight is exactly 1/8 = 0.125, shown 0.13 (half up), so the
# shown weights give Z[·, 1] = 8 × 0.13 × 1 = 1.04 where the exact value is 1
TIES = """\
title: Ties
tokens: [a, b, c, d, e, f, g, h]
X: [[1, 0], [1, 0], [1, 0], [1, 0], [1, 0], [1, 0], [1, 0], [1, 0]]
W_Q: [[1, 0], [0, 1]]
W_K: [[0, 0], [0, 0]]
W_V: [[1, 0], [0, 1]]
precision: 2
"""


def lessons(tmp_path) -> list:  # type: ignore[no-untyped-def, type-arg]
    ties = tmp_path / "ties.yaml"
    ties.write_text(TIES)
    return [*sorted(LESSONS.glob("*.yaml")), ties]


def test_minus_infinity_on_the_diagonal_of_a_causal_lesson_is_wrong() -> None:
    d = derive(load_lesson(LESSONS / "the-cake-causal.yaml"))
    scaled, judge = d.step("scaled"), jd.judge_for(d)
    for i in range(len(scaled.rows)):
        assert not judge.judge(scaled, i, i, read_answer("-inf")).right  # a token sees itself
        if i + 1 < len(scaled.cols):
            assert judge.judge(scaled, i, i + 1, read_answer("-inf")).right  # the future: −∞


def _half_up(x: Decimal, places: int) -> Decimal:
    return x.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)


def _shown(cell, places: int) -> Decimal:  # type: ignore[no-untyped-def]
    """A cell as a table shows it, worked here (not by tutor.text.format): integers as they
    are, others rounded half up from the exact value (or its 40 digits)."""
    with localcontext(prec=80):
        if cell.q is not None:
            x = Decimal(int(cell.q.numerator)) / Decimal(int(cell.q.denominator))
            return x if cell.q.denominator == 1 else _half_up(x, places)
        return _half_up(Decimal(mpmath.nstr(cell.approx, 40, strip_zeros=False)), places)


def test_what_the_rounded_inputs_shown_give_is_rounded_half_up(tmp_path) -> None:
    """Every "the rounded inputs shown give X" note, against the shown inputs multiplied and
    rounded here with Decimal half up (0.125 → 0.13)."""
    checked, ties = 0, False
    for path in lessons(tmp_path):
        d = derive(load_lesson(path))
        places = d.lesson.precision
        for step in d.steps:
            if not isinstance(step, Product):
                continue
            for i in range(len(step.rows)):
                for j in range(len(step.cols)):
                    text = wk.full_text(step, i, j, places)
                    m = re.search(r"the rounded inputs shown give (\S+?);", text)
                    if not m:
                        continue
                    terms = step.terms(i, j)
                    total = sum(
                        (_shown(a, places) * _shown(b, places) for a, b in terms), Decimal(0)
                    )
                    want = fmt.decimal_text(_half_up(total, places))
                    assert m[1] == want, (path.stem, step.key, i, j, m[1], want)
                    checked += 1
                    ties = ties or (path.stem == "ties" and want == "1.04")
    assert checked and ties  # Z[cats, 1]: 0.48; the ties' Z: 1.04 (1.00 if 0.125 → 0.12)


def test_work_from_the_tutors_own_shown_numbers_is_right(tmp_path) -> None:
    """A student who copies each step as the walk shows it (rounded half up) and works the next
    step from those shown numbers earns every cell, in the quiz's judge."""
    for path in lessons(tmp_path):
        d = derive(load_lesson(path))
        judge, places = jd.judge_for(d), d.lesson.precision
        shown = jd.shown_value(places)
        root = jd.shown_root(places)
        for step in d.steps:
            if not isinstance(step, Product | Scale) or step.name not in ("Z", "scaled", "output"):
                continue
            for i in range(len(step.rows)):
                for j in range(len(step.cols)):
                    if step.cells[i][j].masked:
                        continue
                    value = jd.cell_from(step, i, j, shown, root)  # from the shown inputs
                    text = fmt.expr_rounded(value, places)
                    answer = read_answer(text.replace(fmt.MINUS, "-"))
                    assert judge.judge(step, i, j, answer).right, (path.stem, step.key, i, j, text)


# ---------------------------------------------------------------------------------------------
# rounding half away from zero: one home (tutor/core/rounding.py)

HOME = "tutor/core/rounding.py"
# floats rounded with Python's round (half to even), none a number a student reads off a table
# or is graded on: a class report's mean, a progress file's rate, a sort key that ignores noise,
# the seconds an autograder run took (Gradescope's execution_time), and a class's check-code run
# of one file
FLOATS = {
    ("tutor/assess/autograde.py", "round(time.monotonic() - start, 3)"),
    ("tutor/assess/classcode.py", "round(time.monotonic() - start, 2)"),
    ("tutor/assess/classreport.py", "round(mean, 1)"),
    ("tutor/assess/progress.py", "round(r.first_rate, 4)"),
    ("tutor/teach/focus.py", "round(spread(i), 12)"),
}


def _own_rounding(path: Path, tree: ast.AST, source: str) -> list[str]:
    """The places where a module rounds on its own: a ``decimal`` rounding mode (``ROUND_*``),
    a ``.quantize(`` call, ``round(x, places)`` (``round(x)`` to a whole number, for a
    layout or a percent in words, is left alone), the integer idiom of half up
    ``(2·p + q) // (2·q)`` (a floor division by a product with 2), and ``int``/``floor`` of
    ``x + 0.5``."""
    found = []
    for node in ast.walk(tree):
        what = None
        if isinstance(node, ast.Name | ast.Attribute | ast.alias):
            name = {ast.Name: "id", ast.Attribute: "attr", ast.alias: "name"}[type(node)]
            if getattr(node, name).startswith("ROUND_"):
                what = getattr(node, name)
        elif isinstance(node, ast.Call):
            f = node.func
            fname = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
            args = node.args
            if fname == "quantize":
                what = ".quantize("
            elif fname == "round" and (len(args) > 1 or node.keywords):
                what = ast.get_source_segment(source, node)
                if (path.as_posix(), what) in FLOATS:
                    what = None
            elif fname in ("int", "floor", "ceil") and args and _plus_half(args[0]):
                what = ast.get_source_segment(source, node)
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.FloorDiv):
            right = node.right
            halves = isinstance(right, ast.BinOp) and isinstance(right.op, ast.Mult)
            if halves and any(isinstance(x, ast.Constant) and x.value == 2
                              for x in (right.left, right.right)):  # fmt: skip
                what = ast.get_source_segment(source, node)
        if what:
            found.append(f"{path}:{getattr(node, 'lineno', '?')}: {what}")
    return found


def _plus_half(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.BinOp)
        and isinstance(node.op, ast.Add)
        and any(isinstance(x, ast.Constant) and x.value == 0.5 for x in (node.left, node.right))
    )


def test_rounding_half_up_lives_in_one_module() -> None:
    """No module of tutor but ``tutor/core/rounding.py`` rounds on its own (``_own_rounding``
    says what is looked for); every other one calls ``round_decimal``, ``half_up``,
    ``scaled_half_up`` or ``round_ratio`` there, or a cell's ``rounded``. The 600 digits of
    decimal working precision are defined there too, once (``DECIMAL_DIGITS``)."""
    root = Path(__file__).resolve().parent.parent
    found, digits = [], []
    for path in sorted((root / "tutor").rglob("*.py")):
        rel = path.relative_to(root)
        source = path.read_text(encoding="utf-8")
        digits += [str(rel)] * len(re.findall(r"^\w*DIGITS = 600\b", source, re.M))
        if rel.as_posix() != HOME:
            found += _own_rounding(rel, ast.parse(source), source)
    assert found == []
    assert digits == [HOME]
    # the check sees each form of rounding it names
    planted = (
        "from decimal import ROUND_HALF_EVEN\nx.quantize(u)\nround(x, 2)\n"
        "(2 * n + d) // (2 * d)\nint(x + 0.5)\nround(x)\nn // 2\n"
    )
    seen = _own_rounding(Path("x.py"), ast.parse(planted), planted)
    assert [s.split(": ", 1)[1] for s in seen] == [
        "ROUND_HALF_EVEN",
        ".quantize(",
        "round(x, 2)",
        "(2 * n + d) // (2 * d)",
        "int(x + 0.5)",
    ]


@pytest.mark.parametrize("places", [0, 1, 2, 3])
def test_the_one_rounding_rule_is_half_away_from_zero(places: int) -> None:
    """``scaled_half_up`` against ``decimal``'s ROUND_HALF_UP (ties away from zero), on every
    tie and its neighbours; ``round_ratio``'s ties up and down for the ends of a range."""
    for n in range(-400, 401):
        x = Fraction(n, 80)  # multiples of 1/80 hold the ties 0.125, 0.5, −0.0125 …
        want = _half_up(Decimal(n) / Decimal(80), places).scaleb(places)
        assert rounding.scaled_half_up(x, places) == int(want), (x, places)
    assert [rounding.round_ratio(p, 2, t) for p in (1, -1) for t in ("away", "up", "down")] == [
        1, 1, 0, -1, 0, -1
    ]  # fmt: skip
    assert rounding.half_up(Cell(QQ(-1, 8)), 2) == Decimal("-0.13")
