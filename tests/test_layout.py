"""layout: columns, the "AI by Hand" convention (tokens as columns, Kᵀ·Q, softmax down each
column): presentation only. The walk turns every table; sheets are written on their side and
graded in either layout against the same lesson."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.conftest import LESSONS
from tests.test_grade import blank_sheet, fill, grade_json, true_values

COLUMNS = str(LESSONS / "tokens-as-columns.yaml")
ROWS = str(LESSONS / "cats-chase-mice.yaml")


def section(out: str, title: str) -> str:
    """One step of the walk: from its heading to the next heading."""
    start = out.index(title)
    rest = out[start + len(title) :]
    end = re.search(r"\n\S[^\n]*─{10,}", rest)
    return rest[: end.start()] if end else rest


def test_the_walk_turns_every_table_and_reads_products_the_other_way(run) -> None:
    out = run("walk", COLUMNS, env={"COLUMNS": "160"}).stdout
    x = section(out, "X, the tokens")
    assert "│   │ cats │ chase │ mice │" in x  # the tokens head the columns of X
    assert "X (4 × 3)" in x
    scores = section(out, "scores = Kᵀ · Q")
    assert scores.index("Kᵀ (3 × 2)") < scores.index("Q (2 × 3)") < scores.index("scores (3 × 3)")
    assert "softmax down the cats column" in section(out, "weights = softmax down each column")
    z = section(out, "Z = V · weights")
    assert z.index("V (2 × 3)") < z.index("weights (3 × 3)") < z.index("Z (2 × 3)")
    plain = run("walk", ROWS, env={"COLUMNS": "160"}).stdout
    assert "X (3 × 4)" in plain and "Kᵀ" in plain and "scores = Kᵀ · Q" not in plain


def test_the_column_walk_speaks_of_columns(run) -> None:
    """Its prose reads the turned tables: a token is a column, a product is row · column of the
    turned factors (W_Q · X), the way the walk's tables show them."""
    out = " ".join(run("walk", COLUMNS, env={"COLUMNS": "160"}).stdout.split())
    assert "= row 1 of W_Q · column cats of X" in out
    assert "row cats of X" not in out and "a token's row" not in out
    assert "Each column describes one token" in out
    assert "its column of weights" in out
    rows = " ".join(run("walk", ROWS, env={"COLUMNS": "160"}).stdout.split())
    assert "= row cats of X · column 1 of W_Q" in rows and "Each row describes one token" in rows


def test_the_column_walk_shows_the_transpose_of_each_rows_table(run) -> None:
    def table(out: str, title: str) -> list[list[str]]:
        body = out[out.index(title) :].split("╰")[0]
        return [
            [c.strip() for c in line.strip("│").split("│")]
            for line in body.splitlines()
            if line.startswith("│")
        ]

    for step in ("X", "W_Q", "W_V"):
        cols = run("walk", COLUMNS, "-s", step).stdout
        rows = run("walk", ROWS, "-s", step).stdout
        a, b = table(cols, f"{step} ("), table(rows, f"{step} (")
        assert [r[1:] for r in a[1:]] == [
            list(c) for c in zip(*(r[1:] for r in b[1:]), strict=True)
        ]
        assert [r[0] for r in a[1:]] == b[0][1:]  # the row labels become the column labels


def test_the_layout_is_presentation_only(run) -> None:
    a = json.loads(run("walk", COLUMNS, "--json").stdout)
    b = json.loads(run("walk", ROWS, "--json").stdout)
    assert a["steps"] == b["steps"]


def turned(values: dict[str, list[list[str]]]) -> dict[str, list[list[str]]]:
    return {k: [list(c) for c in zip(*v, strict=True)] for k, v in values.items()}


def test_a_column_sheet_is_written_on_its_side(run) -> None:
    sheet = blank_sheet(run, COLUMNS)
    assert "\nlayout: columns" in sheet
    q = sheet[sheet.index("\nQ:") :].split("\n\n")[0].splitlines()
    assert q[2:] == ["  - [null, null, null]  # 1", "  - [null, null, null]  # 2"]
    assert "columns: cats, chase, mice" in sheet[: sheet.index("\nQ:")].splitlines()[-1]


