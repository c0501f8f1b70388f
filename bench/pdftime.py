"""Time ``export --format pdf``: the typst source and its compiling, per worksheet page.

    python bench/pdftime.py [--rounds 7]

For each bundled lesson, worksheet and answer key: the median time to write the typst source
(from a derivation made once) and to compile it to PDF, the page count, and the time per page.
Needs the pdf extra and pypdf (both in the test extra). Absolute times drift on shared machines:
compare the per-page column between runs, not with other machines.
"""

from __future__ import annotations

import argparse
import io
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import pypdf  # noqa: E402
import typst  # noqa: E402

from tutor.core.engine import derive  # noqa: E402
from tutor.core.lessonfile import load_lesson  # noqa: E402
from tutor.export import typst_doc  # noqa: E402


def median_time(fn, rounds: int) -> tuple[float, object]:  # type: ignore[no-untyped-def]
    times, result = [], None
    for _ in range(rounds):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    typst.compile(b"warm up: load the bundled fonts once")
    python = sys.version.split()[0]
    print(f"median of {args.rounds} runs, typst-py {typst.__version__}, Python {python}")
    print(f"{'lesson':<22} {'document':<10} {'source':>8} {'compile':>8} {'pages':>6} per page")
    per_page = []
    for path in sorted((ROOT / "lessons").glob("*.yaml")):
        d = derive(load_lesson(path))
        for answers in (False, True):
            sheets = [typst_doc.Sheet(d)]
            t_src, src = median_time(
                lambda s=sheets, a=answers: typst_doc.source(s, a), args.rounds
            )
            t_pdf, pdf = median_time(lambda s=src: typst_doc.compile_pdf(s), args.rounds)
            pages = len(pypdf.PdfReader(io.BytesIO(pdf)).pages)
            each = (t_src + t_pdf) / pages
            if not answers:
                per_page.append(each)
            kind = "key" if answers else "worksheet"
            print(
                f"{path.stem:<22} {kind:<10} {t_src * 1000:>6.0f}ms {t_pdf * 1000:>6.0f}ms "
                f"{pages:>6} {each * 1000:>7.0f}ms"
            )
    print(f"worksheet, per page: median {statistics.median(per_page) * 1000:.0f}ms")


if __name__ == "__main__":
    main()
