"""Submissions as the platforms hand them over, and feedback named as their bulk uploads expect.

* **Canvas** "Download Submissions": one flat zip, each file named
  ``<lastfirst>_<user id>_<attachment id>_<the student's file name>``, with ``_LATE_`` (newer
  Canvas: ``_late_``) after the name when late; a file handed in again under the same name gets
  Canvas's ``-1``, ``-2`` before its suffix. Its "Re-Upload Submissions" takes a zip of files
  named the same way: it reads the first two all-digit parts of a name as the user and the
  attachment (which must be one of that student's submitted files) and attaches the file to a
  comment on that submission (canvas-lms ``Assignment#infer_comment_context_from_filename``).
* **Moodle** "Download all submissions": a folder per participant,
  ``<Full Name>_<participant id>_assignsubmission_file_/`` (Moodle 4.1 and later drop the last
  ``_``; ``…_assignsubmission_onlinetext_/onlinetext.html`` for online text; older versions, flat
  files ``<prefix>_<file>``), the name with its ``_`` written as spaces. Its "Upload multiple
  feedback files in a zip" reads each path part as ``fullname_id_plugintype_pluginname[_rest]``
  and files the rest of the path as that participant's feedback
  (``mod/assign/feedback/file/importziplib.php``): so the same folders, with ``feedback.html``.

A zip is read without unpacking it anywhere but a temporary folder, and under caps: at most
``MAX_MEMBERS`` entries and ``MAX_UNPACKED`` bytes in all (else the whole zip is refused, with
the figures), a sheet at most 1 MiB. An entry whose name climbs out (``..``), is absolute, is a
link, is encrypted, is not UTF-8 or comes twice is set aside with why, never written; each sheet
is written under a name of our own. A file that is not a sheet is named, never read out.
"""

from __future__ import annotations

import html
import re
import stat
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from tutor.assess.classgrade import Bad, ClassGrades
from tutor.core.errors import TutorError
from tutor.core.roster import Student
from tutor.core.spec import MAX_FILE_BYTES
from tutor.text.words import visible

MAX_MEMBERS = 5000  # entries in a zip: a class of 1,000 with a few files each
MAX_UNPACKED = 256 * 1024 * 1024  # bytes a zip's entries unpack to, in all
SHEET_NAMES = (".yaml", ".yml", ".json")
TEXT_NAMES = (".html", ".htm", ".txt")  # online text (Moodle's onlinetext.html), or a pasted sheet
SKIPPED = ("__MACOSX",)  # what a Mac's zip adds

CANVAS = re.compile(
    r"^(?P<name>[^_/]*?)(?P<late>_late)?_(?P<uid>\d+)_(?P<att>\d+)_(?P<file>[^/]+)$", re.I
)
MOODLE = re.compile(r"^(?P<name>[^_/]+)_(?P<pid>\d+)_(?P<kind>assign(?:submission|feedback))_"
                    r"(?P<plugin>[a-z]+)(?:_(?P<rest>[^/]*))?$")  # fmt: skip
RESUBMITTED = re.compile(r"-(\d+)$")  # Canvas's sheet-1.yaml


@dataclass(frozen=True)
class Named:
    """What a handed-in file's name says: whose it is and where it sat."""

    platform: str  # "canvas" | "moodle"
    name: str  # Canvas's lastfirst, Moodle's full name
    student_id: str  # Canvas's user id, Moodle's participant id
    file: str  # the student's own file name
    folder: str = ""  # Moodle: the participant's folder as downloaded
    attachment: str = ""  # Canvas: the file's attachment id (the third number)
    late: bool = False
    again: int = 0  # Canvas's -N on a file handed in again
    member: str = ""  # the whole name in the zip or folder

    @property
    def order(self) -> tuple[int, int, int]:
        """Later is larger: the attachment id, then the -N, then the late mark."""
        return (int(self.attachment or 0), self.again, self.late)


