"""Time one edit in ``attn-tutor explore``: the engine's work and the re-render it causes.

Run from the repository root: ``python bench/explore.py``. For each lesson, 21 edits of X (a
different number each time, so every edit changes cells), in a headless app at 100 × 30:

* model: ``Explorer.edit`` — the derivation worked again from the edited lesson (exactly) and
  the ▲/▼ marks found by comparing every value with the last derivation's (exactly);
* redraw: binding every table to its new step (the shown texts of every cell) and the side
  panel's working of the cell under the cursor;
* render: ``render()`` of every table the edit changed (the widgets' own drawing);
* screen: the whole key-to-screen round trip through Textual (typing the number, Enter, and
  waiting until the screen is idle) — an upper bound that includes Textual's compositor.

Prints the median and the slowest of each, in milliseconds of wall time and (for the parts
measured directly) of this process's CPU time, which a busy machine inflates less. The issue's
budget is 50 ms for model + redraw + render on an 8-token lesson.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tutor.core.lessonfile import load_lesson
from tutor.explore.app import ExploreApp
from tutor.explore.widgets import MatrixView

ROOT = Path(__file__).resolve().parent.parent
LESSONS = ("cats-chase-mice", "the-cake", "the-cake-causal", "the-cake-two-heads")
RUNS = 21


async def measure(name: str) -> dict[str, list[float]]:
    app = ExploreApp(load_lesson(ROOT / "lessons" / f"{name}.yaml", name), name)
    out: dict[str, list[float]] = {"model": [], "redraw": [], "render": [], "screen": []}
    cpu: list[float] = []
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        X = app.model.derivation.step("X")
        for k in range(RUNS):
            i, j, value = k % len(X.rows), k % len(X.cols), str(k % 5 - 2)
            c0 = time.process_time()
            t0 = time.perf_counter()
            app.model.edit(app.model.derivation.step("X"), i, j, value)
            t1 = time.perf_counter()
            app.redraw()
            t2 = time.perf_counter()
            changed = {key for key, _, _ in app.model.marks}
            for v in app.query(MatrixView):
                if v.step is not None and v.step.key in changed:
                    v.render()
            t3 = time.perf_counter()
            cpu.append(time.process_time() - c0)
            out["model"].append(t1 - t0)
            out["redraw"].append(t2 - t1)
            out["render"].append(t3 - t2)
            await pilot.pause()
        # the round trip a student makes: on X (the Q page, follow Q[first, 1]), type, Enter
        await pilot.press("n", "enter")
        await pilot.pause()
        for k in range(RUNS):
            t0 = time.perf_counter()
            await pilot.press(str(k % 7), "enter")
            await pilot.pause()
            out["screen"].append(time.perf_counter() - t0)
    out["total cpu"] = cpu
    return out


def main() -> None:
    print(f"{'lesson':20} {'part':10} {'median ms':>10} {'max ms':>8}")
    for name in LESSONS:
        out = asyncio.run(measure(name))
        engine = [
            a + b + c for a, b, c in zip(out["model"], out["redraw"], out["render"], strict=True)
        ]
        for part, times in [*out.items(), ("total", engine)]:
            ms = [t * 1000 for t in times]
            print(f"{name:20} {part:10} {statistics.median(ms):10.1f} {max(ms):8.1f}")
    print("total = model + redraw + render, wall time (the issue's 50 ms budget); total cpu:")
    print("the same in CPU time of this process; screen: key press to idle screen, wall time")


if __name__ == "__main__":
    main()
