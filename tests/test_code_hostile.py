"""``check-code`` against student code that fights back (issue 43, item 2): the answer travels on
a channel of its own, what the student prints is kept up to a cap, the timeout is a finite number,
exceptions are described without trusting them, the whole process group ends with the command,
and every kind of result is named for what it is."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

GOOD = """
import numpy as np


def attention(X, W_Q, W_K, W_V, mask=None):
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    scaled = Q @ K.T / np.sqrt(K.shape[1])
    if mask is not None:
        scaled = np.where(mask, scaled, -np.inf)
    e = np.exp(scaled - scaled.max(axis=1, keepdims=True))
    return RESULT
"""
Z = "(e / e.sum(axis=1, keepdims=True)) @ V"


def student(tmp_path: Path, body: str, result: str = Z, name: str = "mine.py") -> str:
    """A student's file: the good attention returning ``result``, with ``body`` after it."""
    path = tmp_path / name
    path.write_text(GOOD.replace("RESULT", result) + "\n" + body + "\n")
    return str(path)


def no_bug(result) -> None:  # type: ignore[no-untyped-def]
    assert result.exit_code in (0, 1), (result.exit_code, result.output)
    assert "Traceback" not in result.output
    assert "internal error" not in result.output


# --- the answer's own channel -----------------------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        "import atexit\natexit.register(lambda: print('after the answer'))",
        "import atexit, os\natexit.register(lambda: os.write(1, b'{\"results\": []}\\n'))",
        'import atexit, os\natexit.register(lambda: os.write(1, b\'{"problem": "forged"}\\n\'))',
        "import json\njson.dumps = lambda *a, **k: '[1, 2]'",
        "import json\njson.dumps = lambda *a, **k: '{\"results\": [[]]}'",
        "import os\nos.write(1, b'{\"results\": []}\\n')",
    ],
    ids=["atexit-print", "atexit-forged", "atexit-problem", "dumps-list", "dumps-forged", "fd1"],
)
def test_nothing_the_student_writes_is_taken_for_the_answer(run, tmp_path, body) -> None:  # type: ignore[no-untyped-def]
    result = run("check-code", "cats-chase-mice", student(tmp_path, body))
    no_bug(result)
    assert result.exit_code == 0, result.output
    assert "Every step your function returns matches the lesson." in result.stdout
    assert "forged" not in result.stdout.split("Every step")[-1]


def test_a_forged_answer_cannot_turn_a_wrong_function_right(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    body = "import atexit, os\natexit.register(lambda: os.write(1, b'{\"results\": []}\\n'))"
    result = run("check-code", "cats-chase-mice", student(tmp_path, body, result="2 * " + Z))
    no_bug(result)
    assert result.exit_code == 1 and "your code gives" in result.stdout


# --- the timeout ------------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "0", "-1", "1e9"])
def test_the_timeout_is_a_finite_positive_number(run, tmp_path, value) -> None:  # type: ignore[no-untyped-def]
    result = run("check-code", "cats-chase-mice", student(tmp_path, ""), "--timeout", value)
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and "--timeout" in result.output


# --- what the student's code raises -----------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "says"),
    [
        (
            "class Sly(Exception):\n    def __str__(self):\n        raise RuntimeError('no')\n"
            "raise Sly()",
            "your code raised Sly",
        ),
        (
            "class Odd(Exception):\n    def __str__(self):\n        return 5\nraise Odd()",
            "your code raised Odd",
        ),
        ("raise KeyboardInterrupt", "your code raised KeyboardInterrupt"),
        ("raise SystemExit(3)", "your code raised SystemExit"),
        ("raise ValueError('x' * 50_000_000)", "your code raised ValueError: xxx"),
    ],
    ids=["str-raises", "str-not-text", "keyboard-interrupt", "system-exit", "50-MB-message"],
)
def test_what_the_code_raises_is_described_safely(run, tmp_path, body, says) -> None:  # type: ignore[no-untyped-def]
    start = time.monotonic()
    result = run("check-code", "cats-chase-mice", student(tmp_path, body))
    no_bug(result)
    assert result.exit_code == 1
    assert says in result.stdout
    assert "mine.py" in result.stdout  # where: the student's line
    assert len(result.output) < 5000
    assert time.monotonic() - start < 15


# --- the process group ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        "import threading, time\nthreading.Thread(target=time.sleep, args=(60,)).start()",
        "import os, time, pathlib\n"
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    time.sleep(60)\n"
        "    os._exit(0)\n"
        "pathlib.Path(__file__).with_name('pid').write_text(str(pid))",
    ],
    ids=["non-daemon-thread", "forked-child"],
)
def test_an_answer_is_an_answer_whatever_lingers(run, tmp_path, body) -> None:  # type: ignore[no-untyped-def]
    start = time.monotonic()
    result = run("check-code", "cats-chase-mice", student(tmp_path, body), "--timeout", "20")
    no_bug(result)
    assert result.exit_code == 0, result.output
    assert "did not finish" not in result.output
    assert time.monotonic() - start < 15
    pid_file = tmp_path / "pid"
    if pid_file.exists():  # the forked child ended with the command
        pid = int(pid_file.read_text())
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and _alive(pid):
            time.sleep(0.05)
        assert not _alive(pid)


