"""Issue 23: one slip costs one cell, whatever the slip; every honest path is one; the cells the
causal mask fills in are given. Each case goes through the public ``grade --json`` command (or the
quiz's judge), with the sheet a student would write."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest

from tests import students
from tests.conftest import LESSONS
from tutor.assess import judge as jd
from tutor.core.engine import derive
from tutor.core.lessonfile import load_lesson
from tutor.core.numbers import read_answer


def graded(run, lesson: Path, d, written, tmp_path: Path) -> dict:  # type: ignore[no-untyped-def, type-arg]
    sheet = tmp_path / "sheet.yaml"
    sheet.write_text(students.sheet_text(d, written))
    result = run("grade", str(lesson), str(sheet), "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def cell(rep: dict, step: str, row: str, col: str) -> dict:  # type: ignore[type-arg]
    return next(c for c in rep["cells"] if (c["step"], c["row"], c["col"]) == (step, row, col))


CATS = LESSONS / "cats-chase-mice.yaml"


def whole(sheet: dict, *keys: str) -> dict:  # type: ignore[type-arg]
    """Whole numbers written as the walk shows them (``3``, not ``3.00``)."""
    for key in keys:
        sheet[key] = [
            [
                x[: x.index(".")] if x and "." in x and set(x.split(".")[1]) == {"0"} else x
                for x in row
            ]
            for row in sheet[key]
        ]
    return sheet


@pytest.mark.parametrize(
    ("slip", "written"),
    [("plus1", "3"), ("times10", "20"), ("zero", "0"), ("minus1", "1"), ("pen-sign", "-2")],
)
def test_a_slip_in_q_then_honest_work_costs_that_cell_alone(run, tmp_path, slip, written) -> None:  # type: ignore[no-untyped-def]
    d = derive(load_lesson(CATS))
    st = students.Student(d, "carry1", slip, at=("Q", 0, 0))  # Q[cats, 1] is 2
    sheet = whole(st.work(), "Q", "K", "V", "scores")
    assert sheet["Q"][0][0] == written
    rep = graded(run, CATS, d, sheet, tmp_path)
    assert (rep["score"], rep["total"]) == (50, 51), [c for c in rep["cells"] if not c["points"]]
    assert cell(rep, "Q", "cats", "1")["verdict"] == "wrong"
    follow = [c for c in rep["cells"] if c["verdict"] == "follow-through"]
    assert follow and not [c for c in follow if c["slips"]]  # no slip named on a follow-through


def test_a_score_slip_then_honest_work_costs_that_cell_alone(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    d = derive(load_lesson(CATS))
    st = students.Student(d, "exact", "plus1", at=("scores", 0, 1))  # 4 written 5
    sheet = whole(st.work(), "Q", "K", "V", "scores")
    assert sheet["scores"][0][1] == "5"
    rep = graded(run, CATS, d, sheet, tmp_path)
    assert rep["total"] - rep["score"] == 1


def _two_tokens(tmp_path: Path, w_q: str, w_k: str, d_model: int, name: str) -> Path:
    eye = (
        "["
        + ", ".join(
            "[" + ", ".join("1" if i == j else "0" for j in range(d_model)) + "]" for i in range(2)
        )
        + "]"
    )
    path = tmp_path / f"{name}.yaml"
    path.write_text(
        f"title: Two tokens\ntokens: [a, b]\nX: {eye}\nW_Q: {w_q}\nW_K: {w_k}\n"
        f"W_V: [[1, 0], [0, 1]]\nprecision: 2\n"
    )
    return path


def test_an_exact_score_is_not_widened_into_a_rounding(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    # scores[a, a] = 27, d_k = 3: scaled = 27/√3 = 15.5885, which 15.58 only truncates
    path = tmp_path / "s27.yaml"
    path.write_text(
        "title: Twenty-seven\ntokens: [a, b]\nX: [[3, 3, 3], [1, 0, 0]]\n"
        "W_Q: [[1, 0, 0], [0, 1, 0], [0, 0, 1]]\nW_K: [[1, 0, 0], [0, 1, 0], [0, 0, 1]]\n"
        "W_V: [[1, 0], [0, 1], [1, 1]]\nprecision: 2\n"
    )
    d = derive(load_lesson(path))
    sheet = whole(students.Student(d, "carry1").work(), "Q", "K", "V", "scores")
    assert sheet["scores"][0][0] == "27"
    sheet["scaled"][0][0] = "15.58"
    c = cell(graded(run, path, d, sheet, tmp_path), "scaled", "a", "a")
    assert c["verdict"] == "wrong" and c["slips"] == ["truncated"]


def test_scaled_left_blank_and_root_two_rounded_is_honest(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    # scores row a = [3, 1], d_k = 2: with √2 ≈ 1.41 the weights are 0.81, 0.19
    path = _two_tokens(tmp_path, "[[3, 1], [0, 1]]", "[[1, 0], [0, 1]]", 2, "root")
    d = derive(load_lesson(path))
    sheet = whole(students.Student(d, "exact").work(), "Q", "K", "V", "scores")
    assert sheet["scores"][0] == ["3", "1"] and sheet["weights"][0] == ["0.80", "0.20"]
    sheet["scaled"] = [[None, None], [None, None]]  # type: ignore[list-item]
    sheet["weights"][0] = ["0.81", "0.19"]
    rep = graded(run, path, d, sheet, tmp_path)
    assert cell(rep, "weights", "a", "a")["points"] and cell(rep, "weights", "a", "b")["points"]
    assert rep["score"] == rep["total"] - 4  # only the four blanks


def test_softmax_worked_by_subtracting_the_largest_is_honest(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    # scaled row a = [12, 9.1]: e^0 = 1, e^−2.9 ≈ 0.06, so 1/1.06 ≈ 0.94 and 0.06/1.06 ≈ 0.06
    path = tmp_path / "shift.yaml"
    path.write_text(
        "title: Shift\ntokens: [a, b]\nX: [[1, 0], [0, 1]]\n"
        "W_Q: [[24, 18.2, 0, 0], [0, 0, 0, 1]]\nW_K: [[1, 0, 0, 0], [0, 1, 0, 0]]\n"
        "W_V: [[1, 0], [0, 1]]\nprecision: 2\n"
    )
    d = derive(load_lesson(path))
    judge = jd.judge_for(d)
    weights = d.step("weights")
    assert judge.judge(weights, 0, 0, read_answer("0.94")).right  # the quiz agrees
    assert judge.judge(weights, 0, 1, read_answer("0.06")).right
    assert not judge.judge(weights, 0, 0, read_answer("0.90")).right
    sheet = students.Student(d, "exact").work()
    assert sheet["scaled"][0] == ["12.00", "9.10"]
    sheet["weights"][0] = ["0.94", "0.06"]
    rep = graded(run, path, d, sheet, tmp_path)
    assert rep["score"] == rep["total"]


def test_the_cells_the_mask_fills_in_are_not_free_points(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = LESSONS / "the-cake-causal.yaml"
    d = derive(load_lesson(path))
    sheet = {s.key: [[None for _ in s.cols] for _ in s.rows] for s in students.fill_steps(d)}
    for key, fill in (("scaled", "-inf"), ("weights", "0")):
        rows = sheet[key]
        for i, row in enumerate(rows):
            for j in range(i + 1, len(row)):
                row[j] = fill  # type: ignore[call-overload]
    rep = graded(run, path, d, sheet, tmp_path)
    assert rep["score"] == 0 and rep["points"] == 0
    masked = [c for c in rep["cells"] if c["step"] in ("scaled", "weights")]
    assert all(
        d.step("scaled").rows.index(c["row"]) >= d.step("scaled").cols.index(c["col"])
        for c in masked
    )  # only the cells on and below the diagonal are asked


def test_an_honest_causal_sheet_earns_every_point_asked(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = LESSONS / "the-cake-causal.yaml"
    d = derive(load_lesson(path))
    rep = graded(run, path, d, students.Student(d, "carry2").work(), tmp_path)
    assert rep["score"] == rep["total"] and rep["points"] == rep["out_of"]


# ---------------------------------------------------------------------------------------------
# one rule for typed answers (the quiz's judge, which grade shares)


def _weights_verdict(text: str) -> jd.Verdict:
    d = derive(load_lesson(CATS))
    return jd.judge_for(d).judge(d.step("weights"), 0, 0, read_answer(text))  # 0.1646…


@pytest.mark.parametrize(
    ("text", "right", "says"),
    [
        ("0.16", True, "right to 2 places"),
        ("0.17", False, "no careful rounding"),
        ("e^1.4/(e^1.4+e^2.8+e^1.4)", False, "your expression gives 0.17; rounding to 1 place"),
        ("e^1.41/(e^1.41+e^2.83+e^1.41)", True, "your expression gives 0.16"),
        ("4/25", True, "your fraction gives 0.16"),
        ("16/100", True, "your fraction gives 0.16"),
        ("1/(2 + e^√2)", True, "exactly"),
        ("1/(2 + e^(2√2))", False, "not the exact value"),
    ],
)
def test_an_answer_is_judged_by_the_value_it_stands_for(text, right, says) -> None:  # type: ignore[no-untyped-def]
    v = _weights_verdict(text)
    assert v.right is right and says in v.message, v


@pytest.mark.parametrize("text", ["2√2", "2 sqrt(2)", "2*sqrt(2)", "4/√2"])
def test_the_walks_own_notation_is_read(text) -> None:  # type: ignore[no-untyped-def]
    d = derive(load_lesson(CATS))
    scaled = d.step("scaled")  # scaled[cats, chase] = 4/√2 = 2√2
    assert jd.judge_for(d).judge(scaled, 0, 1, read_answer(text)).exact


@pytest.mark.parametrize(("text", "value"), [("2e5", 200000), ("2e-3", 0.002), ("3(1+1)", 6)])
def test_exponents_are_not_read_as_products(text, value) -> None:  # type: ignore[no-untyped-def]
    assert float(read_answer(text).value) == value


def test_the_decoding_row_left_unscaled_is_named_and_followed_through(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from tutor.core.engine import Ref

    path = LESSONS / "the-cake-next-token.yaml"
    d = derive(load_lesson(path))
    st = students.Student(d, "carry1")

    def unscaled(step, i, j, v):  # type: ignore[no-untyped-def]
        if step.name != "scaled_new":
            return None
        st.slipped = (step, i, j)
        return students.text(students.dec(st.value(Ref(step.args[0], i, j)), st.places))

    st._slip = unscaled  # type: ignore[method-assign]
    rep = graded(run, path, d, st.work(), tmp_path)
    lost = [c for c in rep["cells"] if not c["points"]]
    assert {c["step"] for c in lost} == {"scaled_new"}  # its 4 cells, nothing after them
    assert all(c["slips"] == ["not-scaled"] for c in lost)
    later = [c for c in rep["cells"] if c["step"] in ("weights_new", "z_new")]
    assert "wrong" not in {c["verdict"] for c in later}
    assert any(c["verdict"] == "follow-through" for c in later)


def _off(text: str) -> str:
    """A written number half a unit off (−∞ as it is)."""
    return text if text == "-inf" else str(Decimal(text) + Decimal("0.5"))


@pytest.mark.parametrize("path", sorted(LESSONS.glob("*.yaml")), ids=lambda p: p.stem)
def test_your_own_value_is_the_exact_one_rounded(path: Path, tmp_path: Path) -> None:
    """The report's "from your own earlier answers it would be …" is worked in enclosures, with
    no exact form built (``Report.own_shown``): it must be the exact value rounded, for every
    cell a sheet carries. Here every number written is off by 0.5, so nearly every cell leans
    on the student's own wrong ones."""
    from tutor.assess.grade import grade
    from tutor.assess.sheet import read_sheet
    from tutor.text import format as fmt

    d = derive(load_lesson(path))
    work = students.Student(d, "carry1").work()
    sheet = tmp_path / "sheet.yaml"
    sheet.write_text(
        students.sheet_text(d, {k: [[_off(x) for x in row] for row in m] for k, m in work.items()})
    )
    rep = grade(d, read_sheet(sheet, d))
    carried = [g for g in rep.cells if g.carried]
    assert carried
    places = d.lesson.precision
    exact = [fmt.expr_rounded(rep.own_value(g), places) for g in carried]  # type: ignore[arg-type]
    assert [rep.own_shown(g) for g in carried] == exact
