"""Benchmark: ``check-code LESSON DIR`` on a class of honest files, --jobs 1 against --jobs 2,
and the tutor's own peak memory while one file tries to allocate 3 GB.

Run from the repository root:

    python bench/checkcode.py              # 30 files, 3 rounds of each --jobs, interleaved
    python bench/checkcode.py --files 60 --rounds 5

Each figure is the wall time of the whole command (median of the rounds). The tutor's peak
memory is its own (VmHWM of its process, read from /proc until it ends), not its children's.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GOOD = (ROOT / "fixtures" / "code" / "good.py").read_text()
HOG = "import numpy as np\nbig = np.ones(3 * 1024**3 // 8)\n"


def run(folder: Path, *args: str) -> tuple[float, int, int]:
    """Seconds, the exit code, and the tutor's own peak resident memory in KB."""
    start = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-m", "tutor", "check-code", "cats-chase-mice", str(folder), *args],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    peak = 0
    while proc.poll() is None:
        try:
            for line in Path(f"/proc/{proc.pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    peak = max(peak, int(line.split()[1]))
        except OSError:
            pass
        time.sleep(0.02)
    return time.monotonic() - start, proc.returncode, peak


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=30)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        honest = Path(tmp) / "honest"
        honest.mkdir()
        for i in range(args.files):
            (honest / f"student{i:03d}.py").write_text(GOOD)
        times: dict[int, list[float]] = {1: [], 2: []}
        peaks: list[int] = []
        for _ in range(args.rounds):
            for jobs in (1, 2):
                seconds, code, peak = run(honest, "--jobs", str(jobs))
                assert code == 0, f"--jobs {jobs}: exit {code}"
                times[jobs].append(seconds)
                peaks.append(peak)
        hostile = Path(tmp) / "hostile"
        hostile.mkdir()
        (hostile / "hog.py").write_text(HOG)
        (hostile / "ok.py").write_text(GOOD)
        hog_seconds, hog_code, hog_peak = run(hostile, "--jobs", "2")
    one, two = statistics.median(times[1]), statistics.median(times[2])
    print(f"{args.files} honest files, cats-chase-mice, median of {args.rounds} rounds, "
          f"{os.cpu_count()} cores")  # fmt: skip
    print(f"--jobs 1  {one:6.2f} s  ({one / args.files * 1000:.0f} ms a file)")
    print(f"--jobs 2  {two:6.2f} s  ({two / args.files * 1000:.0f} ms a file)  {one / two:.2f}×")
    print(f"the tutor's own peak memory: {max(peaks) / 1024:.0f} MB (target < 500 MB)")
    print(f"a file allocating 3 GB beside an honest one: exit {hog_code}, {hog_seconds:.2f} s, "
          f"the tutor's peak {hog_peak / 1024:.0f} MB")  # fmt: skip


if __name__ == "__main__":
    main()
