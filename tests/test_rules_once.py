"""Issue 24, rules written once: the causal mask, half-up rounding of what the inputs shown give,
and work from the tutor's own shown numbers. Each test would catch a copy of the rule that
drifted (the three mutations the issue planted survived every test before these)."""

from __future__ import annotations

import re
from decimal import ROUND_HALF_UP, Decimal, localcontext

import mpmath

from tests.conftest import LESSONS
from tutor.assess import judge as jd
from tutor.core.engine import Product, Scale, derive
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
