"""Text from a person or a file reaches the terminal as typed: never read as Rich markup or emoji
codes, never a crash, and never a raw control character.

Lesson titles, notes and file names, answer-sheet entries, history records, typed answers and
the command line's own arguments are all someone else's text. Each test feeds the bad text itself
through the public interface.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import LESSONS

CATS = (LESSONS / "cats-chase-mice.yaml").read_text()


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No test writes to the real home."""
    monkeypatch.setenv("ATTN_TUTOR_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


# ---------------------------------------------------------------------------------------------
# error messages


@pytest.mark.parametrize(
    "name",
    [
        "[/]x.yaml",
        "[bold]x.yaml",
        "[link=mailto:me@example.com]x.yaml",
        ":smile: x.yaml",
        "C:\\lessons\\[draft.yaml",  # a backslash before [ that closes no tag
        "notes\\[b].yaml",  # a backslash before something that looks like a tag
        "draft\\",  # a trailing backslash
    ],
)
def test_an_error_names_the_file_exactly_as_given(run, name: str) -> None:  # type: ignore[no-untyped-def]
    result = run("walk", name)
    assert result.exit_code == 1, result.stderr
    assert name in result.stderr, result.stderr  # not one character lost, added or changed
    assert "internal error" not in result.stderr


def test_an_error_quoting_a_value_from_the_file_keeps_its_backslashes(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    lesson = tmp_path / "bs.yaml"
    lesson.write_text(
        "title: t\ntokens: [a]\nX: abc\\\nW_Q: [[1]]\nW_K: [[1]]\nW_V: [[1]]\n", encoding="utf-8"
    )
    result = run("walk", str(lesson))
    assert result.exit_code == 1
    assert result.stderr.rstrip().endswith("but found abc\\"), result.stderr


# ---------------------------------------------------------------------------------------------
# history.jsonl


def test_a_deeply_nested_history_line_is_skipped_not_a_crash(run, home: Path) -> None:  # type: ignore[no-untyped-def]
    home.mkdir(parents=True)
    good = '{"lesson": "cats-chase-mice", "cells": [{"step": "Q", "outcome": "first"}]}'
    deep = '{"lesson": "x", "cells": ' + "[" * 100_000 + "]" * 100_000 + "}"
    (home / "history.jsonl").write_text(f"{deep}\n{good}\n", encoding="utf-8")
    result = run("progress")
    assert result.exit_code == 0, result.stderr
    assert "history.jsonl:1: skipped a damaged record" in " ".join(result.stderr.split())
    assert "Progress over 1 quiz" in result.stdout and "cats-chase-mice" in result.stdout


# ---------------------------------------------------------------------------------------------
# command-line arguments


LONG = "x" * 5000 + ".yaml"  # longer than any file system allows for a name


@pytest.mark.parametrize(
    "args",
    [
        ["walk", LONG],
        ["quiz", LONG],
        ["explain", LONG, "Z[cats, 1]"],
        ["export", LONG],
        ["check", LONG],
        ["grade", "cats-chase-mice", LONG],
        ["list", "--lessons-dir", LONG],
        ["walk", "--lessons-dir", LONG, "cats-chase-mice"],
        ["export", "cats-chase-mice", "--output", LONG],
        ["export", "cats-chase-mice", "--output", f"{LONG}/x.md"],
    ],
    ids=lambda args: " ".join(a.replace(LONG, "LONG") for a in args),
)
def test_a_path_too_long_for_the_file_system_is_a_user_error(run, args: list[str]) -> None:  # type: ignore[no-untyped-def]
    result = run(*args, input="")
    assert result.exit_code in (1, 2), result.stderr
    assert "internal error" not in result.stderr
    assert LONG in result.stdout + result.stderr  # named (check reports on stdout)


def test_check_reports_a_name_too_long_and_goes_on_to_the_next(run) -> None:  # type: ignore[no-untyped-def]
    result = run("check", LONG, "cats-chase-mice")
    assert result.exit_code == 1, result.stderr
    assert f"{LONG}:1:1: cannot read the file" in result.stdout
    assert "checked 2 lessons: 1 valid, 1 invalid" in result.stdout


# ---------------------------------------------------------------------------------------------
# a lesson's own words: title, description, notes, head names

TWO_HEADS = """\
title: {title}
description: {description}
tokens: [a, b]
X: [[1, 0], [0, 1]]
heads:
  - name: {name}
    W_Q: [[1, 0], [0, 1]]
    W_K: [[1, 0], [0, 1]]
    W_V: [[1, 0], [0, 1]]
W_O: [[1, 0], [0, 1]]
notes:
  scores: {note}
"""
MARKUP = '"[/] [bold]x[/bold] [link=https://example.com]here[/link] :smile: \\\\"'
FIELDS = {"title": (1, 8), "description": (2, 14), "name": (6, 11), "note": (12, 11)}
WHAT = {
    "title": "title",
    "description": "description",
    "name": "the name of head 1",
    "note": "the note for scores",
}


def two_heads(tmp_path: Path, **words: str) -> Path:
    path = tmp_path / "words.yaml"
    path.write_text(TWO_HEADS.format(**({k: "plain" for k in FIELDS} | words)), encoding="utf-8")
    return path


def test_markup_in_a_lessons_words_is_shown_as_written(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = two_heads(tmp_path, **dict.fromkeys(FIELDS, MARKUP))
    shown = "[/] [bold]x[/bold] [link=https://example.com]here[/link] :smile: \\"
    for args in (["walk", str(path)], ["quiz", str(path), "--count", "1"], ["list"]):
        env = {"ATTN_TUTOR_LESSONS": str(tmp_path), "COLUMNS": "200"} if args == ["list"] else {}
        result = run(*args, input="", env=env)
        assert result.exit_code == 0, result.stderr
        assert shown in result.stdout
        assert "😄" not in result.stdout


@pytest.mark.parametrize("field", FIELDS)
@pytest.mark.parametrize("char", ["\\e", "\\x07", "\\x9b", "\\r", "\\0"])
def test_control_characters_in_a_lessons_words_are_refused(
    run, tmp_path: Path, field: str, char: str
) -> None:  # type: ignore[no-untyped-def]
    """An escape sequence in a title would reach the terminal (and an SVG) raw; a lesson may
    not carry one. YAML writes them only in double quotes: "\\e[31m"."""
    path = two_heads(tmp_path, **{field: f'"red {char}[31m here"'})
    line, col = FIELDS[field]
    result = run("walk", str(path))
    assert result.exit_code == 1, result.stdout
    assert f"{path}:{line}:{col}: {WHAT[field]} contains " in result.stderr
    assert "control characters" in result.stderr
    assert "[31m here" not in result.stdout + result.stderr  # nothing of it printed raw
    assert run("check", str(path)).exit_code == 1


def test_line_breaks_and_tabs_in_a_lessons_words_are_fine(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = two_heads(tmp_path, title="|\n  Two\n  lines", note='"a\\tb\\nc"')
    result = run("walk", str(path))
    assert result.exit_code == 0, result.stderr
