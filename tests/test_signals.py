"""Ctrl-C and SIGTERM stop a long command at once (issue 31): exit 130 and 143, nothing left
half-written. typst used to compile in-process and held the interpreter until it finished (20 s
on the largest key after a Ctrl-C); it runs in a child process now, which is killed.

Each command runs in a child process; the signal is sent once it is busy (its typst child is
running, or it has used a second and a half of CPU, well past its imports), and the wait for
its end has a bound far shorter than the command's own time (a bound, not a clock)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import PLAIN_ENV, ROOT
from tests.test_battery import kind_lesson

pytest.importorskip("typst")

MAIN = "from tutor.cli import main; main()"
BOUND = 5  # seconds: the key's PDF alone takes over 30 s, the class's typ source over 7 s


@pytest.fixture(scope="module")
def wide(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The largest legal lesson of several heads: 32 tokens, dimension 16, 4 heads and W_O."""
    text = kind_lesson("heads", "wide")
    path = tmp_path_factory.mktemp("wide") / "wide.yaml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def wide_class(wide: Path) -> Path:
    """A folder of four such lessons: its typ source takes several seconds of Python."""
    folder = wide.parent / "class"
    folder.mkdir()
    for k in range(4):
        (folder / f"student-{k}.yaml").write_text(wide.read_text(encoding="utf-8"))
    return folder


def children(pid: int) -> list[int]:
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def cpu_seconds(pid: int) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def busy_compiling(pid: int) -> bool:
    return bool(children(pid))


def busy_working(pid: int) -> bool:
    return cpu_seconds(pid) >= 1.5


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
@pytest.mark.parametrize(
    ("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["ctrl-c", "sigterm"]
)
@pytest.mark.parametrize(
    ("fmt", "busy"),
    [("pdf", busy_compiling), ("typ", busy_working)],
    ids=["pdf-in-typst", "typ-in-python"],
)
def test_a_signal_stops_a_long_export(
    tmp_path: Path,
    wide: Path,
    wide_class: Path,
    signum: int,
    code: int,
    fmt: str,
    busy: Callable[[int], bool],
) -> None:
    out = tmp_path / f"key.{fmt}"
    env = {**os.environ, **PLAIN_ENV, "ATTN_TUTOR_HOME": str(tmp_path)}
    source = wide if fmt == "pdf" else wide_class
    child = subprocess.Popen(
        [sys.executable, "-c", MAIN, "export", str(source), "-f", fmt, "-o", str(out)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        cwd=ROOT,
        env=env,
    )
    try:
        deadline = time.monotonic() + 120  # the guard against a hang while it starts
        while not busy(child.pid) and child.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert child.poll() is None, "it ended before it was busy"
        compilers = children(child.pid)
        if signum == signal.SIGINT:  # a terminal's Ctrl-C reaches every process of the job
            for pid in [child.pid, *compilers]:
                os.kill(pid, signum)
        else:  # kill(1) reaches only the one named
            child.send_signal(signum)
        _, err = child.communicate(timeout=BOUND)
    finally:
        child.kill()
        child.wait()
    assert child.returncode == code, err
    assert b"Traceback" not in err and b"internal error" not in err
    assert not out.exists()
    for pid in compilers:  # typst was not left running
        assert not Path(f"/proc/{pid}").exists() or "Z" in Path(f"/proc/{pid}/stat").read_text()
