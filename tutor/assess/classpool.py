"""A class's sheets graded on every core: a pool of forked workers, each grading whole sheets
and sending back only what the class keeps of each (``marked.Got``: the verdicts packed, the
slips, the integrity check's digest and fits). No printing, no files.

Why and how:

* The judge's search for slips is nearly all of a class's time, and sheets are independent:
  ``fork`` hands each worker the parent's derivations (and their judges) and the list of sheets
  already read and checked, so a worker is told only a sheet's number and derives nothing again.
* A worker reads the sheet again (the text the parent read, by its digest), grades it, and
  sends back a few hundred bytes; the parent keeps a ``marked.Marked`` per sheet (about a byte
  a cell), so tables, JSON, reports, feedback and integrity flags are those of the serial code,
  byte for byte (tests/test_classpool.py), and the parent's memory does not grow with the
  sheets' entries.
* Serial where a pool cannot pay: one core, fewer than ``MIN_SHEETS`` sheets, no ``fork`` on
  the platform, or inside a worker; each sheet is then read, graded and let go in turn. A sheet
  whose grading raised in a worker is graded again in the parent, which raises as the serial
  code does.
* Ctrl-C: the workers ignore SIGINT; the parent's KeyboardInterrupt ends the pool (its workers
  terminated and joined) and goes on up, to exit 130.
* Memory: the parent grades nothing, so the judge's working and its garbage stay in the
  workers, each with the cyclic collector on; the parent keeps only the marks.
"""

from __future__ import annotations

import gc
import os
import signal
import sys
from collections.abc import Sequence
from typing import NamedTuple

from tutor.assess import grade as gr
from tutor.assess.catalogue import Slip
from tutor.assess.marked import Got, Head, Marked, got_of, read_again
from tutor.core.engine import Derivation

MIN_SHEETS = 8  # fewer sheets than this: the pool's start costs more than it saves
CHUNK = 4  # sheets per message to a worker

_JOBS: Sequence[Job] = ()  # what the forked workers grade (inherited)
_VARIANTS: Sequence[Derivation] = ()
_IN_WORKER = False


class Job(NamedTuple):
    """A sheet read and matched to its lesson, to be graded: its file (read again where it is
    graded, and checked to be the text read first: ``text_digest``), and how it is shown."""

    d: Derivation
    file: str
    text_digest: bytes
    head: Head
    force: bool = False


def workers(sheets: int) -> int:
    """How many workers grade ``sheets`` sheets: 0 (serial) or one per core."""
    cores = os.cpu_count() or 1
    if _IN_WORKER or cores < 2 or sheets < MIN_SHEETS or sys.platform == "win32":
        return 0
    import multiprocessing as mp

    if "fork" not in mp.get_all_start_methods():
        return 0
    return min(cores, (sheets + CHUNK - 1) // CHUNK)


def grade_all(jobs: Sequence[Job], variants: Sequence[Derivation] = ()) -> list[Marked]:
    """Every job graded, in order, as the class keeps it (``marked.Marked``): on every core
    when it pays. ``variants``: the class's variants, when more than one (``integrity``)."""
    n = workers(len(jobs))
    if not n:
        return [_marked(job, _got(job, variants)) for job in jobs]
    import multiprocessing as mp

    from tutor.assess.judge import judge_for

    for d in {id(job.d): job.d for job in jobs}.values():
        judge_for(d)  # made once, before the fork: every worker inherits it
    global _JOBS, _VARIANTS
    _JOBS, _VARIANTS = jobs, variants
    seen: dict[Slip, Slip] = {}  # each slip unpickled: the first equal one, shared
    out = []
    try:
        with mp.get_context("fork").Pool(n, initializer=_start) as pool:
            done = pool.imap(_grade_one, range(len(jobs)), chunksize=CHUNK)
            for job, got in zip(jobs, done, strict=True):
                if got is None:  # it raised in the worker: again here, to raise as serial does
                    got = _got(job, variants)
                slips = {k: tuple(seen.setdefault(s, s) for s in v) for k, v in got.slips.items()}
                out.append(_marked(job, got._replace(slips=slips)))
    finally:
        _JOBS, _VARIANTS = (), ()
    return out


def _got(job: Job, variants: Sequence[Derivation]) -> Got:
    """Sheet ``job`` read again, graded, and what the class keeps of it."""
    sheet = read_again(job.d, job.file, job.text_digest, job.head.path, job.force)
    return got_of(gr.grade(job.d, sheet), variants)


def _marked(job: Job, got: Got) -> Marked:
    return Marked(job.d, job.head, job.file, job.text_digest, got)


def _start() -> None:
    """In each worker: Ctrl-C is the parent's to handle; the collector on (a worker grades
    many sheets, and the judge's working leaves reference cycles), over its own objects only."""
    global _IN_WORKER
    _IN_WORKER = True
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # the pool's terminate(): end, quietly
    gc.freeze()  # what it inherits is never walked (and so never copied) by its collector
    gc.enable()


def _grade_one(k: int) -> Got | None:
    """In a worker: sheet ``k`` graded (None when grading raised: the parent grades it again
    and raises as the serial code does)."""
    try:
        return _got(_JOBS[k], _VARIANTS)
    except Exception:
        return None
