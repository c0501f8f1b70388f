"""Sheets read cell by cell (issue 38, item 2): an entry that cannot be read or placed costs its
own cell and says why, a sheet whose name is odd is read when it holds a sheet and named when
it does not, and the rest of every sheet is graded as usual."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import LESSONS
from tutor.assess import classgrade as cg

CATS = str(LESSONS / "cats-chase-mice.yaml")
RIGHT_Q = "Q: [[2, 0], [0, 3], [1, 1]]\n"


def sheet_text(extra: str = "") -> str:
    return f"lesson: cats-chase-mice\nstudent: Ann\n{RIGHT_Q}{extra}"


def test_a_folder_reads_doubled_and_odd_extensions_and_names_what_is_no_sheet(
    run, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    folder = tmp_path / "class"
    folder.mkdir()
    (folder / "ann-sheet.yaml.txt").write_text(sheet_text())
    (folder / "bob.JSON").write_text(
        json.dumps({"lesson": "cats-chase-mice", "student": "Bob", "Q": [[2, 0], [0, 3], [1, 1]]})
    )
    (folder / "cy.yml").write_text(sheet_text().replace("Ann", "Cy"))
    (folder / "dee.txt").write_text(sheet_text().replace("Ann", "Dee"))  # a sheet by content
    (folder / "notes.txt").write_text("remember to bring the sheets\n")
    (folder / "photo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    result = run("grade", CATS, str(folder), "--json")
    assert result.exit_code == 0, result.stderr
    graded = json.loads(result.stdout)["sheets"]
    assert sorted(s["student"] for s in graded) == ["Ann", "Bob", "Cy", "Dee"]
    assert all(s["score"] == 6 for s in graded)  # Q right on each
    err = " ".join(result.stderr.split())
    assert f"{folder / 'notes.txt'}: skipped, not an answer sheet" in err
    assert f"{folder / 'photo.png'}: skipped, not an answer sheet" in err


def test_a_folder_of_no_sheets_says_what_it_holds(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "scan.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    result = run("grade", CATS, str(tmp_path))
    assert result.exit_code == 1
    err = " ".join(result.stderr.split())
    assert "holds none" in err and "scan.png: skipped, not an answer sheet" in err
    assert "Traceback" not in result.stderr


def test_a_broken_sheet_named_as_one_is_set_aside_with_its_reason(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "ann-sheet.yaml.txt").write_text("Q: [[1, 2]\n")
    (tmp_path / "bob.yaml").write_text(sheet_text().replace("Ann", "Bob"))
    result = run("grade", CATS, str(tmp_path), "--json")
    assert result.exit_code == 1  # a sheet set aside is never exit 0 with no word
    doc = json.loads(result.stdout)
    assert [b["sheet"] for b in doc["bad"]] == [str(tmp_path / "ann-sheet.yaml.txt")]
    assert [s["student"] for s in doc["sheets"]] == ["Bob"]


def test_sheet_files_as_a_library(tmp_path: Path) -> None:
    (tmp_path / "a.yaml.txt").write_text(sheet_text())
    (tmp_path / "b.txt").write_text("hello: world\n")
    (tmp_path / ".hidden").write_text("x")
    notes: list[str] = []
    assert cg.sheet_files([tmp_path], notes) == ([tmp_path / "a.yaml.txt"], [])
    assert notes == [f"{tmp_path / 'b.txt'}: skipped, not an answer sheet (none of its keys "
                       "is a sheet's (lesson, student, Q, …))"]  # fmt: skip


def test_a_row_too_long_and_a_comma_in_one_sheet_lose_only_their_cells(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    sheet = tmp_path / "s.yaml"
    sheet.write_text(sheet_text("K: [[1, 1, 7], [2, 1], [1, 1]]\nV: [[2, 1], [0, 2], [1,5, 1]]\n"))
    result = run("grade", CATS, str(sheet), "--json")
    assert result.exit_code == 0, result.stderr
    cells = {(c["step"], c["row"], c["col"]): c for c in json.loads(result.stdout)["cells"]}
    assert cells["K", "cats", "1"]["note"] == "not placed: row 1 of K has 3 entries, for 2 columns"
    assert cells["K", "cats", "2"]["verdict"] == "wrong"
    assert cells["K", "chase", "1"]["verdict"] == cells["K", "mice", "2"]["verdict"] == "correct"
    assert cells["V", "mice", "1"]["note"] == "cannot read `1,5`: write 1.5"
    assert cells["V", "mice", "2"]["verdict"] == "correct"  # placed after the joined comma
    assert all(cells["Q", r, c]["verdict"] == "correct" for r in ("cats", "mice") for c in "12")
