"""Judging one answer: exact forms, honest ranges (hand rounding), fewer decimals, named slips."""

from __future__ import annotations

import random

import pytest
import sympy

from tests.conftest import LESSONS
from tests.lessongen import lesson_text
from tutor.assess import judge as jd
from tutor.assess.honest import Interval
from tutor.core.engine import Mask, derive
from tutor.core.lessonfile import load_lesson
from tutor.core.numbers import read_answer

CATS = derive(load_lesson(LESSONS / "cats-chase-mice.yaml", name="cats-chase-mice"))
ROWS = {"cats": 0, "chase": 1, "mice": 2}


def verdict(step: str, row: str, col: str, text: str) -> jd.Verdict:
    s = CATS.step(step)
    i, j = ROWS[row], (ROWS[col] if col in ROWS else int(col) - 1)
    return jd.judge_for(CATS, 2).judge(s, i, j, read_answer(text))


def slip(step: str, row: str, col: str, text: str) -> str | None:
    """The one slip named for the answer (None for none; the names joined for a tie)."""
    s = CATS.step(step)
    i, j = ROWS[row], (ROWS[col] if col in ROWS else int(col) - 1)
    found = jd.judge_for(CATS, 2).slips(s, i, j, read_answer(text))
    return " | ".join(sl.name for sl in found) or None


@pytest.mark.parametrize(
    ("cell", "text", "kind"),
    [
        (("Q", "cats", "1"), "2", "exact"),
        (("Q", "cats", "1"), "4/2", "exact"),
        (("Q", "cats", "1"), "2.0", "rounded"),
        (("Q", "cats", "1"), "2.00", "rounded"),
        (("Q", "cats", "1"), "2.0000", "rounded"),
        (("scaled", "cats", "chase"), "2*sqrt(2)", "exact"),
        (("scaled", "cats", "chase"), "4/√2", "exact"),
        (("scaled", "cats", "chase"), "sqrt(8)", "exact"),
        (("scaled", "cats", "chase"), "2.83", "rounded"),
        (("scaled", "cats", "chase"), "2.8284", "rounded"),
        (("scaled", "cats", "chase"), "2.84", "hand"),  # 4 / 1.41 = 2.8369…
        (("weights", "cats", "cats"), "1/(2+e^sqrt(2))", "exact"),
        (("weights", "cats", "cats"), "e^sqrt(2)/(e^sqrt(2)+e^(2*sqrt(2))+e^sqrt(2))", "exact"),
        (("weights", "cats", "cats"), "0.16", "rounded"),
        (("weights", "cats", "cats"), "e^1.41/(e^1.41+e^2.83+e^1.41)", "rounded"),
        (("weights", "chase", "mice"), "1/3", "exact"),
        (("weights", "chase", "mice"), "0.33", "rounded"),
        (("Z", "cats", "1"), "0.49", "rounded"),
        (("Z", "cats", "1"), "3/(2+e^sqrt(2))", "exact"),
        (("Z", "cats", "1"), "0.48", "hand"),  # 0.16·2 + 0.16·1 from the rounded weights
        (("Z", "cats", "1"), "2*0.16 + 0.67*0 + 0.16*1", "hand"),
        (("Z", "mice", "1"), "0.75", "hand"),  # NOTES: 0.75 instead of 0.74
        (("Z", "mice", "1"), "0.74", "rounded"),
    ],
)
def test_right_answers(cell: tuple[str, str, str], text: str, kind: str) -> None:
    v = verdict(*cell, text)
    assert v.right, v
    assert v.kind == kind
    assert v.exact == (kind == "exact")


