"""Time the item analysis (``--items``, the report's section) and the whole class report against
the class's size.

Run from the repository root: ``python bench/items.py [--sizes 100 300 1000] [--repeat 3]``.

Thirty sheets of ``cats-chase-mice`` filled by simulated students (tests/students.py: every
rounding habit, a named slip on one sheet in three, two junk sheets) are graded once; the graded
reports are repeated to each size, and ``items.items`` and ``classreport.summarize`` (which
includes it) are timed in this process, medians of ``--repeat`` runs.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.students import HABITS, Student, junk, sheet_text  # noqa: E402
from tutor.assess.classgrade import Lessons, grade_class  # noqa: E402
from tutor.assess.classreport import summarize  # noqa: E402
from tutor.assess.items import items  # noqa: E402
from tutor.core.engine import derive  # noqa: E402
from tutor.core.lessonfile import load_lesson  # noqa: E402

SLIPS = ("not-scaled", "softmax-column", "query-query", "unnormalised")


def median(f, repeat: int) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        f()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="+", default=[100, 300, 1000])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    lesson = load_lesson(ROOT / "lessons" / "cats-chase-mice.yaml")
    d = derive(lesson)
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for k in range(30):
            slip = SLIPS[k // 3 % len(SLIPS)] if k % 3 == 0 else None
            written = junk(d, "random", k) if k >= 28 else Student(d, HABITS[k % 5], slip).work()
            path = Path(tmp) / f"s{k:02d}.yaml"
            path.write_text(sheet_text(d, written, f"Student {k:02d}"))
            paths.append(path)
        graded = grade_class(Lessons([lesson], "cats-chase-mice"), paths).graded
    slips = {s.id: s.description for s in summarize(graded).slips if s.students}
    print(f"{'reports':>8}  {'items()':>9}  {'summarize()':>12}")
    for size in args.sizes:
        reports = (graded * (size // len(graded) + 1))[:size]
        a = median(lambda: items(reports, slips), args.repeat)  # noqa: B023
        b = median(lambda: summarize(reports), args.repeat)  # noqa: B023
        print(f"{size:>8}  {a:>8.2f}s  {b:>11.2f}s")


if __name__ == "__main__":
    main()
