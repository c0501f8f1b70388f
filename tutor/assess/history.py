"""Quiz history: one JSON line per quiz, appended so that earlier records survive any crash.

Where: ``$ATTN_TUTOR_HOME/history.jsonl``, else ``$XDG_DATA_HOME/attn-tutor/history.jsonl``,
else ``~/.local/share/attn-tutor/history.jsonl``.

Why JSON lines: appending one line (then flush and fsync) never rewrites what is already on
disk, so a crash or Ctrl-C mid-write can at worst leave a torn *last* line. The reader skips a
damaged line and says so; the writer starts a torn file's next record on a new line. A file that
cannot be read at all is renamed aside (``history.jsonl.damaged-<time>``), reported, and a fresh
one is started: history is never the reason a command fails.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

FILE_NAME = "history.jsonl"
MAX_BYTES = 50_000_000  # a history larger than this is not ours; set it aside


def history_dir() -> Path:
    """The folder history lives in (not created until a record is written)."""
    home = os.environ.get("ATTN_TUTOR_HOME")
    if home:
        return Path(home)
    data = os.environ.get("XDG_DATA_HOME")
    base = Path(data) if data else Path.home() / ".local" / "share"
    return base / "attn-tutor"


def history_path() -> Path:
    return history_dir() / FILE_NAME


@dataclass
class History:
    """The records read back, and what was wrong with the file, in words."""

    records: list[dict] = field(default_factory=list)  # type: ignore[type-arg]
    problems: list[str] = field(default_factory=list)


def append(record: dict, path: Path | None = None) -> list[str]:  # type: ignore[type-arg]
    """Append one record; returns problems (in words) instead of raising."""
    path = path or history_path()
    line = json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"
    problems = []
    if path.is_dir() or (path.is_file() and path.stat().st_size > MAX_BYTES):
        problems.append(_set_aside(path, ValueError("not a history file")))
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "ab") as f:
            if f.tell() and not _ends_with_newline(path):
                f.write(b"\n")  # a torn last line stays alone on its line
            f.write(line.encode("utf-8"))
            f.flush()
            os.fsync(f.fileno())
    except OSError as err:
        return [*problems, f"could not save this quiz to {path}: {err.strerror or err}"]
    return problems


def _ends_with_newline(path: Path) -> bool:
    with open(path, "rb") as f:
        f.seek(-1, os.SEEK_END)
        return f.read(1) == b"\n"


def read(path: Path | None = None) -> History:
    """Every readable record; damaged lines are skipped and reported, an unreadable file is set
    aside and reported. Never raises for a bad file."""
    path = path or history_path()
    out = History()
    if not path.exists():
        return out
    try:
        if path.is_dir() or path.stat().st_size > MAX_BYTES:
            raise ValueError("not a history file")
        data = path.read_bytes()
    except (OSError, ValueError) as err:
        out.problems.append(_set_aside(path, err))
        return out
    lines = data.split(b"\n")
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:  # line by line, so one damaged line never hides the records around it
            rec = json.loads(line.decode("utf-8"))
            if not isinstance(rec, dict) or not isinstance(rec.get("cells"), list):
                raise ValueError("not a quiz record")
        except (ValueError, RecursionError):  # RecursionError: nested past json's C stack
            torn = n == len(lines) or (n == len(lines) - 1 and not lines[-1])
            out.problems.append(
                f"{path}:{n}: skipped a damaged record"
                + (" (the last one; a quiz was cut off while saving)" if torn else "")
            )
            continue
        out.records.append(rec)
    if not out.records and out.problems:  # nothing of ours in it: keep it, but out of the way
        out.problems = [_set_aside(path, ValueError("no quiz records in it"))]
    return out


def _set_aside(path: Path, err: Exception) -> str:
    aside = path.with_name(f"{path.name}.damaged-{time.strftime('%Y%m%d-%H%M%S')}")
    why = getattr(err, "strerror", None) or str(err)
    try:
        path.rename(aside)
    except OSError:
        return f"could not read the history {path} ({why}); it was left where it is"
    return f"could not read the history {path} ({why}); moved it to {aside} and started afresh"


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

    @property
    def asked(self) -> int:
        return self.first + self.hints + self.missed

    @property
    def recent_rate(self) -> float:
        """Right-first-try share over the last three quizzes with this step (display only)."""
        recent = self.per_quiz[-3:]
        asked = sum(a for _, a in recent)
        return sum(r for r, _ in recent) / asked if asked else 1.0


def progress(records: Iterable[dict]) -> list[StepProgress]:  # type: ignore[type-arg]
    """Per lesson and step, in the order first seen."""
    table: dict[tuple[str, str], StepProgress] = {}
    for rec in records:
        per: dict[tuple[str, str], list[int]] = {}
        for cell in rec.get("cells", []):
            if not isinstance(cell, dict):
                continue
            head = cell.get("head")
            step = f"head{head}.{cell.get('step')}" if head else str(cell.get("step"))
            key = (str(rec.get("lesson")), step)
            sp = table.setdefault(key, StepProgress(*key))
            outcome = cell.get("outcome")
            if outcome == "first":
                sp.first += 1
            elif outcome == "hints":
                sp.hints += 1
            else:
                sp.missed += 1
            counts = per.setdefault(key, [0, 0])
            counts[0] += outcome == "first"
            counts[1] += 1
        for key, (right, asked) in per.items():
            table[key].per_quiz.append((right, asked))
    return list(table.values())


def practise_next(rows: list[StepProgress]) -> StepProgress | None:
    """The step with the weakest recent record (ties: the one asked least)."""
    if not rows:
        return None
    weakest = min(rows, key=lambda r: (r.recent_rate, r.asked))
    return weakest if weakest.recent_rate < 1 else min(rows, key=lambda r: r.asked)
