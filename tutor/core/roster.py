"""Rosters as learning platforms export them: which column is a student's name and which their id.

One table (``PLATFORMS``) says, per platform, the headers read as name and as id; the README's
table is this one. ``read_table`` keeps a file as it is (every row and column, for writing a
Canvas export back); ``read_roster`` reads the students from it. Headers are matched in any case.
An id is read from the first column, in ``ID_COLUMNS`` order, that the header has, so a
Gradescope roster's ``SID`` wins over its ``Email`` and Moodle's ``ID number`` over its
``Email address``. Pure: no printing.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from pathlib import Path

from tutor.core.errors import LessonError
from tutor.core.yamlsrc import read_text

MAX_STUDENTS = 1000

# platform -> (the name columns, the id columns, what else to know), as each exports a roster
PLATFORMS = (
    ("Canvas", "Student, or LastName + FirstName", "ID (then SIS User ID, SIS Login ID)",
     "the Points Possible row, the Manual Posting (muted) row and the test student "
     "(Student, Test) are skipped"),
    ("Moodle", "First name + Last name, or Full name", "ID number (then Email address; "
     "Identifier: Participant N)", ""),
    ("Gradescope", "Name, or First Name + Last Name", "SID (then Email)", ""),
    ("PrairieLearn", "Name", "UID (then UIN)", "UID is the login, UIN the institution's number"),
    ("any other", "name, full name, student; or first name + last name / surname",
     "id, student id, student number, username, email…", ""),
)  # fmt: skip

NAME_COLUMNS = ("name", "student", "student name", "full name", "fullname", "display name")
FIRST_COLUMNS = ("first name", "firstname", "given name")
LAST_COLUMNS = ("last name", "lastname", "surname", "family name")
# most telling first: the column a platform itself matches students by
ID_COLUMNS = (
    "id", "sis user id", "student id", "student number", "sid", "id number", "uid", "uin",
    "sis login id", "user id", "login id", "username", "email", "email address", "identifier",
)  # fmt: skip
SKIPPED_NAMES = ("points possible", "student, test", "test student")  # Canvas's own rows
# Canvas's exporter (lib/gradebook_exporter.rb) writes a row of empty name and id cells under
# the header when an assignment's grades are posted by hand: "Manual Posting" (untranslated, so
# its importer can skip it; "(scores hidden from instructors)" may follow) under such
# assignments; older Canvas wrote "Muted"
MUTED = ("manual posting", "muted")


@dataclass(frozen=True)
class Student:
    """One row of a roster: a name, an id, or both (and every id the row has, for matching)."""

    name: str
    id: str
    line: int  # in the roster file, for messages
    ids: tuple[str, ...] = ()  # every id-like field of the row: ID, SIS User ID, email…

    @property
    def shown(self) -> str:
        """``Ann Lee (id 123)``, ``Ann Lee`` or ``id 123``."""
        if self.name and self.id:
            return f"{self.name} (id {self.id})"
        return self.name or f"id {self.id}"


@dataclass(frozen=True)
class RosterTable:
    """A roster file as it is: its header and rows (each with its line), and how it was written."""

    path: str
    header: list[str]
    rows: list[tuple[int, list[str]]]  # (line, fields), blank lines left out
    delimiter: str
    newline: str  # "\r\n" or "\n", as the file has it
    bom: bool

    def column(self, *names: str) -> int | None:
        """The first column whose header is one of ``names`` (any case, spaces trimmed)."""
        keys = [h.strip().lower() for h in self.header]
        return next((keys.index(n) for n in names if n in keys), None)

    def columns(self, names: tuple[str, ...]) -> list[int]:
        """Every column whose header is one of ``names``, in the file's order."""
        return [k for k, h in enumerate(self.header) if h.strip().lower() in names]


