"""Issue 23, integrity: a class of 30 variants where three sheets are not what they claim (one
copied from a classmate's file with the name and id changed, one worked on the neighbour's
numbers, two identical with the same wrong answer), graded through ``grade DIR DIR``: each is
flagged in the JSON, the CSV and the report; no honest sheet is; no score changes."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
import yaml

from tests import students
from tests.conftest import LESSONS
from tutor.core.engine import derive
from tutor.core.lessonfile import load_lesson

CLASS = 30


def fill(blank: str, written: dict[str, list[list[str]]], **header: str) -> str:
    data = yaml.safe_load(blank)
    data.update(written)
    data.update(header)
    return json.dumps(data)


@pytest.fixture(scope="module")
def tampered(tmp_path_factory):  # type: ignore[no-untyped-def]
    from typer.testing import CliRunner

    from tests.conftest import PLAIN_ENV
    from tutor.cli import app

    runner = CliRunner()

    def run(*args: str):  # type: ignore[no-untyped-def]
        return runner.invoke(app, list(args), env=PLAIN_ENV)

    tmp = tmp_path_factory.mktemp("integrity")
    roster = tmp / "roster.csv"
    roster.write_text(
        "Student,ID\n" + "".join(f"Student {k:02d},{2000 + k}\n" for k in range(CLASS)),
        encoding="utf-8",
    )
    result = run("variants", str(LESSONS / "cats-chase-mice.yaml"), "--roster", str(roster),
                 "--seed", "3", "--output", str(tmp / "variants"))  # fmt: skip
    assert result.exit_code == 0, result.stderr
    files = sorted((tmp / "variants").glob("*.yaml"))
    sheets = tmp / "sheets"
    sheets.mkdir()
    work = {}
    blanks = {}
    for k, path in enumerate(files):
        blanks[k] = run("export", str(path), "--format", "sheet").stdout
        d = derive(load_lesson(path))
        work[k] = students.Student(d, students.HABITS[k % len(students.HABITS)]).work()
    for k in range(CLASS):
        written = work[k]
        header: dict[str, str] = {}
        blank = blanks[k]
        if k == 3:  # copied: student 03's sheet is student 04's file, name and id changed
            blank = blanks[4]
            written = work[4]
            header = {"student": "Student 03", "student_id": "2003"}
        if k == 7:  # worked the neighbour's (student 08's) numbers on their own sheet
            written = work[8]
        if k in (11, 12):  # the same answers, the same wrong cell
            written = json.loads(json.dumps(work[11] if k == 12 else written))
            written["Z"][0][0] = "9.99"
            if k == 12:
                blank = blanks[11]
                header = {"student": "Student 12", "student_id": "2012"}
        (sheets / f"sheet-{k:02d}.yaml").write_text(fill(blank, written, **header))
    return run, tmp


# 08 too: its answers are 07's, on another variant (the flag names both; the teacher decides)
FLAGGED = {"sheet-03.yaml", "sheet-07.yaml", "sheet-08.yaml", "sheet-11.yaml", "sheet-12.yaml"}


def test_the_sheets_that_are_not_what_they_claim_are_flagged(tampered) -> None:  # type: ignore[no-untyped-def]
    run, tmp = tampered
    result = run("grade", str(tmp / "variants"), str(tmp / "sheets"), "--json")
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    flags = {Path(s["sheet"]).name: [f["kind"] for f in s["flags"]] for s in doc["sheets"]}
    assert {name for name, kinds in flags.items() if kinds} == FLAGGED
    assert "not-their-variant" in flags["sheet-03.yaml"]
    assert flags["sheet-07.yaml"] == ["identical", "other-variant"]
    assert flags["sheet-08.yaml"] == ["identical"]
    assert "identical" in flags["sheet-11.yaml"] and "identical" in flags["sheet-12.yaml"]
    assert "not-their-variant" in flags["sheet-12.yaml"]  # 12 is on 11's variant too
    by = {Path(s["sheet"]).name: s for s in doc["sheets"]}
    message = by["sheet-07.yaml"]["flags"][1]["message"]
    assert "variant-09" in message  # student 08's variant (variants count from 01)
    assert by["sheet-03.yaml"]["score"] == by["sheet-03.yaml"]["total"]  # flags change no score


def test_the_flags_go_to_a_file_of_their_own_and_the_report(tampered) -> None:  # type: ignore[no-untyped-def]
    run, tmp = tampered
    book, page = tmp / "book.csv", tmp / "report.md"
    result = run("grade", str(tmp / "variants"), str(tmp / "sheets"), "--csv", str(book),
                 "--report", "--output", str(page))  # fmt: skip
    assert result.exit_code == 0, result.stderr
    rows = list(csv.DictReader(io.StringIO(book.read_text(encoding="utf-8"))))
    assert "Flags" not in rows[0] and "Flag" not in rows[0]  # a column a platform would import
    assert all(r["Total"] for r in rows)  # without --hold-flagged every grade is given
    flags = list(csv.DictReader(io.StringIO((tmp / "book-flags.csv").read_text("utf-8"))))
    assert {Path(r["Sheet"]).name for r in flags} == FLAGGED
    assert {r["Grade"] for r in flags} == {"given"}
    text = page.read_text(encoding="utf-8")
    assert "## Students" in text
    assert "but variant-05 was made for Student 04 (id 2004)" in text
    out = run("grade", str(tmp / "variants"), str(tmp / "sheets")).stdout
    assert "Flagged sheets (5)" in out


def test_a_class_of_honest_sheets_on_one_lesson_is_not_flagged(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = LESSONS / "cats-chase-mice.yaml"
    d = derive(load_lesson(path))
    for k, habit in enumerate(("exact", "exact", "round")):  # two identical and right: honest
        sheet = tmp_path / f"s{k}.yaml"
        sheet.write_text(students.sheet_text(d, students.Student(d, habit).work(), f"S{k}"))
    result = run("grade", str(path), str(tmp_path), "--json")
    assert result.exit_code == 0, result.stderr
    assert all(not s["flags"] for s in json.loads(result.stdout)["sheets"])


def test_identical_answers_are_matched_cell_for_cell_from_three_written(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Issue 39, item 9 keeps a digest of each sheet's answers, not the answers: the sheets it
    calls identical are still exactly those with the same answer (or the same unreadable text)
    in every cell, three written at least, one of them wrong."""
    lesson = LESSONS / "cats-chase-mice.yaml"
    blank = run("export", str(lesson), "--format", "sheet").stdout
    folder = tmp_path / "class"
    folder.mkdir()
    sheets = {
        "a3": [["2", "0"], ["9", None], [None, None]],  # three written, one wrong: as b3
        "b3": [["2", "0"], ["9", None], [None, None]],
        "c2": [["2", None], ["9", None], [None, None]],  # two written: too few to say
        "d2": [["2", None], ["9", None], [None, None]],
        "e?": [["2", "0"], ["9", "abc"], [None, None]],  # unreadable text, as g? writes it
        "f?": [["2", "0"], ["9", "xyz"], [None, None]],  # another text: not the same sheet
        "g?": [["2", "0"], ["9", "abc"], [None, None]],
        "h3": [["2", "0"], [None, "9"], [None, None]],  # a3's answers in other cells
    }
    for name, q in sheets.items():
        (folder / f"{name[0]}.yaml").write_text(fill(blank, {"Q": q}, student=name))
    result = run("grade", str(lesson), str(folder), "--json")
    flagged = {
        s["student"]: s["flags"][0]["message"]
        for s in json.loads(result.stdout)["sheets"]
        if s["flags"]
    }
    assert sorted(flagged) == ["a3", "b3", "e?", "g?"], flagged
    assert flagged["a3"].endswith("b.yaml") and flagged["e?"].endswith("g.yaml")