@pytest.mark.parametrize(
    ("cell", "text"),
    [
        (("Q", "cats", "1"), "2.01"),  # inputs are exact: nothing to round on the way
        (("Q", "cats", "1"), "2.004"),  # three places: a rounding of 2.0035…2.0045, not of 2
        (("Q", "cats", "1"), "1.99"),
        (("Q", "cats", "1"), "3"),
        (("scaled", "cats", "chase"), "2.85"),
        (("scaled", "cats", "chase"), "3"),  # exact form, not the value
        (("scaled", "cats", "chase"), "2.82"),
        (("weights", "cats", "cats"), "1/6"),  # ≈ 0.1667, but an exact form must be exact
        (("weights", "cats", "cats"), "0.18"),
        (("Z", "cats", "1"), "0.47"),  # the rounded weights give 0.48; 0.47 is a unit further
        (("Z", "cats", "1"), "0.51"),
        (("Z", "cats", "1"), "1/2"),
    ],
)
def test_wrong_answers(cell: tuple[str, str, str], text: str) -> None:
    v = verdict(*cell, text)
    assert not v.right and v.kind == "wrong"


def test_tolerance_edges_are_exact_and_inclusive() -> None:
    """An answer is a correct rounding of a value in the range: half a unit from it is right
    (ties either way), a hair more is not."""
    judge = jd.judge_for(CATS, 2)
    eighth = Interval(jd.QQ(1, 8))
    for given in ("0.12", "0.13", "0.125", "0.1250"):
        assert judge.honest(read_answer(given), eighth)
    for given in ("0.11", "0.14", "0.1249", "0.1251"):
        assert not judge.honest(read_answer(given), eighth)
    assert judge.honest(read_answer("1/8"), eighth)  # an exact form: in the range
    assert not judge.honest(read_answer("1/7"), eighth)


def test_precision_changes_the_tolerance() -> None:
    s = CATS.step("scaled")
    at = {p: jd.judge_for(CATS, p) for p in (1, 2, 3)}
    assert at[1].judge(s, 0, 1, read_answer("2.8")).right
    assert at[2].judge(s, 0, 1, read_answer("2.8")).kind == "fewer"  # 2.80 is not 2.83
    assert not at[3].judge(s, 0, 1, read_answer("2.83")).right
    assert at[3].judge(s, 0, 1, read_answer("2.828")).right


@pytest.mark.parametrize(
    ("cell", "text", "name"),
    [
        (("scaled", "cats", "chase"), "4", "not-scaled"),
        # d_k = 2 and d_model = 4: dividing by d_k and by √d_model give the same numbers
        (("scaled", "cats", "chase"), "2", "divided-by-dk"),
        (("scaled", "chase", "cats"), "1.5", "divided-by-dk"),
        # the column holds the row's scores, and 2.83 / (1.41 + 2.83 + 1.41) is 0.5 too
        (("weights", "cats", "chase"), "0.5", "softmax-column | no-exp"),
        (("weights", "cats", "chase"), "0.50", "softmax-column | no-exp"),
        (("weights", "mice", "chase"), "0.43", "no-exp"),  # 2.12 / 4.95: x / Σx, no e^
        (("scaled", "cats", "chase"), "4/1.4", "root-too-early"),  # √2 cut to 1.4
        (("scaled", "cats", "chase"), "2.86", "root-too-early"),
        (("scores", "cats", "chase"), "2/sqrt(2)*2", "typed-scaled"),  # 4 / √2, a step early
        (("scores", "cats", "chase"), "2.83", "typed-scaled"),
        (("weights", "cats", "cats"), "4.1", "unnormalised"),  # e^1.41 from the rounded row
        (("weights", "cats", "cats"), "e^sqrt(2)", "unnormalised"),
        (("weights", "cats", "chase"), "0.79", "softmax-of-raw-scores"),
        (("scores", "cats", "chase"), "3", "key-key | swapped"),  # both give 3
        (("scores", "cats", "cats"), "4", "query-query"),
        (("scores", "chase", "chase"), "9", "query-query"),
        (("scores", "chase", "chase"), "5", "key-key"),
        (("Q", "cats", "2"), "1", "used-W_K | used-W_V"),  # X·W_K and X·W_V agree there
        (("K", "cats", "1"), "2", "used-W_Q | used-W_V"),
        (("scaled", "cats", "chase"), "2.82", "truncated"),  # 2.828… cut off
        (("Z", "cats", "1"), "1.67", "wrong-V-column"),
        (("Z", "cats", "2"), "0.49", "wrong-V-column"),
        (("Z", "cats", "1"), "0.58", "weights-column"),
    ],
)
def test_misconceptions_are_named(cell: tuple[str, str, str], text: str, name: str) -> None:
    assert not verdict(*cell, text).right
    assert slip(*cell, text) == name


