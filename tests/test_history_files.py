"""A history a user's setup can break: huge, a FIFO, a link to an endless device, a folder that
cannot be written. Each is met through the CLI, in a real process whose timeout is the guard
against a hang (the old reader took minutes, or waited for ever); none of them stops a command."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.test_hostile import clean, tutor
from tutor.assess import history

QUIZ = ("quiz", "--steps", "Q", "--count", "1", "--seed", "1")


def record(lesson: str = "cats-chase-mice", cells: list | None = None) -> str:  # type: ignore[type-arg]
    cells = [{"step": "Q", "outcome": "first"}] if cells is None else cells
    return json.dumps({"version": 1, "lesson": lesson, "ended": "finished", "cells": cells})


def write_history(home: Path, lines: list[str]) -> Path:
    home.mkdir(parents=True, exist_ok=True)
    path = home / history.FILE_NAME
    path.write_text("".join(f"{line}\n" for line in lines))
    return path


def at(home: Path, *args: str, input: str = "skip\n"):  # type: ignore[no-untyped-def]
    """Run a command with this history folder; messages on one line each (no wrapping)."""
    env = {"ATTN_TUTOR_HOME": str(home), "COLUMNS": "1000"}
    out = tutor(*args, env=env, input=input, text=True)
    clean(out)
    return out


def progress(home: Path, *args: str):  # type: ignore[no-untyped-def]
    out = at(home, "progress", *args)
    assert out.returncode == 0, out.stderr
    return out


# --- size: time grows with the file, memory and the output do not ----------------------------


def test_fifty_thousand_quizzes_of_one_lesson(tmp_path: Path) -> None:
    write_history(tmp_path, [record()] * 50_000)
    out = progress(tmp_path)
    assert "Progress over 50000 quizzes" in out.stdout
    assert "│ Q    │ 50000 │     50000 │" in out.stdout
    assert "│ 1/1 1/1 1/1 │" in out.stdout  # the last three quizzes, no more
    assert out.stderr == ""


def test_fifty_thousand_quizzes_of_as_many_lessons(tmp_path: Path) -> None:
    """Each lesson drew its own table, and each table scanned every row: 473 s before."""
    write_history(tmp_path, [record(f"lesson-{i}") for i in range(50_000)])
    out = progress(tmp_path)
    counted = history.MAX_LESSONS
    assert f"Progress over {counted} quizzes" in out.stdout
    assert "49,000 quizzes of the others were not counted" in out.stderr
    # the lessons quizzed last are drawn, oldest first; the rest are counted in one line
    last = counted - 1
    assert f"lesson-{last}" in out.stdout and f"lesson-{last - 19}" in out.stdout
    assert f"lesson-{last - 20}\n" not in out.stdout
    assert f"and {counted - 20} more lessons, quizzed earlier" in out.stdout
    assert out.stdout.count("┏") + out.stdout.count("┌") == 20


def test_one_record_of_four_hundred_thousand_cells(tmp_path: Path) -> None:
    """16 MB on one line: 454 s and 2.4 GB before. No quiz writes more than 200 cells, so the
    line is skipped unread past its first megabyte; the records around it still count."""
    cells = [{"step": f"s{i}", "outcome": "first"} for i in range(400_000)]
    write_history(tmp_path, [record(), record(cells=cells), record()])
    out = progress(tmp_path)
    assert "Progress over 2 quizzes" in out.stdout
    assert f"{tmp_path / history.FILE_NAME}:2: skipped a damaged record" in out.stderr


def test_a_record_with_more_cells_than_a_quiz_asks_is_damaged(tmp_path: Path) -> None:
    too_many = [{"step": "Q", "outcome": "first"}] * (history.MAX_CELLS + 1)
    write_history(tmp_path, [record(cells=too_many), record()])
    out = progress(tmp_path)
    assert "Progress over 1 quiz " in out.stdout and ":1: skipped a damaged record" in out.stderr


def test_cells_no_quiz_could_write_are_not_counted(tmp_path: Path) -> None:
    odd = [{"step": "scores-of-mine", "outcome": "first"}, {"step": "Q", "head": 99}]
    write_history(tmp_path, [record(cells=[*odd, {"step": "Z", "outcome": "missed"}])])
    out = progress(tmp_path)
    assert "scores-of-mine" not in out.stdout and "head99" not in out.stdout
    assert "│ Z    │     1 │" in out.stdout


def test_a_lesson_has_at_most_as_many_rows_as_steps_and_heads(tmp_path: Path) -> None:
    """Made-up step names, 200 a record: the table stops at the rows a lesson can have."""
    lines = [
        record(cells=[{"step": f"s{k}-{i}", "outcome": "first"} for i in range(200)])
        for k in range(10)
    ]
    write_history(tmp_path, lines)
    out = progress(tmp_path)
    rows = [line for line in out.stdout.splitlines() if line.startswith("│ s")]
    assert len(rows) == history.MAX_STEPS


def test_thousands_of_damaged_lines_are_counted_not_listed(tmp_path: Path) -> None:
    write_history(tmp_path, [record(), *["{torn"] * 5000])
    out = progress(tmp_path)
    warnings = [line for line in out.stderr.splitlines() if line.startswith("warning:")]
    assert len(warnings) == history.MAX_PROBLEMS + 1
    assert f"skipped {5000 - history.MAX_PROBLEMS} more damaged records" in out.stderr


# --- not a file: a FIFO, an endless device ----------------------------------------------------


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
@pytest.mark.parametrize("command", ["progress", "quiz"])
def test_a_history_that_is_a_fifo_is_set_aside_not_waited_on(tmp_path: Path, command: str) -> None:
    home = tmp_path / "home"
    home.mkdir()
    os.mkfifo(home / history.FILE_NAME)  # nobody writes to it: a blocking open waits for ever
    args = QUIZ if command == "quiz" else ("progress",)
    out = at(home, *args)
    assert out.returncode == 0, out.stderr
    assert "a FIFO, not a history file" in out.stderr
    assert [p.name.startswith("history.jsonl.damaged-") for p in home.iterdir()].count(True) == 1
    if command == "quiz":  # and the quiz was saved in a fresh file
        assert history.read(home / history.FILE_NAME).records[0]["ended"] == "finished"


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero here")
@pytest.mark.parametrize("command", ["progress", "quiz"])
def test_a_history_linked_to_dev_zero_is_not_read(tmp_path: Path, command: str) -> None:
    """Before: progress read /dev/zero until MemoryError (exit 70)."""
    home = tmp_path / "home"
    home.mkdir()
    (home / history.FILE_NAME).symlink_to("/dev/zero")
    args = QUIZ if command == "quiz" else ("progress",)
    out = at(home, *args)
    assert out.returncode == 0, out.stderr
    assert "a device, not a history file" in out.stderr
    assert os.path.exists("/dev/zero") and Path("/dev/zero").is_char_device()


def test_a_link_to_a_history_elsewhere_is_followed(tmp_path: Path) -> None:
    real = write_history(tmp_path / "synced", [record()])
    home = tmp_path / "home"
    home.mkdir()
    (home / history.FILE_NAME).symlink_to(real)
    out = at(home, *QUIZ)
    assert out.returncode == 0 and out.stderr == "", out.stderr
    assert len(history.read(real).records) == 2
    assert "Progress over 2 quizzes" in progress(home).stdout


# --- a folder that cannot be written: a warning, never exit 1 ---------------------------------


def unwritable_homes(tmp_path: Path) -> dict[str, Path]:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    return {
        "name too long": tmp_path / ("x" * 300),  # ENAMETOOLONG: Path.exists() raises it
        "under a file": blocker / "home",  # ENOTDIR
    }


@pytest.mark.parametrize("kind", ["name too long", "under a file"])
def test_a_history_folder_that_cannot_be_made_is_a_warning(tmp_path: Path, kind: str) -> None:
    home = unwritable_homes(tmp_path)[kind]
    out = at(home, *QUIZ)
    assert out.returncode == 0, out.stderr
    assert "Score: 0/1" in out.stdout
    assert "warning: could not save this quiz to" in out.stderr
    assert "No quizzes yet" in progress(home).stdout


@pytest.mark.skipif(
    sys.platform == "win32" or os.geteuid() == 0, reason="root may write any folder"
)
def test_a_read_only_history_folder_is_a_warning(tmp_path: Path) -> None:
    home = tmp_path / "home"
    write_history(home, [record()])
    home.chmod(0o500)
    try:
        out = at(home, *QUIZ)
        assert out.returncode == 0 and "could not save this quiz" in out.stderr
        assert "Progress over 1 quiz " in progress(home).stdout
    finally:
        home.chmod(0o700)


# --- where history lives ----------------------------------------------------------------------


def test_history_is_in_the_platforms_data_folder(monkeypatch: pytest.MonkeyPatch) -> None:
    platformdirs = pytest.importorskip("platformdirs")
    monkeypatch.delenv("ATTN_TUTOR_HOME", raising=False)
    expected = platformdirs.user_data_path("attn-tutor", appauthor=False)
    assert history.history_dir() == expected
    assert history.history_path() == expected / "history.jsonl"


def test_help_does_not_import_platformdirs() -> None:
    """Only the commands that keep history pay for finding its folder."""
    code = "import sys; from tutor.cli import app; print('platformdirs' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.stdout.strip() == "False", out.stderr
