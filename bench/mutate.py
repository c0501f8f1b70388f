"""Plant one-line mutations in tutor/core and tutor/assess, run a few test files on each, and say
which mutants the tests kill.

Run from the repository root::

    python bench/mutate.py                                   # the curated lines (TARGETS)
    python bench/mutate.py tutor/assess/grade.py:300-320     # every mutant on those lines
    python bench/mutate.py tutor/assess/judge.py --sample 10 --seed 1
    python bench/mutate.py --list                            # the mutants, without running

A target is ``path`` (every line), ``path:LINE`` or ``path:FIRST-LAST``. A mutation changes one
token of code (never a string or a comment): ``<``↔``<=``, ``>``↔``>=``, ``==``↔``!=``, a binary
``+``↔``-``, ``and``↔``or``, ``all``↔``any``, an integer constant ±1, a ``not`` dropped, or a
``.strip()``, ``.casefold()`` or ``.lower()`` left out. Each mutant runs
``pytest -x -q`` on the test files (``--tests``, default ``TESTS``) with a timeout; it is *killed*
when they fail (or time out), *survived* when they pass. The file is written back byte for byte,
with its modification time, after every mutant, also on Ctrl-C.
"""

from __future__ import annotations

import argparse
import io
import os
import random
import signal
import subprocess
import sys
import time
import tokenize
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TESTS = (  # the fastest to fail first
    "tests/test_mark_rules.py",
    "tests/test_grade.py",
    "tests/test_judge.py",
    "tests/test_gradebooks.py",
    "tests/test_follow_through.py",
    "tests/test_rules_once.py",
)
# lines whose rules change a mark (issue 37): the causal diagonal, a copy's point, an attempt,
# half a unit, the junk sheet, ids and Moodle's id column; found by their text, not their number
TARGETS = (
    ("tutor/core/engine.py", "return j > i + self.shift"),  # Mask.hides: the causal diagonal
    ("tutor/assess/ranges.py", "half = QQ(1, 2 * 10 ** max(q, places))"),
    ("tutor/assess/grade.py", "if copied is not None and copied.verdict in EARNS and honest_own"),
    ("tutor/assess/grade.py", "if 2 * good >= len(written):"),
    ("tutor/assess/grade.py", "if written < 4 or not seen:"),
    ("tutor/assess/grade.py", "return n >= JUNK_SHARE * written and true_share.get(value, 0)"),
    ("tutor/assess/gradebooks.py", 'return " ".join(name.casefold().split())'),
    ("tutor/assess/gradebooks.py", "k < len(f) and bool(f[k].strip()) for f in with_sheet"),
    ("tutor/assess/gradebooks.py", "if (all if with_sheet else any)(filled):"),
)
SWAPS = {
    "<": "<=", "<=": "<", ">": ">=", ">=": ">", "==": "!=", "!=": "==",
    "+": "-", "-": "+", "and": "or", "or": "and",
}  # fmt: skip
CALLS = {"all": "any", "any": "all"}
DROPPED = ("strip", "casefold", "lower")  # a text's normalisation left out
ALLOWED = ("tutor/core/", "tutor/assess/")


@dataclass(frozen=True)
class Mutant:
    path: str  # relative to the repository root
    line: int
    col: int
    old: str
    new: str
    text: str  # the mutated line

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.old!r} → {self.new!r}"


def _binary(prev: tokenize.TokenInfo | None) -> bool:
    """Whether a ``+``/``-`` after ``prev`` is binary (unary after an operator or a bracket)."""
    if prev is None:
        return False
    if prev.type in (tokenize.NAME, tokenize.NUMBER, tokenize.STRING):
        return prev.string not in ("return", "and", "or", "not", "in", "if", "else", "is")
    return prev.string in (")", "]", "}")


def mutants(path: str, lines: set[int] | None = None) -> list[Mutant]:
    """Every mutant of the file's code tokens (on ``lines``, when given)."""
    source = (ROOT / path).read_text(encoding="utf-8")
    rows = source.splitlines(keepends=True)
    out: list[Mutant] = []
    prev = None
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        (line, col), (end_line, end) = tok.start, tok.end
        new: str | None = None
        if tok.type == tokenize.OP or (tok.type == tokenize.NAME and tok.string in SWAPS):
            new = SWAPS.get(tok.string)
            if tok.string in "+-" and not _binary(prev):
                new = None
        elif tok.type == tokenize.NUMBER and tok.string.isdigit():
            new = str(int(tok.string) + 1) if int(tok.string) < 2 else str(int(tok.string) - 1)
        elif (
            tok.type == tokenize.NAME and tok.string in CALLS and getattr(prev, "string", "") != "."
        ):
            new = CALLS[tok.string]
        elif (
            tok.type == tokenize.NAME
            and tok.string in DROPPED
            and prev is not None
            and prev.string == "."
            and rows[line - 1][end:].startswith("()")
        ):
            new, col, end = "", col - 1, end + 2  # ".casefold()" dropped
        elif tok.type == tokenize.NAME and tok.string == "not":
            nxt = rows[line - 1][end:]
            new, end = "", end + len(nxt) - len(nxt.lstrip(" "))  # drop "not" and its space
        if tok.type not in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE):
            prev = tok
        if new is None or end_line != line or (lines is not None and line not in lines):
            continue
        row = rows[line - 1]
        old = row[col:end]
        out.append(Mutant(path, line, col, old.strip() or old, new, row[:col] + new + row[end:]))
    return out


