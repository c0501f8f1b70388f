"""Benchmark: how equal and how distinct a class's variants are, for every bundled lesson that
``variants`` supports (issue 39, item 4).

Each lesson's class is made by the command itself (``python -m tutor variants LESSON --count N
--seed S -o DIR`` in a fresh process, its CPU time measured), then the files it wrote are read
back and measured:

* products: the range of the non-zero products worked by hand (``variants.work``), and the
  range allowed (±10 % of the original's, never narrower than ±1);
* each classic slip's cost in cells (``variants.slip_costs``), its range and the range allowed;
* shared: the share of the shown cells (every cell a sheet asks, at the lesson's places) that
  two variants show alike, mean and max over every pair of variants, and mean and max against
  the original. A copied sheet is flagged ``other-variant`` only when the copy's own variant
  shows at most 80 % of the cells alike (``integrity.FIT_MARGIN``).

    python bench/variants_spread.py                    # --count 30 --seed 7, every lesson
    python bench/variants_spread.py --count 120 --only the-cake
    python bench/variants_spread.py --code /tmp/old   # the command of another copy (git archive)
"""

from __future__ import annotations

import argparse
import itertools
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tutor.author import variants as vr  # noqa: E402
from tutor.core.engine import derive  # noqa: E402
from tutor.core.errors import TutorError  # noqa: E402
from tutor.core.lessonfile import load_lesson  # noqa: E402


def child_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def make(name: str, count: int, seed: int, out: Path, code: Path) -> tuple[float, int, str]:
    """Run the command (the package in ``code``); its CPU seconds, exit code and last line."""
    before = child_cpu()
    env = {**os.environ, "PYTHONPATH": str(code)}
    argv = [sys.executable, "-m", "tutor", "variants", name, "--count", str(count)]
    argv += ["--seed", str(seed), "-o", str(out)]
    done = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=code)
    lines = (done.stdout or done.stderr).strip().splitlines()
    return child_cpu() - before, done.returncode, lines[-1] if lines else ""


def span(values: list[int]) -> str:
    return f"{min(values)}-{max(values)}"


def shares(shown: list[tuple], against: tuple) -> tuple[list[float], list[float]]:
    """The share of cells shown alike, for every pair and against the original."""
    n = len(against)
    pairs = [1 - vr.differ(x, y) / n for x, y in itertools.combinations(shown, 2)]
    return pairs, [1 - vr.differ(x, against) / n for x in shown]


def measure(path: Path, count: int, seed: int, code: Path) -> None:
    original = load_lesson(path)
    try:
        vr.make_variants(original, None, 1, seed)  # supported at all?
    except TutorError:
        print(f"{path.stem}: not supported by variants")
        return
    with tempfile.TemporaryDirectory() as tmp:
        cpu, status, last = make(str(path), count, seed, Path(tmp) / "v", code)
        if status != 0:
            print(f"{path.stem:<22} exit {status} after {cpu:.1f} CPU s: {last}")
            return
        lessons = [load_lesson(p) for p in sorted((Path(tmp) / "v").glob("*.yaml"))]
    d = derive(original)
    base, costs = vr.work(d), vr.slip_costs(d)
    derived = [derive(v) for v in lessons]
    counts = [vr.work(v) for v in derived]
    low, high = vr.work_range(base)
    print(f"{path.stem}  ({len(lessons)} variants, {cpu:.1f} CPU s)")
    print(f"  products {span(counts)} (original {base}, allowed {low}-{high})")
    for slip, cost in costs.items():
        got = [vr.slip_costs(v)[slip] for v in derived]
        a, b = vr.work_range(cost)
        out = sum(not a <= g <= b for g in got)
        print(
            f"  {vr.SLIPS[slip]:<24} {span(got)} (original {cost}, allowed {a}-{b}; {out} outside)"
        )
    shown = [vr.shown_cells(v) for v in derived]
    pairs, same = shares(shown, vr.shown_cells(d))
    print(
        f"  shown cells shared: pairs mean {sum(pairs) / len(pairs):.0%} max {max(pairs):.0%}"
        f" ({sum(p > 0.8 for p in pairs)} pairs over 80 %); with the original mean "
        f"{sum(same) / len(same):.0%} max {max(same):.0%} ({len(shown[0])} cells)",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--count", type=int, default=30)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--only", help="only these lessons (a,b: names, or parts of names)")
    parser.add_argument(
        "--code", type=Path, default=ROOT, help="run the command from this copy (the code before)"
    )
    args = parser.parse_args()
    for path in sorted((ROOT / "lessons").glob("*.yaml")):
        parts = args.only.split(",") if args.only else []
        exact = [p for p in parts if (ROOT / "lessons" / f"{p}.yaml").exists()]
        if (
            parts
            and path.stem not in exact
            and not any(p in path.stem for p in parts if p not in exact)
        ):
            continue
        measure(path, args.count, args.seed, args.code.resolve())


if __name__ == "__main__":
    main()