def named(member: str) -> Named | None:
    """What ``member`` (a path inside the zip or folder, ``/`` between parts) says, or None."""
    parts = member.split("/")
    m = CANVAS.match(parts[-1]) if len(parts) == 1 else None
    if m:
        stem = m["file"].rsplit(".", 1)[0]
        again = RESUBMITTED.search(stem)
        n = int(again[1]) if again else 0
        return Named("canvas", m["name"], m["uid"], m["file"], attachment=m["att"],
                     late=bool(m["late"]), again=n, member=member)  # fmt: skip
    for k, part in enumerate(parts):
        m = MOODLE.match(part)
        if not m:
            continue
        rest = "/".join([m["rest"] or "", *parts[k + 1 :]]).strip("/")
        if not rest:
            return None
        folder = "/".join(parts[: k + 1]) if k + 1 < len(parts) else ""
        return Named("moodle", m["name"], m["pid"], rest, folder=folder, member=member)
    return None


# ---------------------------------------------------------------------------------------------
# reading a zip or a folder, safely


@dataclass(frozen=True)
class Member:
    """One file handed in: its name as given, and how to read it (at most a sheet's size)."""

    name: str
    size: int
    when: tuple[int, ...]
    read: Callable[[], bytes]


def is_handover(path: Path) -> bool:
    """Whether ``path`` is a platform's submissions: a zip, or a folder whose every entry is
    named as Canvas names a file or Moodle a participant's folder (a class folder of sheets
    with one such name stays a class folder). A path that cannot be looked at is not: the
    sheet reader says what is wrong with it."""
    try:
        if path.is_file():  # a sheet's name is a sheet, whatever bytes it holds
            suffix = path.suffix.lower()
            return suffix == ".zip" or (suffix not in SHEET_NAMES and zipfile.is_zipfile(path))
        if not path.is_dir() or path.is_symlink():
            return False
        entries = [f for f in path.iterdir() if not _hidden(f.name)]
    except OSError:
        return False
    return bool(entries) and all(
        named(f.name) or (f.is_dir() and MOODLE.match(f.name)) for f in entries
    )


def zip_members(path: Path) -> tuple[list[Member], list[tuple[str, str]]]:
    """The zip's files, and the entries set aside (name, why); raise ``TutorError`` for a file
    that is no zip, or one past the caps."""
    try:
        z = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as err:
        raise TutorError(f"{path} is not a zip file that can be read ({err})") from None
    infos = z.infolist()
    if len(infos) > MAX_MEMBERS:
        raise TutorError(
            f"{path} holds {len(infos)} entries; at most {MAX_MEMBERS} are read (is it a class's "
            "submissions?)"
        )
    total = sum(i.file_size for i in infos)
    if total > MAX_UNPACKED:
        raise TutorError(
            f"{path} would unpack to {total:,} bytes from {path.stat().st_size:,}; at most "
            f"{MAX_UNPACKED // 2**20} MiB is read (a zip bomb, or not a class's submissions)"
        )
    members: list[Member] = []
    aside: list[tuple[str, str]] = []
    seen: set[str] = set()
    for info in infos:
        name, why = _entry_name(info)
        if info.is_dir() or _hidden(name):
            continue
        if why is None and name in seen:
            why = "a second entry of the same name in the zip"
        if why is None and stat.S_ISLNK(info.external_attr >> 16):
            why = "a link, not a file (not followed)"
        if why is None and info.flag_bits & 0x1:
            why = "encrypted"
        if why is not None:
            aside.append((name, why))
            continue
        seen.add(name)
        members.append(Member(name, info.file_size, info.date_time, _reader(z, info)))
    return members, aside


def _reader(z: zipfile.ZipFile, info: zipfile.ZipInfo) -> Callable[[], bytes]:
    def read() -> bytes:
        with z.open(info) as f:  # zipfile stops at the entry's declared size
            return f.read(MAX_FILE_BYTES + 1)

    return read


