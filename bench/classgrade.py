"""Time grading a class in one command against grading one sheet, as an instructor runs them.

Run from the repository root: ``python bench/classgrade.py [--sheets 100] [--repeat 3]``.

Sheets filled by simulated students (tests/students.py: every rounding habit, a named slip on
one sheet in three) for one lesson, then, in a fresh process each time (so the start-up, the
imports and the derivation are counted as an instructor meets them):

* ``attn-tutor grade LESSON ONE-SHEET --json``
* ``attn-tutor grade LESSON FOLDER --csv book.csv`` over all the sheets

and prints the medians and their ratio (the issue asks for at most 10× for 100 sheets).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import yaml  # noqa: E402

from tests import students  # noqa: E402
from tutor.core.engine import derive  # noqa: E402
from tutor.core.lessonfile import load_lesson  # noqa: E402

SLIPS = ("not-scaled", "softmax-column", "query-query", "unnormalised", "digit", "truncated")


def cli(*args: str) -> float:
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "tutor", *args], cwd=ROOT, capture_output=True, text=True
    )
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"attn-tutor {' '.join(args)} failed:\n{done.stderr}")
    return seconds


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sheets", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--lesson", default=str(ROOT / "lessons" / "the-cake.yaml"))
    args = ap.parse_args()
    lesson = Path(args.lesson)
    d = derive(load_lesson(lesson))
    blank = subprocess.run(
        [sys.executable, "-m", "tutor", "export", str(lesson), "--format", "sheet"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "sheets"
        folder.mkdir()
        for k in range(args.sheets):
            slip = SLIPS[k % len(SLIPS)] if k % 3 == 0 else None
            habit = students.HABITS[k % len(students.HABITS)]
            data = yaml.safe_load(blank)
            data.update(students.Student(d, habit, slip, seed=k).work())
            data["student"] = f"Student {k:03d}"
            (folder / f"s{k:03d}.yaml").write_text(json.dumps(data))
        one = folder / "s003.yaml"  # a sheet with a slip: the judge looks for slips too
        book = Path(tmp) / "book.csv"
        singles = [cli("grade", str(lesson), str(one), "--json") for _ in range(args.repeat)]
        classes = [
            cli("grade", str(lesson), str(folder), "--csv", str(book)) for _ in range(args.repeat)
        ]
        rows = book.read_text().count("\n") - 1
    s, c = statistics.median(singles), statistics.median(classes)
    print(f"lesson {lesson.name}: {len(d.lesson.tokens)} tokens, {args.repeat} runs each")
    print(f"grade one sheet:              median {s:6.2f} s")
    print(f"grade {rows} sheets (one command): median {c:6.2f} s  ({c / s:.1f}× one sheet)")


if __name__ == "__main__":
    main()
