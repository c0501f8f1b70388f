"""Benchmark: start-up and walk times as ratios to their dependency floors, memory, and growth.

Run from the repository root (after ``python -m pip install -e '.[test]'``):

    python bench/bench.py            # about a minute; --rounds N for more or fewer runs

Absolute times drift on shared machines, so every target is a ratio of medians measured in the
same run, with the commands interleaved round by round.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
PY = sys.executable
# time the command users run: the installed console script (python -m adds runpy's import)
_SCRIPT = Path(PY).parent / "attn-tutor"
CLI = [str(_SCRIPT)] if _SCRIPT.exists() else [PY, "-m", "tutor"]
GC_OFF, FREEZE = "import gc; gc.disable(); ", "; gc.freeze()"


def lesson_text(n: int, d_model: int, d_k: int, d_v: int, seed: int) -> str:
    """A lesson of random integers in -2..2, as the performance issue specifies."""
    rng = random.Random(seed)

    def m(r: int, c: int) -> str:
        rows = ("[" + ", ".join(str(rng.randint(-2, 2)) for _ in range(c)) + "]" for _ in range(r))
        return "[" + ", ".join(rows) + "]"

    tokens = ", ".join(f"t{i}" for i in range(n))
    head = f"title: Benchmark N={n}\ntokens: [{tokens}]\nX: {m(n, d_model)}\n"
    return head + f"W_Q: {m(d_model, d_k)}\nW_K: {m(d_model, d_k)}\nW_V: {m(d_model, d_v)}\n"


def timed(cmd: list[str]) -> tuple[float, int]:
    """Wall time of one run and its peak resident memory in KiB."""
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "100"}
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    if status != 0:
        raise SystemExit(f"failed ({status}): {' '.join(cmd)}\n{proc.stderr.read().decode()}")
    proc.stderr.close()
    return elapsed, usage.ru_maxrss


def growth(folder: Path) -> list[tuple[int, float, float, float]]:
    """In-process load, derive and render times for N = 4 … 128 (d_model 64, d_k = d_v = 16).

    The cyclic collector is off, as in the console script: otherwise a full collection over
    sympy's objects lands in whichever step happens to cross its threshold.
    """
    import gc

    from rich.console import Console

    from tutor.core.engine import derive
    from tutor.core.lessonfile import load_lesson
    from tutor.teach.walk import WalkOptions, walk

    gc.disable()
    rows = []
    for n in (4, 8, 16, 32, 64, 128):
        path = folder / f"grow{n}.yaml"
        path.write_text(lesson_text(n, 64, 16, 16, seed=n))
        t0 = time.perf_counter()
        lesson = load_lesson(path)
        t1 = time.perf_counter()
        d = derive(lesson)
        for s in d.steps:  # every float value, as --json needs
            for row in s.cells:
                for c in row:
                    c.value  # noqa: B018
        t2 = time.perf_counter()
        console = Console(file=open(os.devnull, "w"), width=100, color_system=None)  # noqa: SIM115
        for part in walk(d, WalkOptions(width=100)):
            console.print(part)
        t3 = time.perf_counter()
        rows.append((n, t1 - t0, t2 - t1, t3 - t2))
    gc.enable()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="attn-bench-"))
    big = folder / "n32.yaml"
    big.write_text(lesson_text(32, 64, 16, 16, seed=32))

    minimal = folder / "minimal_app.py"  # the framework's own cost of running a subcommand
    minimal.write_text(
        "import typer\napp = typer.Typer()\n"
        "@app.command()\ndef a() -> None:\n    pass\n"
        "@app.command()\ndef b() -> None:\n    pass\napp()\n"
    )
    commands = {
        "floor: import typer": [PY, "-c", "import typer"],
        "ref: minimal typer app": [PY, str(minimal), "a"],
        "floor: import typer, rich, sympy, yaml": [PY, "-c", "import typer, rich, sympy, yaml"],
        # attn-tutor runs with the cyclic collector off and freezes at exit (tutor.cli.main):
        # the same floor with the same settings shows how much of a ratio is the tutor's own work
        "floor, collector off": [PY, "-c", GC_OFF + "import typer, rich, sympy, yaml" + FREEZE],
        "import typer, collector off": [PY, "-c", GC_OFF + "import typer" + FREEZE],
        "--help": [*CLI, "--help"],
        "list": [*CLI, "list"],
        "schema": [*CLI, "schema"],
        "walk cats-chase-mice": [*CLI, "walk", "cats-chase-mice"],
        "walk N=32 --json": [*CLI, "walk", str(big), "--json"],
        "walk N=32": [*CLI, "walk", str(big)],
        "export md N=32": [*CLI, "export", str(big), "--format", "md"],  # an answer key
    }
    # pip compiles bytecode when it installs; an editable install or PYTHONDONTWRITEBYTECODE=1
    # would otherwise time compiling the package's changed modules on every run
    compile_code = (
        "import compileall, os, tutor; "
        "compileall.compile_dir(os.path.dirname(tutor.__file__), quiet=1)"
    )
    subprocess.run([PY, "-c", compile_code], cwd=folder, check=True)
    probe = subprocess.run([*CLI, "schema"], capture_output=True)
    if probe.returncode != 0:  # the schema command arrives with another issue
        del commands["schema"]
    times: dict[str, list[float]] = {k: [] for k in commands}
    memory: dict[str, int] = {}
    for _ in range(args.rounds):
        for name, cmd in commands.items():  # interleaved: drift hits every command alike
            elapsed, rss = timed(cmd)
            times[name].append(elapsed)
            memory[name] = max(memory.get(name, 0), rss)
    med = {k: statistics.median(v) for k, v in times.items()}
    typer_floor, dep_floor = (
        med["floor: import typer"],
        med["floor: import typer, rich, sympy, yaml"],
    )
    typer_gc, dep_gc = med["import typer, collector off"], med["floor, collector off"]
    targets = [
        ("ref: minimal typer app", typer_floor, typer_gc, "import typer", 2.0),
        ("--help", typer_floor, typer_gc, "import typer", 2.0),
        ("list", typer_floor, typer_gc, "import typer", 2.0),
        ("schema", typer_floor, typer_gc, "import typer", 2.0),
        ("walk cats-chase-mice", dep_floor, dep_gc, "dependency floor", 1.25),
        ("walk N=32 --json", dep_floor, dep_gc, "dependency floor", 2.0),
        ("walk N=32", dep_floor, dep_gc, "dependency floor", 3.0),
        ("export md N=32", dep_floor, dep_gc, "dependency floor", None),
    ]
    print(f"median of {args.rounds} interleaved runs, Python {sys.version.split()[0]}\n")
    print(
        f"floors: import typer {typer_floor * 1000:.0f}ms ({typer_gc * 1000:.0f}ms collector off); "
        f"import typer, rich, sympy, yaml {dep_floor * 1000:.0f}ms "
        f"({dep_gc * 1000:.0f}ms collector off)\n"
    )
    print(f"{'command':<24} {'median':>8} {'ratio':>7} {'target':>8}  {'like-for-like':>13}  vs")
    for name, floor, floor_gc, label, target in targets:
        if name not in med:
            continue
        ratio = med[name] / floor
        flag = "" if target is None else "ok" if ratio <= target else "MISSED"
        shown = "—" if target is None else f"≤{target}×"
        print(
            f"{name:<24} {med[name] * 1000:>6.0f}ms {ratio:>6.2f}× {shown:>8}  "
            f"{med[name] / floor_gc:>12.2f}×  {label}  {flag}".rstrip()
        )
    print(
        "\nratio: to the floor as the issue defines it. like-for-like: to the same floor run with "
        "the\ncollector off and frozen at exit, as attn-tutor runs (its own work, without that "
        "saving)."
    )
    rss = memory["walk N=32"] / 1024
    print(
        f"\npeak memory, walk N=32: {rss:.0f} MB (target < 200 MB)  "
        f"{'ok' if rss < 200 else 'MISSED'}"
    )
    print("\ngrowth, in process (d_model 64, d_k = d_v = 16):")
    print(f"{'N':>5} {'load':>9} {'derive':>9} {'render':>9}  derive/N²")
    for n, load, derive_t, render_t in growth(folder):
        print(
            f"{n:>5} {load * 1000:>7.1f}ms {derive_t * 1000:>7.1f}ms {render_t * 1000:>7.1f}ms  "
            f"{derive_t / n**2 * 1e6:6.1f}µs"
        )


if __name__ == "__main__":
    main()
