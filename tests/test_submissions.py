"""Submissions as the platforms hand them over (issue 39, item 5): Canvas's "Download
Submissions" zip and Moodle's "Download all submissions", zipped or unpacked, each sheet matched
to its student by the roster's ids; zips read under caps; feedback zipped as each platform's
bulk upload expects. The zips are built here, named as the platforms name them (fixtures/lms/
README.md says where each convention comes from)."""

from __future__ import annotations

import csv
import io
import zipfile
from pathlib import Path

import pytest

from tests.conftest import LESSONS
from tests.students import Student, sheet_text
from tutor.core.engine import derive
from tutor.core.lessonfile import load_lesson

LMS = Path(__file__).resolve().parent.parent / "fixtures" / "lms"
CANVAS_ROSTER = LMS / "canvas-manual-posting.csv"  # Lee, Ann 5001; Okafor, Chidi 5002; …
MOODLE_ROSTER = LMS / "moodle-grading-worksheet.csv"  # Participant 101, 102, 103
SECRET = "do-not-print-me"


@pytest.fixture(scope="module")
def sheets() -> dict[str, str]:
    d = derive(load_lesson(LESSONS / "cats-chase-mice.yaml"))
    return {
        "ann": sheet_text(d, Student(d, "exact").work(), "Ann Lee"),
        "chidi": sheet_text(d, Student(d, "round", slip="not-scaled").work(), "Chidi Okafor"),
    }


def make_zip(path: Path, entries: list[tuple[str | zipfile.ZipInfo, str | bytes]]) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in entries:
            z.writestr(name, data)
    return path


def canvas_zip(tmp: Path, sheets: dict[str, str]) -> Path:
    return make_zip(tmp / "submissions.zip", [
        ("leeann_5001_9001_sheet.yaml", sheets["ann"]),
        ("okaforchidi_5002_9002_sheet.yaml", sheets["ann"]),  # first a copy of Ann's …
        ("okaforchidi_LATE_5002_9010_sheet-1.yaml", sheets["chidi"]),  # … then their own, late
        ("mullerzoe_5003_9003_notes.pdf", f"%PDF-1.4 {SECRET}"),
    ])  # fmt: skip


def grade(run, *args: str):  # type: ignore[no-untyped-def]
    return run("grade", "cats-chase-mice", *args, env={"COLUMNS": "1000"})  # lines unwrapped


def said(result) -> str:  # type: ignore[no-untyped-def]
    """Everything printed, as one line (the terminal wraps at 80 columns)."""
    return " ".join((result.stdout + result.stderr).split())


def rows(path: Path) -> list[list[str]]:
    return list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"))))


def test_a_canvas_zip_is_graded_by_user_id_the_latest_sheet_each(run, tmp_path, sheets) -> None:  # type: ignore[no-untyped-def]
    book = tmp_path / "book.csv"
    zipped = canvas_zip(tmp_path, sheets)
    result = grade(run, str(zipped), "--roster", str(CANVAS_ROSTER), "--lms", "canvas",
                   "--assignment", "Attention HW", "--csv", str(book))  # fmt: skip
    assert result.exit_code == 0, result.stderr
    # two files of user 5002: the later (attachment 9010, late, -1) is graded, and said
    assert (
        "Okafor, Chidi (id 5002) handed in 2 sheets: graded okaforchidi_LATE_5002_9010_sheet-1"
        ".yaml (the latest), not okaforchidi_5002_9002_sheet.yaml" in said(result)
    )
    # a file that is not a sheet is named, never read out
    assert "mullerzoe_5003_9003_notes.pdf: skipped, not an answer sheet (a .pdf file)" in said(
        result
    )
    assert SECRET not in said(result)
    graded = {r[0]: r[6] for r in rows(book)[3:]}
    assert graded["Lee, Ann"] == "20"  # every cell right, on Points Possible 20
    assert graded["Okafor, Chidi"] not in ("", "20")  # their own sheet, with the slip
    assert graded["Müller, Zoë"] == ""  # handed in no sheet
    assert "not their sheet" not in said(result)


