"""Benchmark: ``new NAME --from FILE.npz`` on the largest legal layer (32 tokens, d_model 16,
4 heads of d_k = d_v = 4, each with b_Q, b_K, b_V; W_O and b_O), at 2, 6 and 10 places, as a
subprocess (medians of interleaved rounds), and how far rounding moved the output at each.

    python bench/fromarrays.py           # --rounds N (default 3)
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

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
PLACES = (2, 6, 10)


def layer(path: Path) -> None:
    rng = np.random.default_rng(0)
    arrays = {"X": rng.normal(size=(32, 16)), "W_O": rng.normal(size=(16, 16)) * 0.3}
    for h in range(1, 5):
        for key in ("W_Q", "W_K", "W_V"):
            arrays[f"{key}.{h}"] = rng.normal(size=(16, 4)) * 0.3
            arrays[f"b_{key[2]}.{h}"] = rng.normal(size=4) * 0.3
    arrays["b_O"] = rng.normal(size=16) * 0.3
    np.savez(path, **arrays)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    rounds = parser.parse_args().rounds
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1", "COLUMNS": "100"}
    times: dict[int, list[float]] = {p: [] for p in PLACES}
    said: dict[int, str] = {}
    with tempfile.TemporaryDirectory() as tmp:
        npz = Path(tmp) / "layer.npz"
        layer(npz)
        for _ in range(rounds):
            for p in PLACES:
                command = [sys.executable, "-m", "tutor", "new", f"l{p}", "--from", str(npz)]
                command += ["--places", str(p), "--force", "-o", str(Path(tmp) / f"l{p}.yaml")]
                start = time.perf_counter()
                done = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
                times[p].append(time.perf_counter() - start)
                said[p] = done.stdout.splitlines()[1]
    print(f"new --from, 32 tokens, d_model 16, 4 heads, biases, W_O: median of {rounds}")
    for p in PLACES:
        print(f"--places {p:>2}: {statistics.median(times[p]) * 1000:6.0f} ms  {said[p]}")


if __name__ == "__main__":
    main()
