"""A teacher's class: grade (one sheet, or a class with its gradebook, report and feedback)
and check-code."""

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from tutor.cli.common import (
    EXIT_INPUT,
    LessonsDirOpt,
    collect_as_we_go,
    make_console,
    names_folder,
    open_lesson,
    say_note,
    write_output,
)
from tutor.core.errors import TutorError, UsageError

if TYPE_CHECKING:
    import sympy

    from tutor.assess.classgrade import ClassGrades, Lessons
    from tutor.core.engine import Derivation


def grade(
    lesson: Annotated[
        str,
        typer.Argument(
            help="The lesson (name or .yaml), or the folder of variants the sheets were made from.",
            metavar="LESSON_OR_DIR",
        ),
    ],
    sheets: Annotated[
        list[Path],
        typer.Argument(
            help="Filled-in answer sheets (.yaml), or folders of them; or the submissions as "
            "Canvas or Moodle hand them over (their zip, or its unpacked folder) with --roster.",
            metavar="SHEET...",
        ),
    ],
    json_out: Annotated[
        bool, typer.Option("--json", help="Print one JSON object and nothing else.")
    ] = False,
    csv_out: Annotated[
        Path | None,
        typer.Option(
            "--csv", help="Write a gradebook (one row per student) to FILE.", metavar="FILE"
        ),
    ] = None,
    report: Annotated[
        bool,
        typer.Option("--report", help="Summarize what the class got wrong, with an item analysis."),
    ] = False,
    output: Annotated[  # the text as typed: a trailing / means a folder, and Path drops it
        str | None,
        typer.Option(
            "--output", "-o", help="Write the --report to FILE (.md or .html).", metavar="FILE"
        ),
    ] = None,
    force: Annotated[
        bool, typer.Option("--force", help="Grade sheets made for a lesson whose numbers changed.")
    ] = False,
    lms: Annotated[
        str,
        typer.Option(
            "--lms",
            help="The --csv's format: plain (a spreadsheet), canvas or moodle (their grade "
            "import); with --feedback, the platform whose bulk upload the zip is named for.",
            metavar="plain|canvas|moodle",
        ),
    ] = "plain",
    roster: Annotated[
        Path | None,
        typer.Option(
            "--roster",
            help="With --lms: the roster exported from the platform (Canvas: the gradebook "
            "export, written back with the assignment filled in). With a submissions zip: the "
            "roster whose ids its files carry (Canvas: the gradebook export; Moodle: the "
            "grading worksheet).",
            metavar="FILE",
        ),
    ] = None,
    assignment: Annotated[
        str | None,
        typer.Option(
            "--assignment",
            help="With --lms: the assignment's column (Canvas: 'Attention HW' matches "
            "'Attention HW (4411)'); default: the export's only one, or the lesson's name.",
            metavar="NAME",
        ),
    ] = None,
    out_of: Annotated[
        str | None,
        typer.Option(
            "--out-of",
            help="With --lms: scale each grade to N points (Canvas: default its Points Possible).",
            metavar="N",
        ),
    ] = None,
    feedback_dir: Annotated[
        Path | None,
        typer.Option(
            "--feedback",
            help="Write one feedback file per student (.md and .html) into DIR; with --lms "
            "canvas or moodle also DIR/canvas-feedback.zip or DIR/moodle-feedback.zip, named "
            "for that platform's bulk feedback upload.",
            metavar="DIR",
        ),
    ] = None,
    feedback_key: Annotated[
        bool,
        typer.Option(
            "--feedback-key",
            help="With --feedback: give a blank sheet the true values and their working too "
            "(by default its feedback says only that nothing was handed in).",
        ),
    ] = False,
    hold_flagged: Annotated[
        bool,
        typer.Option(
            "--hold-flagged",
            help="Leave a flagged sheet's grade blank in the --csv gradebook (who and why: on "
            "screen, in the --report and in FILE-flags.csv).",
        ),
    ] = False,
    items_out: Annotated[
        Path | None,
        typer.Option(
            "--items",
            help="Write the item analysis to FILE (.csv): per step and per named slip, the "
            "students, the share right and the discrimination.",
            metavar="FILE",
        ),
    ] = None,
    lessons_dir: LessonsDirOpt = None,
) -> None:
    """Grade hand-worked answer sheets, with follow-through; a whole class with --csv, --report,
    --feedback."""
    from tutor.assess import classgrade as cg
    from tutor.assess.submissions import is_handover

    handover = next((p for p in sheets if is_handover(p)), None)  # a platform's download
    if handover is not None and len(sheets) > 1:
        raise UsageError(
            f"{handover} is the submissions as a platform hands them over; give it alone, "
            "without other sheets or folders"
        )
    if handover is not None and roster is None:
        raise UsageError(
            f"{handover} is the submissions as a platform hands them over: each is matched to "
            "its student by the roster's ids; give --roster FILE (Canvas: the gradebook export; "
            "Moodle: the grading worksheet)"
        )
    kind, scale = _grade_options(
        json_out, csv_out, report, output, lms, roster, assignment, out_of, feedback_dir,
        handover is not None,
    )  # fmt: skip
    report_to = None if output is None else Path(output)  # checked as typed (a trailing /)
    if feedback_key and feedback_dir is None:
        raise UsageError(
            "--feedback-key says what a blank sheet's feedback holds; give --feedback DIR"
        )
    if hold_flagged and csv_out is None:
        raise UsageError("--hold-flagged says what goes into the --csv gradebook; give --csv FILE")
    table = None
    if roster is not None:
        from tutor.core.roster import read_table

        table = read_table(roster)
    if cg.is_dir(Path(lesson)):
        lessons = cg.lessons_from_folder(Path(lesson))
    else:
        lessons = cg.Lessons([open_lesson(lesson, lessons_dir)], lesson)
    notes: list[str] = []  # files in the folders given that hold no sheet: named
    if handover is not None:
        return _grade_handover(lessons, handover, table, force, json_out, csv_out, report,
                               output, kind, lms, assignment, scale, feedback_dir, hold_flagged,
                               items_out, roster, feedback_key)  # fmt: skip
    files, skipped = cg.sheet_files(sheets, notes)
    inputs = [
        *files,
        *(Path(x.path) for x in lessons.lessons if x.path),
        *([roster] if roster else []),
    ]
    flags_out = _flags_file(csv_out)
    for target, option in ((csv_out, "--csv"), (report_to, "--output"), (flags_out, "--csv"),
                           (items_out, "--items")):  # fmt: skip
        _not_an_input(target, option, inputs)
    single = len(sheets) == 1 and len(files) == 1 and files[0] == sheets[0] and not skipped
    if single and csv_out is None and not report and feedback_dir is None and items_out is None:
        return _grade_one(lessons, files[0], json_out, force)
    collect_as_we_go()  # a class: what each sheet leaves behind is collected as it goes
    grades = cg.grade_class(lessons, files, force, skipped)
    grades.notes[:0] = notes
    _class_outputs(grades, json_out, csv_out, report, output, kind, lms, table, assignment, scale,
                   feedback_dir, hold_flagged, items_out, inputs, flags_out,
                   feedback_key)  # fmt: skip


