"""A decimal comma (``1,41``) in a lesson or an answer sheet is named, at the row it is in."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import LESSONS
from tutor.core.decimal_comma import decimal_comma
from tutor.core.yamlsrc import compose

W = "W_Q: [[1, 0], [0, 1], [1, 0], [0, 1]]\nW_K: [[1, 0], [0, 1], [1, 0], [0, 1]]\n"
W += "W_V: [[1, 0], [0, 1], [1, 0], [0, 1]]\n"


def row_node(text: str):  # type: ignore[no-untyped-def]
    """The YAML node of a flow list, as the readers see it."""
    return compose(text + "\n", "row.yaml")


@pytest.mark.parametrize(
    ("text", "expected", "message"),
    [
        ("[0, 1,41, 0]", 3, "looks like a decimal comma: write 1.41"),
        ("[0,5, 0]", 2, "looks like a decimal comma: write 0.5"),
        ("[-1,5, 2]", 2, "looks like a decimal comma: write -1.5"),
        ("[1,5, 0, 2,25]", 3, "looks like decimal commas: write 1.5 and 2.25"),
        ("[0, 1, 41, 0]", 3, None),  # spaces after every comma: four entries meant
        ("[0, 1,41, 0]", 4, None),  # the count is right
        ("[0, 1,41, 0, 7]", 3, None),  # one comma explains one extra entry, not two
        ("[0,1,41,0]", 3, None),  # no spaces anywhere: which pair is meant cannot be told
        ("[0, '1',41, 0]", 3, None),  # a quoted entry is text the writer chose
        ("[0, 1,a, 0]", 3, None),
        ("[0, 1,-4, 0]", 3, None),  # 1.-4 is no decimal
        ("5", 1, None),  # not a row at all
    ],
)
def test_what_counts_as_a_decimal_comma(text: str, expected: int, message: str | None) -> None:
    assert decimal_comma(row_node(text), expected) == message


def lesson_file(tmp_path: Path, x: str, w: str = W) -> Path:
    path = tmp_path / "comma.yaml"
    path.write_text(f"title: t\ntokens: [a, b, c]\nX:\n{x}{w}")
    return path


def test_a_lesson_names_the_comma_at_its_row_even_in_row_1(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    x = "  - [0,5, 0, 1, 0]\n  - [1, 0, 1, 0]\n  - [0, 1, 0, 1]\n"
    result = run("check", str(lesson_file(tmp_path, x)))
    assert result.exit_code == 1
    assert result.stdout.splitlines() == [
        f"{tmp_path / 'comma.yaml'}:4:5: row 1 of X has 5 entries, but the other rows have 4; "
        "every row needs 4; looks like a decimal comma: write 0.5",
        "checked 1 lesson: invalid (1 error)",
    ]


def test_two_rows_the_comma_decides_which_is_wrong(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "two.yaml"
    path.write_text(
        "title: t\ntokens: [a, b]\nX:\n  - [1, 0,5]\n  - [1, 0]\n"
        "W_Q: [[1], [0]]\nW_K: [[1], [1]]\nW_V: [[1], [2]]\n"
    )
    out = run("check", str(path)).stdout
    assert f"{path}:4:5: row 1 of X has 3 entries, but the other rows have 2" in out
    assert "write 0.5" in out
    assert "(1 error)" in out  # W_Q's 2 rows agree with X's 2 columns: nothing else to say


def test_a_comma_in_a_weight_matrix_is_named_at_its_row(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    x = "  - [1, 0, 1, 0]\n  - [0, 1, 0, 1]\n  - [1, 1, 0, 0]\n"
    w = W.replace("W_K: [[1, 0], [0, 1]", "W_K:\n  - [1, 0]\n  - [0, 1,5]\n  - [1, 0]\n  #", 1)
    result = run("check", str(lesson_file(tmp_path, x, w)))
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert lines[0] == (
        f"{tmp_path / 'comma.yaml'}:10:5: row 2 of W_K has 3 entries, but row 1 has 2; "
        "every row needs 2; looks like a decimal comma: write 1.5"
    )
    assert lines[-1] == "checked 1 lesson: invalid (1 error)"


def test_a_bad_row_of_x_hides_no_other_error(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "bad.yaml"
    path.write_text(
        "title: t\ntokens: [a, b]\nX:\n  - [1, 0, 1, 0]\n  - [0, 1, 0]\n"
        "W_Q: [[1, 0], [0, 1], [1, 0]]\nW_K: [[1, 0], [0, 1], [1, 0], [0, 1]]\n"
        "W_V: [[1, 0], [0, 1], [1, 0], [0, 1]]\n"
    )
    lines = run("check", str(path)).stdout.splitlines()
    assert lines == [
        f"{path}:5:5: row 2 of X has 3 entries, but row 1 has 4; every row needs 4",
        f"{path}:6:6: W_Q has 3 rows, but X has 4 columns, so W_Q needs 4 rows",
        "checked 1 lesson: invalid (2 errors)",
    ]


def test_a_bad_row_of_x_still_counts_its_rows_against_the_tokens(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "bad.yaml"
    path.write_text(
        "title: t\ntokens: [a, b, c]\nX:\n  - [1, 0]\n  - [0, 1, 1]\n"
        "W_Q: [[1], [0]]\nW_K: [[1], [1]]\nW_V: [[1], [2]]\n"
    )
    out = run("check", str(path)).stdout
    assert f"{path}:2:9: tokens lists 3 labels, but X has 2 rows" in out
    assert f"{path}:5:5: row 2 of X has 3 entries" in out


def test_a_sheet_names_the_comma_at_its_cell_and_grades_the_rest(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    sheet = tmp_path / "sheet.yaml"
    sheet.write_text(
        "lesson: cats-chase-mice\nscaled:\n  - [1.41, 2.83, 1.41]\n"
        "  - [2.12, 2,12, 2.12]\n  - [1.41, 2.12, 1.41]\n"
    )
    result = run("grade", str(LESSONS / "cats-chase-mice.yaml"), str(sheet), "--json")
    assert result.exit_code == 0, result.stderr
    assert f"{sheet}:4:12: warning: scaled[chase, chase]: could not read '2,12'" in result.stderr
    cells = {(c["step"], c["row"], c["col"]): c for c in json.loads(result.stdout)["cells"]}
    comma = cells["scaled", "chase", "chase"]
    assert comma["verdict"] == "wrong" and comma["given"] == "2,12"
    assert comma["note"] == "cannot read `2,12`: write 2.12"
    scaled = [c for c in cells.values() if c["step"] == "scaled" and c is not comma]
    assert len(scaled) == 8 and all(c["verdict"] == "correct" for c in scaled)
    shown = run("grade", str(LESSONS / "cats-chase-mice.yaml"), str(sheet)).stdout
    assert "scaled[chase, chase]: cannot read `2,12`: write 2.12" in shown


def test_a_quoted_comma_in_a_json_sheet_is_that_cells_verdict(tmp_path: Path) -> None:
    from tutor.assess.grade import grade
    from tutor.assess.sheet import read_sheet
    from tutor.core.engine import derive
    from tutor.core.lessonfile import load_lesson

    d = derive(load_lesson(LESSONS / "the-cake.yaml"))
    sheet = tmp_path / "x-sheet.json"
    n = len(d.step("weights").rows)
    rows = [["0,24" if (i, j) == (4, 0) else None for j in range(n)] for i in range(n)]
    sheet.write_text(json.dumps({"lesson": "the-cake", "weights": rows}))
    report = grade(d, read_sheet(sheet, d))
    (lost,) = [g for g in report.cells if g.verdict == "wrong"]
    assert lost.name == "weights[and, I]" and lost.entry.note == "cannot read `0,24`: write 0.24"
