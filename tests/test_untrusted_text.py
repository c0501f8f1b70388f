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


def test_line_breaks_and_tabs_in_a_description_or_a_note_are_fine(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = two_heads(
        tmp_path,
        title="|\n  A title as a block, so it ends in a line break",
        description="|\n  Two\n  lines",
        note='"a\\tb\\nc"',
        name='"a\\ttab"',
    )
    result = run("walk", str(path))
    assert result.exit_code == 0, result.stderr
    assert "A title as a block, so it ends in a line break" in result.stdout


@pytest.mark.parametrize("field", ["title", "name"])
@pytest.mark.parametrize("newline", ["\\n", "\\r\\n", "\\L", "\\P"])  # LF, CRLF, U+2028/9
def test_a_title_or_a_head_name_is_one_line(run, tmp_path: Path, field: str, newline: str) -> None:  # type: ignore[no-untyped-def]
    """Both are written into one-line places: the answer sheet's comments (where a second line
    would become YAML: a 'student:' key of the author's), Markdown headings, LaTeX titles."""
    path = two_heads(tmp_path, **{field: f'"Cats{newline}student: Mallory"'})
    line, col = FIELDS[field]
    result = run("check", str(path))
    assert result.exit_code == 1, result.stdout
    assert f"{path}:{line}:{col}: {WHAT[field]} " in result.stdout


# ---------------------------------------------------------------------------------------------
# other people's text that is shown, not refused: sheets, history, typed answers, file names
# Control characters in it are spelled out (\x1b), so none reaches the terminal raw.

ESC = "\x1b[31m"  # an escape sequence: red from here on
SHOWN = "\\x1b[31m"  # how it is shown instead


def flat(text: str) -> str:
    """The output with its line wrapping undone."""
    return " ".join(text.split())


def no_raw_controls(text: str) -> None:
    raw = [c for c in text if (ord(c) < 32 and c not in "\n") or 0x7F <= ord(c) <= 0x9F]
    assert not raw, f"raw control characters reach the terminal: {raw!r}"


def sheet_with(run, tmp_path: Path, student: str, q_row: str, name: str = "sheet.yaml") -> Path:  # type: ignore[no-untyped-def]
    blank = run("export", "cats-chase-mice", "--format", "sheet").stdout
    text = blank.replace('student: ""', f"student: {student}", 1)
    text = text.replace("Q:\n  - [null, null]", f"Q:\n  - {q_row}", 1)
    assert text != blank
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_a_sheet_is_graded_with_its_markup_shown_as_written(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    sheet = sheet_with(run, tmp_path, '"[bold]Ada[/] :smile:"', '["[/]", "[b]2"]')
    result = run("grade", "cats-chase-mice", str(sheet))
    assert result.exit_code == 0, result.stderr
    assert "by [bold]Ada[/] :smile: against" in flat(result.stdout)
    assert "cannot read `[/]`: write one number" in flat(result.stdout)
    assert "cannot read `[b]2`: write one number" in flat(result.stdout)


def test_control_characters_in_a_sheet_are_shown_spelled_out(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    sheet = sheet_with(run, tmp_path, '"\\e[31mAda"', '["\\e[2J", "1\\n2"]')
    result = run("grade", "cats-chase-mice", str(sheet))
    assert result.exit_code == 0, result.stderr
    no_raw_controls(result.stdout + result.stderr)
    assert f"by {SHOWN}Ada against" in flat(result.stdout)
    assert "cannot read `\\x1b[2J`" in flat(result.stdout)
    assert "cannot read `1\\n2`" in flat(result.stdout)
    # the table of Q keeps its shape: every line of it as wide as its top border
    lines = result.stdout.splitlines()
    top = next(k for k, line in enumerate(lines) if line.lstrip().startswith("Q (3 × 2)")) + 1
    widths = {len(line.rstrip()) for line in lines[top : top + 7]}
    assert len(widths) == 1, lines[top : top + 7]


def test_grade_json_keeps_a_sheets_control_characters_escaped(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """JSON escapes C0 itself, but with ensure_ascii=False it writes DEL and C1 (U+009B is CSI
    to some terminals) raw."""
    import json

    sheet = sheet_with(run, tmp_path, '"Ada"', '["\\x9b2J", "\\x7f"]')
    result = run("grade", "cats-chase-mice", str(sheet), "--json")
    assert result.exit_code == 0, result.stderr
    no_raw_controls(result.stdout + result.stderr)
    cells = json.loads(result.stdout)["cells"]
    assert [c["given"] for c in cells[:2]] == ["\x9b2J", "\x7f"]


def test_control_characters_in_the_history_are_shown_spelled_out(run, home: Path) -> None:  # type: ignore[no-untyped-def]
    import json

    home.mkdir(parents=True)
    record = {"lesson": f"{ESC}cats", "cells": [{"step": f"{ESC}Q", "outcome": "missed"}]}
    (home / "history.jsonl").write_text(json.dumps(record) + "\n", encoding="utf-8")
    result = run("progress")
    assert result.exit_code == 0, result.stderr
    no_raw_controls(result.stdout + result.stderr)
    assert f"{SHOWN}cats" in result.stdout and f"{SHOWN}Q" in result.stdout


def test_a_typed_answer_is_echoed_as_typed_with_controls_spelled_out(run) -> None:  # type: ignore[no-untyped-def]
    typed = f"[/] [bold]1 :smile:\n{ESC}2\nskip\n"
    result = run("quiz", "--steps", "Q", "--count", "1", "--seed", "1", input=typed)
    assert result.exit_code == 0, result.stderr
    no_raw_controls(result.stdout + result.stderr)
    assert "[/] [bold]1 :smile:" in result.stdout
    assert f"{SHOWN}2" in result.stdout


def test_an_answer_refused_for_a_hash_is_quoted_with_controls_spelled_out(run) -> None:  # type: ignore[no-untyped-def]
    # before '#' was refused, Python's tokenizer read this as e and the echo quoted it raw
    typed = "e #\x9b[31m\nskip\n"
    result = run("quiz", "--steps", "Q", "--count", "1", "--seed", "1", input=typed)
    assert result.exit_code == 0, result.stderr
    no_raw_controls(result.stdout + result.stderr)
    assert "Could not read 'e #\\x9b[31m' as a number: '#' has no meaning here" in result.stdout


def test_a_lesson_file_name_with_control_characters_is_shown_spelled_out(  # type: ignore[no-untyped-def]
    run, tmp_path: Path
) -> None:
    folder = tmp_path / "shared"
    folder.mkdir()
    odd = folder / f"{ESC}cats.yaml"
    odd.write_text(CATS, encoding="utf-8")
    env = {"ATTN_TUTOR_LESSONS": str(folder)}
    shown = f"{SHOWN}cats"
    for args in (["list"], ["check", str(odd)], ["walk", str(folder / f"{ESC}gone.yaml")]):
        result = run(*args, env=env)
        assert result.exit_code in (0, 1), result.stderr
        no_raw_controls(result.stdout + result.stderr)
        assert "\\x1b[31m" in result.stdout + result.stderr, args
    # a quiz on it, then its name in progress; a sheet for it (with a file name of the same
    # kind) graded, with and without --json
    result = run("quiz", str(odd), "--steps", "Q", "--count", "1", "--seed", "1", input="skip\n")
    assert result.exit_code == 0, result.stderr
    result = run("progress")
    no_raw_controls(result.stdout + result.stderr)
    assert shown in result.stdout
    sheet = sheet_with(run, tmp_path, '"Ada"', "[2, banana]", name=f"{ESC}sheet.yaml")
    text = sheet.read_text().replace('lesson: "cats-chase-mice"', 'lesson: "\\e[31mcats"')
    sheet.write_text(text, encoding="utf-8")
    for json_out in ([], ["--json"]):
        result = run("grade", str(odd), str(sheet), *json_out)
        assert result.exit_code == 0, result.stderr
        no_raw_controls(result.stdout + result.stderr)
        assert f"{SHOWN}sheet.yaml:14:" in flat(result.stdout + result.stderr)  # banana's place
    heading = flat(run("grade", str(odd), str(sheet)).stdout)
    assert f"Grading {tmp_path}/{SHOWN}sheet.yaml by Ada against {shown} (Cats" in heading
    # and the walk recorded as SVG stays well-formed XML
    import xml.dom.minidom

    result = run("export", str(odd), "--format", "svg")
    assert result.exit_code == 0, result.stderr
    xml.dom.minidom.parseString(result.stdout)


@pytest.mark.parametrize(
    "name", ["two\nlines", f"{ESC}red", "\x9b31m", "[b]x :smile:", 'it\'s "quoted"']
)
def test_the_answer_sheet_of_a_lesson_with_an_odd_file_name_can_be_graded(  # type: ignore[no-untyped-def]
    run, tmp_path: Path, name: str
) -> None:
    """The sheet names its lesson in a YAML comment ("Grade it with: ..."); a line break or a
    control character in the file name must not break the YAML out of that comment."""
    lesson = tmp_path / f"{name}.yaml"
    lesson.write_text(CATS, encoding="utf-8")
    blank = run("export", str(lesson), "--format", "sheet")
    assert blank.exit_code == 0, blank.stderr
    sheet = tmp_path / "sheet.yaml"
    sheet.write_text(blank.stdout, encoding="utf-8")
    result = run("grade", str(lesson), str(sheet))
    assert result.exit_code == 0, result.stderr
    assert "0 correct, 0 follow-through, 0 wrong, 51 blank" in result.stdout


def test_check_spells_out_control_characters_a_message_quotes(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "version.yaml"
    body = "title: t\ntokens: [a]\nX: [[1]]\nW_Q: [[1]]\nW_K: [[1]]\nW_V: [[1]]\n"
    path.write_text('version: "\\e[31m2"\n' + body, encoding="utf-8")
    result = run("check", str(path))
    assert result.exit_code == 1
    no_raw_controls(result.stdout + result.stderr)
    assert f"version is {SHOWN}2" in result.stdout


@pytest.mark.parametrize("fmt", ["md", "tex", "sheet", "svg", "html"])
def test_every_export_spells_out_control_characters_in_the_file_name(  # type: ignore[no-untyped-def]
    run, tmp_path: Path, fmt: str
) -> None:
    lesson = tmp_path / f"{ESC}red\x9b.yaml"
    lesson.write_text(CATS, encoding="utf-8")
    result = run("export", str(lesson), "--format", fmt)
    assert result.exit_code == 0, result.stderr
    no_raw_controls(result.stdout)