def _class_outputs(  # type: ignore[no-untyped-def]
    grades, json_out, csv_out, report, output, kind, lms, table, assignment, scale,
    feedback_dir, hold_flagged, items_out, inputs, flags_out, feedback_key=False,
) -> None:  # fmt: skip
    """A graded class: the table (or JSON), then each file asked for; exit 1 when a sheet was
    set aside or the gradebook could not place one."""
    _print_class(grades, json_out)
    problems: list[str] = []
    if csv_out is not None:
        problems += _write_gradebook(
            grades, csv_out, lms, table, assignment, scale, hold_flagged, flags_out
        )
    if feedback_dir is not None:
        _write_feedback(grades, feedback_dir, inputs, lms, table, feedback_key)
    if items_out is not None:
        _write_items(grades, items_out)
    if report:
        _class_report(grades, None if output is None else Path(output), kind, hold_flagged)
    if grades.bad or problems:
        raise typer.Exit(EXIT_INPUT)


def _grade_handover(  # type: ignore[no-untyped-def]
    lessons, path: Path, table, force, json_out, csv_out, report, output, kind, lms,
    assignment, scale, feedback_dir, hold_flagged, items_out, roster: Path, feedback_key=False,
) -> None:  # fmt: skip
    """``grade LESSON SUBMISSIONS --roster R``: the platform's zip (or its unpacked folder),
    each student's latest sheet graded under the roster row its file name's id points to."""
    import tempfile

    from tutor.assess import classgrade as cg
    from tutor.assess import submissions as sub
    from tutor.core.roster import students_of

    inputs = [path, *(Path(x.path) for x in lessons.lessons if x.path), roster]
    flags_out = _flags_file(csv_out)
    for target, option in ((csv_out, "--csv"), (output, "--output"), (flags_out, "--csv"),
                           (items_out, "--items")):  # fmt: skip
        _not_an_input(target, option, inputs)
    students = students_of(table)
    with tempfile.TemporaryDirectory(prefix="attn-tutor-submissions-") as tmp:
        handed = sub.read_handover(path, students, table.path, Path(tmp))
        if not handed.files and not handed.bad:
            said = f" ({'; '.join(handed.notes)})" if handed.notes else ""
            raise TutorError(f"{path} holds no answer sheet{said}")
        collect_as_we_go()
        grades = cg.grade_class(lessons, handed.files, force, handed.bad)
        grades.notes[:0] = handed.notes
        sub.bind(grades, handed)
        # inside: the JSON and the feedback read each sheet again from the unpacked files
        _class_outputs(grades, json_out, csv_out, report, output, kind, lms, table, assignment,
                       scale, feedback_dir, hold_flagged, items_out, inputs, flags_out,
                       feedback_key)  # fmt: skip


