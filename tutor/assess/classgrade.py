"""A class graded in one go: many sheets against one lesson or a folder of variants, and the
gradebook (CSV) an LMS imports.

Each sheet says what it is for (``tutor.assess.sheet.Header``: lesson name, fingerprint, variant,
student); the sheet's variant is found by its id, else its fingerprint, else its lesson's name.
One derivation (and so one judge, ``judge.judge_for``) per lesson serves every sheet of it, so
a class costs little more than its sheets; the sheets are read and checked here, in order, and
graded on every core (``classpool``). A sheet that cannot be graded is set aside with its
reason; the rest are graded, and the class keeps each as its marks (``marked.Marked``: about a
byte a cell), not its entries, so its memory stays flat in the class size. No printing here
(``tutor.cli`` does that).
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from tutor.assess import grade as gr
from tutor.assess.classpool import Job
from tutor.assess.marked import Head, Marked, digest
from tutor.assess.sheet import HEADER_KEYS, Header, read_header, read_sheet, sheet_text
from tutor.core.catalog import is_dir
from tutor.core.engine import Derivation, derive
from tutor.core.errors import LessonError, TutorError
from tutor.core.kinds import FILL, FILL_FIRST, FILL_TOP, NEXT_FILL, NEXT_FILL_TOP
from tutor.core.lesson import Lesson
from tutor.core.lessonfile import load_lesson
from tutor.core.roster import Student

if TYPE_CHECKING:
    from tutor.assess.submissions import Named

SHEET_SUFFIXES = (".yaml", ".yml", ".json")


@dataclass(frozen=True)
class Bad:
    """A sheet that could not be graded, and why (file:line:col messages)."""

    path: str
    reason: str
    student: str = ""  # whose it says it is, when its header could be read
    student_id: str = ""


@dataclass
class ClassGrades:
    """Every sheet given: graded, or set aside."""

    graded: list[Marked] = field(default_factory=list)  # ``Marked.report()``: the whole report
    bad: list[Bad] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # said once each, in order
    # submissions as downloaded (``submissions.bind``): a sheet's path -> the roster row the
    # platform says handed it in, and what its file name said (``submissions.Named``)
    owners: dict[str, Student] = field(default_factory=dict)
    handed: dict[str, Named] = field(default_factory=dict)


class Lessons:
    """The lesson(s) a class's sheets are graded against: one lesson, or a folder of variants."""

    def __init__(self, lessons: list[Lesson], where: str) -> None:
        self.lessons = lessons
        self.where = where  # the lesson's name or the folder, for messages
        self._derived: dict[int, Derivation] = {}

    def pick(self, header: Header) -> Lesson:
        """The lesson the sheet is for; raise ``TutorError`` saying what the sheet names."""
        if len(self.lessons) == 1:
            return self.lessons[0]
        for match in (
            lambda v: header.variant is not None and v.variant and v.variant.id == header.variant,
            lambda v: header.fingerprint is not None and v.fingerprint == header.fingerprint,
            lambda v: header.lesson is not None and v.name == header.lesson,
        ):
            found = [v for v in self.lessons if match(v)]
            if len(found) == 1:
                return found[0]
        names = ", ".join(
            f"{k} {val}"
            for k, val in (
                ("variant", header.variant),
                ("fingerprint", header.fingerprint),
                ("lesson", header.lesson),
            )
            if val
        )
        raise TutorError(
            f"{header.path}: no lesson in {self.where} matches this sheet "
            f"({names or 'it names no lesson'})"
        )

    def derived(self, lesson: Lesson) -> Derivation:
        """One derivation per lesson, kept for every sheet of it (its judge comes with it)."""
        key = id(lesson)
        if key not in self._derived:
            self._derived[key] = derive(lesson)
        return self._derived[key]


def sheet_files(paths: list[Path], notes: list[str] | None = None) -> tuple[list[Path], list[Bad]]:
    """The sheets given: files as given, and the sheet files in each folder (sorted). In a
    folder, a file named as a sheet (``.yaml``, ``.yml``, ``.json``, in any case, also doubled:
    ``x-sheet.yaml.txt``) is a sheet; any other file is read, and taken when it holds a sheet,
    else named in ``notes`` (hidden files aside). A link is followed only to a regular file
    inside the folder: the entries not followed (a link outside the folder, to nothing or round
    in a loop, a device or pipe) are returned set aside, each with why, never read."""
    out: list[Path] = []
    skipped: list[Bad] = []
    for p in paths:
        if is_dir(p):
            found, passed = _folder_sheets(p, skipped)
            if not found and not skipped:
                holds = f" ({'; '.join(passed)})" if passed else ""
                raise TutorError(
                    f"{p} is a folder; expected an answer sheet file (.yaml) or a "
                    f"folder of them, but it holds none{holds}"
                )
            out += found
            if notes is not None:
                notes += passed
        else:
            out.append(p)
    return out, skipped


