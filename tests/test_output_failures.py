"""Output that goes away: a reader that stops reading (``| head``), a full disk, a signal.
One convention for a broken pipe over every command (stop quietly, exit 0); a quiz saves its
record whatever ends it; ``export --force`` never leaves half a file in place of the old one.
All in real processes (CliRunner has no pipes or signals); timeouts guard against hangs."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import PLAIN_ENV, ROOT
from tests.test_hostile import clean, tutor
from tutor.assess import history

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX pipes and signals")


def child_env(home: Path) -> dict[str, str]:
    """The test's environment (tests/conftest.py pins it) for a child with its own home; built
    when the test runs, not at import, which would keep the runner's own environment."""
    return {**os.environ, **PLAIN_ENV, "PYTHONPATH": str(ROOT), "ATTN_TUTOR_HOME": str(home)}


def with_closed_reader(args: list[str], home: Path, stdin: bytes = b"") -> tuple[int, str]:
    """Run attn-tutor with stdout a pipe nobody reads: its reader is closed before it starts,
    so the first write fails, every time (``| head -1`` that has already exited)."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        child = subprocess.Popen(
            [sys.executable, "-m", "tutor", *args],
            stdin=subprocess.PIPE,
            stdout=write_end,
            stderr=subprocess.PIPE,
            env=child_env(home),
        )
    finally:
        os.close(write_end)
    _, err = child.communicate(stdin, timeout=60)
    return child.returncode, err.decode()


@pytest.fixture(scope="module")
def sheet(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("sheet") / "ann.yaml"
    out = tutor("export", "cats-chase-mice", "--format", "sheet", "-o", str(path))
    assert out.returncode == 0
    return path


COMMANDS = {
    "walk": ["walk", "cats-chase-mice"],
    "walk --json": ["walk", "cats-chase-mice", "--json"],
    "export": ["export", "cats-chase-mice"],
    "export svg": ["export", "cats-chase-mice", "--format", "svg"],
    "grade": ["grade", "cats-chase-mice", "SHEET"],
    "grade --json": ["grade", "cats-chase-mice", "SHEET", "--json"],
    "check": ["check", "cats-chase-mice"],
    "list": ["list"],
    "progress": ["progress"],
    "softmax": ["softmax", "1", "2", "3"],
    "explain": ["explain", "cats-chase-mice", "Z[cats, 1]"],
    "schema": ["schema"],
    "--help": ["--help"],
}


@pytest.mark.parametrize("name", list(COMMANDS))
def test_a_reader_that_went_away_ends_every_command_quietly(
    name: str, sheet: Path, tmp_path: Path
) -> None:
    """Before: walk, grade, check, list, progress and softmax exited 1; walk --json and
    export exited 0. Now every command: exit 0 and nothing on stderr (see README)."""
    history.append({"lesson": "cats-chase-mice", "cells": []}, tmp_path / history.FILE_NAME)
    args = [str(sheet) if a == "SHEET" else a for a in COMMANDS[name]]
    code, err = with_closed_reader(args, tmp_path)
    assert (code, err) == (0, "")


# --- the quiz saves its record whatever ends it -----------------------------------------------


QUIZ = ["quiz", "--steps", "Q", "--count", "2", "--seed", "2"]


def test_a_quiz_piped_into_head_saves_its_record(tmp_path: Path) -> None:
    code, err = with_closed_reader(QUIZ, tmp_path, stdin=b"2\nskip\n")
    assert (code, err) == (0, "")
    (rec,) = history.read(tmp_path / history.FILE_NAME).records
    assert rec["ended"] == "output-failed" and rec["planned"] == 2


def test_a_quiz_onto_a_full_disk_saves_its_record(tmp_path: Path) -> None:
    with open("/dev/full", "w") as full:
        out = tutor(*QUIZ, stdout=full, input=b"skip\n", env={"ATTN_TUTOR_HOME": str(tmp_path)})
    assert out.returncode == 1
    assert out.stderr.decode().splitlines() == [
        "error: cannot write the output: No space left on device"
    ]
    (rec,) = history.read(tmp_path / history.FILE_NAME).records
    assert rec["ended"] == "output-failed"


def wait_for(child: subprocess.Popen, text: bytes) -> bytes:  # type: ignore[type-arg]
    """Read the child's stdout until ``text`` appears (the quiz is then waiting at its prompt)."""
    seen = b""
    while text not in seen:
        chunk = os.read(child.stdout.fileno(), 4096)  # type: ignore[union-attr]
        assert chunk, f"the quiz ended before {text!r}: {seen!r}"
        seen += chunk
    return seen