def _grade_options(  # type: ignore[no-untyped-def]
    json_out,
    csv_out,
    report,
    output,
    lms,
    roster,
    assignment,
    out_of,
    feedback_dir,
    handover=False,
) -> tuple[str | None, object]:
    """The options of ``grade`` that go together, checked before any file is read: the
    report's file kind and the --out-of scale."""
    if output is not None and (names_folder(output) or Path(output).is_dir()):
        raise UsageError(
            f"--output {output} names a folder; the report is one file: give its name, ending "
            f".md or .html (such as {Path(output) / 'report.html'})"
        )
    kind = None if output is None else Path(output).suffix.lower().lstrip(".")
    if output is not None and (not report or kind not in ("md", "html", "htm")):
        raise UsageError("--output goes with --report, to a .md or .html file")
    if report and json_out and output is None:
        raise UsageError("--report with --json needs --output FILE (.md or .html): stdout is JSON")
    if lms not in ("plain", "canvas", "moodle"):
        raise UsageError(f"--lms {lms!r}: expected plain, canvas or moodle")
    if lms != "plain" and csv_out is None and feedback_dir is None:
        raise UsageError(
            f"--lms {lms} says the format of the --csv FILE and the --feedback zip; give --csv "
            "FILE or --feedback DIR"
        )
    for value, option in ((roster, "--roster"), (assignment, "--assignment"), (out_of, "--out-of")):
        if option == "--roster" and handover:
            continue  # a platform's download is read with its roster
        if value is not None and lms == "plain":
            raise UsageError(f"{option} goes with --lms canvas or --lms moodle")
    if assignment is not None and not assignment.strip():
        raise UsageError("--assignment is empty; give the assignment's name")
    scale = _out_of(out_of)
    if feedback_dir is not None and feedback_dir.exists() and not feedback_dir.is_dir():
        raise UsageError(f"--feedback {feedback_dir} is a file; give a folder (made if missing)")
    return kind, scale


