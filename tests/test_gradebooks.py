"""Gradebooks read back the way each platform reads them, and feedback files a student opens.

A class of 30 made from a Canvas gradebook export (with its Points Possible row and its test
student): 27 hand in a sheet, 3 do not. ``grade --lms canvas --roster`` writes the export back;
``--lms moodle`` writes Moodle's import; ``--feedback`` one file per student.
"""

from __future__ import annotations

import csv
import io
import json
import shutil
from fractions import Fraction
from pathlib import Path

import pytest
import yaml

from tests import students
from tests.test_classroom import expected_points, lesson_with_points
from tutor.assess.classgrade import safe_cell
from tutor.core.engine import derive
from tutor.core.lessonfile import load_lesson

CLASS = 30
ABSENT = (4, 11, 23)  # no sheet
SLIPPED = {2: "not-scaled", 7: "softmax-column", 15: "query-query"}
SIS_ID, SIS_LOGIN = 9, 10  # their sheets carry the SIS User ID, the SIS Login ID
NAMES = {0: ("Müller", "Zoë"), 1: ("O'Neil", "Ann-Marie"), 3: ("=cmd", "Eve")}
CANVAS_HEADER = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Reading Quiz (4410)",
                 "Attention HW (4411)", "Current Score", "Final Score"]  # fmt: skip


def name(k: int) -> tuple[str, str]:
    return NAMES.get(k, (f"Lee{k:02d}", "Ann"))


def canvas_export() -> str:
    possible = [
        "    Points Possible",
        "",
        "",
        "",
        "",
        "10.00",
        "20.00",
        "(read only)",
        "(read only)",
    ]
    rows = [CANVAS_HEADER, possible]
    for k in range(CLASS):
        last, first = name(k)
        rows.append([f"{last}, {first}", str(5000 + k), f"s{k:03d}", f"user{k}", "Section 1",
                     "7", "", "70", "70"])  # fmt: skip
    rows.append(["Student, Test", "9999", "", "e5f3a", "Section 1", "", "", "", ""])
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\r\n").writerows(rows)
    return buf.getvalue()


@pytest.fixture(scope="module")
def klass(tmp_path_factory):  # type: ignore[no-untyped-def]
    from typer.testing import CliRunner

    from tests.conftest import PLAIN_ENV
    from tutor.cli import app

    runner = CliRunner()

    def run(*args: str):  # type: ignore[no-untyped-def]
        return runner.invoke(app, list(args), env=PLAIN_ENV)

    tmp = tmp_path_factory.mktemp("gradebooks")
    lesson = lesson_with_points(tmp)
    export = tmp / "canvas.csv"
    export.write_bytes(canvas_export().encode("utf-8"))
    result = run("variants", str(lesson), "--roster", str(export), "--seed", "3", "-o",
                 str(tmp / "variants"))  # fmt: skip
    assert result.exit_code == 0, result.stderr
    files = sorted((tmp / "variants").glob("*.yaml"))
    assert len(files) == CLASS  # the test student has no variant
    sheets = tmp / "sheets"
    sheets.mkdir()
    did = {}
    for path in files:
        lesson_doc = load_lesson(path)
        k = int(lesson_doc.variant.student_id) - 5000  # type: ignore[union-attr]
        if k in ABSENT:
            continue
        d = derive(lesson_doc)
        st = students.Student(d, "carry2" if k in SLIPPED else "round", SLIPPED.get(k))
        written = st.work()
        data = yaml.safe_load(run("export", str(path), "--format", "sheet").stdout)
        data.update(written)
        if k == SIS_ID:
            data["student_id"] = f"s{k:03d}"
        if k == SIS_LOGIN:
            data["student_id"] = f"user{k}"
        (sheets / path.name).write_text(json.dumps(data), encoding="utf-8")
        shapes = {key: (len(rows), len(rows[0])) for key, rows in written.items()}
        did[k] = {"slipped": st.slipped[0].key if st.slipped else None, "blank": None,
                  "shapes": shapes}  # fmt: skip
    return run, tmp, did


def canvas_rows(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text)))