FORK_THEN_LOOP = (
    "import os, time, pathlib\n"
    "pid = os.fork()\n"
    "if pid == 0:\n"
    "    time.sleep(60)\n"
    "    os._exit(0)\n"
    "pathlib.Path(__file__).with_name('pid').write_text(str(pid))\n"
    "while True:\n"
    "    pass"
)


def _ends(pid: int) -> bool:
    """Whether the process ends (or is a zombie) within 5 s."""
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and _alive(pid):
        time.sleep(0.05)
    return not _alive(pid)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ")[-1][0] != "Z"  # a zombie has ended
    except FileNotFoundError:
        return False


def test_a_loop_that_never_ends_is_ended_with_its_children(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    body = FORK_THEN_LOOP
    result = run("check-code", "cats-chase-mice", student(tmp_path, body), "--timeout", "2")
    no_bug(result)
    assert result.exit_code == 1 and "did not finish within 2 s" in result.stdout
    pid = int((tmp_path / "pid").read_text())
    assert _ends(pid)


# --- results named for what they are ----------------------------------------------------------


@pytest.mark.parametrize(
    ("result", "says"),
    [
        (Z + " + 5j", "complex"),
        ("np.array([['a', 'b']] * 3, dtype=object)", "not an array of numbers"),
        ("np.array([['a', 'b']] * 3)", "not an array of numbers"),
        ("[[1.0, 2.0], [3.0]]", "ragged"),
        ("np.zeros((0, 0))", "shape (0, 0)"),
        ("np.zeros((3, 2)) * np.nan", "NaN"),
        ("np.full((3, 2), np.inf)", "inf"),
        ("np.zeros((3, 2, 1))", "3 dimensions"),
        ("None", "not an array of numbers"),
        ("[" + Z + ", {'Q': Q}]", "matches"),  # a list [Z, steps] read as (Z, steps)
        ("(" + Z + ").tolist()", "matches"),
        ("np.zeros((4500, 4500))", "shape (4500, 4500)"),
    ],
    ids=[
        "complex",
        "object",
        "text",
        "ragged",
        "0x0",
        "nan",
        "inf",
        "3d",
        "none",
        "list-pair",
        "list",
        "huge",
    ],
)
def test_each_kind_of_result_is_named(run, tmp_path, result, says) -> None:  # type: ignore[no-untyped-def]
    out = run("check-code", "cats-chase-mice", student(tmp_path, "", result=result))
    no_bug(out)
    assert says in out.stdout, out.output
    assert "Warning" not in out.output  # numpy's ComplexWarning is not the student's print
    if says != "matches":
        assert out.exit_code == 1


def test_a_complex_z_does_not_match(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    out = run("check-code", "cats-chase-mice", student(tmp_path, "", result=Z + " + 0j"))
    assert out.exit_code == 1 and "complex" in out.stdout


# --- what the student prints ------------------------------------------------------------------


def test_what_the_code_prints_is_kept_up_to_a_cap(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    body = (
        "import sys\nprint('first line')\nfor _ in range(20):\n    sys.stdout.write('x' * 100_000)"
    )
    out = run("check-code", "cats-chase-mice", student(tmp_path, body))
    no_bug(out)
    assert out.exit_code == 0
    assert "first line" in out.stdout
    assert "more bytes" in out.stdout and "not shown" in out.stdout
    assert len(out.stdout) < 20_000


def test_printing_hundreds_of_megabytes_keeps_the_tutor_small(tmp_path) -> None:
    """A real process: the tutor's own peak memory while the student's code prints 300 MB."""
    body = "import sys\nfor _ in range(300):\n    sys.stdout.write('x' * 1_000_000)"
    path = student(tmp_path, body)
    probe = (
        "import resource, subprocess, sys\n"
        f"p = subprocess.run([sys.executable, '-m', 'tutor', 'check-code', 'cats-chase-mice', "
        f"{path!r}], capture_output=True, text=True)\n"
        "print(p.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
        "print(p.stdout[-300:], p.stderr[-300:])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    code, peak_kb = done.stdout.split("\n")[0].split()
    assert code == "0", done.stdout
    assert int(peak_kb) < 250_000, done.stdout  # the tutor alone is about 120 MB


def test_ctrl_c_ends_the_command_and_the_students_processes(tmp_path) -> None:
    """SIGINT to the tutor (a terminal's Ctrl-C): exit 130, and the student's loop and the
    child it forked end with it."""
    body = FORK_THEN_LOOP
    path = student(tmp_path, body)
    proc = subprocess.Popen(
        [sys.executable, "-m", "tutor", "check-code", "cats-chase-mice", path],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    pid_file = tmp_path / "pid"
    deadline = time.monotonic() + 30
    while not pid_file.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, (out, err)
    assert "Traceback" not in out + err
    pid = int(pid_file.read_text())
    assert _ends(pid)
