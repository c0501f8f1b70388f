"""Hostile inputs found by a crash hunt: each once ended in an internal error (exit 70), a
traceback or a hang. Every one must now end in a one-line error (exit 1 or 2) or in success.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import LESSONS, PLAIN_ENV, ROOT
from tutor.core.spec import MAX_HEADS, MAX_TOKENS

CATS = LESSONS / "cats-chase-mice.yaml"


def clean(result) -> str:  # type: ignore[no-untyped-def]
    text = result.stdout + result.stderr
    assert "Traceback" not in text and "internal error" not in text, text
    return text


def tutor(*args: str, env: dict | None = None, **kw) -> subprocess.CompletedProcess:  # type: ignore[type-arg, no-untyped-def]
    """Run the CLI in a real process (for what CliRunner cannot show: encodings, devices)."""
    full = {**os.environ, **PLAIN_ENV, "PYTHONPATH": str(ROOT), **(env or {})}
    kw.setdefault("stdout", subprocess.PIPE)
    kw.setdefault("stderr", subprocess.PIPE)
    return subprocess.run([sys.executable, "-m", "tutor", *args], env=full, timeout=30, **kw)


# --- digits that str.isdigit accepts but int() does not ---------------------------------------


@pytest.mark.parametrize(("key", "value"), [("precision", "²"), ("quiz", "{count: ³}")])
def test_superscript_digits_in_a_lesson_are_an_error(run, tmp_path: Path, key, value) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "sup.yaml"
    text = CATS.read_text(encoding="utf-8").replace("precision: 2", "")
    path.write_text(text + f"{key}: {value}\n", encoding="utf-8")
    result = run("walk", str(path))
    assert result.exit_code == 1
    assert f"{path}:" in clean(result) and "expected a whole number" in result.stderr


def test_superscript_column_in_a_cell_name_is_a_usage_error(run) -> None:  # type: ignore[no-untyped-def]
    result = run("explain", "cats-chase-mice", "Z[cats, ²]")
    assert result.exit_code == 2
    assert "Z has no column '²'" in clean(result)


# --- paths the file system refuses ------------------------------------------------------------


LONG = "x" * 5000


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["walk", LONG], "no lesson named"),  # a name, looked up by name
        (["check", LONG], "no lesson named"),
        (["walk", "x" * 300 + ".yaml"], "cannot read the file: File name too long"),
        (["grade", "cats-chase-mice", LONG], "cannot read the file: File name too long"),
        (["export", "cats-chase-mice", "--output", LONG], f"{LONG}: File name too long"),
        (["new", "a-lesson", "--tokens", "a b", "--output", LONG], f"{LONG}: File name too long"),
    ],
    ids=["walk-name", "check-name", "walk-path", "grade-sheet", "export-output", "new-output"],
)
def test_a_name_too_long_for_the_file_system_is_a_clean_error(  # type: ignore[no-untyped-def]
    run, tmp_path: Path, monkeypatch, args: list[str], fragment: str
) -> None:
    monkeypatch.chdir(tmp_path)
    result = run(*args)
    assert result.exit_code == 1
    assert fragment in clean(result)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
@pytest.mark.parametrize("command", ["walk", "check"])
def test_a_named_pipe_is_refused_not_waited_on(tmp_path: Path, command: str) -> None:
    fifo = tmp_path / "pipe.yaml"
    os.mkfifo(fifo)
    out = tutor(command, str(fifo))  # a wait for a writer would end in the 30 s timeout
    assert out.returncode == 1
    assert b"not a regular file" in out.stdout + out.stderr
    assert b"Traceback" not in out.stderr


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="needs /dev/zero")
def test_an_endless_device_is_refused() -> None:
    out = tutor("walk", "/dev/zero")
    assert out.returncode == 1
    assert b"/dev/zero:1:1: not a regular file" in out.stderr


def test_list_skips_past_a_pipe_in_a_lesson_folder(tmp_path: Path) -> None:
    if not hasattr(os, "mkfifo"):
        pytest.skip("needs named pipes")
    os.mkfifo(tmp_path / "pipe.yaml")
    out = tutor("list", "--lessons-dir", str(tmp_path))
    assert out.returncode == 0, out.stderr
    assert b"pipe" in out.stdout and b"invalid" in out.stdout


# --- output that cannot be written ------------------------------------------------------------


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
@pytest.mark.parametrize(
    "args",
    [
        ["walk", "cats-chase-mice"],
        ["walk", "cats-chase-mice", "--json"],
        ["schema"],
        ["export", "cats-chase-mice"],
        ["list"],
        ["--help"],
    ],
)
def test_a_full_disk_on_stdout_is_a_clean_error(args: list[str]) -> None:
    with open("/dev/full", "w") as full:
        out = tutor(*args, stdout=full, stderr=subprocess.PIPE)
    assert out.returncode == 1, out.stderr
    lines = out.stderr.decode().strip().splitlines()
    assert lines == ["error: cannot write the output: No space left on device"]


@pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX shell")
def test_a_closed_stdout_is_not_an_internal_error() -> None:
    full = {**os.environ, **PLAIN_ENV, "PYTHONPATH": str(ROOT)}
    command = f"'{sys.executable}' -m tutor walk cats-chase-mice >&-"
    out = subprocess.run(command, shell=True, env=full, capture_output=True, timeout=30)
    assert b"internal error" not in out.stderr and b"Traceback" not in out.stderr
    assert out.returncode in (0, 1)


@pytest.mark.parametrize(
    "args",
    [
        ["walk", "cats-chase-mice"],
        ["walk", "the-cake-two-heads", "--exact"],
        ["softmax", "1", "--times", "-1/3"],
        ["explain", "the-cake-causal", "Z[cake, 1]"],
        ["export", "cats-chase-mice", "--format", "svg"],
        ["schema"],
        ["new", "a-lesson", "--tokens", "é b", "--output", "-"],
    ],
)
@pytest.mark.parametrize("encoding", ["ascii", "latin-1"])
def test_output_to_a_narrow_encoding_is_readable(args: list[str], encoding: str) -> None:
    out = tutor(*args, env={"PYTHONIOENCODING": encoding})
    assert out.returncode == 0, out.stderr
    text = out.stdout.decode(encoding)
    if args[0] == "walk":
        assert "sqrt2" in text  # √ is spelled out, not dropped


def test_quiz_reads_answers_under_an_ascii_locale() -> None:
    out = tutor(
        "quiz", "cats-chase-mice", "--count", "1", "--seed", "1",
        env={"PYTHONIOENCODING": "ascii", "ATTN_TUTOR_HOME": "/nonexistent/home"},
        input="½\nq\n".encode(),
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert b"Traceback" not in out.stderr


# --- typed answers ----------------------------------------------------------------------------


def test_a_ten_megabyte_answer_line_is_not_echoed_whole(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    result = run(
        "quiz", "cats-chase-mice", "--count", "1", "--seed", "5",
        input="7" * 10_000_000 + "\nq\n", env={"ATTN_TUTOR_HOME": str(tmp_path)},
    )  # fmt: skip
    assert result.exit_code == 0
    assert "10000000 characters" in clean(result) + result.stdout
    assert "that answer is longer than 200 characters" in result.stdout  # not "1001 characters"
    assert len(result.stdout) < 10_000  # the line is cut and skipped, not echoed


# --- lessons that are legal line by line but not as a whole -----------------------------------


def test_thousands_of_heads_are_refused_quickly(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    head = "  - {W_Q: [[1]], W_K: [[1]], W_V: [[1]]}\n"
    toks = ", ".join(f"t{i}" for i in range(MAX_TOKENS))
    x = ", ".join(["[1]"] * MAX_TOKENS)
    path = tmp_path / "heads.yaml"
    path.write_text(f"title: t\ntokens: [{toks}]\nX: [{x}]\nheads:\n" + head * 1000)
    result = run("walk", str(path), "--json")
    assert result.exit_code == 1
    assert f"{path}:5:3: heads has 1000 heads; at most {MAX_HEADS} are allowed" in clean(result)
