"""Benchmark: start-up and walk times as ratios to their dependency floors, memory, and growth.

Run from the repository root (after ``python -m pip install -e '.[test]'``):

    python bench/bench.py            # a few minutes (15 rounds); --rounds N for fewer or more
    python bench/bench.py --startup  # only the start-up rows (floors, --help, list, walk)
    python bench/bench.py --startup --against /tmp/old   # and an older checkout, interleaved
    python bench/bench.py --limits   # every command on the worst legal lessons: seconds, peak MB

Absolute times drift on shared machines, so every target is a ratio of medians measured in the
same run, with the commands interleaved round by round.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
PY = sys.executable
# time the command users run: the installed console script (python -m adds runpy's import)
_SCRIPT = Path(PY).parent / "attn-tutor"
CLI = [str(_SCRIPT)] if _SCRIPT.exists() else [PY, "-m", "tutor"]
EXPORT_FORMATS = ("md", "tex", "sheet", "svg", "html")
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


def timed(cmd: list[str], extra: dict[str, str] | None = None) -> tuple[float, int]:
    """Wall time of one run and its peak resident memory in KiB (``extra``: environment)."""
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "100", **(extra or {})}
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    if status != 0:
        raise SystemExit(f"failed ({status}): {' '.join(cmd)}\n{proc.stderr.read().decode()}")
    proc.stderr.close()
    return elapsed, usage.ru_maxrss


def _code_of(env: dict[str, str]) -> str:
    """The folder of the tutor package a command run with ``env`` imports."""
    probe = "import os, tutor; print(os.path.dirname(tutor.__file__))"
    found = subprocess.run(
        [PY, "-c", probe], capture_output=True, text=True, env=env, cwd=tempfile.gettempdir()
    )
    return found.stdout.strip() or f"(none: {found.stderr.strip()[-200:]})"


def growth(folder: Path) -> list[tuple[int, float, float, float]]:
    """In-process load, derive and render times for N = 4 … 32 (d_model = d_k = d_v = 16: the
    largest legal single-head lessons; the N=32 rows used d_model 64 before the limits fell).

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
    for n in (4, 8, 16, 32):
        path = folder / f"grow{n}.yaml"
        path.write_text(lesson_text(n, 16, 16, 16, seed=n))
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
    parser.add_argument("--rounds", type=int, default=15, help="runs of each command (15)")
    parser.add_argument(
        "--startup", action="store_true", help="only the start-up rows: floors, --help, list, walk"
    )
    parser.add_argument(
        "--against",
        type=Path,
        metavar="DIR",
        help="also time list and walk of another checkout (PYTHONPATH=DIR), interleaved",
    )
    parser.add_argument(
        "--limits", action="store_true", help="time every command on the worst legal lessons"
    )
    parser.add_argument(
        "--timeout", type=float, default=120, help="seconds before a --limits run is stopped"
    )
    parser.add_argument(
        "--only", help="--limits: only the lessons whose name contains this (or, a,b: any)"
    )
    args = parser.parse_args()
    if args.limits:
        limits(args.timeout, args.only)
        return
    folder = Path(tempfile.mkdtemp(prefix="attn-bench-"))
    big = folder / "n32.yaml"
    big.write_text(lesson_text(32, 16, 16, 16, seed=32))  # at the limits: N 32, dimensions 16

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
    if args.startup:  # the rows of issue 43's start-up targets, and their floors
        for name in ("schema", "walk N=32 --json", "walk N=32", "export md N=32"):
            del commands[name]
    extra: dict[str, dict[str, str]] = {}  # a command's own environment
    if args.against:
        for name in ("list", "walk cats-chase-mice"):
            commands[f"{name} (against)"] = commands[name]
            extra[f"{name} (against)"] = {"PYTHONPATH": str(args.against.resolve())}
    # pip compiles bytecode when it installs; an editable install or PYTHONDONTWRITEBYTECODE=1
    # would otherwise time compiling the package's changed modules on every run
    compile_code = (
        "import compileall, os, tutor; "
        "compileall.compile_dir(os.path.dirname(tutor.__file__), quiet=1)"
    )
    subprocess.run([PY, "-c", compile_code], cwd=folder, check=True)
    if args.against:
        env = {**os.environ, "PYTHONPATH": str(args.against.resolve())}
        subprocess.run([PY, "-c", compile_code], cwd=folder, check=True, env=env)
    probe = subprocess.run([*CLI, "schema"], capture_output=True)
    if probe.returncode != 0:  # the schema command arrives with another issue
        del commands["schema"]
    times: dict[str, list[float]] = {k: [] for k in commands}
    memory: dict[str, int] = {}
    for _ in range(args.rounds):
        for name, cmd in commands.items():  # interleaved: drift hits every command alike
            elapsed, rss = timed(cmd, extra.get(name))
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
        ("--help", typer_floor, typer_gc, "import typer", 1.5),  # issue 25's targets
        ("list", typer_floor, typer_gc, "import typer", 1.5),
        ("schema", typer_floor, typer_gc, "import typer", 2.0),
        ("walk cats-chase-mice", dep_floor, dep_gc, "dependency floor", 1.0),
        ("walk N=32 --json", dep_floor, dep_gc, "dependency floor", 2.0),
        ("walk N=32", dep_floor, dep_gc, "dependency floor", 3.0),
        ("export md N=32", dep_floor, dep_gc, "dependency floor", None),
        ("list (against)", typer_floor, typer_gc, "import typer", 1.5),
        ("walk cats-chase-mice (against)", dep_floor, dep_gc, "dependency floor", 1.0),
    ]
    print(f"median of {args.rounds} interleaved runs, Python {sys.version.split()[0]}")
    # the code each row runs: the console script imports tutor as its interpreter finds it
    # (PYTHONPATH first, then the editable install), so name it rather than assume it
    print(f"code timed: {_code_of(os.environ)}")
    if args.against:
        print(f"against: {_code_of({**os.environ, 'PYTHONPATH': str(args.against.resolve())})}")
    print()
    print(
        f"floors: import typer {typer_floor * 1000:.0f}ms ({typer_gc * 1000:.0f}ms collector off); "
        f"import typer, rich, sympy, yaml {dep_floor * 1000:.0f}ms "
        f"({dep_gc * 1000:.0f}ms collector off)\n"
    )
    w = 32 if args.against else 24
    print(f"{'command':<{w}} {'median':>8} {'ratio':>7} {'target':>8}  {'like-for-like':>13}  vs")
    for name, floor, floor_gc, label, target in targets:
        if name not in med:
            continue
        ratio = med[name] / floor
        flag = "" if target is None else "ok" if ratio <= target else "MISSED"
        shown = "—" if target is None else f"≤{target}×"
        print(
            f"{name:<{w}} {med[name] * 1000:>6.0f}ms {ratio:>6.2f}× {shown:>8}  "
            f"{med[name] / floor_gc:>12.2f}×  {label}  {flag}".rstrip()
        )
    print(
        "\nratio: to the floor as the issue defines it. like-for-like: to the same floor run with "
        "the\ncollector off and frozen at exit, as attn-tutor runs (its own work, without that "
        "saving)."
    )
    if args.startup:
        return
    rss = memory["walk N=32"] / 1024
    print(
        f"\npeak memory, walk N=32: {rss:.0f} MB (target < 200 MB)  "
        f"{'ok' if rss < 200 else 'MISSED'}"
    )
    print("\ngrowth, in process (d_model = d_k = d_v = 16):")
    print(f"{'N':>5} {'load':>9} {'derive':>9} {'render':>9}  derive/N²")
    for n, load, derive_t, render_t in growth(folder):
        print(
            f"{n:>5} {load * 1000:>7.1f}ms {derive_t * 1000:>7.1f}ms {render_t * 1000:>7.1f}ms  "
            f"{derive_t / n**2 * 1e6:6.1f}µs"
        )


