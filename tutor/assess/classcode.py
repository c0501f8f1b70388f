"""``check-code LESSON DIR``: every student's ``.py`` in a class folder, each in its own process
behind walls (``tutor.assess.walls``), up to ``jobs`` at a time; one result per file.

A folder is walked in sorted order, into its subfolders (Moodle hands in a folder per student);
hidden entries and ``__pycache__`` are passed over; a link is followed only to a regular file
inside the folder, and set aside otherwise, never run. Pure of printing: the command prints the
table (``rows``) or the JSON (``as_json``).
"""

from __future__ import annotations

import os
import stat
import threading
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path

from tutor.assess import codecheck as cc
from tutor.assess.walls import Walls, describe, missing
from tutor.core.engine import Derivation
from tutor.core.errors import TutorError

VERDICTS = ("pass", "mismatch", "error", "skipped")


@dataclass(frozen=True)
class FileResult:
    """One file of the class: what its function did, or why it was not run."""

    file: str  # its path inside the folder, with / between parts
    report: cc.CodeReport | None  # None: set aside, not run
    printed: str = ""  # what it printed, cut to its first few KB (with how much more)
    seconds: float = 0.0  # wall time of its process
    skipped: str | None = None  # why it was set aside

    @property
    def verdict(self) -> str:
        if self.report is None:
            return "skipped"
        if self.report.ok:
            return "pass"
        return "mismatch" if self.report.difference is not None else "error"

    @property
    def line(self) -> str:
        """The first mismatch or the error, in one line (or how much matched)."""
        if self.report is None:
            return str(self.skipped)
        if self.report.ok:
            n = len(self.report.checked)
            return f"{n} steps match the lesson" if n != 1 else "1 step matches the lesson"
        first = next((t for t in cc.report_text(self.report) if t.startswith("✗ ")), "✗ ?")
        slip = self.report.difference.slip if self.report.difference else None
        return first.removeprefix("✗ ") + (f" ({slip})" if slip else "")


@dataclass(frozen=True)
class ClassCode:
    lesson: str
    folder: str
    walls: Walls
    results: list[FileResult]

    @property
    def ok(self) -> bool:
        """Every file that ran passed (files set aside are not counted)."""
        return all(r.verdict in ("pass", "skipped") for r in self.results)


def code_files(folder: Path) -> list[tuple[str, Path | None, str | None]]:
    """Each ``.py`` in the folder and its subfolders, sorted by path: (label, path, None), or
    (label, None, why) for one set aside (a link out of the folder, to nothing, to a folder)."""
    inside = folder.resolve()
    out: list[tuple[str, Path | None, str | None]] = []

    def visit(here: Path, prefix: str) -> None:
        try:
            entries = sorted(os.scandir(here), key=lambda e: e.name)
        except OSError as err:
            out.append((prefix or ".", None, f"cannot be read ({err.strerror or err})"))
            return
        for e in entries:
            if e.name.startswith(".") or e.name == "__pycache__":
                continue
            label = prefix + e.name
            if e.is_dir(follow_symlinks=False):
                visit(Path(e.path), label + "/")
            elif e.name.lower().endswith(".py"):
                why = _not_followed(Path(e.path), inside)
                out.append((label, None if why else Path(e.path), why))

    visit(folder, "")
    return out


def _not_followed(f: Path, inside: Path) -> str | None:
    """Why the entry ``f`` is not run, or None: a link is followed only to a regular file
    inside the class folder."""
    try:
        mode = f.lstat().st_mode
        if stat.S_ISLNK(mode):
            try:
                target = f.resolve(strict=True)
            except (FileNotFoundError, RuntimeError):
                return "a link to nothing, or a loop of links: not run"
            if not target.is_relative_to(inside):
                return "a link to a file outside the folder: not followed"
            mode = target.stat().st_mode
    except OSError as err:
        return f"cannot be read ({err.strerror or err})"
    if not stat.S_ISREG(mode):
        return "not a regular file: not run"
    return None


