"""The one text of a cell's working (``tutor.text.working``): the walk, the answer keys and the
grade report show the same working; rounded parts that do not add up to a rounded total say why."""

from __future__ import annotations

import random
import re

import pytest

from tests import lessongen
from tests.test_grade import TWO_HEADS, blank_sheet, fill, true_values
from tutor.core.engine import derive
from tutor.core.lessonfile import load_lesson
from tutor.export import worksheet
from tutor.text import working as wk

NUMBER = re.compile(r"\d+(?:\.\d+)?")
TOTALS_NOTE = "Note: the e^x shown add up to 25.14; the total 25.15 adds the exact values"


def test_a_softmax_table_says_why_its_rounded_e_x_miss_the_total(run) -> None:  # type: ignore[no-untyped-def]
    out = run("walk", "cats-chase-mice", "--step", "weights").stdout
    assert "│ total │         │ 25.15 │" in out  # 4.11 + 16.92 + 4.11 is 25.14
    assert TOTALS_NOTE in " ".join(out.split())


def test_a_softmax_table_whose_parts_add_up_has_no_such_note(run) -> None:  # type: ignore[no-untyped-def]
    out = run("softmax", "0", "0", "0", "0").stdout  # e^0 = 1 four times, total 4
    assert "4.00" in out
    assert "add up to" in out  # the shares' line is still there
    assert "e^x shown add up" not in out


def test_the_shifted_table_names_what_it_rounds(run) -> None:  # type: ignore[no-untyped-def]
    # m = 20 is subtracted first; e^(x − m) are the numbers shown and summed
    out = " ".join(run("softmax", "20", "19.5", "18.4").stdout.split())
    assert "e^(x − m)" in out
    assert "the e^x shown add up" not in out


def _lessons(count: int) -> list:  # type: ignore[type-arg]
    rng = random.Random(12)
    out = []
    for k in range(count):
        kind = k % 3
        text = lessongen.lesson_text(
            rng, 3, 3, 2, 2, heads=2 if kind == 2 else 0, causal=kind == 1, w_o=kind == 2
        )
        out.append(text)
    return out


@pytest.mark.parametrize("text", _lessons(6))
def test_plain_and_latex_working_carry_the_same_numbers(tmp_path, text: str) -> None:  # type: ignore[no-untyped-def]
    """The walk's and quiz's text (``plain``) and the answer key's LaTeX (``worksheet.tex``)
    print one tree: the same numbers, in the same order, for every cell of every step."""
    path = tmp_path / "lesson.yaml"
    path.write_text(text)
    d = derive(load_lesson(path, "lesson"))
    for step in d.steps:
        for i in range(len(step.rows)):
            for j in range(len(step.cols)):
                w = wk.working(step, i, j, d.lesson.precision)
                for stage in w.work:
                    if isinstance(stage, wk.Name):
                        continue  # a cell's name: labels, not numbers
                    assert NUMBER.findall(wk.plain(stage)) == NUMBER.findall(
                        worksheet.tex(stage)
                    ), (step.key, i, j)


def test_a_masked_weight_written_otherwise_is_given_not_graded(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    values = true_values(TWO_HEADS, "2")
    values["head1.scaled"][0][0] = "0.5"  # a slip, so the row's weights follow the student's own
    values["head1.weights"][0][2] = "0.5"  # the first token cannot see the third
    sheet = tmp_path / "sheet.yaml"
    sheet.write_text(fill(blank_sheet(run, TWO_HEADS), values))
    result = run("grade", TWO_HEADS, str(sheet))
    assert result.exit_code == 0, result.stderr
    text = " ".join(result.stdout.split())
    assert "head1.weights[the, sat]" not in text  # the mask's 0 is given: not graded
    assert "head1.scaled[the, the]: you wrote 0.5" in text  # the slip is still reported