@pytest.mark.parametrize(
    ("signum", "code"), [(signal.SIGTERM, 143), (getattr(signal, "SIGHUP", 1), 129)]
)
@pytest.mark.parametrize("point", ["first question", "after an answer"])
def test_sigterm_or_sighup_at_the_prompt_saves_the_record(
    tmp_path: Path, signum: int, code: int, point: str
) -> None:
    """SIGHUP is what a closed terminal sends; SIGTERM what `kill` and shutdowns send."""
    child = subprocess.Popen(
        [sys.executable, "-m", "tutor", *QUIZ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=child_env(tmp_path),
    )
    try:
        wait_for(child, b"Question 1/2")
        if point == "after an answer":
            child.stdin.write(b"12345\n")  # type: ignore[union-attr]
            child.stdin.flush()  # type: ignore[union-attr]
            wait_for(child, b"Try again")
        time.sleep(0.2)  # blocked reading the next line of stdin
        child.send_signal(signum)
        out, err = child.communicate(timeout=30)
    finally:
        child.kill()
    assert child.returncode == code, err
    assert b"Traceback" not in out + err
    (rec,) = history.read(tmp_path / history.FILE_NAME).records
    assert rec["ended"] == signal.Signals(signum).name.lower()
    if point == "after an answer":  # tried, so asked: missed and unfinished
        assert [(c["outcome"], c["unfinished"]) for c in rec["cells"]] == [("missed", True)]


def test_a_closed_terminal_saves_the_record(tmp_path: Path) -> None:
    """The terminal window closes: the pty goes away and the kernel sends SIGHUP."""
    from tests.test_quiz import spawn

    child = spawn(tmp_path, *QUIZ[1:])
    child.expect_exact("Question 1/2: Q[")
    child.expect_exact("= ")
    time.sleep(0.2)
    os.close(child.child_fd)  # hang up: the master side of the terminal is gone
    child.closed = True
    deadline = time.monotonic() + 30  # the guard against a hang, not a timing assertion
    while child.isalive() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not child.isalive()
    assert child.exitstatus == 129 or child.signalstatus == signal.SIGHUP
    records = history.read(tmp_path / "pty-home" / history.FILE_NAME).records
    assert [r["ended"] for r in records] == ["sighup"]


@pytest.mark.skipif(not hasattr(os, "setsid"), reason="POSIX sessions")
def test_a_quiz_started_with_sigterm_ignored_keeps_it_ignored(tmp_path: Path) -> None:
    """As nohup does for SIGHUP: a signal ignored when attn-tutor starts stays ignored."""

    def ignore_term() -> None:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)

    child = subprocess.Popen(
        [sys.executable, "-m", "tutor", *QUIZ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=child_env(tmp_path),
        preexec_fn=ignore_term,
    )
    try:
        wait_for(child, b"Question 1/2")
        child.send_signal(signal.SIGTERM)
        _, err = child.communicate(b"skip\nskip\n", timeout=30)
    finally:
        child.kill()
    assert child.returncode == 0, err
    (rec,) = history.read(tmp_path / history.FILE_NAME).records
    assert rec["ended"] == "finished"


# --- export --force on a full disk ------------------------------------------------------------


def small_disk(limit: int):  # type: ignore[no-untyped-def]
    """A child whose files may not grow past ``limit`` bytes: writes beyond it fail with EFBIG,
    as on a full disk (SIGXFSZ, which would kill it instead, is ignored)."""
    import resource

    def preexec() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return preexec


@pytest.mark.parametrize("fmt", ["md", "svg"])
def test_export_force_onto_a_full_disk_keeps_the_old_file(tmp_path: Path, fmt: str) -> None:
    old = tmp_path / "key.out"
    old.write_text("the old answer key\n")
    old.chmod(0o640)
    args = ["export", "cats-chase-mice", "-f", fmt, "-o", str(old), "--force"]
    out = tutor(*args, preexec_fn=small_disk(500), text=True)
    clean(out)
    assert out.returncode == 1
    assert out.stderr.startswith(f"error: cannot write {old}: File too large")
    assert old.read_text() == "the old answer key\n"
    assert [p.name for p in tmp_path.iterdir()] == ["key.out"]  # no temporary file left over


def test_export_force_replaces_the_file_and_keeps_its_permissions(tmp_path: Path) -> None:
    old = tmp_path / "key.md"
    old.write_text("the old answer key\n")
    old.chmod(0o640)
    link = tmp_path / "link.md"
    link.symlink_to(old)
    out = tutor("export", "cats-chase-mice", "-o", str(link), "--force")
    assert out.returncode == 0, out.stderr
    assert link.is_symlink()  # written through the link, as before
    assert old.read_text().startswith("# Cats chase mice")
    assert oct(old.stat().st_mode & 0o777) == oct(0o640)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["key.md", "link.md"]


def test_export_to_a_new_file_gets_the_usual_permissions(tmp_path: Path) -> None:
    new = tmp_path / "sheet.yaml"
    mask = os.umask(0o022)
    os.umask(mask)
    out = tutor("export", "cats-chase-mice", "-f", "sheet", "-o", str(new))
    assert out.returncode == 0, out.stderr
    assert new.stat().st_mode & 0o777 == 0o666 & ~mask
    assert "null" in new.read_text()


def test_export_force_to_a_device_writes_to_it_not_over_it(tmp_path: Path) -> None:
    out = tutor("export", "cats-chase-mice", "-o", os.devnull, "--force")
    assert out.returncode == 0, out.stderr
    assert Path(os.devnull).is_char_device()
