"""Gradebooks a learning platform imports as they are: Canvas (the instructor's own export written
back, or the minimal import) and Moodle (an id column, the grade and a feedback column).

Canvas's import (Grades → Import) wants ``Student, ID, SIS User ID, SIS Login ID, Section`` first
and one column per assignment, matched by its header ``Name (id)``; its export has a ``Points
Possible`` row under the header and a test student (``Student, Test``), both kept untouched here.
Moodle's CSV import maps one column to the users' id number or email and each other column to a
grade item (its maximum enforced) or to that item's feedback. Pure: reports and a roster table
in, text and notes out; the command line writes the file and says the notes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation

import sympy

from tutor.assess import grade as gr
from tutor.assess.classgrade import Bad, ClassGrades, csv_text, gradebook_csv, gradebook_rows
from tutor.assess.classgrade import safe_cell as _cell
from tutor.assess.feedback import feedback_line
from tutor.assess.marked import Marked
from tutor.core.errors import TutorError
from tutor.core.roster import RosterTable, Student, students_of

CANVAS_FIRST = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
ASSIGNMENT = re.compile(r"^(.*\S)\s*\((\d+)\)$")  # "Attention HW (4411)"
POINTS_POSSIBLE = "points possible"


@dataclass
class Book:
    """A gradebook's text, and what to tell the instructor about it."""

    text: str
    notes: list[str] = field(default_factory=list)  # said, nothing lost
    problems: list[str] = field(default_factory=list)  # a graded sheet that has no row: exit 1


def scaled(r: Marked, out_of: sympy.Rational | None) -> int | float:
    """The sheet's points on the assignment's scale (two places, half up), or as they are."""
    if out_of is None or not r.out_of:
        return gr.points_number(r.points)
    return gr.points_number(sympy.Rational(r.points) * out_of / r.out_of)


def number(text: str, what: str) -> sympy.Rational:
    """A positive number as a person or Canvas writes it (``20``, ``20.00``); else TutorError."""
    try:
        x = Decimal(text.strip().replace(",", "."))
    except InvalidOperation:
        raise TutorError(f"{what} is {text!r}; expected a number of points such as 20") from None
    if not x.is_finite() or x <= 0 or x > 10**6:
        raise TutorError(f"{what} is {text!r}; expected a number of points above 0, such as 20")
    return sympy.Rational(str(x))


# ---------------------------------------------------------------------------------------------
# which sheet is whose


def _key(name: str) -> str:
    """A name or an id as Canvas and Moodle compare them: trimmed, case-folded (runs of spaces
    as one, as the roster reads them)."""
    return " ".join(name.casefold().split())


def name_keys(name: str) -> set[str]:
    """``Lee, Ann`` (Canvas's sortable name) and ``Ann Lee`` name the same student."""
    keys = {_key(name)}
    if name.count(",") == 1:
        last, first = name.split(",")
        keys.add(_key(f"{first} {last}"))
    return keys - {""}


def match(
    reports: list[Marked], students: list[Student], owners: dict[str, Student] | None = None
) -> tuple[dict[int, Marked], list[str]]:
    """Each roster row's sheet (by the row's line): the row the platform says handed it in
    (``owners``: a sheet's path to its row, for submissions as downloaded), else by an id the
    sheet carries (any of the row's ID, SIS User ID, SIS Login ID, email…), else by name when
    one row has it. The problems: a sheet no row (or two rows) fits, a row two sheets claim."""
    by_id: dict[str, list[Student]] = {}
    by_name: dict[str, list[Student]] = {}
    for s in students:
        for x in {_key(i) for i in (*s.ids, s.id)} - {""}:  # ids as the platforms compare them
            by_id.setdefault(x, []).append(s)
        for k in name_keys(s.name):
            by_name.setdefault(k, []).append(s)
    rows: dict[int, Marked] = {}
    problems: list[str] = []
    for r in reports:
        h = r.sheet.header
        sid = _key(h.student_id if h else "")
        owner = (owners or {}).get(r.sheet.path)
        found = [owner] if owner else by_id.get(sid, []) if sid else []
        if not found:
            found = list(
                {s.line: s for k in name_keys(r.sheet.student) for s in by_name.get(k, [])}.values()
            )
        who = _who(r)
        if not found:
            problems.append(f"{r.sheet.path}: {who} is not on the roster; not in the gradebook")
        elif len(found) > 1:
            lines = ", ".join(str(s.line) for s in found)
            problems.append(
                f"{r.sheet.path}: {who} fits rows {lines} of the roster; not in the gradebook "
                "(give the sheet its student_id)"
            )
        elif found[0].line in rows:
            problems.append(
                f"{r.sheet.path}: {who} is the student of {rows[found[0].line].sheet.path} too; "
                "only that one is in the gradebook"
            )
        else:
            rows[found[0].line] = r
    return rows, problems


