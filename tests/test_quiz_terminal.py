"""The quiz as a student meets it: Ctrl-C, Ctrl-D and a closed stdin at several points, and a
damaged history file; never a traceback, the right exit code, and the history still readable
with every earlier record kept."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import PLAIN_ENV, ROOT
from tests.test_quiz import spawn
from tutor.assess import history

pexpect = pytest.importorskip("pexpect")

EARLIER = {"version": 1, "lesson": "earlier", "ended": "finished", "score": 1, "cells": []}
ARGS = ("--steps", "Q", "--count", "2", "--seed", "2")  # two Q cells; Q[.., ..] = integers


def seed_history(home: Path) -> Path:
    home.mkdir(parents=True, exist_ok=True)
    path = home / history.FILE_NAME
    path.write_text(json.dumps(EARLIER) + "\n")
    return path


def assert_intact(path: Path) -> list[dict]:  # type: ignore[type-arg]
    """Every line is a JSON record and the earlier one is still first."""
    lines = path.read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines]
    assert records[0] == EARLIER
    return records


def to_point(child, point: str) -> None:  # type: ignore[no-untyped-def]
    """Drive the quiz to a point where the student may press a key."""
    child.expect_exact("Question 1/2: Q[")
    child.expect_exact("= ")
    if point == "after a wrong answer":
        child.sendline("12345")
        child.expect_exact("Try again")
        child.expect_exact("= ")
    elif point == "at a hint":
        child.sendline("hint")
        child.expect_exact("Hint: ")
        child.expect_exact("= ")
    elif point == "second question":
        child.sendline("skip")
        child.expect_exact("Question 2/2: Q[")
        child.expect_exact("= ")
    time.sleep(0.2)  # let the prompt settle before the key arrives


POINTS = ["before the first answer", "after a wrong answer", "at a hint", "second question"]


@pytest.mark.parametrize("point", POINTS)
@pytest.mark.parametrize(
    ("key", "code", "ended"), [("ctrl-c", 130, "ctrl-c"), ("ctrl-d", 0, "ctrl-d")]
)
def test_keys_at_every_point(tmp_path: Path, point: str, key: str, code: int, ended: str) -> None:
    path = seed_history(tmp_path / "pty-home")
    child = spawn(tmp_path, *ARGS)
    to_point(child, point)
    if key == "ctrl-c":
        child.sendintr()
    else:
        child.sendeof()
    child.expect_exact("Score: ")
    child.expect(pexpect.EOF)
    child.close()
    assert "Traceback" not in (child.before or "")
    assert child.exitstatus == code
    records = assert_intact(path)
    assert len(records) == 2 and records[1]["ended"] == ended
    cells = records[1]["cells"]
    if point == "before the first answer":
        assert cells == []
    elif point in ("after a wrong answer", "at a hint"):  # tried, so asked: missed, unfinished
        assert [(c["outcome"], c["unfinished"]) for c in cells] == [("missed", True)]


def test_ctrl_c_twice_mid_summary(tmp_path: Path) -> None:
    """A second Ctrl-C while the summary is printed or the record saved: still no traceback,
    still 130, and the history keeps every earlier record (this one may be lost)."""
    path = seed_history(tmp_path / "pty-home")
    child = spawn(tmp_path, *ARGS)
    to_point(child, "second question")
    child.sendintr()
    child.sendintr()
    child.expect(pexpect.EOF)
    child.close()
    out = child.before or ""
    assert "Traceback" not in out
    assert child.exitstatus == 130
    records = assert_intact(path)
    assert len(records) in (1, 2)


@pytest.mark.parametrize("typed", ["", "banana\n", "12345\n", "hint\n", "skip\n", "12345\nhint\n"])
def test_closed_stdin(tmp_path: Path, typed: str) -> None:
    """A pipe that closes part-way: the quiz ends as with Ctrl-D and saves what was done."""
    home = tmp_path / "home"
    path = seed_history(home)
    env = {**os.environ, **PLAIN_ENV, "ATTN_TUTOR_HOME": str(home)}
    out = subprocess.run(
        [sys.executable, "-m", "tutor", "quiz", *ARGS],
        input=typed,
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=30,
    )
    assert out.returncode == 0, out.stderr
    assert "Traceback" not in out.stdout + out.stderr
    assert "Quiz ended early" in out.stdout
    records = assert_intact(path)
    assert records[-1]["ended"] == "ctrl-d"


# ---------------------------------------------------------------------------------------------
# a damaged history file: reported, set aside when nothing in it is ours, never fatal


GOOD = json.dumps(
    {"version": 1, "lesson": "cats-chase-mice", "cells": [{"step": "Q", "outcome": "first"}]}
)


def damage(home: Path, kind: str) -> Path:
    home.mkdir(parents=True, exist_ok=True)
    path = home / history.FILE_NAME
    if kind == "garbage":
        path.write_bytes(b"\xff\xfe\x00\x01 not json at all \x80\x81")
    elif kind == "garbage line":
        path.write_bytes(GOOD.encode() + b"\n\xff\xfe\x00 garbage\n" + GOOD.encode() + b"\n")
    elif kind == "truncated":
        path.write_text(GOOD + "\n" + GOOD[:25])
    elif kind == "directory":
        path.mkdir()
        (path / "inside").write_text("x")
    elif kind == "not records":
        path.write_text('[1, 2]\n42\n"text"\n')
    return path


KINDS = ["garbage", "garbage line", "truncated", "directory", "not records"]
KEPT = {"garbage": 0, "garbage line": 2, "truncated": 1, "directory": 0, "not records": 0}


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ATTN_TUTOR_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


@pytest.mark.parametrize("kind", KINDS)
def test_damaged_history_through_progress(run, home: Path, kind: str) -> None:  # type: ignore[no-untyped-def]
    damage(home, kind)
    r = run("progress")
    assert r.exit_code == 0, r.stderr
    assert "Traceback" not in r.stdout + r.stderr
    assert "warning:" in r.stderr
    set_aside = list(home.glob("history.jsonl.damaged-*"))
    if KEPT[kind]:
        quizzes = "quiz" if KEPT[kind] == 1 else "quizzes"
        assert f"Progress over {KEPT[kind]} {quizzes} " in r.stdout
        assert not set_aside
    else:
        assert "moved it to" in r.stderr and set_aside
        assert "No quizzes yet" in r.stdout


@pytest.mark.parametrize("kind", KINDS)
def test_damaged_history_through_quiz(run, home: Path, kind: str) -> None:  # type: ignore[no-untyped-def]
    damage(home, kind)
    r = run("quiz", "--count", "1", "--seed", "0", input="skip\n")
    assert r.exit_code == 0, r.stderr
    assert "Traceback" not in r.stdout + r.stderr
    found = history.read()
    assert found.records[-1]["ended"] == "finished"
    r = run("progress")
    assert r.exit_code == 0
    assert "Traceback" not in r.stdout + r.stderr


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_unreadable_history(run, home: Path) -> None:  # type: ignore[no-untyped-def]
    path = damage(home, "truncated")
    path.chmod(0)
    try:
        r = run("progress")
        assert r.exit_code == 0 and "warning:" in r.stderr
        assert "Traceback" not in r.stdout + r.stderr
        r = run("quiz", "--count", "1", "--seed", "0", input="skip\n")
        assert r.exit_code == 0
    finally:
        for p in home.iterdir():
            p.chmod(0o644)
