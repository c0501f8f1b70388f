"""The class round trip with the files the platforms write (``fixtures/lms``, each following its
platform's documentation or source, see its README): a roster read by ``variants --roster``, the
gradebook written back by ``grade --lms … --roster`` in the file's own conventions."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
import yaml

from tests import students
from tests.test_classroom import lesson_with_points
from tutor.core.engine import derive
from tutor.core.lessonfile import load_lesson

LMS = Path(__file__).parent.parent / "fixtures" / "lms"
NAMES = {"Ann Lee", "Chidi Okafor", "Zoë Müller"}
EMAILS = ("ann.lee", "chidi.okafor", "zoe.muller")


@pytest.fixture(scope="module")
def run():  # type: ignore[no-untyped-def]
    from typer.testing import CliRunner

    from tests.conftest import PLAIN_ENV
    from tutor.cli import app

    runner = CliRunner()
    return lambda *args: runner.invoke(app, [str(a) for a in args], env=PLAIN_ENV)


def make_class(run, tmp: Path, roster: Path, slip: str | None = None) -> tuple[Path, Path]:  # type: ignore[no-untyped-def]
    """Variants for the roster, and a sheet for each (Chidi makes ``slip`` when given)."""
    lesson = lesson_with_points(tmp)
    result = run("variants", lesson, "--roster", roster, "--seed", "3", "-o", tmp / "variants")
    assert result.exit_code == 0, result.stderr
    sheets = tmp / "sheets"
    sheets.mkdir()
    for path in sorted((tmp / "variants").glob("*.yaml")):
        d = derive(load_lesson(path))
        who = d.lesson.variant.student  # type: ignore[union-attr]
        late = slip if "Chidi" in who else None
        data = yaml.safe_load(run("export", path, "--format", "sheet").stdout)
        data.update(students.Student(d, "carry2" if late else "round", late).work())
        (sheets / path.name).write_text(json.dumps(data), encoding="utf-8")
    return tmp / "variants", sheets


def students_of(folder: Path) -> set[str]:
    """Who the variants were made for, ``Lee, Ann`` (Canvas's sortable name) read ``Ann Lee``."""
    out = set()
    for p in folder.glob("*.yaml"):
        name = load_lesson(p).variant.student  # type: ignore[union-attr]
        last, sep, first = name.partition(", ")
        out.add(f"{first} {last}" if sep else name)
    return out


@pytest.mark.parametrize("name", sorted(p.name for p in LMS.glob("*.csv")))
def test_every_roster_gives_its_three_students(run, tmp_path: Path, name: str) -> None:  # type: ignore[no-untyped-def]
    variants, _ = make_class(run, tmp_path, LMS / name)
    assert students_of(variants) == NAMES  # no Manual Posting, Points Possible or test student


def test_canvas_manual_posting_row_is_skipped_and_kept(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    export = LMS / "canvas-manual-posting.csv"
    variants, sheets = make_class(run, tmp_path, export)
    out = tmp_path / "import.csv"
    result = run("grade", variants, sheets, "--lms", "canvas", "--roster", export,
                 "--assignment", "Attention HW", "--csv", out)  # fmt: skip
    assert result.exit_code == 0, result.stderr
    before = list(csv.reader(io.StringIO(export.read_text(encoding="utf-8"))))
    after = list(csv.reader(io.StringIO(out.read_text(encoding="utf-8"))))
    assert out.read_bytes().count(b"\r\n") == len(before)  # CRLF kept
    assert after[1] == before[1] and after[1][6] == "Manual Posting"  # written back untouched
    assert after[2] == before[2]  # Points Possible
    assert after[-1] == before[-1]  # Student, Test
    assert [row[6] for row in after[3:6]] == ["20", "20", "20"]


def test_canvas_split_names_are_written_back(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    export = LMS / "canvas-split-names.csv"
    variants, sheets = make_class(run, tmp_path, export)
    out = tmp_path / "import.csv"
    result = run("grade", variants, sheets, "--lms", "canvas", "--roster", export, "--csv", out)
    assert result.exit_code == 0, result.stderr
    rows = list(csv.reader(io.StringIO(out.read_text(encoding="utf-8"))))
    assert rows[0][:3] == ["LastName", "FirstName", "ID"]
    assert rows[1][0] == "    Points Possible" and rows[1][6] == "20.00"
    assert {r[1] + " " + r[0]: r[6] for r in rows[2:5]} == dict.fromkeys(NAMES, "20")
    assert rows[5][:2] == ["Student", "Test"] and rows[5][6] == ""


def test_canvas_semicolons_and_decimal_commas_are_written_back_so(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    export = LMS / "canvas-semicolon-decimal-comma.csv"
    variants, sheets = make_class(run, tmp_path, export, slip="not-scaled")
    out = tmp_path / "import.csv"
    result = run("grade", variants, sheets, "--lms", "canvas", "--roster", export, "--csv", out)
    assert result.exit_code == 0, result.stderr
    data = out.read_bytes()
    assert data.startswith(b"\xef\xbb\xbf") and data.count(b"\r\n") == 6  # BOM, CRLF
    rows = list(csv.reader(io.StringIO(data.decode("utf-8-sig")), delimiter=";"))
    grades = {r[0]: r[5] for r in rows[2:5]}
    assert grades["Lee, Ann"] == grades["Müller, Zoë"] == "20"
    slipped = grades["Okafor, Chidi"]
    assert "," in slipped and "." not in slipped, slipped  # 19,x as the locale writes it
    assert 0 < float(slipped.replace(",", ".")) < 20


@pytest.mark.parametrize(
    ("name", "column", "ids"),
    [
        ("moodle-grader-export.csv", "ID number", {"s001", "s002", "s003"}),
        ("gradescope-roster.csv", "Email", {f"{n}@example.org" for n in EMAILS}),
        ("prairielearn-roster.csv", "Email address", None),
    ],
)
def test_moodle_import_from_each_platforms_roster(run, tmp_path: Path, name, column, ids) -> None:  # type: ignore[no-untyped-def]
    roster = LMS / name
    variants, sheets = make_class(run, tmp_path, roster)
    out = tmp_path / "moodle.csv"
    result = run("grade", variants, sheets, "--lms", "moodle", "--roster", roster, "--csv", out,
                 "--out-of", "20")  # fmt: skip
    if ids is None:  # no ID number or Email address column: said, exit 1, no traceback
        assert result.exit_code == 1 and "has no ID number or Email address" in result.stderr
        return
    assert result.exit_code == 0, result.stderr
    rows = list(csv.DictReader(io.StringIO(out.read_text(encoding="utf-8"))))
    assert {r[column] for r in rows} == ids
    assert all(r["cats"] == "20" and r["cats feedback"] == "Every cell right." for r in rows)


def copied(sheets: Path) -> None:
    """Zoë hands in Ann's sheet with her own name and id on it (Ann's variant: 320/320 work)."""
    ann = next(sheets.glob("*ann-lee*")) if list(sheets.glob("*ann-lee*")) else None
    ann = ann or next(sheets.glob("*lee-ann*"))
    zoe = next(p for p in sheets.iterdir() if "zoe" in p.name)
    theirs = json.loads(zoe.read_text(encoding="utf-8"))
    data = json.loads(ann.read_text(encoding="utf-8"))
    data["student"], data["student_id"] = theirs["student"], theirs["student_id"]
    zoe.write_text(json.dumps(data), encoding="utf-8")


def test_hold_flagged_leaves_the_copier_blank_everywhere(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    export = LMS / "canvas-manual-posting.csv"
    variants, sheets = make_class(run, tmp_path, export)
    copied(sheets)
    out = tmp_path / "import.csv"
    args = ["grade", variants, sheets, "--roster", export, "--csv", out, "--hold-flagged"]
    result = run(*args, "--lms", "canvas", "--assignment", "Attention HW", "--report", "-o",
                 tmp_path / "report.md",
                 "--feedback", tmp_path / "fb")  # fmt: skip
    assert result.exit_code == 0, result.stderr
    rows = list(csv.reader(io.StringIO(out.read_text(encoding="utf-8"))))
    grades = {r[0]: r[6] for r in rows[3:6]}
    assert grades == {"Lee, Ann": "20", "Okafor, Chidi": "20", "Müller, Zoë": ""}
    # who and why: on screen, in the report, in a CSV of its own (named on screen)
    said = " ".join(result.stderr.split())
    assert "held 1 flagged grade(s)" in said and "Müller, Zoë (id 5003): the sheet names" in said
    flags = tmp_path / "import-flags.csv"
    assert f"wrote {flags}" in said
    listed = list(csv.DictReader(io.StringIO(flags.read_text(encoding="utf-8"))))
    assert [(f["ID"], f["Flag"], f["Grade"]) for f in listed] == [
        ("5003", "not-their-variant", "held (blank)")
    ]
    assert "Flag" not in rows[0] and "Flags" not in rows[0]  # never a column Canvas imports
    report = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert "## Grades held (1), left blank in the gradebook" in report
    assert "variant-01 was made for" in report
    # the copier's own feedback never praises the sheet
    page = next(p for p in (tmp_path / "fb").glob("*.md") if "zo" in p.name)
    text = page.read_text(encoding="utf-8")
    assert "Every cell right" not in text and "review this sheet" in text
    plain = tmp_path / "plain.csv"  # the spreadsheet: Total and Percent blank
    result = run(*args[:3], "--csv", plain, "--hold-flagged")
    assert result.exit_code == 0, result.stderr
    got = list(csv.DictReader(io.StringIO(plain.read_text(encoding="utf-8"))))
    held = [g for g in got if "Zo" in g["Student"]]
    assert held and held[0]["Total"] == "" and held[0]["Percent"] == ""


def test_hold_flagged_in_moodle_blanks_the_grade_and_praises_nothing(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    roster = LMS / "moodle-grader-export.csv"
    variants, sheets = make_class(run, tmp_path, roster)
    copied(sheets)
    out = tmp_path / "moodle.csv"
    result = run("grade", variants, sheets, "--lms", "moodle", "--roster", roster, "--csv", out,
                 "--hold-flagged")  # fmt: skip
    assert result.exit_code == 0, result.stderr
    rows = {r["ID number"]: r for r in csv.DictReader(io.StringIO(out.read_text("utf-8")))}
    assert rows["s003"]["cats"] == "" and "Every cell right" not in rows["s003"]["cats feedback"]
    assert rows["s001"]["cats"] != ""
    without = run("grade", variants, sheets, "--lms", "moodle", "--roster", roster, "--csv", out)
    assert without.exit_code == 0
    rows = {r["ID number"]: r for r in csv.DictReader(io.StringIO(out.read_text("utf-8")))}
    assert rows["s003"]["cats"] != ""  # given, but still no praise
    assert (
        rows["s003"]["cats feedback"]
        == "Your instructor will review this sheet before its grade counts."
    )


def test_hold_flagged_needs_a_gradebook(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    result = run("grade", "cats-chase-mice", tmp_path, "--hold-flagged")
    assert result.exit_code == 2 and "give --csv FILE" in result.stderr