def _entry_name(info: zipfile.ZipInfo) -> tuple[str, str | None]:
    """The entry's name as text, and why it is set aside (None: a name we may use)."""
    name = info.filename
    if not info.flag_bits & 0x800 and not name.isascii():
        try:  # most zip tools write UTF-8 without saying so; zipfile read it as cp437
            name = name.encode("cp437").decode("utf-8")
        except UnicodeError:
            return visible(info.filename), "its name is not UTF-8 (named here as read)"
    shown = visible(name)
    parts = re.split(r"[/\\]", name)
    if name.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", name):
        return shown, "an absolute path (never unpacked)"
    if ".." in parts:
        return shown, "a path that climbs out of the zip with .. (never unpacked)"
    if shown != name:
        return shown, "control characters in its name"
    return "/".join(p for p in parts if p), None


def _hidden(name: str) -> bool:
    parts = name.split("/")
    return parts[0] in SKIPPED or parts[-1].startswith((".", "~"))


def folder_members(path: Path) -> tuple[list[Member], list[tuple[str, str]]]:
    """The files of an unpacked download: the folder's files and those of its participant
    folders (one level down); links are set aside, never followed."""
    members: list[Member] = []
    aside: list[tuple[str, str]] = []

    def add(f: Path, name: str) -> None:
        mode = f.lstat().st_mode
        if stat.S_ISLNK(mode):
            aside.append((name, "a link, not a file (not followed)"))
        elif stat.S_ISREG(mode):
            size = f.lstat().st_size
            members.append(Member(name, size, (int(f.lstat().st_mtime),), _file_reader(f)))

    for f in sorted(path.iterdir()):
        if _hidden(f.name):
            continue
        if f.is_dir() and not f.is_symlink():
            for g in sorted(f.iterdir()):
                if not _hidden(g.name) and not (g.is_dir() and not g.is_symlink()):
                    add(g, f"{f.name}/{g.name}")
        else:
            add(f, f.name)
    return members, aside


def _file_reader(f: Path) -> Callable[[], bytes]:
    def read() -> bytes:
        with open(f, "rb") as fh:
            return fh.read(MAX_FILE_BYTES + 1)

    return read


# ---------------------------------------------------------------------------------------------
# whose is each sheet


@dataclass
class Handover:
    """The sheets handed in, one per student (the latest), each written to ``folder`` under a
    name of our own, and what was said about the rest."""

    source: str
    files: list[Path] = field(default_factory=list)
    shown: dict[str, str] = field(default_factory=dict)  # written path -> source:member
    owners: dict[str, Student] = field(default_factory=dict)  # source:member -> roster row
    handed: dict[str, Named] = field(default_factory=dict)  # source:member -> its name's facts
    bad: list[Bad] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def read_handover(path: Path, students: list[Student], roster: str, folder: Path) -> Handover:
    """Each student's latest sheet from the zip or folder ``path``, matched to the roster row
    whose platform id its name carries, written into ``folder``."""
    members, aside = zip_members(path) if path.is_file() else folder_members(path)
    out = Handover(str(path))
    for name, why in aside:
        out.bad.append(Bad(f"{path}:{name}", f"{path}:{name}: set aside: {why}"))
    found: dict[int, list[tuple[Named, Member]]] = {}  # roster line -> its files
    platforms = {n.platform for m in members if (n := named(m.name))}
    by_id = _ids(students, platforms, roster)
    for m in members:
        n = named(m.name)
        where = f"{path}:{m.name}"
        if n is None:
            out.notes.append(
                f"{where}: skipped: its name is not one Canvas or Moodle gives a submission"
            )
            continue
        if not _sheet_name(n.file):
            out.notes.append(f"{where}: skipped, not an answer sheet (a {_kind(n.file)} file)")
            continue
        student = by_id.get((n.platform, n.student_id))
        if student is None:
            what = "user id" if n.platform == "canvas" else "participant id"
            out.bad.append(Bad(where, f"{where}: {what} {n.student_id} ({n.name}) is not in the "
                                      f"roster {roster}; not graded"))  # fmt: skip
            continue
        found.setdefault(student.line, []).append((n, m))
    for line, files in found.items():
        student = next(s for s in students if s.line == line)
        files.sort(key=lambda nm: (nm[0].order, nm[1].when, nm[1].name))
        n, m = files[-1]
        if len(files) > 1:
            older = "; ".join(x.name for _, x in files[:-1])
            out.notes.append(
                f"{student.shown} handed in {len(files)} sheets: graded {m.name} (the latest), "
                f"not {older}"
            )
        _write(out, folder, n, m, student)
    return out