def test_a_sheet_that_names_another_student_is_flagged_and_held(run, tmp_path, sheets) -> None:  # type: ignore[no-untyped-def]
    zipped = make_zip(tmp_path / "submissions.zip", [
        ("leeann_5001_9001_sheet.yaml", sheets["ann"]),
        ("okaforchidi_5002_9002_sheet.yaml", sheets["ann"]),  # Ann's sheet, handed in by Chidi
    ])  # fmt: skip
    book = tmp_path / "book.csv"
    result = grade(run, str(zipped), "--roster", str(CANVAS_ROSTER), "--lms", "canvas",
                   "--assignment", "Attention HW", "--csv", str(book),
                   "--hold-flagged")  # fmt: skip
    assert result.exit_code == 0, result.stderr
    assert "handed in by Okafor, Chidi (id 5002), but the sheet says Ann Lee" in said(result)
    graded = {r[0]: r[6] for r in rows(book)[3:]}
    assert graded == {"Lee, Ann": "20", "Okafor, Chidi": "", "Müller, Zoë": "",
                      "Student, Test": ""}  # fmt: skip
    flags = rows(tmp_path / "book-flags.csv")
    assert flags[1][:2] == ["Okafor, Chidi", "5002"] and flags[1][3] == "not-their-sheet"


def test_a_user_id_is_read_from_the_id_column_first(run, tmp_path, sheets) -> None:  # type: ignore[no-untyped-def]
    roster = tmp_path / "export.csv"
    roster.write_text(  # Ann's SIS User ID is a number: Chidi's Canvas user id
        "Student,ID,SIS User ID,SIS Login ID,Section,Attention HW (4411)\n"
        "    Points Possible,,,,,20.00\n"
        '"Lee, Ann",5001,5002,alee,S1,\n"Okafor, Chidi",5002,s002,cokafor,S1,\n'
    )
    zipped = make_zip(tmp_path / "submissions.zip", [
        ("okaforchidi_5002_9002_sheet.yaml", sheets["chidi"]),
    ])  # fmt: skip
    book = tmp_path / "book.csv"
    result = grade(run, str(zipped), "--roster", str(roster), "--lms", "canvas", "--csv",
                   str(book))  # fmt: skip
    assert result.exit_code == 0, result.stderr
    graded = {r[0]: r[5] for r in rows(book)[2:]}
    assert graded["Lee, Ann"] == "" and graded["Okafor, Chidi"] not in ("", "20")


def test_an_id_not_on_the_roster_is_set_aside(run, tmp_path, sheets) -> None:  # type: ignore[no-untyped-def]
    zipped = make_zip(tmp_path / "submissions.zip", [
        ("leeann_5001_9001_sheet.yaml", sheets["ann"]),
        ("strangerann_7777_9005_sheet.yaml", sheets["ann"]),
    ])  # fmt: skip
    result = grade(run, str(zipped), "--roster", str(CANVAS_ROSTER))
    assert result.exit_code == 1
    assert (
        "strangerann_7777_9005_sheet.yaml: user id 7777 (strangerann) is not in the roster "
        f"{CANVAS_ROSTER}; not graded" in said(result)
    )
    assert "Traceback" not in said(result)


@pytest.mark.parametrize("unpacked", [False, True])
def test_a_moodle_download_and_its_feedback_zip(run, tmp_path, sheets, unpacked) -> None:  # type: ignore[no-untyped-def]
    entries = [
        ("Ann Lee_101_assignsubmission_file_/sheet.yaml", sheets["ann"]),
        # Moodle 4.1 and later: no trailing _; online text as the editor saved it
        ("Chidi Okafor_102_assignsubmission_onlinetext/onlinetext.html",
         "".join(f"<p>{line}</p>" for line in sheets["chidi"].splitlines())),
    ]  # fmt: skip
    if unpacked:
        given = tmp_path / "download"
        for name, data in entries:
            (given / name).parent.mkdir(parents=True, exist_ok=True)
            (given / name).write_text(data, encoding="utf-8")
    else:
        given = make_zip(tmp_path / "download.zip", entries)  # type: ignore[arg-type]
    fb, book = tmp_path / "fb", tmp_path / "book.csv"
    result = grade(run, str(given), "--roster", str(MOODLE_ROSTER), "--lms", "moodle",
                   "--csv", str(book), "--feedback", str(fb))  # fmt: skip
    assert result.exit_code == 0, result.stderr
    got = rows(book)
    assert [r[0] for r in got] == ["Email address", "ann.lee@example.org",
                                   "chidi.okafor@example.org"]  # fmt: skip
    assert got[1][1] == "51" and got[2][1] not in ("", "51")  # Chidi forgot √d_k
    with zipfile.ZipFile(fb / "moodle-feedback.zip") as z:
        names = z.namelist()
        page = z.read(names[0]).decode("utf-8")
    # the folders Moodle's importer reads: fullname_participantid_plugintype_pluginname
    assert names == ["Ann Lee_101_assignsubmission_file_/feedback.html",
                     "Chidi Okafor_102_assignsubmission_onlinetext/feedback.html"]  # fmt: skip
    assert "<html" in page and "Ann Lee" in page