def check_class(
    d: Derivation,
    folder: Path,
    walls: Walls,
    function: str = "attention",
    limit: float = cc.TIME_LIMIT,
    jobs: int = 1,
    cancel: threading.Event | None = None,
    done_one: Callable[[int, int], None] | None = None,
) -> ClassCode:
    """Check every file of the folder, ``jobs`` at a time; ``done_one(done, of)`` is called
    (in this thread) as each file is done. Ctrl-C (KeyboardInterrupt here) ends every running
    child before it goes on up."""
    cc.calls(d)  # a lesson that cannot be checked is refused before any file runs
    found = code_files(folder)
    if not found:
        raise TutorError(f"{folder}: no .py file in this folder; expected the students' files")
    cancel = cancel or threading.Event()

    def one(label: str, path: Path) -> FileResult:
        start = time.monotonic()
        report, printed = cc.check_file(d, str(path), function, limit, walls, cancel)
        here = str(path.resolve())
        if report.problem:  # the folder's own path is noise in a class's table
            report.problem = report.problem.replace(here, label).replace(str(path), label)
        return FileResult(label, report, printed, round(time.monotonic() - start, 2))

    results: dict[str, FileResult] = {}
    pool = ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="check-code")
    try:
        running: dict[Future[FileResult], str] = {}
        for label, path, why in found:
            if path is None:
                results[label] = FileResult(label, None, skipped=why)
            else:
                running[pool.submit(one, label, path)] = label
        pending = set(running)
        while pending:
            done, pending = wait(pending, timeout=0.2, return_when=FIRST_COMPLETED)
            for f in done:
                results[running[f]] = f.result()
            if done and done_one is not None:
                done_one(len(running) - len(pending), len(running))
    except BaseException:
        cancel.set()  # each running child is ended within a tenth of a second
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    pool.shutdown()
    return ClassCode(d.lesson.name, str(folder), walls, [results[label] for label, _, _ in found])


def _number(x: float) -> float | str:
    """A float for JSON: NaN and the infinities as text (JSON has no such numbers)."""
    if x != x:
        return "NaN"
    if x in (float("inf"), float("-inf")):
        return "inf" if x > 0 else "-inf"
    return x


def as_json(c: ClassCode) -> dict[str, object]:
    """The class's results as one JSON object (schema: docs, reference/json-output.md)."""
    files = []
    for r in c.results:
        rep = r.report
        diff = rep.difference if rep else None
        files.append(
            {
                "file": r.file,
                "verdict": r.verdict,
                "line": r.line,
                "checked": [{"step": s, "head": h} for h, s in rep.checked] if rep else [],
                "mismatch": None
                if diff is None
                else {
                    "step": diff.step,
                    "head": diff.head,
                    "row": diff.row or None,
                    "col": diff.col or None,
                    "got": _number(diff.got) if diff.row else None,
                    "expected": _number(diff.expected) if diff.row else None,
                    "slip": diff.slip,
                    "why": diff.why,
                },
                "problem": rep.problem if rep else r.skipped,
                "printed": r.printed,
                "seconds": r.seconds,
            }
        )
    counts = {v: sum(r.verdict == v for r in c.results) for v in VERDICTS}
    return {
        "lesson": c.lesson,
        "folder": c.folder,
        "walls": {**describe(c.walls), "missing": missing(c.walls)},
        "files": files,
        "counts": counts,
        "ok": c.ok,
    }


def rows(c: ClassCode) -> list[tuple[str, str, str]]:
    """The table's rows: file, verdict, the first mismatch or error line."""
    return [(r.file, r.verdict, r.line) for r in c.results]


def summary(c: ClassCode) -> str:
    """One line under the table: how many of each verdict."""
    counts = {v: sum(r.verdict == v for r in c.results) for v in VERDICTS}
    said = ", ".join(f"{n} {v}" for v, n in counts.items() if n)
    return f"{len(c.results)} file{'s' if len(c.results) != 1 else ''}: {said}"