def read_table(path: Path, what: str = "roster") -> RosterTable:
    """The file's rows as they are: ``,``, ``;`` or tab between fields, a BOM is fine. Raise
    ``LessonError`` (with the line) for an empty file or a broken CSV row."""
    shown = str(path)
    text = read_text(path, what, ".csv")  # UTF-8 (with or without BOM), small, a regular file
    # rows end at a line break a CSV knows (\n, \r\n, \r); str.splitlines would also break at
    # a form feed, vertical tab, NEL or U+2028/9 inside a name, making one student two
    lines = re.split(r"\r\n|\r|\n", text)
    if lines and not lines[-1]:
        lines.pop()
    if not lines or not lines[0].strip():
        raise LessonError.at(shown, 1, 1, f"the {what} is empty; expected a header row (name, id)")
    delimiter = max(",;\t", key=lines[0].count)
    reader = csv.reader(lines, delimiter=delimiter, strict=True)
    rows: list[tuple[int, list[str]]] = []
    try:
        header = next(reader)
        for fields in reader:
            if any(f.strip() for f in fields):
                rows.append((reader.line_num, fields))
    except csv.Error as err:
        raise LessonError.at(shown, reader.line_num, 1, f"not a valid CSV row: {err}") from None
    with open(path, "rb") as f:
        bom = f.read(3) == b"\xef\xbb\xbf"
    newline = "\r\n" if "\r\n" in text else "\n"
    return RosterTable(shown, header, rows, delimiter, newline, bom)


def read_roster(path: Path) -> list[Student]:
    """Students from a CSV as an LMS exports it (``PLATFORMS``): a header row naming a name
    column (or first and last name) and/or an id column. Canvas's "Points Possible" row and its
    test student are skipped. Raise ``LessonError`` with the line of a problem."""
    table = read_table(path)
    return students_of(table)


def students_of(table: RosterTable) -> list[Student]:
    """The students of a roster read with ``read_table``, checked (see ``read_roster``)."""
    shown = table.path
    columns = _columns(table, shown)
    id_columns = table.columns(ID_COLUMNS)
    students: list[Student] = []
    seen: dict[tuple[str, str], int] = {}
    ids: dict[str, Student] = {}
    for line, fields in table.rows:
        student = student_of(fields, columns, id_columns, line)
        if student is None:
            continue
        if not student.name and not student.id and not student.ids and _muted(fields):
            continue  # Canvas's Manual Posting row
        if not student.name and not student.id:
            raise LessonError.at(shown, line, 1, "this row has neither a name nor an id")
        key = (student.name.lower(), student.id.lower())
        if key in seen:
            raise LessonError.at(
                shown, line, 1, f"{student.shown} is listed twice (first on line {seen[key]})"
            )
        seen[key] = line
        other = ids.get(student.id.lower()) if student.id else None
        if other is not None:  # an id names one student: two rows would share one sheet
            raise LessonError.at(
                shown,
                line,
                1,
                f"the id {student.id} is given twice: to {other.name or 'a row'} on line "
                f"{other.line} and to {student.name or 'this row'}; expected one id per student",
            )
        ids[student.id.lower()] = student
        students.append(student)
    if not students:
        raise LessonError.at(shown, 1, 1, "the roster lists no students, only its header")
    if len(students) > MAX_STUDENTS:
        raise LessonError.at(
            shown, 1, 1, f"the roster lists {len(students)} students; at most {MAX_STUDENTS}"
        )
    return students


def _columns(table: RosterTable, path: str) -> dict[str, int | None]:
    columns = {
        "name": table.column(*NAME_COLUMNS),
        "first": table.column(*FIRST_COLUMNS),
        "last": table.column(*LAST_COLUMNS),
        "id": table.column(*ID_COLUMNS),
    }
    if all(c is None for c in columns.values()):
        found = ", ".join(h.strip().lower() or "(empty)" for h in table.header)
        raise LessonError.at(
            path,
            1,
            1,
            f"the header names no name or id column (found: {found}); expected a column "
            "called name, student, first name and last name, or id",
        )
    return columns


def student_of(
    fields: list[str], columns: dict[str, int | None], id_columns: list[int], line: int
) -> Student | None:
    """The row's student, or None for a row Canvas adds (Points Possible, the test student)."""

    def get(k: int | None) -> str:
        return _one_line(fields[k]) if k is not None and k < len(fields) else ""

    name = get(columns["name"]) or " ".join(
        p for p in (get(columns["first"]), get(columns["last"])) if p
    )
    if name.lower() in SKIPPED_NAMES:
        return None
    ids = tuple(x for x in (get(k) for k in id_columns) if x)
    return Student(name, get(columns["id"]), line, ids)


def _muted(fields: list[str]) -> bool:
    """Whether a row holds nothing but Canvas's Manual Posting (or Muted) marks."""
    filled = [f.strip().lower() for f in fields if f.strip()]
    return bool(filled) and all(f.startswith(MUTED) for f in filled)


def _one_line(text: str) -> str:
    """A roster's field as it may sit in a comment: printable, spaces collapsed."""
    return " ".join("".join(ch if ch.isprintable() else " " for ch in text).split())