# ---------------------------------------------------------------------------------------------
# --limits: the worst lessons the limits allow, through every command

LIMIT_TARGET_S, LIMIT_TARGET_MB, ANSWER_TARGET_S = 30, 1024, 1.0


def worst_lessons(folder: Path) -> dict[str, Path]:
    """The costliest legal lessons: every size at its limit, entries mixing integers, decimals
    and small fractions (``idf``: no product stays whole), and one with entries of 15-digit
    denominators (the largest exact forms). d_k is not a perfect square (√d_k stays exact)."""
    from tests.lessongen import lesson_text as random_lesson
    from tutor.core.spec import MAX_DIM, MAX_HEADS, MAX_TOKENS

    n, d = MAX_TOKENS, MAX_DIM
    d_k = d - 1 if math.isqrt(d) ** 2 == d else d
    h, d_v = MAX_HEADS, MAX_DIM // MAX_HEADS  # W_O has h · d_v rows, at most MAX_DIM
    texts = {
        f"one head N={n} d={d}": random_lesson(random.Random(1), n, d, d_k, d, "idf"),
        f"{h} heads N={n} d={d} causal": random_lesson(
            random.Random(2), n, d, d_k, d, "idf", h, causal=True
        ),
        f"{h} heads N={n} d_v={d_v} W_O {h * d_v}×{d}": random_lesson(
            random.Random(3), n, d, d_k, d_v, "idf", h, w_o=True, d_out=d
        ),
        f"15-digit denominators N={n} d={d}": digits_lesson(random.Random(4), n, d, d_k),
    }
    # every other kind of lesson at its limits (issue 31): the battery's own (tests/test_battery)
    from tests.test_battery import kind_lesson

    for kind, label in NEW_KINDS.items():
        texts[f"{label} N={n} d={d}"] = kind_lesson(kind, "wide")
    texts["next: x of 1e30 and 1e-30"] = kind_lesson("next", "huge")
    texts["P of 1e30 and 1e-30"] = kind_lesson("given", "huge")
    paths = {}
    for i, (name, text) in enumerate(texts.items()):
        paths[name] = folder / f"worst{i}.yaml"
        count = len(re.search(r"^tokens: \[(.*)\]$", text, flags=re.M)[1].split(","))  # type: ignore[index]
        tokens = "tokens: [" + ", ".join(f"t{i}" for i in range(count)) + "]"
        paths[name].write_text(re.sub(r"^tokens: .*$", tokens, text, count=1, flags=re.M))
    return paths