def _ids(
    students: list[Student], platforms: set[str], roster: str
) -> dict[tuple[str, str], Student]:
    """The roster's rows by each platform's id: Canvas's user id (the export's ``ID``), Moodle's
    participant id (the worksheet's ``Participant 101``)."""
    out: dict[tuple[str, str], Student] = {}
    # each row's own id column first (Canvas's ID), then its other ids: a number in one row's
    # SIS User ID never takes another row's user id
    for ids in ([(s, s.id) for s in students], [(s, x) for s in students for x in s.ids]):
        for s, x in ids:
            key = x.strip()
            if m := re.fullmatch(r"participant\s+(\d+)", key, re.I):
                out.setdefault(("moodle", m[1]), s)
            elif key.isdigit():
                out.setdefault(("canvas", key), s)
    if "canvas" in platforms and not any(p == "canvas" for p, _ in out):
        raise TutorError(
            f"{roster} has no Canvas user ids (an ID column of numbers such as 5001); a Canvas "
            "download names each file by it: give the gradebook exported from Canvas "
            "(Grades → Export) as --roster"
        )
    if "moodle" in platforms and not any(p == "moodle" for p, _ in out):
        raise TutorError(
            f"{roster} has no participant ids (an Identifier column reading 'Participant 101'); "
            "a Moodle download names each folder by it: give the assignment's grading worksheet "
            "(Download grading worksheet) as --roster"
        )
    return out


def _sheet_name(file: str) -> bool:
    return Path(file).suffix.lower() in (*SHEET_NAMES, *TEXT_NAMES)


def _kind(file: str) -> str:
    suffix = Path(file).suffix.lower().lstrip(".")
    return f".{visible(suffix)}" if suffix and len(suffix) <= 8 else "file with no known suffix"


def _write(out: Handover, folder: Path, n: Named, m: Member, student: Student) -> None:
    where = f"{out.source}:{m.name}"
    try:
        data = m.read()
    except (zipfile.BadZipFile, OSError, EOFError, ValueError) as err:
        out.bad.append(Bad(where, f"{where}: cannot be read ({err})", student.name, student.id))
        return
    if len(data) > MAX_FILE_BYTES:
        out.bad.append(Bad(where, f"{where}: over 1 MiB; an answer sheet is at most 1 MiB",
                           student.name, student.id))  # fmt: skip
        return
    suffix = Path(n.file).suffix.lower()
    if suffix in (".html", ".htm"):
        data = _html_text(data)
        suffix = ".yaml"
    elif suffix == ".txt":
        suffix = ".yaml"
    target = folder / f"{len(out.files) + 1:04d}{suffix}"  # a name of our own, never the zip's
    target.write_bytes(data)
    out.files.append(target)
    out.shown[str(target)] = where
    out.owners[where] = student
    out.handed[where] = n


def _html_text(data: bytes) -> bytes:
    """Online text as the editor saved it (``<p>lesson: x</p><p>Q: …</p>``) back to lines."""
    text = data.decode("utf-8", errors="replace")
    text = re.sub(r"(?i)<br\s*/?>|</p\s*>|</div\s*>|</li\s*>", "\n", text)
    text = re.sub(r"<[^>]*>", "", text)
    return html.unescape(text).replace("\xa0", " ").encode("utf-8")