@pytest.mark.parametrize("places", ["2", "4"])
def test_sheets_in_either_layout_grade_the_same(run, tmp_path: Path, places: str) -> None:
    values = true_values(COLUMNS, places)
    on_side = fill(blank_sheet(run, COLUMNS), turned(values))
    data = grade_json(run, tmp_path, COLUMNS, on_side)
    assert data["score"] == data["total"] == 51
    upright = fill(blank_sheet(run, ROWS), values).replace(
        'lesson: "cats-chase-mice"', 'lesson: "tokens-as-columns"'
    )
    assert grade_json(run, tmp_path, COLUMNS, upright)["score"] == 51
    back = on_side.replace('lesson: "tokens-as-columns"', 'lesson: "cats-chase-mice"')
    assert grade_json(run, tmp_path, ROWS, back)["score"] == 51


def test_a_slip_on_a_turned_sheet_is_found_in_the_right_cell(run, tmp_path: Path) -> None:
    values = turned(true_values(COLUMNS, "2"))
    values["Q"][0][1] = "9"  # row 1, column chase: Q[chase, 1]
    data = grade_json(run, tmp_path, COLUMNS, fill(blank_sheet(run, COLUMNS), values))
    wrong = [c for c in data["cells"] if c["verdict"] == "wrong"]
    assert [(c["step"], c["row"], c["col"]) for c in wrong] == [("Q", "chase", "1")]


@pytest.mark.parametrize(
    ("change", "says"),
    [
        (("layout: columns", "layout: sideways"), "layout is 'sideways'; expected one of"),
        (
            (
                "Q:\n  - [null, null, null]  # 1\n  - [null, null, null]  # 2",
                "Q:\n  - [null, null]",
            ),
            "Q has 1 rows; this lesson's Q turned (layout: columns) is 2 × 3",
        ),
        (
            ("Q:\n  - [null, null, null]  # 1", "Q:\n  - [null, null]  # 1"),
            "row 1 of Q turned (layout: columns) (1) should be a list of 3 entries",
        ),
    ],
)
def test_a_bad_turned_sheet_says_where_and_why(run, tmp_path: Path, change, says: str) -> None:  # type: ignore[no-untyped-def]
    sheet = blank_sheet(run, COLUMNS)
    assert change[0] in sheet
    path = tmp_path / "sheet.yaml"
    path.write_text(sheet.replace(change[0], change[1]))
    result = run("grade", COLUMNS, str(path), "--json")
    # a bad layout refuses the sheet; a matrix of the wrong size costs only its cells (warned)
    assert result.exit_code == (1 if "layout is" in says else 0)
    assert says in result.stderr and f"{path}:" in result.stderr


def test_the_markdown_worksheet_turns_its_tables(run) -> None:
    out = run("export", COLUMNS, "-f", "md", "--no-answers").stdout
    x = out[out.index("### X, the tokens (4 × 3)") :]
    assert x.splitlines()[2] == "| | cats | chase | mice |"
    assert "Layout: columns" in out and "turned here: 2 × 3" in out
    plain = run("export", ROWS, "-f", "md", "--no-answers").stdout
    assert "### X, the tokens (3 × 4)" in plain and "Layout: columns" not in plain


def test_the_quiz_speaks_of_the_turned_tables(run) -> None:
    args = ("--count", "1", "--seed", "3", "--steps", "Q")
    out = run("quiz", COLUMNS, *args, input="q\n").stdout
    assert "Q = W_Q · X: a row of W_Q times a column of X" in out
    assert "(layout columns: row 2, column cats of the turned Q)" in out
    assert "column cats of X: [1, 0, 1, 0]" in out and "row 2 of W_Q: [0, 1, 0, 1]" in out
    plain = run("quiz", ROWS, *args, input="q\n").stdout
    assert "row cats of X: [1, 0, 1, 0]" in plain and "layout columns" not in plain