def test_a_slip_is_named_only_within_the_tolerance_of_a_right_answer() -> None:
    # column 1 of V gives Z[cats, 1]: 0.4907 exactly, 0.48 from the rounded weights shown
    assert slip("Z", "cats", "2", "0.48") == "wrong-V-column"  # that hand value, exactly
    assert slip("Z", "cats", "2", "0.49") == "wrong-V-column"  # the exact one, rounded
    assert slip("Z", "cats", "2", "0.47") is None  # a whole unit from both: not that slip
    assert slip("Z", "cats", "2", "0.50") is None
    # and 0.48 for Z[cats, 1] itself is right (hand rounding), never a slip
    assert verdict("Z", "cats", "1", "0.48").right


def test_quiz_does_not_blame_a_near_miss_on_a_slip(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    env = {"ATTN_TUTOR_HOME": str(tmp_path)}
    r = run(
        "quiz", "--steps", "Z", "--count", "1", "--seed", "1", input="0.47\n0.48\nquit\n", env=env
    )
    assert "Question 1/1: Z[cats, 2]" in r.stdout
    lines = [line for line in r.stdout.splitlines() if line.startswith("✗")]
    assert lines == [
        "✗ Not quite.",
        "✗ Not quite: that blends column 1 of V; Z[cats, 2] blends column 2.",
    ]
    r = run("quiz", "--steps", "Z", "--count", "1", "--seed", "2", input="0.48\n", env=env)
    assert "Question 1/1: Z[cats, 1]" in r.stdout and "✓ Right" in r.stdout


def test_no_slip_for_a_plain_wrong_answer_or_a_right_one() -> None:
    assert slip("scores", "cats", "chase", "17") is None
    assert slip("Z", "cats", "1", "0.49") is None  # right answers are never blamed


def test_swapped_score_is_named(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """scores[i, j] computed as key of i · query of j."""
    p = tmp_path / "l.yaml"
    p.write_text(lesson_text(random.Random(7), 3, 2, 2, 2, kinds="i"))
    d = derive(load_lesson(p))
    s = d.step("scores")
    judge = jd.judge_for(d)
    named = 0
    for i in range(3):
        for j in range(3):
            alt = s.cells[j][i].q
            if alt != s.cells[i][j].q:
                names = [sl.name for sl in judge.slips(s, i, j, read_answer(str(alt)))]
                assert "swapped" in names
                named += 1
    assert named


def test_row_of_w_needs_a_square_w(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # d_model = d_k = 2: a row of W_Q is as long as a row of X
    lesson = "title: t\ntokens: [a, b]\nX: [[1, 2], [3, 4]]\n"
    lesson += "W_Q: [[1, 0], [5, 1]]\nW_K: [[1, 0], [0, 1]]\nW_V: [[1, 0], [0, 1]]\n"
    p = tmp_path / "sq.yaml"
    p.write_text(lesson)
    d = derive(load_lesson(p))
    judge = jd.judge_for(d)
    Q = d.step("Q")  # Q[a, 1] = 1·1 + 2·5 = 11; with row 1 of W_Q: 1·1 + 2·0 = 1
    found = {sl.name for sl in judge.slips(Q, 0, 0, read_answer("1"))}
    assert found == {"row-of-W", "used-W_K", "used-W_V"}  # W_K = W_V = I here
    # Q[a, 2] = 1·0 + 2·1 = 2; row 2 of W_Q is [5, 1]: 1·5 + 2·1 = 7
    assert [sl.name for sl in judge.slips(Q, 0, 1, read_answer("7"))] == ["row-of-W"]
    # cats-chase-mice has d_model 4 and d_k 2: no row of W_Q fits a row of X
    assert all(sl.name != "row-of-W" for sl, _ in jd.alternatives(CATS, CATS.step("Q"), 0, 0))


# ---------------------------------------------------------------------------------------------
# follow-through building blocks


def test_cell_from_reproduces_every_cell_of_the_lesson() -> None:
    for step in CATS.steps:
        if step.given:
            continue
        for i in range(len(step.rows)):
            for j in range(len(step.cols)):
                value = jd.cell_from(step, i, j)
                assert jd.same_value(value, step.cells[i][j]), (step.key, i, j)


def test_cell_from_with_a_students_own_operands() -> None:
    """Follow-through: Q[cats, 1] slipped to 3; scores[cats, chase] from it is 3·2 + 0·1 = 6."""
    Q = CATS.step("Q")

    def mine(step, i, j):  # type: ignore[no-untyped-def]
        if step is Q and (i, j) == (0, 0):
            return sympy.Integer(3)
        return jd.true_value(step, i, j)

    scores = CATS.step("scores")
    assert jd.cell_from(scores, 0, 1, mine) == 6
    # the student's own rounded weights: Z[cats, 1] = 0.16·2 + 0.67·0 + 0.16·1 = 0.48
    shown = jd.shown_value(2)
    Z = CATS.step("Z")
    assert jd.cell_from(Z, 0, 0, shown) == sympy.Rational(48, 100)
    assert jd.cell_from(CATS.step("scaled"), 0, 1, shown, jd.shown_root(2)) == sympy.Rational(
        400, 141
    )


def test_judge_with_a_masked_lesson_and_heads(tmp_path) -> None:  # type: ignore[no-untyped-def]
    text = lesson_text(random.Random(3), 3, 3, 2, 2, heads=2, causal=True, w_o=True)
    p = tmp_path / "mh.yaml"
    p.write_text(text)
    d = derive(load_lesson(p))
    judge = jd.judge_for(d)
    for step in d.steps:
        if step.given or isinstance(step, Mask):
            continue
        for i in range(len(step.rows)):
            for j in range(len(step.cols)):
                cell = step.cells[i][j]
                if cell.masked:
                    continue
                assert jd.same_value(jd.cell_from(step, i, j), cell)
                r = judge.range(step, i, j)
                assert r is not None and r.lo <= jd.answer_range(cell.exact).hi  # type: ignore[union-attr]
                assert r.hi >= jd.answer_range(cell.exact).lo  # type: ignore[union-attr]
                for _, alt in jd.alternatives(d, step, i, j):  # every slip can be computed
                    alt(judge, judge.carried)


@pytest.mark.parametrize(
    ("text", "exact_form", "plain"),
    [
        ("2", True, True),
        ("-2", True, True),
        ("0.16", False, True),
        ("1e-2", False, True),
        ("1/3", True, False),
        ("2/sqrt(2)", True, False),
        ("e^2", True, False),
        ("√2", True, False),
        ("e^1.41/(e^1.41+e^2.83+e^1.41)", False, False),
        ("2*0.16 + 0.67*0", False, False),
    ],
)
def test_read_answer_says_how_it_was_written(text: str, exact_form: bool, plain: bool) -> None:
    a = read_answer(text)
    assert (a.exact_form, a.plain) == (exact_form, plain)


# ---------------------------------------------------------------------------------------------
# exact is exact (issue 19.6)


@pytest.mark.parametrize(
    ("cell", "text", "kind"),
    [
        (("Q", "cats", "1"), "2+10^-31", "wrong"),  # once within 10^-30, so "exact"
        (("Q", "cats", "2"), "10^-40", "wrong"),
        (("Q", "cats", "2"), "e^-100", "wrong"),
        (("Q", "cats", "1"), "2", "exact"),
        (("Q", "cats", "1"), "sqrt(11+6*sqrt(2))-sqrt(2)-1", "exact"),  # 2, as sympy cannot see
        (("weights", "cats", "cats"), "1/(2+e^sqrt(2))", "exact"),
        (("weights", "cats", "cats"), "e^-sqrt(2)/(1+2*e^-sqrt(2))", "exact"),
        (("weights", "cats", "cats"), "1/(2+e^sqrt(2))+10^-30*10^-30*10^-30", "wrong"),
        (("weights", "cats", "cats"), "1/(2+e^sqrt(2))+e^-100*e^-100", "wrong"),
        (("Z", "cats", "1"), "3*e^-sqrt(2)/(1+2*e^-sqrt(2))", "exact"),
        (("Z", "cats", "1"), "3/(2+e^sqrt(2))-10^-60", "wrong"),
    ],
)
def test_an_exact_form_must_equal_the_value_exactly(
    cell: tuple[str, str, str], text: str, kind: str
) -> None:
    assert verdict(*cell, text).kind == kind


def test_exact_forms_of_huge_scores(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Scores 10^60 + {1, 2, 3}: the exact weights are those of softmax(1, 2, 3)."""
    from tests.test_large_numbers import ISSUE_19

    path = tmp_path / "cancellation.yaml"
    path.write_text(ISSUE_19)
    d = derive(load_lesson(path))
    step, judge = d.step("weights"), jd.judge_for(d)
    for j, text in enumerate(["1/(1+e+e^2)", "e/(1+e+e^2)", "e^2/(1+e+e^2)"]):
        assert judge.judge(step, 1, j, read_answer(text)).kind == "exact", text
        wrong = read_answer(f"{text}+10^-50")
        assert judge.judge(step, 1, j, wrong).kind == "wrong", text
    assert judge.judge(step, 1, 1, read_answer("1/3")).kind == "wrong"


def test_a_lone_weight_beside_a_very_negative_score_is_judged_right(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A causal first row holds one score, −169.71: its weight is exactly 1. e^(−169.71)'s
    lower bound underflowed to 0 and the range divided 0 by 0, so a correct 1.00 was wrong."""
    path = tmp_path / "lone.yaml"
    path.write_text(
        "title: t\ntokens: [a, b]\nmask: causal\nX: [[16, 4], [1, 1]]\n"
        "W_Q: [[1, 0], [0, 1]]\nW_K: [[-1, 0], [0, 1]]\nW_V: [[1, 0], [0, 1]]\n"
    )
    d = derive(load_lesson(path))
    judge = jd.judge_for(d)
    assert judge.judge(d.step("weights"), 0, 0, read_answer("1.00")).right
    assert judge.judge(d.step("weights"), 0, 0, read_answer("1")).right
    assert not judge.judge(d.step("weights"), 0, 0, read_answer("0.99")).right


# ---------------------------------------------------------------------------------------------
# issue 40, item 4: "right for the rounded inputs" only when a way of working gives it, named


def _judged(lesson: str, cell: str, text: str) -> jd.Verdict:
    from tutor.text.cells import parse_cell

    d = derive(load_lesson(LESSONS / f"{lesson}.yaml", name=lesson))
    step, i, j = parse_cell(d, cell)
    return jd.judge_for(d).judge(step, i, j, read_answer(text))


@pytest.mark.parametrize(
    ("lesson", "cell", "text"),
    [
        ("the-cake", "weights[ate, and]", "0.15"),  # every way gives 0.1553–0.1558
        ("the-cake", "weights[ate, I]", "0.10"),  # the exact 0.0949…; no way reaches 0.095
        ("cats-chase-mice", "weights[cats, chase]", "0.675"),  # the ways give 0.673–0.6757
        ("cats-chase-mice", "weights[chase, cats]", "0.334"),  # 1/3 exactly, every way
    ],
)
def test_no_way_of_working_gives_it_so_it_is_wrong(lesson: str, cell: str, text: str) -> None:
    v = _judged(lesson, cell, text)
    assert not v.right and v.kind == "wrong", v


@pytest.mark.parametrize(
    ("cell", "text", "way"),
    [
        # e^1.41 / (…) from the shown scaled scores is 0.674; only e^(x − m) = 0.24 gives 0.68
        ("weights[cats, chase]", "0.68", "subtracting the row's largest first, e^(x − m)"),
        ("weights[cats, chase]", "0.674", "from scaled as shown (1.41 and 2.83)"),
        ("Z[cats, 1]", "0.48", "from weights as shown (0.16 and 0.67)"),
        ("scaled[cats, chase]", "2.84", "with √2 as 1.41"),  # 4 / 1.41
    ],
)
def test_right_by_hand_names_the_way_that_gives_it(cell: str, text: str, way: str) -> None:
    v = _judged("cats-chase-mice", cell, text)
    assert v.right and v.kind == "hand"
    assert way in v.message and way in v.way
    assert "the exact value rounds to" in v.message


def test_a_way_follows_each_shared_input_once() -> None:
    """One √2 for the whole row and one e^x in a weight and its row's total: the way that reads
    the shown scores (1.41, 2.83, 1.41) gives one value, where widening each on its own (the
    old interval ranges) let 0.675 through."""
    from tutor.assess import honest as hn

    J = jd.judge_for(CATS, 2)
    s = CATS.step("weights")
    way = next(w for w in J._ways if w.table and w.carry == 2 and w.rounds is None)
    r = J.way_value(way, s, 0, 1)
    assert isinstance(r, hn.Interval) and r.hi - r.lo < sympy.Rational(1, 10**30)
    import mpmath

    e = mpmath.mp.exp
    with mpmath.workdps(50):
        expected = e(mpmath.mpf("2.83")) / (2 * e(mpmath.mpf("1.41")) + e(mpmath.mpf("2.83")))
        assert abs(mpmath.mpf(r.lo.numerator) / r.lo.denominator - expected) < mpmath.mpf(10) ** -30


def test_a_tie_carried_is_rounded_as_it_is_shown() -> None:
    """the-cake-two-heads: head 1's weights in row ate are each exactly 1/8, worked through
    e^x: carried as shown they are 0.13 (half away from zero), so Z from them is 0.39; a
    range holding both 0.12 and 0.13 for every weight let 0.36 through."""
    assert not _judged("the-cake-two-heads", "head1.Z[ate, 1]", "0.36").right
    v = _judged("the-cake-two-heads", "head1.Z[ate, 1]", "0.39")
    assert v.right and v.way == "from head1.weights as shown (0.13)"


def test_x_over_the_sum_of_x_is_named_in_a_row_of_two() -> None:
    """The first new token of the-cake-next-token sees two scores, the second 0: x / Σx is
    1.00 for the first (its e^x share is not)."""
    from tutor.text.cells import parse_cell

    d = derive(load_lesson(LESSONS / "the-cake-next-token.yaml", name="the-cake-next-token"))
    step, i, j = parse_cell(d, "weights[ate, I]")
    found = jd.judge_for(d).slips(step, i, j, read_answer("1.00"))
    assert [s.name for s in found] == ["no-exp"]


def test_a_way_says_no_more_than_it_needs() -> None:
    """0.68 needs e^(x − m) rounded to 2 places, not √2 rounded too: the words say so."""
    v = _judged("cats-chase-mice", "weights[cats, chase]", "0.68")
    assert v.way == "subtracting the row's largest first, e^(x − m) to 2 places"
