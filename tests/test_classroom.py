"""The classroom, driven as an instructor would: a roster of 30 → variants → exported answer
sheets filled by a simulated class (tests/students.py) → ``grade DIR DIR --csv --report`` →
gradebook rows and totals checked against an independent count, and a report whose slip counts
match the slips simulated. Then the error paths: bad sheets mixed in, a changed lesson, a
mistyped lesson name with a matching fingerprint, old sheets, and bad ``points:``.
"""

from __future__ import annotations

import csv
import io
import json
import re
from fractions import Fraction  # the test's own arithmetic, independent of the engine's sympy
from pathlib import Path

import pytest
import yaml

from tests import students
from tests.conftest import LESSONS
from tutor.assess.class_view import CONTRAST_PAIRS
from tutor.core.engine import derive
from tutor.core.lessonfile import load_lesson

POINTS = {"scaled": 3, "weights": 18, "Z": 5}  # Z: 5 points over 6 cells, 5/6 each
# simulated slips: each explained by exactly one named slip on this lesson's variants
SLIPS = ["not-scaled"] * 6 + ["softmax-column"] * 5 + ["query-query"] * 4 + ["unnormalised"] * 3
CLASS = 30


def lesson_with_points(folder: Path) -> Path:
    text = (LESSONS / "cats-chase-mice.yaml").read_text(encoding="utf-8")
    text += "points:\n" + "".join(f"  {k}: {v}\n" for k, v in POINTS.items())
    path = folder / "cats.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def fill(blank: str, written: dict[str, list[list[str]]]) -> str:
    """The exported sheet with the student's entries in place (JSON is YAML)."""
    data = yaml.safe_load(blank)
    for key, rows in written.items():
        data[key] = rows
    return json.dumps(data)


def cell_worth(step: str, cells: int) -> Fraction:
    return Fraction(POINTS.get(step, cells), cells)


@pytest.fixture(scope="module")
def classroom(tmp_path_factory):  # type: ignore[no-untyped-def]
    """30 variants for a roster, and the class's filled sheets; what each student did."""
    from typer.testing import CliRunner

    from tests.conftest import PLAIN_ENV
    from tutor.cli import app

    runner = CliRunner()

    def run(*args: str):  # type: ignore[no-untyped-def]
        return runner.invoke(app, list(args), env=PLAIN_ENV)

    tmp = tmp_path_factory.mktemp("class")
    lesson = lesson_with_points(tmp)
    roster = tmp / "roster.csv"
    roster.write_text(
        "Student,ID,SIS User ID\n"
        + "".join(f"Student {k:02d},{1000 + k},s{k}\n" for k in range(CLASS)),
        encoding="utf-8",
    )
    result = run("variants", str(lesson), "--roster", str(roster), "--seed", "5", "--output",
                 str(tmp / "variants"))  # fmt: skip
    assert result.exit_code == 0, result.stderr
    files = sorted((tmp / "variants").glob("*.yaml"))
    assert len(files) == CLASS
    sheets = tmp / "sheets"
    sheets.mkdir()
    did: dict[str, dict] = {}  # sheet file name -> what the student did
    for k, path in enumerate(files):
        blank = run("export", str(path), "--format", "sheet").stdout
        d = derive(load_lesson(path))
        slip = SLIPS[k] if k < len(SLIPS) else None
        habit = students.HABITS[k % len(students.HABITS)]
        st = students.Student(d, "carry2" if slip else habit, slip)
        written = st.work()
        blank_step = "Z" if k == CLASS - 1 else None  # one student leaves Z blank
        if blank_step:
            written[blank_step] = [[None] * len(r) for r in written[blank_step]]  # type: ignore[misc]
        shapes = {key: (len(rows), len(rows[0])) for key, rows in written.items()}
        (sheets / path.name).write_text(fill(blank, written), encoding="utf-8")
        did[path.name] = {
            "name": f"Student {k:02d}",
            "slip": slip,
            "slipped": st.slipped[0].key if st.slipped else None,
            # one cell one digit from the truth, in a row of several: a pen slip explains it
            "pen_near": bool(st.slipped)
            and slip != "truncated"  # a cut-off is named as itself
            and len(st.slipped[0].cols) > 1
            and students.near_truth(
                written[st.slipped[0].key][st.slipped[1]][st.slipped[2]],
                st.slipped[0].cells[st.slipped[1]][st.slipped[2]],
            ),
            "blank": blank_step,
            "shapes": shapes,
        }
    return run, tmp, did


