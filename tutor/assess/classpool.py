"""A class's sheets graded on every core: a pool of forked workers, each grading whole sheets
and sending back only the verdicts, from which the parent builds the very ``Report`` the serial
grading gives (``grade.grade``). No printing, no files.

Why and how:

* The judge's search for slips is nearly all of a class's time, and sheets are independent:
  ``fork`` hands each worker the parent's derivations (and their judges) and the sheets already
  read, so a worker is told only a sheet's number and derives nothing again.
* A worker sends back, per cell, its verdict, whether it is carried, whether it is an attempt and
  the names of its slips, and per step whether it is an attempt: a few hundred bytes a sheet.
  The parent rebuilds the ``Graded`` cells with the sheet's own entries and the ``_Grader`` the
  report's ``usable`` reads, so tables, JSON, reports, feedback and integrity flags are those of
  the serial code, byte for byte (tests/test_classpool.py).
* Serial where a pool cannot pay: one core, fewer than ``MIN_SHEETS`` sheets, no ``fork`` on
  the platform, or inside a worker. A sheet whose grading raised in a worker is graded again in
  the parent, which raises as the serial code does.
* Ctrl-C: the workers ignore SIGINT; the parent's KeyboardInterrupt ends the pool (its workers
  terminated and joined) and goes on up, to exit 130.
* Memory: the parent grades nothing, so the judge's working and its garbage stay in the
  workers, each with the cyclic collector on; the parent keeps only the reports.
"""

from __future__ import annotations

import gc
import os
import signal
import sys
from collections.abc import Sequence

from tutor.assess import grade as gr
from tutor.assess.catalogue import Slip
from tutor.assess.sheet import Sheet, fill_steps
from tutor.core.engine import Derivation

MIN_SHEETS = 8  # fewer sheets than this: the pool's start costs more than it saves
CHUNK = 4  # sheets per message to a worker

_JOBS: Sequence[tuple[Derivation, Sheet]] = ()  # what the forked workers grade (inherited)
_IN_WORKER = False

# one sheet's verdicts: per cell (verdict's number in ``grade.VERDICTS``, carried, attempt,
# slips), per step its attempt
Compact = tuple[list[tuple[int, bool, bool, tuple[Slip, ...]]], list[bool]]
VERDICT = {v: k for k, v in enumerate(gr.VERDICTS)}


def workers(sheets: int) -> int:
    """How many workers grade ``sheets`` sheets: 0 (serial) or one per core."""
    cores = os.cpu_count() or 1
    if _IN_WORKER or cores < 2 or sheets < MIN_SHEETS or sys.platform == "win32":
        return 0
    import multiprocessing as mp

    if "fork" not in mp.get_all_start_methods():
        return 0
    return min(cores, (sheets + CHUNK - 1) // CHUNK)


def grade_all(jobs: Sequence[tuple[Derivation, Sheet]]) -> list[gr.Report]:
    """``grade.grade(d, sheet)`` of every job, in order: on every core when it pays."""
    n = workers(len(jobs))
    if not n:
        return [gr.grade(d, sheet) for d, sheet in jobs]
    import multiprocessing as mp

    from tutor.assess.judge import judge_for

    for d in {id(d): d for d, _ in jobs}.values():
        judge_for(d)  # made once, before the fork: every worker inherits it
    global _JOBS
    _JOBS = jobs
    try:
        with mp.get_context("fork").Pool(n, initializer=_start) as pool:
            done = list(pool.imap(_grade_one, range(len(jobs)), chunksize=CHUNK))
    finally:
        _JOBS = ()
    seen: dict[Slip, Slip] = {}
    return [
        rebuilt(d, sheet, compact, seen) if compact is not None else gr.grade(d, sheet)
        for (d, sheet), compact in zip(jobs, done, strict=True)
    ]


def _start() -> None:
    """In each worker: Ctrl-C is the parent's to handle; the collector on (a worker grades
    many sheets, and the judge's working leaves reference cycles), over its own objects only."""
    global _IN_WORKER
    _IN_WORKER = True
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # the pool's terminate(): end, quietly
    gc.freeze()  # what it inherits is never walked (and so never copied) by its collector
    gc.enable()


def _grade_one(k: int) -> Compact | None:
    """In a worker: sheet ``k`` graded, as verdicts (None when grading raised: the parent
    grades it again and raises as the serial code does)."""
    d, sheet = _JOBS[k]
    try:
        return compact(gr.grade(d, sheet))
    except Exception:
        return None


def compact(report: gr.Report) -> Compact:
    """What a report says beyond its lesson and sheet: each cell's verdict, and per step
    (in ``fill_steps`` order) whether it was read as an attempt."""
    cells = [(VERDICT[g.verdict], g.carried, g.attempt, g.slips) for g in report.cells]
    grader = report.usable.__self__  # type: ignore[attr-defined]
    steps = [grader._attempts[id(step)] for step in fill_steps(report.d)]
    return cells, steps


def rebuilt(
    d: Derivation, sheet: Sheet, got: Compact, slips_seen: dict[Slip, Slip] | None = None
) -> gr.Report:
    """The report ``grade.grade(d, sheet)`` gives, from its ``compact`` verdicts. Each slip
    unpickled is replaced by the first equal one seen (``slips_seen``), and each verdict is
    ``grade.VERDICTS``' own string: a class's reports share them rather than hold copies."""
    cells, attempts = got
    seen = {} if slips_seen is None else slips_seen
    grader = gr._Grader(d, sheet, junk=False)  # (read only while grading: the worker did)
    report = gr.Report(d, sheet, usable=grader.usable)
    it = iter(cells)
    for step, attempt in zip(fill_steps(d), attempts, strict=True):
        sid = id(step)  # one int per step, shared by its cells' keys
        grader._attempts[sid] = attempt
        for i, j in d.asked(step):
            verdict, carried, attempt_, slips = next(it)
            slips = tuple(seen.setdefault(s, s) for s in slips)
            entry = sheet.entry(step, i, j)
            g = gr.Graded(step, i, j, entry, gr.VERDICTS[verdict], carried, slips, attempt_)
            grader.graded[(sid, i, j)] = g
            report.cells.append(g)
    return report