def test_a_canvas_export_is_written_back_with_the_assignment_filled(klass) -> None:  # type: ignore[no-untyped-def]
    run, tmp, did = klass
    out = tmp / "canvas-import.csv"
    result = run("grade", str(tmp / "variants"), str(tmp / "sheets"), "--lms", "canvas",
                 "--roster", str(tmp / "canvas.csv"), "--assignment", "Attention HW",
                 "--csv", str(out))  # fmt: skip
    assert result.exit_code == 0, result.stderr
    assert "3 of the roster have no sheet, left blank: Lee04, Ann (id 5004)" in result.stderr
    before = canvas_rows((tmp / "canvas.csv").read_text(encoding="utf-8"))
    after = canvas_rows(out.read_text(encoding="utf-8"))
    assert out.read_bytes().count(b"\r\n") == len(before)  # Canvas's own line ends kept
    # as Canvas reads it: the five required columns first, in order, then the assignment
    assert after[0] == CANVAS_HEADER and after[0][:5] == list(
        ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
    )
    col = after[0].index("Attention HW (4411)")
    assert len(after) == len(before) == CLASS + 3  # header, Points Possible, test student
    for old, new in zip(before, after, strict=True):
        # every cell but the assignment's is untouched (a formula escaped, as every cell the
        # tool writes: "=cmd, Eve" is written "'=cmd, Eve"); Points Possible, the test student too
        assert [safe_cell(c) for c in old[:col] + old[col + 1 :]] == new[:col] + new[col + 1 :]
        if old[0].strip() in ("Points Possible", "Student, Test"):
            assert old == new
    for row in after[1:-1]:
        if row[0].strip() == "Points Possible":
            continue
        k = int(row[1]) - 5000
        if k in ABSENT:
            assert row[col] == ""
            continue
        total, out_of, _ = expected_points(did[k])
        want = total * 20 / out_of  # scaled to Points Possible, 20
        assert abs(Fraction(row[col]) - want) <= Fraction(1, 200), (k, row[col], want)
        assert (Fraction(row[col]) == 20) == (k not in SLIPPED)


def test_canvas_out_of_and_the_only_assignment(klass) -> None:  # type: ignore[no-untyped-def]
    run, tmp, _ = klass
    one = tmp / "one-assignment.csv"
    rows = canvas_rows((tmp / "canvas.csv").read_text(encoding="utf-8"))
    one.write_text("\n".join(",".join(f'"{c}"' for c in r[:5] + r[6:7]) for r in rows) + "\n",
                   encoding="utf-8")  # fmt: skip
    out = tmp / "one-out.csv"
    result = run("grade", str(tmp / "variants"), str(tmp / "sheets"), "--lms", "canvas",
                 "--roster", str(one), "--out-of", "10", "--csv", str(out))  # fmt: skip
    assert result.exit_code == 0, result.stderr
    back = list(csv.DictReader(io.StringIO(out.read_text(encoding="utf-8"))))
    scores = [r["Attention HW (4411)"] for r in back if r["Student"] not in ("Student, Test",)]
    assert "20.00" in scores  # the Points Possible row itself is kept as it was
    assert max(Fraction(s) for s in scores if s and s != "20.00") == 10
    # two assignment columns and no --assignment: say which there are
    result = run("grade", str(tmp / "variants"), str(tmp / "sheets"), "--lms", "canvas",
                 "--roster", str(tmp / "canvas.csv"), "--csv", str(tmp / "x.csv"))  # fmt: skip
    assert result.exit_code == 1
    assert "Reading Quiz (4410); Attention HW (4411)" in result.stderr
    assert "Traceback" not in result.stderr


def test_canvas_minimal_import_without_a_roster(klass) -> None:  # type: ignore[no-untyped-def]
    run, tmp, _ = klass
    out = tmp / "minimal.csv"
    result = run("grade", str(tmp / "variants"), str(tmp / "sheets"), "--lms", "canvas",
                 "--assignment", "Attention HW (4411)", "--out-of", "20",
                 "--csv", str(out))  # fmt: skip
    assert result.exit_code == 0, result.stderr
    rows = canvas_rows(out.read_text(encoding="utf-8"))
    assert rows[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section",
                       "Attention HW (4411)"]  # fmt: skip
    assert len(rows) == CLASS - len(ABSENT) + 1
    assert all(len(r) == 6 and 0 <= Fraction(r[5]) <= 20 for r in rows[1:])
    assert "'=cmd, Eve" in [r[0] for r in rows]  # never a formula