def expected_points(did: dict) -> tuple[Fraction, int, dict[str, Fraction]]:
    """The student's points by the test's own count: full marks, less the one slipped cell
    (follow-through keeps the rest), less a step left blank."""
    per_step = {}
    for key, (n, m) in did["shapes"].items():
        worth = cell_worth(key, n * m)
        earned = worth * n * m
        if key == did["slipped"]:
            earned -= worth
        if key == did["blank"]:
            earned = Fraction(0)
        per_step[key] = earned
    out_of = sum(POINTS.get(k, n * m) for k, (n, m) in did["shapes"].items())
    return sum(per_step.values(), Fraction(0)), out_of, per_step


def close(x: str, q: Fraction) -> bool:
    return abs(Fraction(x) - q) <= Fraction(1, 200)  # shown rounded to two places


def test_a_class_is_graded_into_a_gradebook(classroom) -> None:  # type: ignore[no-untyped-def]
    run, tmp, did = classroom
    book = tmp / "book.csv"
    result = run("grade", str(tmp / "variants"), str(tmp / "sheets"), "--csv", str(book))
    assert result.exit_code == 0, result.stderr
    assert result.stderr == ""  # fresh sheets: nothing to note
    rows = list(csv.DictReader(io.StringIO(book.read_text(encoding="utf-8"))))
    assert len(rows) == CLASS
    assert list(rows[0])[:4] == ["Student", "ID", "Sheet", "Variant"]
    assert list(rows[0])[-3:] == ["Total", "Out of", "Percent"]  # flags: a file of their own
    for row in rows:
        want = did[row["Sheet"]]
        assert row["Student"] == want["name"]
        assert row["ID"] == str(1000 + int(want["name"][-2:]))  # the roster's first id column
        assert row["Variant"] == row["Sheet"][: len("variant-01")]
        total, out_of, per_step = expected_points(want)
        assert int(row["Out of"]) == out_of == 3 * 6 + 9 + 3 + 18 + 5  # Q, K, V: 6 cells; scores: 9
        assert close(row["Total"], total), (row, total)
        for key, earned in per_step.items():
            assert close(row[key], earned), (key, row, earned)
        assert abs(Fraction(row["Percent"]) - total * 100 / out_of) <= Fraction(1, 20)  # 1 place
    slipped = [r for r in rows if did[r["Sheet"]]["slip"]]
    assert len(slipped) == len(SLIPS) and all(float(r["Percent"]) < 100 for r in slipped)


def test_the_report_counts_the_slips_the_class_made(classroom) -> None:  # type: ignore[no-untyped-def]
    run, tmp, did = classroom
    md = tmp / "report.md"
    result = run("grade", str(tmp / "variants"), str(tmp / "sheets"), "--report", "-o", str(md))
    assert result.exit_code == 0, result.stderr
    text = md.read_text(encoding="utf-8")
    made: dict[str, int] = {}
    pen: dict[str, int] = {}  # the ones a slip of the pen explains as well: not named
    for d in did.values():
        if d["slip"]:
            made[d["slip"]] = made.get(d["slip"], 0) + 1
            pen[d["slip"]] = pen.get(d["slip"], 0) + d["pen_near"]
    sure, perhaps = {}, {}
    for m in re.finditer(rf"- (?P<n>\d+) of {CLASS} .*? \(`(?P<id>[a-z-]+)`(?P<rest>.*)", text):
        sure[m["id"]] = int(m["n"])
        more = re.search(r"perhaps (\d+) more", m["rest"])
        perhaps[m["id"]] = int(more[1]) if more else 0
    # each student who made a slip is counted for it: surely, or (a tie) perhaps
    for slip, n in made.items():
        assert sure.get(slip, 0) + perhaps.get(slip, 0) == n - pen[slip], slip
    # ties are few: on these 0/1 variants a weight that softmax down the columns gives is now
    # and then one that x/Σx (no-exp) or the raw scores' softmax give too, and then either may
    # be the slip; most students are still surely counted
    assert 2 * sum(sure.get(s, 0) for s in made) > sum(n - pen[s] for s, n in made.items())
    # and nobody is surely counted for a slip nobody made
    assert all(sure[slip] == 0 for slip in sure if slip not in made)
    assert f"6 of {CLASS} did not divide by √d\\_k" in text
    # the step of the unscaled scores: 6 students each missed one cell of 9
    scaled = re.search(r"\| scaled \| (\d+)/(\d+)", text)
    assert scaled is not None and (int(scaled[1]), int(scaled[2])) == (CLASS * 9 - 6, CLASS * 9)
    # Z left blank by one student: every Z cell is at most 29 of 30
    assert "## Cells most often wrong" in text
    # the terminal version: tables and the heatmap, at 80 columns
    result = run("grade", str(tmp / "variants"), str(tmp / "sheets"), "--report")
    assert result.exit_code == 0
    assert "Named slips" in result.stdout and "did not divide by √d_k" in result.stdout
    assert "Share who got each cell's point" in result.stdout
    page = tmp / "report.html"
    result = run("grade", str(tmp / "variants"), str(tmp / "sheets"), "--report", "-o", str(page))
    assert result.exit_code == 0
    html = page.read_text(encoding="utf-8")
    assert html.startswith("<!doctype html>") and "did not divide by √d_k" in html