def test_canvas_feedback_is_named_for_re_upload(run, tmp_path, sheets) -> None:  # type: ignore[no-untyped-def]
    fb = tmp_path / "fb"
    result = grade(run, str(canvas_zip(tmp_path, sheets)), "--roster", str(CANVAS_ROSTER),
                   "--lms", "canvas", "--feedback", str(fb))  # fmt: skip
    assert result.exit_code == 0, result.stderr
    with zipfile.ZipFile(fb / "canvas-feedback.zip") as z:
        names = sorted(z.namelist())
    # Canvas reads the first two all-digit parts: the user, and the attachment handed in
    assert names == ["leeann_5001_9001_feedback.html", "okaforchidi_5002_9010_feedback.html"]


def test_a_zip_bomb_and_too_many_entries_are_refused(run, tmp_path, sheets, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from tutor.assess import submissions

    monkeypatch.setattr(submissions, "MAX_UNPACKED", 1024 * 1024)
    bomb = make_zip(tmp_path / "bomb.zip", [("leeann_5001_9001_sheet.yaml", b"0" * 3_000_000)])
    assert bomb.stat().st_size < 20_000  # 3 MB of zeros, deflated
    result = grade(run, str(bomb), "--roster", str(CANVAS_ROSTER))
    assert result.exit_code == 1
    assert f"{bomb} would unpack to 3,000,000 bytes" in said(result)
    assert "at most 1 MiB is read (a zip bomb" in said(result)
    monkeypatch.setattr(submissions, "MAX_MEMBERS", 3)
    many = make_zip(tmp_path / "many.zip", [(f"a{k}_50{k}_9{k}_s.yaml", "x") for k in range(4)])
    result = grade(run, str(many), "--roster", str(CANVAS_ROSTER))
    assert result.exit_code == 1 and f"{many} holds 4 entries; at most 3 are read" in said(result)


def test_a_member_past_a_sheets_size_is_set_aside(run, tmp_path, sheets) -> None:  # type: ignore[no-untyped-def]
    zipped = make_zip(tmp_path / "big.zip", [
        ("leeann_5001_9001_sheet.yaml", sheets["ann"]),
        ("okaforchidi_5002_9002_sheet.yaml", b"#" * (1024 * 1024 + 10)),
    ])  # fmt: skip
    result = grade(run, str(zipped), "--roster", str(CANVAS_ROSTER))
    assert result.exit_code == 1
    assert "okaforchidi_5002_9002_sheet.yaml: over 1 MiB" in said(result)


def test_hostile_entry_names_are_set_aside_never_unpacked(run, tmp_path, sheets) -> None:  # type: ignore[no-untyped-def]
    link = zipfile.ZipInfo("okaforchidi_5002_9002_sheet.yaml")
    link.external_attr = 0o120777 << 16  # a symbolic link, to /etc/passwd
    work = tmp_path / "work"
    work.mkdir()
    zipped = make_zip(tmp_path / "evil.zip", [
        ("leeann_5001_9001_sheet.yaml", sheets["ann"]),
        ("../../okaforchidi_5002_9003_sheet.yaml", sheets["ann"]),
        ("/tmp/okaforchidi_5002_9004_sheet.yaml", sheets["ann"]),
        ("C:/okaforchidi_5002_9005_sheet.yaml", sheets["ann"]),
        (link, "/etc/passwd"),
    ])  # fmt: skip
    # zipfile warns as it writes a second entry of one name
    with pytest.warns(UserWarning, match="Duplicate name"), zipfile.ZipFile(zipped, "a") as z:
        z.writestr("leeann_5001_9001_sheet.yaml", sheets["chidi"])
    result = grade(run, str(zipped), "--roster", str(CANVAS_ROSTER))
    out = said(result)
    assert result.exit_code == 1
    assert "../../okaforchidi_5002_9003_sheet.yaml: set aside: a path that climbs out" in out
    # zipfile drops a leading / itself; C: is refused by name
    assert "C:/okaforchidi_5002_9005_sheet.yaml: set aside: an absolute path" in out
    assert "okaforchidi_5002_9002_sheet.yaml: set aside: a link, not a file" in out
    assert "leeann_5001_9001_sheet.yaml: set aside: a second entry of the same name" in out
    assert not list(tmp_path.parent.glob("okaforchidi*")) and not list(work.iterdir())
    assert "root:" not in out


def test_a_name_that_is_not_utf8_is_set_aside(run, tmp_path, sheets) -> None:  # type: ignore[no-untyped-def]
    good = "leeann_5001_9001_sheet.yaml"
    bad = "okaforchidi_5002_9002_sh\u00e9et.yaml"  # é is 2 bytes in UTF-8: \xc3\xa9
    raw = make_zip(tmp_path / "x.zip", [(good, sheets["ann"]), (bad, sheets["ann"])]).read_bytes()
    raw = raw.replace("sh\u00e9et".encode(), b"sh\xe9\xe9et")  # Latin-1 bytes, same length
    raw = _clear_utf8_flags(raw)
    (tmp_path / "x.zip").write_bytes(raw)
    result = grade(run, str(tmp_path / "x.zip"), "--roster", str(CANVAS_ROSTER))
    assert result.exit_code == 1
    assert "set aside: its name is not UTF-8" in said(result)


def _clear_utf8_flags(raw: bytes) -> bytes:
    """Clear bit 11 (the UTF-8 flag) of every local and central header's flags."""
    out = bytearray(raw)
    for sig, at in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        k = out.find(sig)
        while k != -1:
            flags = int.from_bytes(out[k + at : k + at + 2], "little") & ~0x800
            out[k + at : k + at + 2] = flags.to_bytes(2, "little")
            k = out.find(sig, k + 4)
    return bytes(out)


def test_a_broken_zip_and_a_missing_roster(run, tmp_path, sheets) -> None:  # type: ignore[no-untyped-def]
    broken = tmp_path / "submissions.zip"
    broken.write_bytes(b"PK\x03\x04 not really a zip")
    result = grade(run, str(broken), "--roster", str(CANVAS_ROSTER))
    assert result.exit_code == 1 and f"{broken} is not a zip file that can be read" in said(result)
    result = grade(run, str(canvas_zip(tmp_path, sheets)))
    assert result.exit_code == 2 and "give --roster FILE" in said(result)
    moodle = make_zip(tmp_path / "m.zip", [("Ann Lee_101_assignsubmission_file_/s.yaml", "x")])
    result = grade(run, str(moodle), "--roster", str(CANVAS_ROSTER))
    assert result.exit_code == 1 and "has no participant ids" in said(result)


def test_an_unpacked_canvas_folder_reads_as_its_zip(run, tmp_path, sheets) -> None:  # type: ignore[no-untyped-def]
    folder = tmp_path / "submissions"
    folder.mkdir()
    (folder / "leeann_5001_9001_sheet.yaml").write_text(sheets["ann"])
    (folder / "okaforchidi_5002_9002_sheet.yaml").symlink_to("/etc/passwd")
    result = grade(run, str(folder), "--roster", str(CANVAS_ROSTER), "--json")
    assert result.exit_code == 1  # the link is set aside, not followed
    assert "okaforchidi_5002_9002_sheet.yaml: set aside: a link" in said(result)
    assert '"student": "Lee, Ann"' in result.stdout
    # a class folder of sheets with one name that looks like Canvas's stays a class folder
    plain = tmp_path / "sheets"
    plain.mkdir()
    (plain / "ann.yaml").write_text(sheets["ann"])
    (plain / "chidi_2024_01_sheet.yaml").write_text(sheets["chidi"])  # a date, not ids
    result = grade(run, str(plain), "--json")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.count('"student"') == 2


def test_feedback_zips_for_sheets_that_came_another_way(run, tmp_path, sheets) -> None:  # type: ignore[no-untyped-def]
    folder = tmp_path / "sheets"
    folder.mkdir()
    (folder / "ann.yaml").write_text(sheets["ann"])
    (folder / "chidi.yaml").write_text(sheets["chidi"])
    fb = tmp_path / "fb"
    # Moodle: the folder built from the worksheet's name and participant id, matched by name
    result = grade(run, str(folder), "--lms", "moodle", "--roster", str(MOODLE_ROSTER),
                   "--feedback", str(fb))  # fmt: skip
    assert result.exit_code == 0, result.stderr
    with zipfile.ZipFile(fb / "moodle-feedback.zip") as z:
        names = sorted(z.namelist())
    assert names == ["Ann Lee_101_assignsubmission_file_/feedback.html",
                     "Chidi Okafor_102_assignsubmission_file_/feedback.html"]  # fmt: skip
    # Canvas: no file of theirs to attach a comment to, so no zip, and who is said
    result = grade(run, str(folder), "--lms", "canvas", "--roster", str(CANVAS_ROSTER),
                   "--feedback", str(fb))  # fmt: skip
    assert result.exit_code == 0, result.stderr
    assert not (fb / "canvas-feedback.zip").exists()
    assert (
        "note: not in canvas-feedback.zip (no Canvas submission of theirs in the download to "
        "attach a comment to): Lee, Ann (id 5001); Okafor, Chidi (id 5002)" in said(result)
    )