NEW_KINDS = {  # the battery's kinds (tests/test_battery.KINDS) beyond the first four lessons
    "given": "E + given P",
    "sinusoidal": "E + sinusoidal P",
    "rope": "RoPE",
    "cross-shorter": "cross, source 31 < 32",
    "cross-longer": "cross, source 32 > 31",
    "grouped": "4 heads in 2 groups, W_O",
    "next": "next: (KV cache)",
    "columns": "layout: columns",
}


def digits_lesson(rng: random.Random, n: int, d_model: int, d_k: int) -> str:
    """Entries such as "7/100000000000031": every value a fraction of 15-digit denominators,
    two different ones per matrix (their common denominator of 30 digits is within the limit)."""

    def m(rows: int, cols: int) -> str:
        dens = [rng.randrange(10**14, 10**15) for _ in range(2)]

        def entry() -> str:
            return f'"{rng.randint(-9, 9)}/{rng.choice(dens)}"'

        return (
            "["
            + ", ".join("[" + ", ".join(entry() for _ in range(cols)) + "]" for _ in range(rows))
            + "]"
        )

    tokens = ", ".join(f"t{i}" for i in range(n))
    return (
        f"title: Long denominators\ntokens: [{tokens}]\nX: {m(n, d_model)}\n"
        f"W_Q: {m(d_model, d_k)}\nW_K: {m(d_model, d_k)}\nW_V: {m(d_model, d_k)}\n"
    )