def _print_class(grades, json_out: bool) -> None:  # type: ignore[no-untyped-def]
    """A class's grades: the table at the terminal, or one JSON object (sheets set aside and
    notes on stderr)."""
    from rich.text import Text

    from tutor.text.words import escape_c1, visible

    err = make_console(stderr=True)
    for note in grades.notes:
        err.print(Text(f"note: {visible(note)}"), soft_wrap=True)
    if json_out:
        import json

        from tutor.assess.grade import report_json

        for b in grades.bad:
            err.print(Text(visible(b.reason)), soft_wrap=True)
        # {"sheets": [...], "bad": [...]}, written a sheet at a time: each report is rebuilt
        # (``Marked.report``), written and let go
        sys.stdout.write('{"sheets": [')
        for k, m in enumerate(grades.graded):
            one = escape_c1(json.dumps(report_json(m.report()), ensure_ascii=False))
            sys.stdout.write(one if k == 0 else ", " + one)
        bad = [{"sheet": b.path, "reason": b.reason} for b in grades.bad]
        sys.stdout.write('], "bad": ' + escape_c1(json.dumps(bad, ensure_ascii=False)) + "}\n")
    else:
        from tutor.assess.class_view import class_table

        console = make_console()
        for part in class_table(grades):
            console.print(part)


def _flags_file(csv_out: Path | None) -> Path | None:
    """Where the flagged sheets go: ``grades.csv`` → ``grades-flags.csv`` beside it."""
    if csv_out is None or str(csv_out) == "-":
        return None
    return csv_out.with_name(f"{csv_out.stem}-flags.csv")


def _write_gradebook(  # type: ignore[no-untyped-def]
    grades, csv_out: Path, lms: str, table, assignment, scale, hold, flags_out
) -> list[str]:
    """The --csv gradebook, in the --lms platform's format, and the flagged sheets in a file of
    their own; the problems it had (said)."""
    from rich.text import Text

    from tutor.assess.classreport import held_lines
    from tutor.assess.gradebooks import flags_csv, gradebook
    from tutor.text.words import visible

    err = make_console(stderr=True)
    book = gradebook(grades, lms, table, assignment, scale, hold)
    for note in book.notes:
        err.print(Text(f"note: {visible(note)}"), soft_wrap=True)
    for problem in book.problems:
        err.print(Text(visible(problem)), soft_wrap=True)
    write_output(book.text, csv_out, force=True)
    flagged = held_lines(grades.graded) if hold else []
    if flagged:
        err.print(Text(f"held {len(flagged)} flagged grade(s), left blank in {csv_out}:"))
        for who, why in flagged:
            err.print(Text(visible(f"  {who}: {why}")), soft_wrap=True)
    text = flags_csv(grades, hold)
    if text is not None and flags_out is not None:
        write_output(text, flags_out, force=True)
        err.print(
            Text(f"wrote {flags_out}: the flagged sheets, for you (not for the platform's import)"),
            soft_wrap=True,
        )
    return list(book.problems)


def _class_report(grades, output: Path | None, kind: str | None, hold: bool = False) -> None:  # type: ignore[no-untyped-def]
    """What the class got wrong: at the terminal, or to a .md or .html file."""
    from tutor.assess import class_view
    from tutor.assess.classreport import summarize

    summary = summarize(grades.graded, tuple((b.path, b.reason) for b in grades.bad), hold)
    if output is None:
        console = make_console()
        for part in class_view.summary_view(summary):
            console.print(part)
    else:
        page = class_view.markdown if kind == "md" else class_view.html_page
        write_output(page(summary), output, force=True)


def _write_items(grades: "ClassGrades", path: Path) -> None:
    """--items FILE: the item analysis as CSV, and its reading on screen."""
    from rich.text import Text

    from tutor.assess.classreport import summarize
    from tutor.assess.items import items_csv
    from tutor.text.words import visible

    summary = summarize(grades.graded)
    write_output(items_csv(list(summary.items)), path, force=True)
    err = make_console(stderr=True)
    wrote = "" if str(path) == "-" else f"wrote {path}: "
    err.print(Text(visible(wrote + summary.reading)), soft_wrap=True)


