"""Time ``grade`` on filled N = 16 and N = 32 sheets, and the quiz judge on one answer.

Run from the repository root: ``python bench/gradetime.py``. Three sheets per size: an honest
student's (carries one more place), one of wrong numbers everywhere (every cell looks for its
slips), and one with a slip followed by honest work.
"""

from __future__ import annotations

import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench import lesson_text  # bench/bench.py
from tests import students
from tutor.assess import grade, judge
from tutor.assess.sheet import read_sheet
from tutor.core.engine import derive
from tutor.core.lessonfile import load_lesson
from tutor.core.numbers import read_answer


def timed(f) -> float:  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    f()
    return time.perf_counter() - start


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        for n, d_model, d_k in ((16, 16, 8), (32, 64, 16)):
            path = Path(tmp) / f"n{n}.yaml"
            path.write_text(lesson_text(n, d_model, d_k, d_k, seed=n))
            sheets = {
                "honest": students.Student(derive(load_lesson(path)), "carry1").work,
                "wrong": lambda d=None, p=path: students.junk(derive(load_lesson(p)), "random"),
                "slip": students.Student(derive(load_lesson(path)), "carry1", "digit").work,
            }
            for kind, make in sheets.items():
                d = derive(load_lesson(path))  # a fresh derivation: nothing remembered
                sheet_path = Path(tmp) / "sheet.yaml"
                sheet_path.write_text(students.sheet_text(d, make()))
                sheet = read_sheet(sheet_path, d)
                seconds = timed(lambda d=d, sheet=sheet: grade.grade(d, sheet))
                print(f"grade N={n} d_model={d_model} {kind:<7} {seconds:6.2f} s")
            d = derive(load_lesson(path))
            W = d.step("weights")
            rng = random.Random(1)
            times = []
            for _ in range(20):
                d = derive(load_lesson(path))
                i, j = rng.randrange(n), rng.randrange(n)
                answer = read_answer(f"{rng.random():.2f}")
                W = d.step("weights")
                J = judge.judge_for(d)
                times.append(
                    timed(
                        lambda J=J, W=W, i=i, j=j, a=answer: (
                            J.judge(W, i, j, a),
                            J.slips(W, i, j, a),
                        )
                    )
                )
            print(f"quiz answer (a weight, N={n}): median {statistics.median(times) * 1000:.0f} ms")


if __name__ == "__main__":
    main()
