"""Issue 17's steps at the largest legal size: derive with and without a decoding step (next:)
and with grouped heads, as medians of a few runs. Run: .venv/bin/python bench/decoding.py"""

from __future__ import annotations

import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests import lessongen
from tutor.core.decode import saving
from tutor.core.engine import derive
from tutor.core.lessonfile import load_lesson


def median_ms(text: str, runs: int = 5) -> tuple[float, object]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "b.yaml"
        path.write_text(text)
        lesson = load_lesson(path)
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        derive(lesson)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times), lesson


def main() -> None:
    rng = random.Random(1)
    n, d, d_k, d_v = 32, 16, 4, 4  # W_O is at most 16 rows: 4 heads × d_v 4
    plain = lessongen.lesson_text(
        rng, n, d, d_k, d_v, "id", heads=4, causal=True, w_o=True, d_out=16
    )
    nxt = lessongen.next_entry(rng, d, "id")
    grouped = lessongen.grouped_lesson_text(rng, n, d, d_k, d_v, 4, 1, "id", causal=True)
    base, _ = median_ms(plain)
    with_next, lesson = median_ms(plain + nxt)
    grp, _ = median_ms(grouped)
    grp_next, glesson = median_ms(grouped + nxt)
    print(
        f"4 heads, N={n}, d={d}: derive {base:.0f} ms; with next: {with_next:.0f} ms "
        f"(×{with_next / base:.2f})"
    )
    print(f"4 query heads in 1 group: derive {grp:.0f} ms; with next: {grp_next:.0f} ms")
    for name, les in (("4 heads", lesson), ("1 group", glesson)):
        s = saving(les)  # type: ignore[arg-type]
        print(
            f"{name}: multiplications for token {n + 1}: {s.cached} cached, {s.full} full "
            f"({s.full / s.cached:.1f}× more without the cache)"
        )


if __name__ == "__main__":
    main()
