"""Time ``attn-tutor grade LESSON SHEET`` of an all-wrong sheet on the worst legal lessons.

Run from the repository root: ``python bench/gradelimits.py [--repeat 3] [--only one]``.

The lessons are ``bench.py --limits``' own (32 tokens, dimension 16; one head, four heads with
the causal mask, four heads with W_O), the sheet its ``filled_sheet`` (every cell the true value
+ 0.5, so every cell is searched for a slip). Each run is a fresh process, as an instructor meets
it; prints the median wall seconds, the median CPU seconds (user + system: steadier than the
wall time on a machine others share) and the peak MB per lesson (the target: under 30 s and
1 GB).
``--profile`` instead grades in this process under cProfile and prints the top functions.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench import (  # bench/bench.py
    CLI,
    LIMIT_TARGET_MB,
    LIMIT_TARGET_S,
    filled_sheet,
    run_limited,
    worst_lessons,
)

KINDS = ("one head", "4 heads N=32 d=16 causal", "W_O", "groups")


def profile(lesson: Path, sheet: Path) -> None:
    import cProfile
    import pstats

    from tutor.assess import grade
    from tutor.assess.sheet import read_sheet
    from tutor.core.engine import derive
    from tutor.core.lessonfile import load_lesson

    d = derive(load_lesson(lesson))
    s = read_sheet(sheet, d)
    prof = cProfile.Profile()
    prof.runcall(grade.grade, d, s)
    pstats.Stats(prof).sort_stats("cumulative").print_stats(40)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--only", help="only the lessons whose name contains this")
    ap.add_argument("--profile", action="store_true", help="cProfile one grading in-process")
    args = ap.parse_args()
    root = str(Path(__file__).resolve().parent.parent)  # this checkout's code, in every run
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))
    folder = Path(tempfile.mkdtemp(prefix="attn-gradelimits-"))
    print(f"{'lesson':<38} {'wall s':>7} {'CPU s':>7} {'CPU s of each run':>20} {'peak MB':>8}")
    for name, path in worst_lessons(folder).items():
        if not any(k in name for k in KINDS) or (args.only and args.only not in name):
            continue
        sheet = folder / f"{path.stem}-sheet.yaml"
        sheet.write_text(filled_sheet(path, args.timeout))
        if args.profile:
            print(name)
            profile(path, sheet)
            continue
        runs, cpu, peak = [], [], 0.0
        for _ in range(args.repeat):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            seconds, mb, status, _, _ = run_limited(
                [*CLI, "grade", str(path), str(sheet)], args.timeout
            )
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            runs.append(args.timeout if seconds is None else seconds)
            cpu.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
            peak = max(peak, mb)
            if status not in (0, 1):
                print(f"{name}: exit {status}")
        median, median_cpu = statistics.median(runs), statistics.median(cpu)
        over = "  MISSED" if median > LIMIT_TARGET_S or peak > LIMIT_TARGET_MB else ""
        shown = " ".join(f"{s:.1f}" for s in cpu)
        print(
            f"{name:<38} {median:>7.1f} {median_cpu:>7.1f} {shown:>20} {peak:>8.0f}{over}",
            flush=True,
        )


if __name__ == "__main__":
    main()
