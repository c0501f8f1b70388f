"""Benchmark: a class of 30 variants of every bundled lesson (``make_variants``, then each
file's text and the work table), CPU seconds per lesson, with the spread of the work.

    python bench/variants.py             # --count N (default 30), --seed N (default 7)
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tutor.author import variants as vr  # noqa: E402
from tutor.core.lessonfile import load_lesson  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--count", type=int, default=30)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    print(f"{'lesson':<22} {'seconds':>8}  work")
    for path in sorted((ROOT / "lessons").glob("*.yaml")):
        lesson = load_lesson(path)
        start = time.process_time()
        made = vr.make_variants(lesson, None, args.count, args.seed)
        for v in made:
            vr.variant_yaml(v, lesson, "bench", args.seed)
        _, tail = vr.spread(made, lesson)
        took = time.process_time() - start
        print(f"{path.stem:<22} {took:8.2f}  {tail.removeprefix('work: ')}")


if __name__ == "__main__":
    main()
