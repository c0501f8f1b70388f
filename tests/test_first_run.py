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