def _out_of(text: str | None) -> "sympy.Rational | None":
    """--out-of N as an exact number of points; a bad one is a usage error."""
    if text is None:
        return None
    from tutor.assess.gradebooks import number

    try:
        return number(text, "--out-of")
    except TutorError as e:
        raise UsageError(str(e)) from None


def _write_feedback(  # type: ignore[no-untyped-def]
    grades: "ClassGrades",
    folder: Path,
    inputs: "list[Path]",
    lms: str = "plain",
    table=None,
    key: bool = False,
) -> None:
    """One .md and one .html per graded sheet, named after the student (a blank sheet's with
    the answer key only when ``key``); with --lms canvas or moodle, also the zip that platform's
    bulk feedback upload takes."""
    from tutor.assess import feedback as fb

    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise TutorError(f"cannot make the folder {folder}: {err.strerror or err}") from None
    stems = fb.file_stems(grades.graded)
    for stem in stems:
        for suffix in (".md", ".html"):
            _not_an_input(folder / f"{stem}{suffix}", "--feedback", inputs)
    pages = []  # each sheet's marks and its page's file: the zip reads them back
    for m, stem in zip(grades.graded, stems, strict=True):
        f = fb.feedback(m.report(), key)  # rebuilt, written and let go, a sheet at a time
        write_output(fb.markdown(f), folder / f"{stem}.md", force=True)
        write_output(fb.html_page(f), folder / f"{stem}.html", force=True)
        pages.append((m, folder / f"{stem}.html"))
    if lms in ("canvas", "moodle"):
        _feedback_zip(grades, pages, folder, lms, table, inputs)


UPLOADS = {
    "canvas": "Assignment → Re-Upload Submissions",
    "moodle": "View all submissions → Upload multiple feedback files in a zip",
}
LEFT_OUT = {  # why a student's page is not in the upload zip
    "canvas": "no Canvas submission of theirs in the download to attach a comment to",
    "moodle": "no participant id (the grading worksheet's Identifier)",
}


def _feedback_zip(grades, pages, folder: Path, lms: str, table, inputs) -> None:  # type: ignore[no-untyped-def]
    """``DIR/canvas-feedback.zip`` or ``DIR/moodle-feedback.zip``, each student's page named as
    the platform's bulk upload expects; who could not be put in it, said."""
    from rich.text import Text

    from tutor.assess.gradebooks import match
    from tutor.assess.submissions import feedback_name, feedback_zip
    from tutor.core.roster import students_of
    from tutor.text.words import visible

    owners = dict(grades.owners)
    if table is not None:  # sheets not from a download: their roster row, by id or name
        students = students_of(table)
        by_line = {s.line: s for s in students}
        rest = [r for r, _ in pages if r.sheet.path not in owners]
        for line, r in match(rest, students)[0].items():
            owners[r.sheet.path] = by_line[line]
    named, left = [], []
    for r, page in pages:
        owner = owners.get(r.sheet.path)
        name = feedback_name(lms, grades.handed.get(r.sheet.path), owner)
        if name is None:
            left.append(owner.shown if owner else r.sheet.student or r.sheet.path)
        else:
            named.append((name, page))
    target = folder / f"{lms}-feedback.zip"
    err = make_console(stderr=True)
    if named:
        _not_an_input(target, "--feedback", inputs)
        write_output(feedback_zip(named), target, force=True)  # (the pages read as zipped)
        upload = UPLOADS[lms]
        err.print(Text(f"wrote {target}: {len(named)} feedback page(s), for {upload}"),
                  soft_wrap=True)  # fmt: skip
    if left:
        why = LEFT_OUT[lms]
        err.print(Text(visible(f"note: not in {target.name} ({why}): {'; '.join(left)}")),
                  soft_wrap=True)  # fmt: skip


def _not_an_input(target: Path | None, option: str, inputs: "list[Path]") -> None:
    """Refuse to write a gradebook or report over a sheet being graded or a lesson."""
    if target is None or str(target) == "-":
        return
    for path in inputs:
        try:
            same = os.path.samefile(target, path)
        except OSError:  # the target does not exist yet (or cannot be read): nothing to lose
            same = False
        if same:
            raise UsageError(
                f"{option} {target} is {path}, one of the files being graded; the gradebook "
                "would replace it: write it to a file of its own"
            )