def _who(r: Marked) -> str:
    h = r.sheet.header
    sid = h.student_id if h else ""
    name = r.sheet.student or "a sheet with no name"
    return f"{name} (id {sid})" if sid else name


def _write(
    rows: list[list[str]], delimiter: str = ",", newline: str = "\n", bom: bool = False
) -> str:
    return csv_text(rows, delimiter, newline, bom)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------------
# Canvas


def assignment_column(header: list[str], name: str | None, path: str) -> int:
    """The assignment's column: the header ``name`` is (``Attention HW`` matches ``Attention HW
    (4411)``; any case), or the export's only assignment; else TutorError naming the choices."""
    found = [(k, h.strip()) for k, h in enumerate(header) if ASSIGNMENT.match(h.strip())]
    listed = "; ".join(h for _, h in found) or "none"
    if name is None:
        if len(found) == 1:
            return found[0][0]
        raise TutorError(
            f"{path} has {len(found)} assignment columns ({listed}); name one with "
            '--assignment "NAME"'
        )
    want = _key(name)
    hits = [k for k, h in found if _key(h) == want]
    hits = hits or [k for k, h in found if _key(ASSIGNMENT.match(h).group(1)) == want]  # type: ignore[union-attr]
    if len(hits) == 1:
        return hits[0]
    if hits:
        shown = "; ".join(header[k].strip() for k in hits)
        raise TutorError(
            f"--assignment {name!r} matches {len(hits)} columns of {path} ({shown}); give the "
            "whole header, with its id in parentheses"
        )
    raise TutorError(f"{path} has no assignment column {name!r}; its assignments: {listed}")


def canvas_export(
    table: RosterTable,
    reports: list[Marked],
    assignment: str | None,
    out_of: sympy.Rational | None,
    set_aside: list[Bad] | tuple[Bad, ...] = (),
    hold: bool = False,
    owners: dict[str, Student] | None = None,
) -> Book:
    """The instructor's Canvas export written back: every row and column as it was, the
    assignment's column filled (scaled to its Points Possible, or ``out_of``), blank for a
    student with no sheet (and, with ``hold``, for a flagged sheet). The file's own
    conventions stay: separator, line ending, BOM, and its decimal mark (``decimal_comma``)."""
    keys = [h.strip().lower() for h in table.header]
    # the exporter's name columns: Student (sortable name), or LastName, FirstName when the
    # instructor shows split names (canvas-lms lib/gradebook_exporter.rb)
    names = ["student"] if "student" in keys else ["lastname", "firstname"]
    missing = [c for c in (*names, "id") if c not in keys]
    if missing:
        shown = {"student": "Student", "lastname": "LastName", "firstname": "FirstName", "id": "ID"}
        raise TutorError(
            f"{table.path} is not a Canvas gradebook export: it has no "
            f"{' or '.join(shown[c] for c in missing)} column (its header: "
            f"{', '.join(h.strip() for h in table.header)}); export the gradebook from Canvas "
            "(Grades → Export), or leave out --roster for the minimal import"
        )
    col = assignment_column(table.header, assignment, table.path)
    first = keys.index(names[0])
    possible_row = next(
        (
            f
            for _, f in table.rows
            if len(f) > first and f[first].strip().lower() == POINTS_POSSIBLE
        ),
        None,
    )
    scale = out_of
    if scale is None:
        given = possible_row[col] if possible_row is not None and col < len(possible_row) else ""
        if not given.strip():
            raise TutorError(
                f"{table.path} gives no Points Possible for {table.header[col].strip()}; "
                "give the assignment's points with --out-of N"
            )
        scale = number(given, f"{table.path}: Points Possible of {table.header[col].strip()}")
    comma = decimal_comma(table, possible_row)
    students = students_of(table)
    sheets, problems = match(reports, students, owners)
    by_line = {s.line: s for s in students}
    out = [list(table.header)]
    blank: list[str] = []
    for line, fields in table.rows:
        row = list(fields)
        if line in by_line:  # a student (not Points Possible, not the test student)
            row += [""] * (col + 1 - len(row))
            r = sheets.get(line)
            grade = "" if r is None or held(r, hold) else str(scaled(r, scale))
            row[col] = grade.replace(".", ",") if comma else grade
            if r is None:
                blank.append(by_line[line].shown)
        out.append(row)
    sent = [s.shown for s in students if s.shown in blank and _sent(s, set_aside)]
    blank = [b for b in blank if b not in sent]  # a sheet set aside is a sheet: said apart
    notes = [
        f"{len(sent)} of the roster sent a sheet that was not graded (see Sheets not graded), "
        f"left blank: {'; '.join(sent)}"
    ] if sent else []  # fmt: skip
    if blank:
        notes.append(f"{len(blank)} of the roster have no sheet, left blank: {'; '.join(blank)}")
    text = _write(out, table.delimiter, table.newline, table.bom)
    return Book(text, notes, problems)


