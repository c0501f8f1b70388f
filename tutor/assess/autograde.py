"""Gradescope's side of a class: what one student uploaded, graded into Gradescope's
``results.json`` (``score``, one test per step with its points and feedback, ``output``,
``execution_time``, ``stdout_visibility``).

``autograde(submission, lessons)`` is pure apart from reading the upload: a folder in, the
results as a dict out. A wrong upload (nothing, a picture, two sheets, a sheet of another
assignment, a file that is no sheet) scores 0 with a message saying what to upload; nothing
raises. ``main`` is what the zip's ``run_autograder`` calls (``python -m
tutor.assess.autograde``): it reads ``$AUTOGRADER_ROOT`` (default ``/autograder``), the
lessons in ``source/lessons/``, the upload in ``submission/``, and writes
``results/results.json``.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from tutor.assess import classgrade as cg
from tutor.assess import grade as gr
from tutor.assess.sheet import identity, read_header, read_sheet
from tutor.core.errors import TutorError

UPLOAD = (
    "Upload one answer sheet: the .json file the worksheet form's download button saves "
    "(or your filled .yaml sheet from attn-tutor export --format sheet)."
)
SKIP = ("__MACOSX",)  # what a zip made on a Mac adds beside the files


def autograde(submission: Path, lessons: cg.Lessons) -> dict[str, object]:
    """The results of one upload, in Gradescope's format (without ``execution_time``)."""
    files = sorted(
        f
        for f in submission.rglob("*")
        if f.is_file()
        and not any(p.startswith(".") or p in SKIP for p in f.relative_to(submission).parts)
    )
    if not files:
        return refused(f"Nothing was uploaded. {UPLOAD}")
    sheets, others = [], []
    for f in files:
        why = None if cg.named_as_sheet(f) else cg.not_a_sheet(f)
        (sheets if why is None else others).append((f, why))
    shown = [str(f.relative_to(submission)) for f, _ in sheets]
    if not sheets:
        named = "; ".join(f"{f.relative_to(submission)} is not an answer sheet" for f, _ in others)
        return refused(f"{named}. {UPLOAD}")
    if len(sheets) > 1:
        return refused(
            f"{len(sheets)} answer sheets were uploaded ({', '.join(shown)}); "
            f"upload exactly one. {UPLOAD}"
        )
    path = sheets[0][0]
    try:
        report, notes = _graded(path, lessons)
    except TutorError as err:
        reason = str(err).replace(str(path), shown[0])
        return refused(f"{shown[0]} could not be graded: {reason}. {UPLOAD}")
    return results(report, notes)


def _graded(path: Path, lessons: cg.Lessons) -> tuple[gr.Report, list[str]]:
    """The sheet graded against its lesson (a variant found from the sheet); raise
    ``TutorError`` saying why it cannot be."""
    header, root = read_header(path)
    lesson = lessons.pick(header)
    fit = identity(header, lesson)
    if not fit.ok:
        said = f"variant {header.variant}" if header.variant else f"lesson {header.lesson}"
        raise TutorError(
            f"this sheet is for another assignment or version ({said}, fingerprint "
            f"{header.fingerprint}), not this one ({lesson.name}); download this assignment's "
            "form or sheet and upload what it saves"
        )
    d = lessons.derived(lesson)
    sheet = read_sheet(path, d, False, root)
    notes = [p.message for p in sheet.problems]
    return gr.grade(d, sheet), notes


def refused(message: str) -> dict[str, object]:
    """A score of 0 and what to upload instead."""
    return {"score": 0, "output": message, "tests": [], "stdout_visibility": "hidden"}


def results(report: gr.Report, notes: list[str]) -> dict[str, object]:
    """A graded sheet as Gradescope's results: one test per step."""
    from tutor.assess.feedback import feedback

    fb = feedback(report)
    lost = {c.name: c for c in fb.lost}
    tests = []
    for (step, cells), (_, earned, worth) in zip(
        report.steps(), report.points_by_step(), strict=True
    ):
        right = sum(g.points for g in cells)
        lines = [f"{right} of {len(cells)} cells right."]
        carried = [g.name for g in cells if g.verdict == "follow-through"]
        if carried:
            lines.append("Right from your own earlier answers: " + ", ".join(carried) + ".")
        for g in cells:
            c = lost.get(g.name)
            if c is None:
                continue
            wrote = f"you wrote {c.written}" if c.written else "left blank"
            own = f"; from your own answers it is {c.own}" if c.own else ""
            line = f"{c.name}: {wrote}; expected {c.expected}{own}"
            lines.append(line + (f"\n  {c.slip}" if c.slip else ""))
            lines.append("  " + c.working.replace("\n", "\n  "))
        tests.append(
            {
                "name": step.key,
                "score": gr.points_number(earned),
                "max_score": worth,
                "output": "\n".join(lines),
                "visibility": "visible",
            }
        )
    who = f"{fb.student}: " if fb.student else ""
    top = [f"{who}{fb.points} of {fb.out_of} points ({fb.percent}%)."]
    top += [sentence for _, sentence in fb.slips]
    if notes:
        top += ["Entries that could not be read or placed (graded wrong):", *notes]
    return {
        "score": gr.points_number(report.points),
        "output": "\n".join(top),
        "tests": tests,
        "stdout_visibility": "hidden",
    }


def run(root: Path) -> dict[str, object]:
    """Grade ``root/submission`` against ``root/source/lessons`` and write
    ``root/results/results.json``; return what was written. Never raises for a bad upload."""
    start = time.monotonic()
    try:
        folder = root / "source" / "lessons"
        if not folder.is_dir():
            raise TutorError(f"{folder} is missing; rebuild the zip with attn-tutor autograder")
        lessons = cg.lessons_from_folder(folder)
        out = autograde(root / "submission", lessons)
    except TutorError as err:  # the autograder itself is broken: the instructor must know
        out = refused(f"The autograder could not load its lesson ({err}); tell your instructor.")
    except Exception as err:  # a bug: still a results.json, never a traceback for a student
        out = refused(
            f"The autograder failed ({type(err).__name__}); your upload is kept. "
            "Tell your instructor, who can rerun it."
        )
    out["execution_time"] = round(time.monotonic() - start, 3)
    results_dir = root / "results"
    results_dir.mkdir(parents=True, exist_ok=True)
    (results_dir / "results.json").write_text(json.dumps(out, ensure_ascii=False, indent=1) + "\n")
    return out


def main() -> int:
    """``run_autograder``'s entry point: ``$AUTOGRADER_ROOT`` (default ``/autograder``)."""
    root = Path(os.environ.get("AUTOGRADER_ROOT") or "/autograder")
    out = run(root)
    print(f"score {out['score']}")  # for the instructor's view of the run (stdout is hidden)
    return 0


if __name__ == "__main__":
    sys.exit(main())