def _folder_sheets(folder: Path, skipped: list[Bad]) -> tuple[list[Path], list[str]]:
    """A folder's sheets, and a line for each other file saying why it is not one; the entries
    a link would take outside the folder (or nowhere) go to ``skipped``, unread."""
    inside = folder.resolve()
    found, passed = [], []
    for f in sorted(folder.iterdir()):
        if f.name.startswith(".") or (f.is_dir() and not f.is_symlink()):
            continue
        why = _not_followed(f, inside)
        if why:
            skipped.append(Bad(str(f), f"{f}: skipped: {why}"))
            continue
        if named_as_sheet(f):
            found.append(f)
            continue
        why = not_a_sheet(f)
        if why is None:
            found.append(f)
        else:
            passed.append(f"{f}: skipped, not an answer sheet ({why})")
    return found, passed


def named_as_sheet(path: Path) -> bool:
    """``x.yaml``, ``x.YML``, ``x.JSON``, and doubled names (``x-sheet.yaml.txt``)."""
    return any(s.lower() in SHEET_SUFFIXES for s in path.suffixes[-2:])


def not_a_sheet(path: Path) -> str | None:
    """Why a file is not an answer sheet, or None when it is one (a mapping with at least one
    of a sheet's keys), whatever its name."""
    try:
        _, root = read_header(path)
    except TutorError as err:  # (the reader says "not an answer sheet: …" itself)
        return str(err).split(": ", 1)[-1].splitlines()[0].removeprefix("not an answer sheet: ")
    keys = {k.value for k, _ in root.value if hasattr(k, "value") and isinstance(k.value, str)}
    if keys & SHEET_KEYS:
        return None
    return "none of its keys is a step or a sheet's header (lesson, fingerprint, student)"


SHEET_KEYS = {*HEADER_KEYS, "heads", "layout", *FILL_FIRST, *FILL, *FILL_TOP, *NEXT_FILL}
SHEET_KEYS |= set(NEXT_FILL_TOP)


def _not_followed(f: Path, inside: Path) -> str | None:
    """Why a class folder's entry ``f`` is not read as a sheet, or None: a link is followed only
    to a regular file inside the folder (``inside``, resolved)."""
    import errno
    import stat

    try:
        mode = f.lstat().st_mode
        if stat.S_ISLNK(mode):
            try:
                target = f.resolve(strict=True)
            except FileNotFoundError:
                return "a link to nothing (its target does not exist)"
            except RuntimeError:
                return "a loop of links"
            if not target.is_relative_to(inside):
                return "a link to a file outside the class folder (not followed)"
            mode = target.stat().st_mode
    except OSError as err:
        if err.errno == errno.ELOOP:
            return "a loop of links"
        return f"cannot be read ({err.strerror or err})"
    if stat.S_ISDIR(mode):
        return "a folder, not a sheet"
    if not stat.S_ISREG(mode):
        return "a device or pipe, not a file"
    return None


def grade_class(
    lessons: Lessons, paths: list[Path], force: bool = False, skipped: list[Bad] | None = None
) -> ClassGrades:
    """Grade every sheet; one that cannot be read or matched is set aside with its reason, as
    are the folder entries ``sheet_files`` ``skipped``."""
    out = ClassGrades()
    out.bad += skipped or []
    files: dict[Path, Path] = {}  # each file once, however often it is given
    ids: dict[str, Path] = {}  # a student id: the sheet that gave it first
    jobs: list[Job] = []  # read, checked and matched: graded below, in order (not kept)
    for path in paths:
        same = files.setdefault(_resolved(path), path)
        if same is not path:
            twice = "" if str(same) == str(path) else f" (as {same} too)"
            out.notes.append(f"{path}{twice} is given twice; it is graded once")
            continue
        header = None
        try:
            text = sheet_text(path)
            header, root = read_header(path, text)
            d = lessons.derived(lessons.pick(header))
            sheet = read_sheet(path, d, force, root)
            # after reading: a broken sheet says what is wrong with it, and takes no id
            taken = ids.setdefault(header.student_id.lower(), path) if header.student_id else path
            if taken is not path:
                line, col = header.at("student_id")
                raise LessonError.at(
                    str(path),
                    line,
                    col,
                    f"student_id {header.student_id} is also on {taken}; expected one sheet "
                    "per student (grade the right one, or correct the id)",
                )
        except TutorError as err:  # a LessonError too: file:line:col messages
            who = (header.student, header.student_id) if header else ("", "")
            out.bad.append(Bad(str(path), str(err), *who))
            continue
        for note in sheet.notes:
            if note.startswith("the sheet has no fingerprint"):
                note = "some sheets have no fingerprint (made by an older attn-tutor): " + (
                    "they cannot tell whether the lesson's numbers changed since"
                )
            else:
                note = f"{path}: {note}"
            if note not in out.notes:
                out.notes.append(note)
        if sheet.problems:  # graded, but some cells could not be read or placed: say so
            n = len(sheet.problems)
            first = sheet.problems[0]
            out.notes.append(
                f"{path}: {n} {'entry' if n == 1 else 'entries'} could not be read or placed, "
                f"graded wrong (line {first.line}: {first.message}"
                + (f"; and {n - 1} more)" if n > 1 else ")")
            )
        head = Head(sheet.path, sheet.student, sheet.header)
        jobs.append(Job(d, str(path), digest(text), head, force))
        del sheet, root, text  # read to check it: it is read again where it is graded
    from tutor.assess.classpool import grade_all
    from tutor.assess.integrity import flag_class

    variants = [lessons.derived(v) for v in lessons.lessons] if len(lessons.lessons) > 1 else []
    out.graded += grade_all(jobs, variants)  # on every core when the class is large enough
    flag_class(out.graded, variants)
    return out