def decimal_comma(table: RosterTable, possible_row: list[str] | None) -> bool:
    """Whether the export writes numbers with a decimal comma: Canvas formats every number with
    the user's locale (``I18n.n(x, precision: 2)``: ``20,00``) and then separates fields with
    ``;``. Read from the Points Possible row, else from the students' numbers."""
    cells = possible_row if possible_row is not None else [c for _, f in table.rows for c in f]
    marks = {m.group(1) for c in cells if (m := _DECIMAL.match(c.strip()))}
    return marks == {","}


_DECIMAL = re.compile(r"^-?\d+([.,])\d+$")


def held(r: Marked, hold: bool) -> bool:
    """Whether ``--hold-flagged`` keeps this sheet's grade out of the gradebook."""
    return hold and bool(r.flags)


def _sent(student: Student, set_aside: list[Bad] | tuple[Bad, ...]) -> bool:
    """Whether a sheet set aside says it is this student's (by id, else by name)."""
    ids = {i.casefold() for i in student.ids} | ({student.id.casefold()} if student.id else set())
    return any(
        (b.student_id and b.student_id.casefold() in ids)
        or (not b.student_id and b.student and name_keys(b.student) & name_keys(student.name))
        for b in set_aside
    )


def canvas_minimal(
    reports: list[Marked], assignment: str, out_of: sympy.Rational | None, hold: bool = False
) -> Book:
    """Canvas's minimal import: the five columns it requires, then the assignment's."""
    rows = [[*CANVAS_FIRST, assignment]]
    for r in reports:
        h = r.sheet.header
        grade = "" if held(r, hold) else str(scaled(r, out_of))
        rows.append([_cell(r.sheet.student), h.student_id if h else "", "", "", "", grade])
    return Book(_write(rows))


# ---------------------------------------------------------------------------------------------
# Moodle

MOODLE_IDS = ("ID number", "Email address", "Email")  # Gradescope writes Email


