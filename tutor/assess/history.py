"""Quiz history: one JSON line per quiz, appended so that earlier records survive any crash.

Where: ``$ATTN_TUTOR_HOME/history.jsonl``, else the platform's folder for a user's data, as
platformdirs names it: ``$XDG_DATA_HOME/attn-tutor`` or ``~/.local/share/attn-tutor`` on Linux,
``~/Library/Application Support/attn-tutor`` on macOS, ``%LOCALAPPDATA%\\attn-tutor`` on Windows.

Why JSON lines: appending one line (then flush and fsync) never rewrites what is already on
disk, so a crash or Ctrl-C mid-write can at worst leave a torn *last* line. The reader skips a
damaged line and says so; the writer starts a torn file's next record on a new line. A file that
cannot be read at all is renamed aside (``history.jsonl.damaged-<time>``), reported, and a fresh
one is started: history is never the reason a command fails.

The file is the user's to break: it may be huge, a FIFO, a link to ``/dev/zero``, or in a folder
that cannot be written. So it is opened without blocking and used only when it is a regular
file, read a line at a time with every size capped, and a record is taken only when it has the
shape the quiz writes (known steps, at most a quiz's count of cells).
"""

from __future__ import annotations

import json
import os
import stat
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from tutor.core.spec import MAX_HEADS, STEP_NAMES

APP_NAME = "attn-tutor"
FILE_NAME = "history.jsonl"
MAX_BYTES = 50_000_000  # a history larger than this is not ours; set it aside
MAX_CELLS = 200  # a quiz asks at most 200 cells (--count, the lesson's quiz: count)
MAX_RECORD_BYTES = 1_000_000  # 200 cells are about 40 KB as JSON; a longer line is not a record
MAX_LESSON_CHARS = 255  # a lesson's name is a file name's stem
MAX_LESSONS = 1_000  # lessons whose progress is counted; the rest are reported, not counted
MAX_PROBLEMS = 5  # damaged lines named one by one; the rest are counted
MAX_STEPS = len(STEP_NAMES) * (MAX_HEADS + 1)  # rows one lesson can have: each step, per head
MAX_STEP_CHARS = max(map(len, STEP_NAMES))
MAX_SLIPS = 30  # distinct slip names counted per step (the judge knows about twenty)
MAX_SLIP_CHARS = 120  # a slip id, or a tie of a few ("a|b": one answer, one slip)
RECENT_KEPT = 5  # quizzes per step that progress shows (and rates the last three of)


def history_dir() -> Path:
    """The folder history lives in (not created until a record is written)."""
    home = os.environ.get("ATTN_TUTOR_HOME")
    if home:
        return Path(home)
    import platformdirs  # here, not at the top: only the commands that keep history pay for it

    return platformdirs.user_data_path(APP_NAME, appauthor=False)


def history_path() -> Path:
    return history_dir() / FILE_NAME


@dataclass
class History:
    """The records read back, and what was wrong with the file, in words."""

    records: list[dict] = field(default_factory=list)  # type: ignore[type-arg]
    problems: list[str] = field(default_factory=list)


class NotHistory(OSError):
    """The history path is a FIFO, a device, a folder or far too large: not ours to use."""