def _grade_one(lessons: "Lessons", path: Path, json_out: bool, force: bool) -> None:
    """``grade LESSON SHEET``: one sheet's verdicts, cell by cell."""
    from rich.text import Text

    from tutor.assess import grade as gr
    from tutor.assess.sheet import read_header, read_sheet
    from tutor.text.words import escape_c1, visible

    header, root = read_header(path)
    d = lessons.derived(lessons.pick(header))
    read = read_sheet(path, d, force, root)
    for note in read.notes:
        say_note(note)
    report = gr.grade(d, read)
    if json_out:
        import json

        for problem in read.problems:  # the unreadable cells: on stderr, stdout stays JSON
            make_console(stderr=True).print(Text(visible(str(problem))), soft_wrap=True)
        text = json.dumps(gr.report_json(report), ensure_ascii=False)
        sys.stdout.write(escape_c1(text) + "\n")  # the sheet's text: no raw DEL or C1
        return
    from tutor.assess.report import report as render_report

    console = make_console()
    for part in render_report(report, console.width):
        console.print(part)


def _seconds(value: float) -> float:
    """--timeout: a finite number of seconds from 1 to 600 (click's range lets nan through)."""
    if not 1 <= value <= 600:  # False for nan as for anything out of range
        raise typer.BadParameter(f"{value:g} is not a number of seconds from 1 to 600")
    return value


def check_code(
    lesson: Annotated[
        str, typer.Argument(help="A bundled lesson's name or a path to a .yaml file.")
    ],
    file: Annotated[
        Path,
        typer.Argument(
            help="Your Python file, defining attention(X, W_Q, W_K, W_V, mask=None); or a "
            "folder of students' files, each checked behind walls.",
            metavar="FILE_OR_DIR",
        ),
    ],
    function: Annotated[
        str, typer.Option("--function", help="The function to call.", metavar="NAME")
    ] = "attention",
    timeout: Annotated[
        float,
        typer.Option(
            help="Seconds your file may take (1 to 600); in a folder, each file.",
            metavar="SECONDS",
            callback=_seconds,
        ),
    ] = 20,
    json_out: Annotated[
        bool,
        typer.Option("--json", help="A folder: print one JSON object (a result per file)."),
    ] = False,
    jobs: Annotated[
        int | None,
        typer.Option(
            "--jobs",
            help="A folder: check this many files at once (default: the number of cores).",
            metavar="N",
            min=1,
            max=64,
        ),
    ] = None,
    memory: Annotated[
        int,
        typer.Option(
            "--memory",
            help="A folder: the memory each file's process may use, in MB (256 to 65536).",
            metavar="MB",
            min=256,
            max=65536,
        ),
    ] = 1024,
    lessons_dir: LessonsDirOpt = None,
) -> None:
    """Check your own NumPy attention against the lesson, step by step (runs your file).

    Given a folder, checks every .py in it (and its subfolders), each in its own process with a
    memory cap, a CPU time limit, a file-size cap, a fresh empty working folder, a scrubbed
    environment, no network and no writes outside that folder where the machine allows; prints a
    table (or --json). Exit 0 when every file passes, 1 when any fails, 2 for a bad command line.
    """
    from rich.text import Text

    from tutor.assess import codecheck as cc
    from tutor.core.catalog import is_dir, is_file
    from tutor.core.engine import derive
    from tutor.text.words import visible

    if not is_dir(file):
        given = [o for o, v in (("--json", json_out), ("--jobs", jobs)) if v]
        given += ["--memory"] if memory != 1024 else []
        if given:
            raise UsageError(f"{', '.join(given)}: for a folder of files; {file} is not one")
    d = derive(open_lesson(lesson, lessons_dir))  # the lesson first: its errors name it
    if is_dir(file):
        _check_class(d, file, function, timeout, json_out, jobs or os.cpu_count() or 1, memory)
        return
    if not is_file(file) or file.suffix.lower() != ".py":
        raise TutorError(f"{file}: expected a Python file (.py) with your attention function")
    report, printed = cc.check_file(d, str(file), function, timeout)
    console = make_console()
    if printed.strip():  # already cut to its first few KB, with how much more there was
        console.print(Text("Your code printed:", style="dim"))
        console.print(Text(visible(printed.rstrip(), keep="\n"), style="dim"))
    for line in cc.report_text(report):
        console.print(Text(visible(line)), soft_wrap=True)  # a path stays on its line
    if not report.ok:
        raise typer.Exit(EXIT_INPUT)


