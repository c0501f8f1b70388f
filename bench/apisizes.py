"""Time the library's refusal of a dict too large to be a lesson or a sheet (issue 43, item 1).

Run from the repository root: ``python bench/apisizes.py``. A dict is measured before it is
dumped to YAML or JSON, so 400,000 rows must be refused in well under a second (the issue
measured 42 s and 453 MB before the refusal, when the dump came first). Median of 15 runs each.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import tutor

TARGET_S = 1.0
TWO = {
    "title": "Two",
    "tokens": ["a", "b"],
    "W_Q": [[1, 0], [0, 1]],
    "W_K": [[1, 0], [0, 1]],
    "W_V": [[1, 0], [0, 1]],
}


def refused(call) -> float:  # type: ignore[no-untyped-def]
    """Seconds until ``call`` raises a TutorError (it must)."""
    start = time.perf_counter()
    try:
        call()
    except tutor.TutorError:
        return time.perf_counter() - start
    raise SystemExit("not refused")


def main() -> None:
    cats = tutor.lesson("cats-chase-mice")
    cats.derive()
    rows = [[1, 0]] * 400_000
    wide = [list(range(400))] * 1_000  # 1,000 rows of 400: each row fits, the whole does not
    cases = {
        "lesson(dict), X of 400,000 rows": lambda: tutor.lesson({**TWO, "X": rows}),
        "lesson(dict), 1,000 rows of 400": lambda: tutor.lesson({**TWO, "X": wide}),
        "grade(sheet dict), Q of 400,000 rows": lambda: tutor.grade(cats, {"Q": rows}),
    }
    print(f"{'case':<40} {'median':>10}  target")
    for name, call in cases.items():
        median = statistics.median(refused(call) for _ in range(15))
        flag = "ok" if median < TARGET_S else "MISSED"
        print(f"{name:<40} {median * 1000:>8.2f}ms  < {TARGET_S:.0f} s  {flag}")


if __name__ == "__main__":
    main()