def moodle(
    reports: list[Marked],
    table: RosterTable | None,
    item: str,
    out_of: sympy.Rational | None,
    hold: bool = False,
    owners: dict[str, Student] | None = None,
) -> Book:
    """Moodle's CSV import: the users' ``ID number`` (or ``Email address``, whichever the roster
    has), the grade on the item's scale (blank for a flagged sheet with ``hold``: Moodle's
    import leaves a blank grade alone) and a feedback line per student."""
    header = [MOODLE_IDS[0], item, f"{item} feedback"]
    if table is None:
        rows, problems = [], []
        for r in reports:
            h = r.sheet.header
            if h is None or not h.student_id:
                problems.append(
                    f"{r.sheet.path}: {_who(r)} has no student_id; not in the gradebook"
                )
                continue
            grade = "" if held(r, hold) else str(scaled(r, out_of))
            rows.append([_cell(h.student_id), grade, _cell(feedback_line(r))])
        return Book(_write([header, *rows]), [], problems)
    students = students_of(table)
    sheets, problems = match(reports, students, owners)
    which = _id_column(table, sheets)
    if which is None:
        raise TutorError(
            f"{table.path} has no ID number or Email address column filled in for every student "
            "with a sheet; export the participants from Moodle with one of them"
        )
    name, k = which
    rows = [[name, item, f"{item} feedback"]]
    for line, fields in table.rows:
        r = sheets.get(line)
        if r is not None:
            grade = "" if held(r, hold) else str(scaled(r, out_of))
            rows.append([fields[k].strip(), grade, _cell(feedback_line(r))])
    return Book(_write(rows), [], problems)


def gradebook(
    grades: ClassGrades,
    lms: str = "plain",
    table: RosterTable | None = None,
    assignment: str | None = None,
    out_of: sympy.Rational | None = None,
    hold: bool = False,
) -> Book:
    """A class's gradebook in the format of the platform ``lms`` (``plain``: a spreadsheet,
    ``canvas``: the roster ``table`` exported from Canvas written back, or without one the
    minimal import; ``moodle``), each grade scaled to ``out_of`` points when given. The
    assignment is named ``assignment``, else after the lesson the variants were made from,
    else the lesson. With ``hold`` a flagged sheet's grade is left blank (``flags_csv`` says
    who and why, in a file of its own)."""
    graded = grades.graded
    name = assignment or next((r.d.lesson.variant.of for r in graded if r.d.lesson.variant), "")
    name = name or (graded[0].d.lesson.name if graded else "attn-tutor")
    if lms == "canvas" and table is not None:
        return canvas_export(table, graded, assignment, out_of, grades.bad, hold, grades.owners)
    if lms == "canvas":
        return canvas_minimal(graded, name, out_of, hold)
    if lms == "moodle":
        return moodle(graded, table, name, out_of, hold, grades.owners)
    if hold:  # the spreadsheet: Total and Percent blank (the steps' points stay, for review)
        rows = gradebook_rows(grades)
        total, percent = rows[0].index("Total"), rows[0].index("Percent")
        for row, r in zip(rows[1:], graded, strict=True):
            if r.flags:
                row[total] = row[percent] = ""
        return Book(_write([[_cell(x) for x in row] for row in rows]))
    return Book(gradebook_csv(grades))


FLAGS_HEADER = ("Student", "ID", "Sheet", "Flag", "Why", "Grade")


def flags_csv(grades: ClassGrades, hold: bool) -> str | None:
    """The instructor's list of flagged sheets (one row per flag: who, which sheet, the flag,
    why, and whether the grade was held), or None when nothing is flagged. A file of its own:
    a platform's import would take any extra column of the gradebook for an assignment."""
    rows: list[list[str]] = [list(FLAGS_HEADER)]
    for r in grades.graded:
        h = r.sheet.header
        for f in r.flags:
            rows.append([_cell(r.sheet.student), _cell(h.student_id if h else ""),
                         _cell(r.sheet.path), f.kind, _cell(f.message),
                         "held (blank)" if hold else "given"])  # fmt: skip
    return _write(rows) if len(rows) > 1 else None


def _id_column(table: RosterTable, sheets: dict[int, Marked]) -> tuple[str, int] | None:
    """Moodle's id column: the first of ``MOODLE_IDS`` with an id in every row that has a sheet
    (in some row, when none has), never a column of blanks."""
    with_sheet = [f for line, f in table.rows if line in sheets]
    for name in MOODLE_IDS:
        k = table.column(name.lower())
        if k is None:
            continue
        filled = [
            k < len(f) and bool(f[k].strip()) for f in with_sheet or [f for _, f in table.rows]
        ]
        if (all if with_sheet else any)(filled):
            return name, k
    return None