def test_json_carries_each_students_name_and_step_points(classroom) -> None:  # type: ignore[no-untyped-def]
    run, tmp, did = classroom
    result = run("grade", str(tmp / "variants"), str(tmp / "sheets"), "--json")
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    assert data["bad"] == [] and len(data["sheets"]) == CLASS
    for sheet in data["sheets"]:
        want = did[Path(sheet["sheet"]).name]
        assert sheet["student"] == want["name"]
        total, out_of, per_step = expected_points(want)
        assert sheet["out_of"] == out_of and close(str(sheet["points"]), total)
        for step in sheet["steps"]:
            assert close(str(step["points"]), per_step[step["step"]])
    # one sheet against the folder: its own variant is found
    one = sorted((tmp / "sheets").glob("*.yaml"))[4]
    result = run("grade", str(tmp / "variants"), str(one), "--json")
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    assert data["lesson"] == one.stem and data["variant"] == one.name[: len("variant-05")]


def test_bad_sheets_are_listed_and_the_rest_graded(classroom, tmp_path) -> None:  # type: ignore[no-untyped-def]
    run, tmp, _ = classroom
    good = sorted((tmp / "sheets").glob("*.yaml"))[:3]
    broken = tmp_path / "broken.yaml"
    broken.write_text("lesson: [unclosed\n")
    short = tmp_path / "short.yaml"
    data = json.loads(good[0].read_text())
    data["Q"] = data["Q"][:2]
    data["student_id"] += "-short"  # another student's sheet, of the same variant
    short.write_text(json.dumps(data))
    stranger = tmp_path / "stranger.yaml"
    stranger.write_text(run("export", "the-cake", "--format", "sheet").stdout)
    book = tmp_path / "book.csv"
    result = run("grade", str(tmp / "variants"), *map(str, [good[0], broken, short, stranger,
                 *good[1:]]), "--csv", str(book))  # fmt: skip
    assert result.exit_code == 1  # some sheets were bad
    out = " ".join(result.stdout.split())
    assert "Sheets not graded (2)" in out
    assert "broken.yaml:" in out
    assert "stranger.yaml: no lesson in" in out and "lesson the-cake" in out
    # a matrix with a row missing costs that matrix's cells, and says so; the rest is graded
    assert f"{short}: 1 entry could not be read or placed" in result.stderr
    assert "Q has 2 rows" in result.stderr
    rows = list(csv.DictReader(io.StringIO(book.read_text())))
    assert [r["Sheet"] for r in rows] == [good[0].name, short.name, *(g.name for g in good[1:])]
    assert float(rows[1]["Q"] or 0) == 0 and rows[1]["K"] == rows[0]["K"]


def single_lesson_sheet(run, tmp_path: Path) -> tuple[Path, Path]:  # type: ignore[no-untyped-def]
    lesson = tmp_path / "mine.yaml"
    lesson.write_text((LESSONS / "cats-chase-mice.yaml").read_text(encoding="utf-8"))
    d = derive(load_lesson(lesson))
    blank = run("export", str(lesson), "--format", "sheet").stdout
    sheet = tmp_path / "ann.yaml"
    sheet.write_text(fill(blank, students.Student(d, "carry1").work()))
    return lesson, sheet


