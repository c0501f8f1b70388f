"""Time the answer form of the largest legal lesson (4 heads, 32 tokens, every width 16, causal)
in headless Chromium: writing the page, opening it, and typing in a cell.

    python bench/formtime.py [--cells 200] [--chromium /usr/bin/chromium]

Typing is timed in the page, with performance.now() around dispatching the input event a
keystroke makes (the page's check of the entry, its mark and message, its note to save) and
the layout that follows (forced by reading the cell's position): the work a student waits
for. Needs Playwright (test extra) and a Chromium. Absolute times drift on shared machines;
the figure to hold is typing well under 50 ms.
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

from playwright.sync_api import sync_playwright  # noqa: E402

from tests.test_limits import largest  # noqa: E402
from tutor.core.engine import derive  # noqa: E402
from tutor.core.lessonfile import load_lesson  # noqa: E402
from tutor.core.spec import MAX_HEADS  # noqa: E402
from tutor.export.form import form_page  # noqa: E402

ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]  # fmt: skip

TYPE = """([cells, texts]) => {
  const times = [], all = document.querySelectorAll("table.ask input");
  for (let k = 0; k < cells.length; k++) {
    const el = all[cells[k]];
    const t0 = performance.now();
    el.value = texts[k % texts.length];
    el.dispatchEvent(new Event("input", {bubbles: true}));
    void el.getBoundingClientRect().top;  // the page laid out again: what the student sees
    times.push(performance.now() - t0);
  }
  return times;
}"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", type=int, default=200, help="cells typed into")
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="formtime-"))
    lesson = folder / "largest.yaml"
    text = largest(random.Random(0), heads=MAX_HEADS).replace("title:", "mask: causal\ntitle:", 1)
    lesson.write_text(text, encoding="utf-8")
    d = derive(load_lesson(lesson, name="largest"))
    start = time.perf_counter()
    page_text = form_page(d)
    t_write = time.perf_counter() - start
    path = folder / "largest-form.html"
    path.write_text(page_text, encoding="utf-8")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=args.chromium, args=ARGS)
        page = browser.new_page()
        start = time.perf_counter()
        page.goto(path.as_uri(), wait_until="load")
        t_open = time.perf_counter() - start
        n = page.evaluate("document.querySelectorAll('table.ask input').length")
        rng = random.Random(1)
        cells = [rng.randrange(n) for _ in range(args.cells)]
        # a keystroke's worth of entries: right ones, an expression, and unreadable ones
        texts = ["0.5", "4/sqrt(2)", "2√2", "0,24", "e^1.5/(e^1.5 + e^0.5)", "abc", "", "-0.25"]
        times = page.evaluate(TYPE, [cells, texts])
        page.reload(wait_until="load")  # the same page with those entries kept
        again = page.evaluate(TYPE, [cells, texts])
        browser.close()
    times += again
    print(
        f"largest lesson: {MAX_HEADS} heads, {len(d.lesson.tokens)} tokens, causal; "
        f"{n:,} inputs, page {len(page_text) / 1e6:.1f} MB"
    )
    print(f"write the page (Python): {t_write * 1000:.0f} ms")
    print(f"open it (navigation to load): {t_open * 1000:.0f} ms")
    print(
        f"type in a cell ({len(times)} entries): median {statistics.median(times):.2f} ms, "
        f"95th {sorted(times)[int(len(times) * 0.95)]:.2f} ms, max {max(times):.2f} ms"
    )


if __name__ == "__main__":
    main()
