"""Benchmark: derive (and the walk's JSON) of the largest legal lessons with positions or a
source sentence, as a ratio to the same lesson without them (medians, interleaved rounds).

    python bench/positions.py            # --rounds N (default 5)
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests import lessongen  # noqa: E402
from tutor.core.engine import derive  # noqa: E402
from tutor.core.lessonfile import load_lesson  # noqa: E402
from tutor.core.spec import MAX_DIM, MAX_TOKENS  # noqa: E402

KINDS = {
    "plain": {},
    "given": {"positions": "given"},
    "sinusoidal": {"positions": "sinusoidal"},
    "rope": {"positions": "rope"},
    "cross": {"source": MAX_TOKENS},
}


def lesson(folder: Path, kind: str) -> Path:
    rng = random.Random(17)
    text = lessongen.lesson_text(rng, MAX_TOKENS, MAX_DIM, MAX_DIM, MAX_DIM, "i", **KINDS[kind])
    path = folder / f"{kind}.yaml"
    path.write_text(text)
    return path


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        paths = {k: lesson(Path(tmp), k) for k in KINDS}
        times: dict[str, list[float]] = {k: [] for k in KINDS}
        for _ in range(args.rounds):
            for kind, path in paths.items():
                start = time.perf_counter()
                d = derive(load_lesson(path))
                _ = [c.value for s in d.steps for row in s.cells for c in row]
                times[kind].append(time.perf_counter() - start)
    base = statistics.median(times["plain"])
    for kind, ts in times.items():
        m = statistics.median(ts)
        print(f"{kind:>10}: derive median {m * 1000:8.1f} ms  ({m / base:5.2f} × plain)")


if __name__ == "__main__":
    main()