def run_limited(cmd: list[str], timeout: float, stdin: bytes = b"", env: dict | None = None):  # type: ignore[no-untyped-def]
    """(seconds, peak MB, exit status, stdout, CPU seconds) of one run; seconds is None when it
    timed out. CPU seconds are user + system of the command and its children (typst): on a
    machine others share they tell the cost better than the wall time."""
    full_env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "100", **(env or {})}
    with tempfile.TemporaryFile() as out:
        start = time.perf_counter()
        proc = subprocess.Popen(
            cmd, stdin=subprocess.PIPE, stdout=out, stderr=subprocess.DEVNULL, env=full_env
        )
        proc.stdin.write(stdin)  # type: ignore[union-attr]
        proc.stdin.close()  # type: ignore[union-attr]
        deadline = start + timeout
        status = usage = None
        while time.perf_counter() < deadline:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            time.sleep(0.02)
        else:
            proc.kill()
            _, status, usage = os.wait4(proc.pid, 0)
            return None, usage.ru_maxrss / 1024, status, b"", timeout
        elapsed = time.perf_counter() - start
        out.seek(0)
        cpu = usage.ru_utime + usage.ru_stime
        return elapsed, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status), out.read(), cpu


def filled_sheet(lesson: Path, timeout: float) -> str:
    """The lesson's blank sheet with every cell answered wrongly (each true value + 0.5): the
    costliest sheet to grade, since every cell is searched for a slip."""
    sheet = subprocess.run(
        [*CLI, "export", str(lesson), "--format", "sheet"],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=True,
    ).stdout
    data = json.loads(
        subprocess.run(
            [*CLI, "walk", str(lesson), "--json"],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=True,
        ).stdout
    )
    from tutor.core.spec import FILLED_NEXT_STEPS, FILLED_STEPS

    asked = [s for s in data["steps"] if s["name"] in FILLED_STEPS + FILLED_NEXT_STEPS]
    values = iter(
        "0.5" if v is None else f"{v + 0.5:.2f}" for s in asked for row in s["value"] for v in row
    )
    # a sheet may ask for cells the walk's steps do not list in that order (E + P, the
    # decoding row): those get 0.5, wrong too
    return re.sub(r"\bnull\b(?=[,\]])", lambda _: next(values, "0.5"), sheet)


def limits(timeout: float, only: str | None) -> None:
    """Every command on the worst legal lessons, with its wall time and peak memory."""
    # the checkout's code, whichever copy the console script was installed from
    os.environ["PYTHONPATH"] = os.pathsep.join(
        filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])
    )
    folder = Path(tempfile.mkdtemp(prefix="attn-limits-"))
    print(
        f"every command on the worst legal lessons (stopped after {timeout:.0f} s), "
        f"Python {sys.version.split()[0]}, {os.cpu_count()} cores\n"
    )
    print(f"{'lesson':<38} {'command':<22} {'seconds':>8} {'CPU s':>8} {'peak MB':>8}")
    worst = 0.0, 0.0
    for name, path in worst_lessons(folder).items():
        if only and not any(part in name for part in only.split(",")):
            continue
        p = str(path)
        sheet = folder / f"{path.stem}-sheet.yaml"
        sheet.write_text(filled_sheet(path, timeout))
        last = "output" if "W_O" in name else "Z"  # the cell that depends on the most
        head = "head1." if last == "Z" and "heads" in name else ""
        rows = len(re.search(r"^tokens: \[(.*)\]$", path.read_text(), flags=re.M)[1].split(","))  # type: ignore[index]
        cell = f"{head}{last}[t{rows - 1}, 1]"
        key = str(folder / "key.pdf")
        commands = {
            "walk": [p],
            "walk --exact": [p, "--exact"],
            "walk --json": [p, "--json"],
            "walk --json --exact": [p, "--json", "--exact"],
            **{f"export {f}": ["export", p, "--format", f] for f in EXPORT_FORMATS},
            "export pdf (key)": ["export", p, "--format", "pdf", "-o", key, "--force"],
            "check": ["check", p],
            f"explain {last}": ["explain", p, cell],
            "grade (all wrong)": ["grade", p, str(sheet)],
            "grade --json": ["grade", p, str(sheet), "--json"],
            "quiz, no answer": ["quiz", p, "--seed", "1", "--count", "1", "--steps", last],
        }
        for label, args in commands.items():
            argv = [*CLI, *(args if args[0] != p else ["walk", *args])]
            elapsed, mb, status, _, cpu = run_limited(argv, timeout)
            show(name, label, elapsed, mb, status, cpu)
            worst = max(worst[0], elapsed or timeout), max(worst[1], mb)
        # one wrong answer, then the quiz ends (no more input): the answer's own cost is the
        # difference from the run above, which reads no answer
        quiz = [*CLI, "quiz", p, "--seed", "1", "--count", "1", "--steps", last]
        base, _, _, _, _ = run_limited(quiz, timeout)
        elapsed, mb, status, _, cpu = run_limited(quiz, timeout, b"12345\n")
        show(name, "quiz, 1 wrong answer", elapsed, mb, status, cpu)
        if elapsed is not None and base is not None:
            print(f"{'':<38} {'  one answer alone':<22} {elapsed - base:>8.2f}")
    print()
    for label, argv, env in hostile(folder) + class_pdfs(folder, timeout):
        elapsed, mb, status, _, cpu = run_limited(argv, timeout, env=env)
        show("", label, elapsed, mb, status, cpu)
    print(
        f"\ntargets: under {LIMIT_TARGET_S} s and {LIMIT_TARGET_MB} MB for every command, "
        f"one quiz answer under {ANSWER_TARGET_S} s"
    )