def open_regular(
    path: Path, flags: int, limit: int = MAX_BYTES, noun: str = "a history file"
) -> int:
    """Open without blocking (a FIFO with no writer, or no reader, would wait for ever) and
    return the descriptor only if it is a regular file of at most ``limit`` bytes (the course
    progress reads its file this way too)."""
    nonblocking = getattr(os, "O_NONBLOCK", 0)  # POSIX; Windows has no FIFOs to wait on
    flags |= nonblocking | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
    fd = os.open(path, flags, 0o666)
    try:
        why = _not_history(os.fstat(fd), limit, noun)
        if why:
            raise NotHistory(why)
        if nonblocking:
            os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _not_history(
    info: os.stat_result, limit: int = MAX_BYTES, noun: str = "a history file"
) -> str | None:
    """Why a file with this status cannot be ``noun`` (of at most ``limit`` bytes), or None."""
    if stat.S_ISREG(info.st_mode):
        size = f"{limit // 1_000_000} MB"
        return f"larger than {size}; not {noun}" if info.st_size > limit else None
    kinds = [(stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a device")]
    kind = next((name for test, name in kinds if test(info.st_mode)), "not a plain file")
    return f"{kind}, not {noun}"


def append(record: dict, path: Path | None = None) -> list[str]:  # type: ignore[type-arg]
    """Append one record; returns problems (in words) instead of raising."""
    line = json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"
    problems: list[str] = []
    try:
        path = path or history_path()
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            why = _not_history(os.stat(path))
        except FileNotFoundError:  # the first quiz (or a link to a file not made yet)
            why = None
        if why:  # not ours: set it aside and start afresh
            problems.append(set_aside(path, NotHistory(why)))
        with open(open_regular(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT), "ab") as f:
            if f.tell() and not _ends_with_newline(path):
                f.write(b"\n")  # a torn last line stays alone on its line
            f.write(line.encode("utf-8"))
            f.flush()
            os.fsync(f.fileno())
    except OSError as err:
        return [*problems, f"could not save this quiz to {path}: {err.strerror or err}"]
    return problems


def _ends_with_newline(path: Path) -> bool:
    with open(open_regular(path, os.O_RDONLY), "rb") as f:
        f.seek(-1, os.SEEK_END)
        return f.read(1) == b"\n"


@dataclass
class _Scan:
    """What one pass over the file found besides the records."""

    problems: list[str] = field(default_factory=list)
    damaged: int = 0  # damaged lines, named in problems up to MAX_PROBLEMS
    records: int = 0


def _lines(f) -> Iterator[tuple[int, bytes | None, bool]]:  # type: ignore[no-untyped-def]
    """(line number, the line or None when it is too long to be a record, is it the last) for
    every non-blank line, reading at most MAX_RECORD_BYTES at a time and MAX_BYTES in all."""
    n, budget = 0, MAX_BYTES
    pending: tuple[int, bytes | None] | None = None
    while budget > 0 and (line := f.readline(min(MAX_RECORD_BYTES + 1, budget))):
        budget -= len(line)
        n += 1
        item: bytes | None = line
        if len(line) > MAX_RECORD_BYTES and not line.endswith(b"\n"):
            item = None
            while budget > 0 and (rest := f.readline(min(MAX_RECORD_BYTES, budget))):
                budget -= len(rest)  # the rest of the line, a bounded chunk at a time
                if rest.endswith(b"\n"):
                    break
        elif not line.strip():
            continue
        if pending is not None:
            yield (*pending, False)
        pending = (n, item)
    if pending is not None:
        yield (*pending, True)


def _records(path: Path, scan: _Scan) -> Iterator[dict]:  # type: ignore[type-arg]
    """Every record of the file, streamed; what was wrong goes to ``scan``. A file with nothing
    of ours in it is set aside once the pass is over."""
    try:
        if not (path.exists() or path.is_symlink()):
            return
        fd = open_regular(path, os.O_RDONLY)
    except OSError as err:
        scan.problems.append(set_aside(path, err))
        return
    with open(fd, "rb") as f:
        for n, line, last in _lines(f):
            rec = _record(line)
            if rec is None:
                scan.damaged += 1
                if scan.damaged <= MAX_PROBLEMS:
                    torn = " (the last one; a quiz was cut off while saving)" if last else ""
                    scan.problems.append(f"{path}:{n}: skipped a damaged record{torn}")
                continue
            scan.records += 1
            yield rec
    if scan.damaged > MAX_PROBLEMS:
        more = scan.damaged - MAX_PROBLEMS
        scan.problems.append(f"{path}: skipped {more} more damaged records")
    if not scan.records and scan.damaged:  # nothing of ours in it: keep it, but out of the way
        scan.problems[:] = [set_aside(path, ValueError("no quiz records in it"))]


def _record(line: bytes | None) -> dict | None:  # type: ignore[type-arg]
    """The record on this line, or None when it is not one the quiz could have written."""
    if line is None:
        return None
    try:  # line by line, so one damaged line never hides the records around it
        rec = json.loads(line.decode("utf-8"))
    except (ValueError, RecursionError):  # RecursionError: nested past json's C stack
        return None
    if not isinstance(rec, dict):
        return None
    cells, lesson = rec.get("cells"), rec.get("lesson")
    if not isinstance(cells, list) or len(cells) > MAX_CELLS:
        return None
    if lesson is not None and (not isinstance(lesson, str) or len(lesson) > MAX_LESSON_CHARS):
        return None
    return rec


def read(path: Path | None = None) -> History:
    """Every readable record; damaged lines are skipped and reported, an unreadable file is set
    aside and reported. Never raises for a bad file. (``summarize`` is what progress uses: it
    keeps counts, not records.)"""
    scan = _Scan()
    try:
        path = path or history_path()
    except OSError as err:
        return History(problems=[f"could not find the history folder: {err.strerror or err}"])
    records = list(_records(path, scan))
    return History(records, scan.problems)


def stream(path: Path | None = None) -> Iterator[dict]:  # type: ignore[type-arg]
    """Every readable record, one at a time (what was wrong is for ``progress`` to report):
    memory stays flat however long the history is."""
    try:
        path = path or history_path()
    except OSError:
        return
    yield from _records(path, _Scan())


def set_aside(path: Path, err: Exception, what: str = "the history") -> str:
    """Rename an unreadable file out of the way (``NAME.damaged-<time>``), so nothing writes
    over it; says so in words."""
    aside = path.with_name(f"{path.name}.damaged-{time.strftime('%Y%m%d-%H%M%S')}")
    why = getattr(err, "strerror", None) or str(err)
    try:
        path.rename(aside)
    except OSError:
        return f"could not read {what} {path} ({why}); it was left where it is"
    return f"could not read {what} {path} ({why}); moved it to {aside} and started afresh"


# ---------------------------------------------------------------------------------------------
# progress


@dataclass
class StepProgress:
    """How one step of one lesson has gone, quiz by quiz (oldest first)."""

    lesson: str
    step: str
    per_quiz: list[tuple[int, int]] = field(default_factory=list)  # (right first try, asked)
    first: int = 0
    hints: int = 0
    missed: int = 0
    slips: dict[str, int] = field(default_factory=dict)  # a named slip -> how often
    recent_hints: list[int] = field(default_factory=list)  # right after hints, per quiz
    recent_skips: list[int] = field(default_factory=list)  # skipped (not tried), per quiz

    @property
    def first_rate(self) -> float:
        return self.first / self.asked if self.asked else 0.0

    @property
    def recent_strength(self) -> float:
        """Like ``recent_rate``, with a right-after-hints cell worth half, and a skipped one
        too (a skip says less than a wrong answer): a step missed outright is the weakest."""
        recent = self.per_quiz[-3:]
        asked = sum(a for _, a in recent)
        helped = sum(self.recent_hints[-3:]) + sum(self.recent_skips[-3:])
        return (sum(r for r, _ in recent) + helped / 2) / asked if asked else 1.0

    @property
    def asked(self) -> int:
        return self.first + self.hints + self.missed

    @property
    def recent_rate(self) -> float:
        """Right-first-try share over the last three quizzes with this step (display only)."""
        recent = self.per_quiz[-3:]
        asked = sum(a for _, a in recent)
        return sum(r for r, _ in recent) / asked if asked else 1.0


@dataclass
class Summary:
    """Progress over a whole history, kept as counts: its size does not grow with the file."""

    rows: list[StepProgress] = field(default_factory=list)  # per lesson and step, first seen
    quizzes: int = 0
    latest: dict[str, int] = field(default_factory=dict)  # lesson -> number of its last quiz
    problems: list[str] = field(default_factory=list)


Table = dict[tuple[str, str], StepProgress]


def _add(table: Table, rec: dict, steps: dict[str, int]) -> None:  # type: ignore[type-arg]
    """Count one quiz record's cells. A cell no quiz could have written (a head beyond the
    limit, a step name longer than any) is left out, and so is a step beyond the number a
    lesson can have (``steps``: how many each lesson has so far), so rows stay bounded."""
    lesson = str(rec.get("lesson"))
    per: dict[tuple[str, str], list[int]] = {}
    for cell in rec.get("cells", []):
        name = cell.get("step") if isinstance(cell, dict) else None
        if not isinstance(name, str) or len(name) > MAX_STEP_CHARS:
            continue
        head = cell.get("head")
        if head is not None and not (type(head) is int and 1 <= head <= MAX_HEADS):
            continue
        key = (lesson, f"head{head}.{name}" if head else name)
        if key not in table:
            if steps.get(lesson, 0) >= MAX_STEPS:
                continue
            steps[lesson] = steps.get(lesson, 0) + 1
        sp = table.setdefault(key, StepProgress(*key))
        outcome = cell.get("outcome")
        if outcome == "first":
            sp.first += 1
        elif outcome == "hints":
            sp.hints += 1
        else:
            sp.missed += 1
        slips = cell.get("slips")
        for slip in slips[:MAX_SLIPS] if isinstance(slips, list) else []:
            fits = isinstance(slip, str) and len(slip) <= MAX_SLIP_CHARS
            if fits and (slip in sp.slips or len(sp.slips) < MAX_SLIPS):
                sp.slips[slip] = sp.slips.get(slip, 0) + 1
        counts = per.setdefault(key, [0, 0, 0, 0])
        counts[0] += outcome == "first"
        counts[1] += 1
        counts[2] += outcome == "hints"
        counts[3] += outcome not in ("first", "hints") and cell.get("skipped") is True
    for key, (right, asked, helped, skipped) in per.items():
        sp = table[key]
        sp.per_quiz.append((right, asked))
        sp.recent_hints.append(helped)
        sp.recent_skips.append(skipped)
        for kept in (sp.per_quiz, sp.recent_hints, sp.recent_skips):
            del kept[:-RECENT_KEPT]  # only the recent ones are ever shown


def progress(records: Iterable[dict]) -> list[StepProgress]:  # type: ignore[type-arg]
    """Per lesson and step, in the order first seen."""
    table: Table = {}
    steps: dict[str, int] = {}
    for rec in records:
        _add(table, rec, steps)
    return list(table.values())


def summarize(path: Path | None = None, lesson: str | None = None) -> Summary:
    """Progress per lesson and step (only ``lesson``'s, when given), streamed from the file.

    At most MAX_LESSONS lessons are counted (a history of more is not one person's; the
    quizzes of the others are reported), so time grows with the file and memory does not."""
    out, scan, table, steps = Summary(), _Scan(), {}, {}
    try:
        path = path or history_path()
    except OSError as err:
        out.problems.append(f"could not find the history folder: {err.strerror or err}")
        return out
    uncounted = 0
    for rec in _records(path, scan):
        name = str(rec.get("lesson"))
        if lesson is not None and name != lesson:
            continue
        if name not in out.latest and len(out.latest) >= MAX_LESSONS:
            uncounted += 1
            continue
        out.quizzes += 1
        out.latest[name] = out.quizzes
        _add(table, rec, steps)
    out.rows, out.problems = list(table.values()), scan.problems
    if uncounted:
        out.problems.append(
            f"{path}: the history names more than {MAX_LESSONS:,} lessons; "
            f"{uncounted:,} quizzes of the others were not counted"
        )
    return out


def practise_next(rows: list[StepProgress]) -> StepProgress | None:
    """The step with the weakest recent record, a miss counting more than a hint (ties: the
    one missed most, then the one asked least)."""
    if not rows:
        return None
    weakest = min(rows, key=lambda r: (r.recent_strength, -r.missed, r.asked))
    return weakest if weakest.recent_strength < 1 else min(rows, key=lambda r: r.asked)