def test_moodle_maps_an_id_column_a_grade_and_feedback(klass, tmp_path) -> None:  # type: ignore[no-untyped-def]
    run, tmp, _ = klass
    roster = tmp_path / "moodle.csv"
    lines = ["First name,Last name,ID number,Institution,Department,Email address"]
    lines += [f"{name(k)[1]},{name(k)[0]},s{k:03d},Uni,CS,user{k}@uni.edu" for k in range(CLASS)]
    roster.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "moodle-import.csv"
    result = run("grade", str(tmp / "variants"), str(tmp / "sheets"), "--lms", "moodle",
                 "--roster", str(roster), "--out-of", "100", "--assignment", "Attention HW",
                 "--csv", str(out))  # fmt: skip
    assert result.exit_code == 0, result.stderr
    back = list(csv.DictReader(io.StringIO(out.read_text(encoding="utf-8"))))
    # Moodle: "Identify user from" ID number; the grade item; its feedback
    assert list(back[0]) == ["ID number", "Attention HW", "Attention HW feedback"]
    assert len(back) == CLASS - len(ABSENT)
    for row in back:
        k = int(row["ID number"][1:])
        assert 0 <= Fraction(row["Attention HW"]) <= 100  # Moodle enforces the item's maximum
        if k in SLIPPED:
            assert row["Attention HW feedback"].startswith("Lost 1 of ")
            if SLIPPED[k] == "not-scaled":
                assert "Slips: did not divide by √d_k." in row["Attention HW feedback"]
        else:
            assert Fraction(row["Attention HW"]) == 100
            assert row["Attention HW feedback"].startswith("Every cell right")
    # a roster with emails only: the email is the id column
    roster.write_text("\n".join(
        ["First name,Last name,Email address"]
        + [f"{name(k)[1]},{name(k)[0]},user{k}@uni.edu" for k in range(CLASS)]) + "\n",
        encoding="utf-8")  # fmt: skip
    result = run("grade", str(tmp / "variants"), str(tmp / "sheets"), "--lms", "moodle",
                 "--roster", str(roster), "--out-of", "10", "--csv", str(out))  # fmt: skip
    assert result.exit_code == 0, result.stderr
    back = list(csv.DictReader(io.StringIO(out.read_text(encoding="utf-8"))))
    assert next(iter(back[0])) == "Email address" and back[0]["Email address"].endswith("@uni.edu")