def _check_class(
    d: "Derivation", folder: Path, function: str, timeout: float, json_out: bool, jobs: int,
    memory: int,
) -> None:  # fmt: skip
    """check-code on a folder: every file behind walls, a table or JSON; exit 1 if any fails."""
    from rich.table import Table
    from rich.text import Text

    from tutor.assess import classcode
    from tutor.assess.walls import missing, walls
    from tutor.text import theme
    from tutor.text.words import escape_c1, visible

    w = walls(memory * 1024 * 1024, timeout)
    for note in missing(w):  # said once, on stderr (stdout may be JSON)
        say_note(note)
    progress = make_console(stderr=True)
    if progress.is_terminal:  # a class takes a while: say how far it is, then clear the line
        with progress.status(Text(f"checking {visible(str(folder))}…")) as status:

            def done_one(done: int, of: int) -> None:
                status.update(Text(f"checked {done} of {of} files in {visible(str(folder))}…"))

            result = classcode.check_class(d, folder, w, function, timeout, jobs, None, done_one)
    else:
        result = classcode.check_class(d, folder, w, function, timeout, jobs)
    if json_out:
        import json

        text = json.dumps(classcode.as_json(result), ensure_ascii=False)
        sys.stdout.write(escape_c1(text) + "\n")
    else:
        console = make_console()
        table = Table("File", "Verdict", "First mismatch or error", show_lines=False)
        for name, verdict, line in classcode.rows(result):
            style = {"pass": theme.GOOD, "skipped": "dim"}.get(verdict, theme.BAD)
            table.add_row(Text(visible(name)), Text(verdict, style=style), Text(visible(line)))
        console.print(table)
        console.print(Text(classcode.summary(result)))
    if not result.ok:
        raise typer.Exit(EXIT_INPUT)


def autograder(
    lesson: Annotated[
        str,
        typer.Argument(
            help="The lesson (name or .yaml), or the folder of variants the class's forms and "
            "sheets were made from.",
            metavar="LESSON_OR_DIR",
        ),
    ],
    output: Annotated[
        Path,
        typer.Option("--output", "-o", help="The zip to write (autograder.zip).", metavar="FILE"),
    ],
    force: Annotated[bool, typer.Option("--force", help="Replace FILE if it exists.")] = False,
    lessons_dir: LessonsDirOpt = None,
) -> None:
    """Write a Gradescope autograder (a zip) that grades each student's uploaded sheet."""
    from tutor.assess import classgrade as cg
    from tutor.export.autograder import build

    if output.suffix.lower() != ".zip":
        raise UsageError(f"--output {output}: Gradescope takes a .zip; name it autograder.zip")
    if cg.is_dir(Path(lesson)):
        found = cg.lessons_from_folder(Path(lesson)).lessons  # each variant checked first
        files = [(Path(x.path).name, Path(x.path).read_text(encoding="utf-8")) for x in found]
    else:
        one = open_lesson(lesson, lessons_dir)
        files = [(f"{one.name}.yaml", Path(one.path).read_text(encoding="utf-8"))]
    built = build(files)
    for note in built.notes:
        say_note(note)
    write_output(built.data, output, force)
    make_console(stderr=True).print(
        f"wrote {output}: {len(files)} lesson file(s); upload it as the assignment's autograder",
        markup=False,
        highlight=False,
    )
