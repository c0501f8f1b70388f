"""The first five minutes (issue 30, item 4): no "shadows" note for a copy of a bundled
lesson, --help points to learn and --pause, and a token that reads as a word of the sentence
is set apart in prose. (The end of a first walk at a terminal: tests/test_learn_terminal.py;
split screens under --pause: tests/test_lecture.py.)"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import LESSONS
from tutor.text.cells import said, the_row


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A current folder with an empty ./lessons/, as a checkout of the project has one."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "lessons").mkdir()
    return tmp_path / "lessons"


def test_no_shadows_note_for_a_copy_of_the_bundled_lesson(run, here: Path) -> None:  # type: ignore[no-untyped-def]
    text = (LESSONS / "cats-chase-mice.yaml").read_text(encoding="utf-8")
    (here / "cats-chase-mice.yaml").write_text(text, encoding="utf-8")  # byte-identical
    r = run("walk", "cats-chase-mice", "--step", "Q")
    assert r.exit_code == 0 and r.stderr == ""
    # the same lesson once read: a comment and blank lines more, keys on other lines
    (here / "cats-chase-mice.yaml").write_text("# my copy\n\n" + text, encoding="utf-8")
    r = run("walk", "cats-chase-mice", "--step", "Q")
    assert r.exit_code == 0 and r.stderr == ""
    # a real change is still said, and used
    (here / "cats-chase-mice.yaml").write_text(
        text.replace("[1, 0, 1, 0]", "[2, 0, 1, 0]", 1), encoding="utf-8"
    )
    r = run("walk", "cats-chase-mice", "--step", "Q")
    assert "(it shadows the bundled cats-chase-mice)" in r.stderr
    assert "    = 2·1 + 0·0 + 1·1 + 0·0 = 3" in r.stdout


def test_a_copy_that_is_not_a_lesson_is_still_noted(run, here: Path) -> None:  # type: ignore[no-untyped-def]
    (here / "cats-chase-mice.yaml").write_text("title: [\n", encoding="utf-8")
    r = run("walk", "cats-chase-mice")
    assert r.exit_code == 1
    assert "(it shadows the bundled cats-chase-mice)" in r.stderr and "not valid YAML" in r.stderr


def test_help_points_to_learn_and_to_pause(run) -> None:  # type: ignore[no-untyped-def]
    for columns in ("80", "40"):  # the commands are never broken across lines
        out = run("--help", env={"COLUMNS": columns}).stdout
        assert "  New here? Start with:  attn-tutor learn\n" in out
        assert "  A walk one step a screen:  attn-tutor walk --pause\n" in out


def test_a_token_that_reads_as_a_word_is_set_apart_in_prose(run) -> None:  # type: ignore[no-untyped-def]
    r = run("walk", "the-cake", "--row", "the", "--step", "Q,scores,weights")
    assert r.exit_code == 0, r.stderr
    assert 'softmax of the row "the"' in r.stdout and "of the the row" not in r.stdout
    assert 'Q[the, 1] = row "the" of X · column 1 of W_Q' in r.stdout  # cell names stay bare
    assert re.search(r'scores\[the, \w+\] = query of "the" · key of ', r.stdout)
    r = run("walk", "cats-chase-mice", "--step", "weights")
    assert "softmax of the cats row" in r.stdout  # a word that does not read into the sentence
    r = run("quiz", "the-cake", "--steps", "Q", "--count", "8", "--seed", "1", input="q\n")
    assert re.search(r'  row ("I"|ate|"the"|cake|"and"|"it"|"was"|delicious) of X: ', r.stdout)
    assert not re.search(r"  row (I|the|and|it|was) of X", r.stdout)


def test_the_mask_says_which_token_comes_after_in_quotes(run) -> None:  # type: ignore[no-untyped-def]
    r = run("explain", "the-cake-causal", "masked[ate, the]")
    assert r.exit_code == 0, r.stderr
    assert '"the" comes after ate, so it is hidden' in r.stdout


def test_said_and_the_row() -> None:
    assert [said(t) for t in ("the", "The", "the#2", "I", "cats", "ate", "1")] == [
        '"the"',
        '"The"',
        '"the#2"',
        '"I"',
        "cats",
        "ate",
        "1",
    ]
    assert the_row("the") == 'the row "the"' and the_row("cats") == "the cats row"
    assert the_row("it", "column") == 'the column "it"'


def test_the_walk_speaks_to_a_student(run) -> None:  # type: ignore[no-untyped-def]
    """Issue 40: no header about where the tutor came from, no "Instructor's note" for someone
    studying alone."""
    out = run("walk", "cats-chase-mice").stdout
    assert "grew from" not in out and "Instructor" not in out
    assert "What to notice: The cats row peaks at chase" in out


def test_list_in_the_clone_names_each_lesson_once(run, here: Path) -> None:  # type: ignore[no-untyped-def]
    """Issue 40: in a clone with the package installed (not editable), ./lessons holds the same
    files as the bundled folder: each lesson is listed once, as bundled; a changed copy is
    still listed as yours, with the bundled one it shadows."""
    for lesson in LESSONS.glob("*.yaml"):
        (here / lesson.name).write_bytes(lesson.read_bytes())
    out = run("list").stdout
    assert "shadowed" not in out, out
    assert len(re.findall(r"^cats-chase-mice\b", out, re.M)) == 1, out
    assert re.search(r"^cats-chase-mice .* bundled ", out, re.M)
    (here / "dog-bites-dog.yaml").write_text(
        (LESSONS / "dog-bites-dog.yaml")
        .read_text(encoding="utf-8")
        .replace("title: ", "title: My ", 1),
        encoding="utf-8",
    )
    out = run("list").stdout
    assert len(re.findall(r"^dog-bites-dog\b", out, re.M)) == 2 and "shadowed by ./lessons" in out


def test_errors_are_wrapped_to_the_terminal_not_mid_word(tmp_path) -> None:  # type: ignore[no-untyped-def]
    pexpect = pytest.importorskip("pexpect")
    import os
    import sys

    from tests.conftest import PLAIN_ENV, ROOT
    from tests.test_learn_terminal import finish

    env = {**os.environ, **PLAIN_ENV, "TERM": "xterm", "ATTN_TUTOR_HOME": str(tmp_path)}
    # the terminal's own size; an empty FORCE_COLOR would tell Rich it is no terminal
    env = {k: v for k, v in env.items() if v and k not in ("COLUMNS", "LINES")}
    bad_cell = ["-m", "tutor", "walk", "the-cake", "--cell", "Z[dogs, 1]"]
    child = pexpect.spawn(
        sys.executable, bad_cell, cwd=str(ROOT), env=env, encoding="utf-8", dimensions=(24, 80)
    )
    out = re.sub(r"\x1b\[[0-9;]*m", "", finish(child).replace("\r", ""))  # the text, unstyled
    assert child.exitstatus == 2
    lines = [line for line in out.splitlines() if line.strip()]
    assert len(lines) > 1 and all(len(line) <= 80 for line in lines), lines
    import subprocess

    piped = subprocess.run(
        [sys.executable, *bad_cell], capture_output=True, text=True, cwd=ROOT, env=PLAIN_ENV
    )
    assert len(piped.stderr.strip().splitlines()) == 1  # a file or pipe gets one line
    assert " ".join(lines).split() == piped.stderr.split()  # the same words: none broken
    assert pexpect  # the pty comes from pexpect


def test_an_old_python_is_told_what_to_do() -> None:
    """Issue 40: on Python < 3.11 (``requires-python`` stops pip; a clone run as ``python -m
    tutor`` stops here) one sentence says what to install and how."""
    import ast

    import tutor
    from tests.conftest import ROOT

    said = tutor.python_too_old((3, 10, 12))
    assert said is not None and "Python 3.11 or newer; this is Python 3.10" in said
    assert "python3.11 -m venv .venv" in said
    assert tutor.python_too_old((3, 11, 0)) is None and tutor.python_too_old((3, 13)) is None
    source = (ROOT / "tutor" / "__init__.py").read_text(encoding="utf-8")
    ast.parse(source, feature_version=(3, 8))  # the guard itself parses on an old Python
    assert 'requires-python = ">=3.11"' in (ROOT / "pyproject.toml").read_text(encoding="utf-8")