def test_a_changed_lesson_is_refused_unless_forced(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    lesson, sheet = single_lesson_sheet(run, tmp_path)
    assert run("grade", str(lesson), str(sheet)).exit_code == 0
    text = lesson.read_text()
    lesson.write_text(text.replace("W_V: [[1, 0]", "W_V: [[2, 0]"))  # one W_V entry changed
    assert lesson.read_text() != text
    result = run("grade", str(lesson), str(sheet))
    assert result.exit_code == 1
    err = " ".join(result.stderr.split())
    assert "ann.yaml:1:" in err  # the fingerprint on the (one-line JSON) sheet
    assert "the numbers of lesson mine changed since this sheet was made" in err
    assert "--force" in err
    result = run("grade", str(lesson), str(sheet), "--force")
    assert result.exit_code == 0
    assert "graded anyway (--force)" in " ".join(result.stderr.split())
    # in a class run the sheet is set aside (exit 1), and --force grades it
    result = run("grade", str(lesson), str(sheet), "--csv", str(tmp_path / "b.csv"))
    assert result.exit_code == 1 and "changed since" in " ".join(result.stdout.split())
    result = run("grade", str(lesson), str(sheet), "--csv", str(tmp_path / "b.csv"), "--force")
    assert result.exit_code == 0


def test_a_mistyped_lesson_name_with_a_matching_fingerprint_is_graded(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    lesson, sheet = single_lesson_sheet(run, tmp_path)
    sheet.write_text(sheet.read_text().replace('"lesson": "mine"', '"lesson": "miine"'))
    result = run("grade", str(lesson), str(sheet), "--json")
    assert result.exit_code == 0
    assert json.loads(result.stdout)["points"] == 51
    assert "names lesson 'miine', but its fingerprint" in " ".join(result.stderr.split())
    # a wrong name and no fingerprint: refused, as before, unless forced
    data = json.loads(sheet.read_text())
    del data["fingerprint"]
    sheet.write_text(json.dumps(data))
    result = run("grade", str(lesson), str(sheet))
    assert result.exit_code == 1 and "this sheet is for lesson 'miine'" in result.stderr


def test_old_sheets_without_a_fingerprint_are_graded_with_one_note(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    lesson, sheet = single_lesson_sheet(run, tmp_path)
    data = json.loads(sheet.read_text())
    del data["fingerprint"]
    for name in ("a", "b"):
        (tmp_path / f"old-{name}.json").write_text(json.dumps({**data, "student": name}))
    result = run("grade", str(lesson), *(str(tmp_path / f"old-{n}.json") for n in "ab"),
                 "--csv", str(tmp_path / "b.csv"))  # fmt: skip
    assert result.exit_code == 0
    assert result.stderr.count("no fingerprint") == 1


@pytest.mark.parametrize(
    "points, where, message",
    [
        ("{weigths: 3}", "1:10", "unknown step 'weigths' (did you mean weights?)"),
        ("{Z: -1}", "1:13", "the points for Z are -1; expected a whole number from 0 to 1000"),
        ("{Z: 2.5}", "1:13", "the points for Z are 2.5; expected a whole number"),
        ("{Z: 1001}", "1:13", "expected a whole number from 0 to 1000"),
        ("{X: 3}", "1:10", "X is given by the lesson, not worked by the student"),
        ("{concat: 2}", "1:10", "this lesson has no concat step"),
        ("5", "1:9", "points should be a mapping of step name to points"),
        ("{Z: 2, Z: 3}", "1:16", "duplicate step 'Z' in points"),
    ],
)
def test_bad_points_are_reported_where_they_are(run, tmp_path, points, where, message) -> None:  # type: ignore[no-untyped-def]
    base = (LESSONS / "cats-chase-mice.yaml").read_text(encoding="utf-8")
    lesson = tmp_path / "p.yaml"
    lesson.write_text(f"points: {points}\n" + base, encoding="utf-8")
    result = run("check", str(lesson))
    assert result.exit_code == 1
    assert f"p.yaml:{where}: " in result.stdout + result.stderr
    assert message in " ".join((result.stdout + result.stderr).split())


def test_points_are_on_the_lesson_for_other_engines(tmp_path) -> None:  # type: ignore[no-untyped-def]
    lesson = load_lesson(lesson_with_points(tmp_path))
    assert lesson.step_points("Z") == 5 and lesson.step_points("Q") is None


def _luminance(hex_colour: str) -> float:
    def channel(c: int) -> float:
        s = c / 255
        return s / 12.92 if s <= 0.03928 else ((s + 0.055) / 1.055) ** 2.4

    r, g, b = (int(hex_colour[k : k + 2], 16) for k in (1, 3, 5))
    return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b)


def test_report_colours_reach_wcag_contrast() -> None:
    for text, background in CONTRAST_PAIRS:
        hi, lo = sorted((_luminance(text), _luminance(background)), reverse=True)
        assert (hi + 0.05) / (lo + 0.05) >= 4.5, (text, background)


def test_worksheets_say_which_variant_and_student_they_are_for(classroom) -> None:  # type: ignore[no-untyped-def]
    run, tmp, _ = classroom
    variant = sorted((tmp / "variants").glob("*.yaml"))[2]
    fingerprint = load_lesson(variant).fingerprint
    for fmt in ("md", "tex"):
        text = run("export", str(variant), "--format", fmt, "--no-answers").stdout
        assert f"For grading: fingerprint {fingerprint}; variant-03 for Student 02 (id 1002)" in (
            " ".join(text.split())
        )


def test_a_student_name_is_never_a_spreadsheet_formula(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    lesson, sheet = single_lesson_sheet(run, tmp_path)
    data = json.loads(sheet.read_text())
    sheet.write_text(json.dumps({**data, "student": "=HYPERLINK(1)", "student_id": "+1"}))
    book = tmp_path / "b.csv"
    assert run("grade", str(lesson), str(sheet), "--csv", str(book)).exit_code == 0
    (row,) = list(csv.DictReader(io.StringIO(book.read_text())))
    assert row["Student"] == "'=HYPERLINK(1)" and row["ID"] == "'+1"
    assert row["Total"] == "51" and row["Percent"] == "100.0"


def test_one_sheets_report_ends_with_its_points(classroom) -> None:  # type: ignore[no-untyped-def]
    run, tmp, did = classroom
    name = next(n for n, d in did.items() if d["slipped"] == "Z" or d["slip"] == "not-scaled")
    total, out_of, _ = expected_points(did[name])
    result = run("grade", str(tmp / "variants"), str(tmp / "sheets" / name))
    assert result.exit_code == 0
    shown = f"{float(total):.2f}".rstrip("0").rstrip(".")
    assert result.stdout.rstrip().splitlines()[-1] == f"Points: {shown}/{out_of}"


def test_a_blank_sheets_feedback_says_nothing_was_handed_in(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Issue 39, item 6: a sheet left blank gets feedback that says so, not the answer key
    (the true values and their working); --feedback-key gives the key too."""
    lesson, sheet = single_lesson_sheet(run, tmp_path)
    blank = tmp_path / "bo.yaml"
    blank.write_text(
        run("export", str(lesson), "--format", "sheet").stdout.replace(
            'student: ""', 'student: "Bo"'
        )
    )
    for key in (False, True):
        out = tmp_path / f"fb{key}"
        args = ["grade", str(lesson), str(sheet), str(blank), "--feedback", str(out)]
        result = run(*args, *(["--feedback-key"] if key else []))
        assert result.exit_code == 0, result.output
        (page,) = [
            p for p in out.glob("*.md") if "feedback for Bo" in p.read_text(encoding="utf-8")
        ]
        text = page.read_text(encoding="utf-8")
        assert "Nothing was handed in: every cell of this sheet is blank." in text
        assert ("the true value is" in text) is key  # the key only when asked
        assert ("2.83" in text) is key  # scaled[cats, chase]: a true value
    bad = run("grade", str(lesson), str(sheet), "--feedback-key")
    assert bad.exit_code == 2 and "--feedback-key" in bad.output and "--feedback DIR" in bad.output


def test_every_named_slip_is_said_in_words() -> None:
    """The class report and the feedback say what each slip the judge can name means, never
    its id alone (no-exp, root-too-early, typed-scaled, forgot-bias… came with issues 40, 41)."""
    from tutor.assess.classreport import said_of
    from tutor.assess.slips import REMINDERS

    for slip in REMINDERS:
        assert said_of(slip) != slip and " " in said_of(slip), slip