def _resolved(path: Path) -> Path:
    try:
        return path.resolve()
    except (OSError, RuntimeError):  # a loop of links: read_header says what is wrong
        return path


# ---------------------------------------------------------------------------------------------
# the gradebook


def gradebook_rows(grades: ClassGrades) -> list[list[object]]:
    """The gradebook as rows: a header, then one row per graded sheet.

    Columns: Student, ID (from the sheet, copied from the roster by ``variants``), Sheet,
    Variant, the points of each step, Total, Out of, Percent. No flags: a platform would take
    any extra column for an assignment; they go to ``gradebooks.flags_csv``, a file of their own.
    """
    keys: list[str] = []
    for r in grades.graded:
        for step, _ in r.steps():
            if step.key not in keys:
                keys.append(step.key)
    rows: list[list[object]] = [
        ["Student", "ID", "Sheet", "Variant", *keys, "Total", "Out of", "Percent"]
    ]
    for r in grades.graded:
        header = r.sheet.header
        by_key = {step.key: earned for step, earned, _ in r.points_by_step()}
        variant = r.d.lesson.variant.id if r.d.lesson.variant else ""
        rows.append(
            [
                r.sheet.student,
                header.student_id if header else "",
                Path(r.sheet.path).name,
                variant,
                *(gr.points_number(by_key[k]) if k in by_key else "" for k in keys),
                gr.points_number(r.points),
                r.out_of,
                gr.percent(r),
            ]
        )
    return rows


def gradebook_csv(grades: ClassGrades) -> str:
    """The gradebook as CSV (comma-separated, a header row, UTF-8, points with a decimal point)
    for Canvas's and Moodle's grade import."""
    return csv_text(gradebook_rows(grades))


def csv_text(
    rows: list[list[object]], delimiter: str = ",", newline: str = "\n", bom: bool = False
) -> str:
    """Every CSV the tool writes: each cell through ``safe_cell``, a cell holding a CR or LF
    quoted whatever the line end (the csv module quotes only the line end's own characters)."""
    buf = io.StringIO()
    writer = csv.writer(buf, delimiter=delimiter, lineterminator="\r\n")  # quotes \r and \n
    out = []
    for row in rows:
        writer.writerow([safe_cell(x) for x in row])
        out.append(buf.getvalue().removesuffix("\r\n") + newline)
        buf.seek(0)
        buf.truncate()
    return ("\ufeff" if bom else "") + "".join(out)


def safe_cell(x: object) -> str:
    """A CSV cell no spreadsheet runs as a formula: the one escape of every cell the tool writes
    (gradebooks of every platform, the roster's own cells written back, headers)."""
    text = str(x)
    # a spreadsheet runs a cell that starts with = + - @ (or a tab or CR before one) as a
    # formula: a student's name or id must not; a plain number such as -2.5 stays a number
    if text[:1] in FORMULA_START and not PLAIN_NUMBER.fullmatch(text):
        return "'" + text
    return text


FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
PLAIN_NUMBER = re.compile(r"-?\d+(\.\d+)?")  # -2.5, never +cmd


def lessons_from_folder(folder: Path) -> Lessons:
    """Every lesson in a folder (the variants ``attn-tutor variants`` wrote); raise
    ``LessonError`` for a bad one."""
    files = sorted(f for f in folder.iterdir() if f.suffix.lower() in (".yaml", ".yml"))
    if not files:
        raise TutorError(f"{folder} holds no lesson files (.yaml); expected a folder of variants")
    return Lessons([load_lesson(f) for f in files], str(folder))