def test_rosters_of_each_platform_give_names_and_ids(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from tutor.core.roster import read_roster

    cases = {
        "Name,Email,SID\nAnn Lee,ann@x.edu,123\n": ("Ann Lee", "123"),  # Gradescope
        "UID,UIN,Name\nann@x.edu,654,Ann Lee\n": ("Ann Lee", "ann@x.edu"),  # PrairieLearn
        "First name,Last name,ID number,Email address\nAnn,Lee,s1,ann@x.edu\n": ("Ann Lee", "s1"),
        'Student,ID,SIS User ID\n    Points Possible,,\n"Lee, Ann",77,s1\n"Student, Test",9,\n': (
            "Lee, Ann",
            "77",
        ),
    }
    for k, (text, want) in enumerate(cases.items()):
        path = tmp_path / f"r{k}.csv"
        path.write_text(text, encoding="utf-8")
        got = read_roster(path)
        assert [(s.name, s.id) for s in got] == [want], text


def test_feedback_files_one_per_student(klass) -> None:  # type: ignore[no-untyped-def]
    run, tmp, _ = klass
    folder = tmp / "feedback"
    result = run("grade", str(tmp / "variants"), str(tmp / "sheets"), "--feedback", str(folder))
    assert result.exit_code == 0, result.stderr
    md = sorted(folder.glob("*.md"))
    assert len(md) == CLASS - len(ABSENT) and len(list(folder.glob("*.html"))) == len(md)
    names = {p.stem for p in md}
    assert {"muller-zoe", "o-neil-ann-marie", "cmd-eve"} <= names  # transliterated, safe
    slipped = (folder / "lee02-ann.md").read_text(encoding="utf-8")
    assert "## Score per step" in slipped and "## Cells to look at again" in slipped
    assert "did not divide by √d\\_k; divide each score by √d\\_k." in slipped
    assert "earned their point (↪)" in slipped  # follow-through marked
    assert " = " in slipped.split("## Cells to look at again")[1]  # the working
    page = (folder / "lee02-ann.html").read_text(encoding="utf-8")
    assert page.startswith("<!doctype html>") and "Slips named" in page


def test_bad_combinations_are_usage_errors(klass) -> None:  # type: ignore[no-untyped-def]
    run, tmp, _ = klass
    v, s = str(tmp / "variants"), str(tmp / "sheets")
    for args in (
        ("--lms", "canvas"),
        ("--lms", "blackboard", "--csv", "x.csv"),
        ("--roster", str(tmp / "canvas.csv"), "--csv", "x.csv"),
        ("--lms", "moodle", "--out-of", "zero", "--csv", "x.csv"),
        ("--lms", "moodle", "--out-of", "-5", "--csv", "x.csv"),
    ):
        result = run("grade", v, s, *args)
        assert result.exit_code == 2, (args, result.stderr)
        assert "Traceback" not in result.stderr
    # never over an input: the roster, a sheet
    sheet = sorted((tmp / "sheets").glob("*"))[0]
    for target in (tmp / "canvas.csv", sheet):
        result = run("grade", v, s, "--lms", "canvas", "--roster", str(tmp / "canvas.csv"),
                     "--assignment", "Attention HW", "--csv", str(target))  # fmt: skip
        assert result.exit_code == 2 and "would replace it" in result.stderr


def test_the_terminal_report_lists_students_and_set_aside_sheets(klass, tmp_path) -> None:  # type: ignore[no-untyped-def]
    run, tmp, _ = klass
    bad = tmp_path / "broken.yaml"
    bad.write_text("lesson: [unclosed\n", encoding="utf-8")
    result = run("grade", str(tmp / "variants"), str(tmp / "sheets"), str(bad), "--report")
    assert result.exit_code == 1
    assert "Students" in result.stdout and "Lee02, Ann" in result.stdout
    assert "Sheets not graded (1)" in result.stdout and "broken.yaml" in result.stdout


def _moodle(run, tmp, sheets, roster, out):  # type: ignore[no-untyped-def]
    result = run("grade", str(tmp / "variants"), str(sheets), "--lms", "moodle", "--roster",
                 str(roster), "--out-of", "10", "--csv", str(out))  # fmt: skip
    return result, list(csv.DictReader(io.StringIO(out.read_text(encoding="utf-8"))))


def test_ids_are_matched_as_the_platforms_compare_them(klass, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Trimmed and case-folded: a sheet's ``USER10`` is the roster's ``User10``, ``s009`` is
    ``S009``. The roster's names are nobody's, so only the ids can match."""
    run, tmp, _ = klass
    sheets = tmp_path / "sheets"
    sheets.mkdir()
    for path in sorted((tmp / "sheets").glob("*")):
        data = json.loads(path.read_text(encoding="utf-8"))
        if data["student_id"] == f"user{SIS_LOGIN}":
            data["student_id"] = f"USER{SIS_LOGIN}"
        (sheets / path.name).write_text(json.dumps(data), encoding="utf-8")
    ids = {k: str(5000 + k) for k in range(CLASS)}
    ids[SIS_ID], ids[SIS_LOGIN] = f"S{SIS_ID:03d}", f" User{SIS_LOGIN} "
    roster = tmp_path / "moodle.csv"
    roster.write_text("First name,Last name,ID number\n" + "".join(
        f"Nobody,Number{k},{ids[k]}\n" for k in range(CLASS)), encoding="utf-8")  # fmt: skip
    result, back = _moodle(run, tmp, sheets, roster, tmp_path / "moodle-import.csv")
    assert result.exit_code == 0, result.stderr
    got = {row["ID number"] for row in back}
    assert len(back) == CLASS - len(ABSENT)
    assert {f"S{SIS_ID:03d}", f"User{SIS_LOGIN}"} <= got  # the roster's ids, as it writes them


def test_moodle_takes_the_id_column_that_has_ids(klass, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """ID number comes first, but a student with a sheet has none (spaces; a short row): the
    email is the id column, never a column with blanks."""
    run, tmp, _ = klass
    roster = tmp_path / "moodle.csv"
    for no_id in ("Ann,Lee05,user5@uni.edu", "Ann,Lee05,user5@uni.edu,  "):  # a short row, spaces
        rows = [f"{name(k)[1]},{name(k)[0]},user{k}@uni.edu,s{k:03d}" for k in range(CLASS)]
        rows[5] = no_id
        roster.write_text("First name,Last name,Email address,ID number\n" + "\n".join(rows)
                          + "\n", encoding="utf-8")  # fmt: skip
        result, back = _moodle(run, tmp, tmp / "sheets", roster, tmp_path / "moodle-import.csv")
        assert result.exit_code == 0, result.stderr
        assert next(iter(back[0])) == "Email address"
        assert len(back) == CLASS - len(ABSENT)
        assert all(row["Email address"].endswith("@uni.edu") for row in back)
    # no sheet fits the roster: still a column with ids (in some row), not the blank ID number
    (tmp_path / "moodle-import.csv").unlink()
    roster.write_text("First name,Last name,ID number,Email address\nZed,One,,z1@x.edu\n"
                      "Zed,Two,,\n", encoding="utf-8")  # fmt: skip
    result, back = _moodle(run, tmp, tmp / "sheets", roster, tmp_path / "moodle-import.csv")
    assert result.exit_code == 1 and "is not on the roster" in result.stderr
    assert back == [] and (tmp_path / "moodle-import.csv").read_text().startswith("Email address,")


def test_a_sheet_set_aside_is_not_counted_as_no_sheet(klass, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    run, tmp, _ = klass
    sheets = tmp_path / "sheets"
    shutil.copytree(tmp / "sheets", sheets)
    first = sorted(sheets.iterdir())[0]
    data = json.loads(first.read_text(encoding="utf-8"))
    data["fingerprint"] = "00000000"  # made for numbers that changed: set aside, not graded
    data.pop("variant", None)
    first.write_text(json.dumps(data), encoding="utf-8")
    result = run("grade", str(tmp / "variants"), str(sheets), "--lms", "canvas",
                 "--roster", str(tmp / "canvas.csv"), "--assignment", "Attention HW",
                 "--csv", str(tmp_path / "out.csv"))  # fmt: skip
    assert result.exit_code == 1  # a sheet was set aside
    err = " ".join(result.stderr.split())
    assert "1 of the roster sent a sheet that was not graded (see Sheets not graded)" in err
    assert "3 of the roster have no sheet" in err  # the absent ones only


FORMULAS = ["=1+1", "+cmd|calc", "-2+3", "@SUM(A1)", "\t=1", "\r=1", "-"]


def _no_formula(text: str) -> None:
    """No cell a spreadsheet would run: each starting with = + - @ tab or CR is quoted with ',
    unless it is a plain number."""
    import re

    for row in csv.reader(io.StringIO(text)):
        for cell in row:
            if cell[:1] in ("=", "+", "-", "@", "\t", "\r"):
                assert re.fullmatch(r"-?\d+(\.\d+)?", cell), (cell, row)


@pytest.mark.parametrize("value", FORMULAS)
@pytest.mark.parametrize("lms", ["plain", "canvas", "canvas-roster", "moodle", "moodle-roster"])
def test_every_cell_of_every_gradebook_is_escaped(run, tmp_path, lms, value) -> None:  # type: ignore[no-untyped-def]
    """One escape for every cell the tool writes: the student, the ID (Canvas's too), the
    assignment's header, the roster's own cells written back (issue 43)."""
    from tests.test_classroom import single_lesson_sheet

    lesson, sheet = single_lesson_sheet(run, tmp_path)
    data = json.loads(json.dumps(yaml.safe_load(sheet.read_text())))
    sheet.write_text(json.dumps({**data, "student": f"{value}, Ann", "student_id": value}))
    book = tmp_path / "b.csv"
    more = ["--lms", lms.split("-")[0], "--out-of", "10"] if lms != "plain" else []
    if lms == "canvas-roster":
        roster = tmp_path / "canvas.csv"
        rows = [CANVAS_HEADER, [f"{value}, Ann", value, value, value, value, "", "", "", ""]]
        buf = io.StringIO()
        csv.writer(buf).writerows(rows)
        roster.write_text(buf.getvalue())
        more += ["--roster", str(roster), "--assignment", "Attention HW (4411)"]
    elif lms == "moodle-roster":
        roster = tmp_path / "moodle.csv"
        buf = io.StringIO()
        csv.writer(buf).writerows([["First name", "Last name", "ID number"], ["Ann", value, value]])
        roster.write_text(buf.getvalue())
        more += ["--roster", str(roster)]
    elif lms != "plain":
        more += ["--assignment", f"{value} (4411)"]
    result = run("grade", str(lesson), str(sheet), "--csv", str(book), *more)
    assert result.exit_code in (0, 1), result.output
    assert "Traceback" not in result.output
    if result.exit_code == 0:
        _no_formula(book.read_text(encoding="utf-8-sig"))
