"""Time grading a class in one command against grading one sheet, as an instructor runs them.

Run from the repository root: ``python bench/classgrade.py [--sheets 100] [--repeat 3]``;
``python bench/classgrade.py --wrong --sizes 100,300,1000`` for the class-scale figures (issue
39, item 9): random all-wrong sheets (every cell a random number with the lesson's places, so
every cell is searched for a slip), one fresh ``grade LESSON FOLDER --csv`` process per size,
reporting its wall seconds, CPU seconds (user + system of the process and its workers: steadier
than the wall on a shared machine) and peak RSS (the largest of the parent and any worker).

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
import os
import random
import re
import resource
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


def wrong_class(lesson: Path, folder: Path, count: int) -> None:
    """``count`` sheets, each cell a random number with two places (all wrong, as a class of
    guesses would be), named as a class folder's sheets."""
    blank = subprocess.run(
        [sys.executable, "-m", "tutor", "export", str(lesson), "--format", "sheet"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    folder.mkdir(parents=True, exist_ok=True)
    for k in range(count):
        rng = random.Random(k)
        text = re.sub(r"\bnull\b(?=[,\]])", lambda _, r=rng: f"{r.uniform(-9, 9):.2f}", blank)
        text = text.replace('student: ""', f'student: "Student {k:04d}"', 1)
        (folder / f"s{k:04d}.yaml").write_text(text)


def mixed_class(lesson: Path, folder: Path, count: int) -> None:
    """A class to compare outputs on (``--make-class``): a variant per student (``variants
    --roster``), honest sheets of every habit, a named slip on one in three, junk sheets (one
    number everywhere, random digits), a blank one, a sheet copied from another student's
    variant and one handed in under another student's name. ``folder/variants`` and
    ``folder/sheets``."""
    roster = folder / "roster.csv"
    folder.mkdir(parents=True, exist_ok=True)
    roster.write_text("name,id\n" + "".join(f"Student {k:03d},{1000 + k}\n" for k in range(count)))
    subprocess.run(
        [sys.executable, "-m", "tutor", "variants", str(lesson), "-o", str(folder / "variants"),
         "--roster", str(roster), "--seed", "7"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    )  # fmt: skip
    sheets = folder / "sheets"
    sheets.mkdir()
    variants = sorted((folder / "variants").glob("*.yaml"))
    works = []
    for k, v in enumerate(variants):
        d = derive(load_lesson(v))
        blank = yaml.safe_load(
            subprocess.run(
                [sys.executable, "-m", "tutor", "export", str(v), "--format", "sheet"],
                cwd=ROOT, capture_output=True, text=True, check=True,
            ).stdout
        )  # fmt: skip
        rng = random.Random(k)
        kind = k % 8
        data = dict(blank)
        if kind in (0, 1, 2, 3, 4):
            slip = SLIPS[k % len(SLIPS)] if kind in (1, 3) else None
            data.update(students.Student(d, students.HABITS[k % 5], slip, seed=k).work())
        elif kind == 5:  # junk: one number, or random digits
            for key, rows in blank.items():
                if isinstance(rows, list):
                    data[key] = [
                        [("0" if k % 2 else f"{rng.uniform(-9, 9):.2f}") for _ in row]
                        for row in rows
                    ]
        elif kind == 6 and works:  # another student's answers on one's own variant
            data.update(works[-1])
        # kind 7 (and 6 with nothing to copy): blank
        if kind in (0, 1, 2, 3, 4):
            works.append({key: data[key] for key in blank if isinstance(blank[key], list)})
        (sheets / f"{v.stem}.yaml").write_text(json.dumps(data))
    if len(variants) > 2:  # a sheet handed in under another's name: a copy of the first
        first = json.loads((sheets / f"{variants[0].stem}.yaml").read_text())
        first["student"], first["student_id"] = "Someone Else", "9999"
        (sheets / "zz-copy.yaml").write_text(json.dumps(first))


def measured(*args: str) -> tuple[float, float, float]:
    """Wall s, CPU s (the process and its children) and peak MB of one fresh CLI process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "tutor", *args], cwd=ROOT, capture_output=True, text=True
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"attn-tutor {' '.join(args)} failed:\n{done.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, after.ru_maxrss / 1024  # ru_maxrss: the largest child so far, in KB


def scale(lesson: Path, sizes: list[int]) -> None:
    print(f"lesson {lesson.name}, random all-wrong sheets, os.cpu_count() = {os.cpu_count()}")
    print(f"{'sheets':>7} {'wall s':>8} {'CPU s':>8} {'peak MB':>8}")
    for n in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp) / "sheets"
            wrong_class(lesson, folder, n)
            book = Path(tmp) / "book.csv"
            # a fresh bench process per size: ru_maxrss of the children is a running maximum
            code = (
                "import sys; sys.path.insert(0, 'bench'); import classgrade as c; "
                f"print(*c.measured('grade', {str(lesson)!r}, {str(folder)!r}, '--csv', "
                f"{str(book)!r}))"
            )
            out = subprocess.run(
                [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True
            )
            if out.returncode != 0:
                raise SystemExit(out.stderr[-2000:])
            wall, cpu, mb = (float(x) for x in out.stdout.split())
        print(f"{n:>7} {wall:>8.1f} {cpu:>8.1f} {mb:>8.0f}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sheets", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--lesson", default=str(ROOT / "lessons" / "the-cake.yaml"))
    ap.add_argument("--wrong", action="store_true", help="random all-wrong sheets, by size")
    ap.add_argument("--sizes", default="100,300,1000", help="with --wrong: class sizes")
    ap.add_argument("--make-class", metavar="DIR", help="write a mixed class to DIR and stop")
    args = ap.parse_args()
    lesson = Path(args.lesson)
    if args.make_class:
        return mixed_class(lesson, Path(args.make_class), args.sheets)
    if args.wrong:
        return scale(lesson, [int(x) for x in args.sizes.split(",")])
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