def parse_target(target: str) -> tuple[str, set[int] | None]:
    """``path``, ``path:LINE`` or ``path:FIRST-LAST``."""
    path, _, span = target.partition(":")
    if not path.startswith(ALLOWED) or not path.endswith(".py"):
        raise SystemExit(f"{target}: expected a file of {' or '.join(ALLOWED)}")
    if not span:
        return path, None
    first, _, last = span.partition("-")
    return path, set(range(int(first), int(last or first) + 1))


def curated() -> list[tuple[str, set[int] | None]]:
    """``TARGETS`` as (path, {line}), each line found by its text."""
    out = []
    for path, text in TARGETS:
        rows = (ROOT / path).read_text(encoding="utf-8").splitlines()
        found = [k + 1 for k, row in enumerate(rows) if text in row]
        if len(found) != 1:
            raise SystemExit(f"{path}: {len(found)} lines hold {text!r}; update TARGETS")
        out.append((path, set(found)))
    return out


def run_tests(tests: list[str], timeout: float) -> str:
    """``killed``, ``survived`` or ``timeout`` (counted as killed)."""
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    cmd = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *tests]
    proc = subprocess.Popen(
        cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True,
    )  # fmt: skip
    try:
        rc = proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        return "timeout"
    except BaseException:  # Ctrl-C: stop the tests too, then let the caller restore the file
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        raise
    if rc == 0:
        return "survived"
    if rc in (4, 5):  # usage error, no tests collected: the run says nothing of the mutant
        raise SystemExit(f"pytest exited {rc} for {' '.join(tests)}; check the test files")
    return "killed"


def try_mutant(m: Mutant, tests: list[str], timeout: float) -> str:
    """Plant the mutant, run the tests, and always put the file back as it was."""
    file = ROOT / m.path
    original = file.read_bytes()
    stat = file.stat()
    rows = original.decode("utf-8").splitlines(keepends=True)
    rows[m.line - 1] = m.text
    mutated = "".join(rows)
    try:
        compile(mutated, m.path, "exec")
    except SyntaxError:
        return "invalid"
    try:
        file.write_bytes(mutated.encode("utf-8"))
        return run_tests(tests, timeout)
    finally:
        file.write_bytes(original)
        os.utime(file, ns=(stat.st_atime_ns, stat.st_mtime_ns))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("targets", nargs="*", help="path, path:LINE or path:FIRST-LAST")
    ap.add_argument("--tests", nargs="+", default=list(TESTS), help="test files to run")
    ap.add_argument("--timeout", type=float, default=300, help="seconds a mutant may run")
    ap.add_argument("--sample", type=int, help="run this many mutants, picked at random")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--list", action="store_true", help="list the mutants, run nothing")
    args = ap.parse_args(argv)
    # SIGTERM as Ctrl-C, so the finally clauses put the files back
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    targets = [parse_target(t) for t in args.targets] if args.targets else curated()
    found = [m for path, lines in targets for m in mutants(path, lines)]
    if args.sample is not None and args.sample < len(found):
        found = sorted(
            random.Random(args.seed).sample(found, args.sample), key=lambda m: (m.path, m.line)
        )
    if args.list:
        for m in found:
            print(f"{m}    {m.text.strip()}")
        return 0
    counts: dict[str, int] = {}
    survivors = []
    start = time.monotonic()
    for k, m in enumerate(found, 1):
        began = time.monotonic()
        result = try_mutant(m, args.tests, args.timeout)
        counts[result] = counts.get(result, 0) + 1
        if result == "survived":
            survivors.append(m)
        took = time.monotonic() - began
        print(f"[{k}/{len(found)}] {result:8} {took:5.1f}s  {m}    {m.text.strip()}", flush=True)
    killed = counts.get("killed", 0) + counts.get("timeout", 0)
    ran = killed + counts.get("survived", 0)
    rate = f"{100 * killed / ran:.0f}%" if ran else "-"
    timeouts, invalid = counts.get("timeout", 0), counts.get("invalid", 0)
    took = time.monotonic() - start
    print(f"\n{killed} of {ran} mutants killed ({rate}); {timeouts} by timeout, {invalid} not "
          f"valid Python; {took:.0f}s")  # fmt: skip
    for m in survivors:
        print(f"survived: {m}    {m.text.strip()}")
    return 1 if survivors else 0


if __name__ == "__main__":
    raise SystemExit(main())