def hostile(folder: Path) -> list[tuple[str, list[str], dict]]:
    """The other costly inputs: a 1 MiB lesson of bad entries (alone and 11 in a folder) and
    a terminal that claims to be 99,999,999 columns wide."""
    bad = folder / "bad"
    bad.mkdir()
    row = "[" + ", ".join(["x"] * 500) + "]"
    text = "title: bad\ntokens: [a]\nX: [" + ", ".join([row] * 500) + "]\n"
    while len(text.encode()) < 1024 * 1024 - 2100:
        text += f"# {'.' * 1000}\n"
    for i in range(11):
        (bad / f"bad{i}.yaml").write_text(text)
    return [
        ("check, 1 MiB of bad entries", [*CLI, "check", str(bad / "bad0.yaml")], {}),
        ("check, a folder of 11 such", [*CLI, "check", str(bad)], {}),
        ("COLUMNS=99999999 walk", [*CLI, "walk", "cats-chase-mice"], {"COLUMNS": "99999999"}),
    ]


def class_pdfs(folder: Path, timeout: float) -> list[tuple[str, list[str], dict]]:
    """The key of a class of 5, 50 and 200 students of the-cake as one PDF: its peak memory
    should not grow with the class (each student's sheet is compiled on its own)."""
    runs = []
    for count in (5, 50, 200):
        students = folder / f"class{count}"
        made = ["variants", "the-cake", "--count", str(count), "--seed", "1", "-o", str(students)]
        subprocess.run(
            [*CLI, *made],
            capture_output=True,
            timeout=timeout,
            check=True,
        )
        out = str(folder / f"class{count}.pdf")
        argv = [*CLI, "export", str(students), "--format", "pdf", "-o", out, "--force"]
        runs.append((f"class key pdf, {count} students", argv, {}))
    return runs


def show(
    lesson: str, label: str, elapsed: float | None, mb: float, status: int, cpu: float
) -> None:
    """One line of the table; a run misses the target when both its wall and its CPU time are
    over it (the wall time alone counts the waits of a shared machine; CPU time alone counts
    typst's threads twice) or its memory is."""
    over = elapsed is None or min(elapsed, cpu) > LIMIT_TARGET_S or mb > LIMIT_TARGET_MB
    seconds = "stopped" if elapsed is None else f"{elapsed:.2f}"
    tail = "  MISSED" if over else ""
    tail += f"  (exit {status})" if elapsed is not None and status not in (0, 1) else ""
    print(f"{lesson:<38} {label:<22} {seconds:>8} {cpu:>8.2f} {mb:>8.0f}{tail}", flush=True)


if __name__ == "__main__":
    main()