def bind(grades: ClassGrades, handover: Handover) -> None:
    """After grading: each sheet called by its name in the download, its owner the roster row
    the platform says handed it in; a sheet that names another student is flagged."""
    from tutor.assess.integrity import Flag

    def shown(text: str) -> str:
        for tmp, where in handover.shown.items():
            text = text.replace(tmp, where)
        return text

    for r in grades.graded:
        where = handover.shown.get(r.sheet.path, r.sheet.path)
        header = r.sheet.header
        r.sheet = replace(r.sheet, path=where,
                          header=replace(header, path=where) if header else None)  # fmt: skip
        r.flags = [Flag(f.kind, shown(f.message)) for f in r.flags]
        owner = handover.owners.get(where)
        if owner is None:
            continue
        if says := _says_other(r, owner):
            r.flags.append(Flag("not-their-sheet", f"handed in by {owner.shown}, but {says}"))
        # graded as the student who handed it in: the gradebook, feedback and report say them
        header = r.sheet.header
        r.sheet = replace(r.sheet, student=owner.name, header=replace(
            header, student=owner.name, student_id=owner.id) if header else None)  # fmt: skip
    bad = []
    for b in grades.bad:
        where = handover.shown.get(b.path, b.path)
        owner = handover.owners.get(where)
        who = (owner.name, owner.id) if owner else (b.student, b.student_id)
        bad.append(Bad(where, shown(b.reason), *who))
    grades.bad = bad
    grades.notes = [shown(n) for n in grades.notes]
    grades.owners.update(handover.owners)
    grades.handed.update(handover.handed)


def _says_other(r, owner: Student) -> str:  # type: ignore[no-untyped-def]
    """What the sheet says of its student when that is not ``owner``; "" when it fits or says
    nothing."""
    from tutor.assess.gradebooks import name_keys

    h = r.sheet.header
    sid = h.student_id.strip() if h else ""
    ids = {x.casefold() for x in (owner.id, *owner.ids) if x}
    if sid:
        if sid.casefold() in ids:
            return ""
        return f"the sheet says {r.sheet.student or 'no name'} (id {sid})"
    if r.sheet.student and not (name_keys(r.sheet.student) & name_keys(owner.name)):
        return f"the sheet says {r.sheet.student}"
    return ""


# ---------------------------------------------------------------------------------------------
# feedback for the platform's bulk upload


def feedback_name(lms: str, handed: Named | None, owner: Student | None) -> str | None:
    """Where a student's feedback goes in the platform's upload zip, or None when it cannot go
    (Canvas: no file of theirs to attach a comment to; Moodle: no participant id)."""
    if lms == "canvas":
        if handed is None or handed.platform != "canvas":
            return None
        return f"{handed.name}_{handed.student_id}_{handed.attachment}_feedback.html"
    if handed is not None and handed.platform == "moodle" and handed.folder:
        return f"{handed.folder}/feedback.html"
    pid = _participant(owner) if owner else None
    if pid is None or owner is None:
        return None
    name = re.sub(r"[/\\:*?\"<>|]", "", owner.name.replace("_", " ")) or "Participant"
    return f"{name}_{pid}_assignsubmission_file_/feedback.html"


def _participant(owner: Student) -> str | None:
    for x in (owner.id, *owner.ids):
        if m := re.fullmatch(r"participant\s+(\d+)", x.strip(), re.I):
            return m[1]
    return None


def feedback_zip(pages: list[tuple[str, Path]]) -> bytes:
    """The upload zip: each (name, the HTML page's file, read as it is zipped), UTF-8 names."""
    import io

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, page in pages:
            z.writestr(name, page.read_bytes())
    return buf.getvalue()
