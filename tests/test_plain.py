"""--plain and ATTN_TUTOR_PLAIN=1 (issue 40, item 7): what a screen reader is given.

A screen reader speaks every box-drawing character and skips signs it has no word for
(espeak-ng reads "2·2 + 0·1" as "two two plus zero one"). The plain view reads each matrix row
by row with the row's name, says the signs in words and draws no box, rule or colour. Checked
here on the text alone: no character of U+2500–U+257F (box drawing) or U+2580–U+259F (blocks),
no escape sequence, and the lines a listener needs.
"""

from __future__ import annotations

import re

import pytest

from tests.conftest import LESSONS
from tutor.text.plain import words_of

BOX = re.compile("[\u2500-\u259f]")
ESCAPE = "\x1b"


def heard(text: str) -> str:
    """The text as a screen reader is given it, checked for what it must not hold."""
    drawn = sorted({ch for ch in text if BOX.match(ch)})
    assert not drawn, f"box drawing in the plain view: {drawn}"
    assert ESCAPE not in text
    return text


def lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines()]


@pytest.fixture(params=["flag", "env"])
def plain_run(request, run):  # type: ignore[no-untyped-def]
    """The command in the plain view, asked for by --plain or by ATTN_TUTOR_PLAIN=1."""

    def invoke(*args: str, input: str | None = None):  # type: ignore[no-untyped-def]
        if request.param == "flag":
            return run(*args, "--plain", input=input)
        return run(*args, input=input, env={"ATTN_TUTOR_PLAIN": "1", "NO_COLOR": ""})

    return invoke


def test_walk_reads_each_matrix_row_by_row(plain_run) -> None:  # type: ignore[no-untyped-def]
    result = plain_run("walk", "cats-chase-mice")
    assert result.exit_code == 0, result.stderr
    said = lines(heard(result.stdout))
    # Q of the seed's worked example, row by row, the worked row named as such
    at = said.index("Q (3 × 2)", said.index("scores = Q times K transposed"))
    assert said[at + 1 : at + 5] == [
        "columns: 1, 2",
        "row cats (worked row): 2, 0",
        "row chase: 0, 3",
        "row mice: 1, 1",
    ]
    # the worked cell on lines of its own, the products said in words
    assert "scores[cats, chase] = query of cats times key of chase" in said
    assert "= 2 times 2 + 0 times 1 = 4" in said
    # facts are separated, not multiplied; Kᵀ is said, not spelled as a code point
    assert "N = 3 tokens (cats, chase, mice); d_model = 4; d_k = 2; d_v = 2" in said
    assert "K transposed (2 × 3)" in said
    assert "scores = Q times K transposed" in said


def test_the_usual_view_is_untouched(run) -> None:  # type: ignore[no-untyped-def]
    out = run("walk", "cats-chase-mice", "--step", "scores").stdout
    assert "╭" in out and "row cats" not in out
    assert "N = 3 tokens (cats, chase, mice) · d_model = 4" in out


@pytest.mark.parametrize("value", ["0", "", "no"])
def test_only_a_yes_turns_it_on(run, value: str) -> None:  # type: ignore[no-untyped-def]
    out = run("walk", "cats-chase-mice", "--step", "Q", env={"ATTN_TUTOR_PLAIN": value}).stdout
    assert "╭" in out


@pytest.mark.parametrize("lesson", sorted(p.stem for p in LESSONS.glob("*.yaml")))
def test_every_bundled_walk_has_no_box(run, lesson: str) -> None:  # type: ignore[no-untyped-def]
    result = run("walk", lesson, "--plain", "--next-token", "it")
    if result.exit_code != 0:  # a lesson that cannot take a next token: the walk alone
        result = run("walk", lesson, "--plain")
    assert result.exit_code == 0, result.stderr
    heard(result.stdout)
    assert re.search(r"^row \S+( \(worked row\))?: ", result.stdout, re.M)


def test_softmax_table_is_read_row_by_row(plain_run) -> None:  # type: ignore[no-untyped-def]
    result = plain_run("softmax", "1", "2", "3")
    said = lines(heard(result.stdout))
    assert "softmax(1, 2, 3)" in said
    row = "1: score x 1, e to the x 2.72, share = e to the x / total 2.72 / 30.19 ≈ 0.09"
    assert row in said
    assert "total: e to the x 30.19" in said
    assert "The shares add up to 1.00 (checks)" in said


def test_explain_is_a_tree_without_guides(plain_run) -> None:  # type: ignore[no-untyped-def]
    result = plain_run("explain", "cats-chase-mice", "Z[cats, 1]")
    assert result.exit_code == 0, result.stderr
    out = heard(result.stdout)
    # each level two spaces deeper, no ├── guides
    assert re.search(r"^    scaled\[cats, cats\] = scores\[cats, cats\] / √d_k", out, re.M)
    assert re.search(r"^      scores\[cats, cats\] = query of cats times key of cats", out, re.M)


def test_quiz_says_what_to_type(plain_run) -> None:  # type: ignore[no-untyped-def]
    result = plain_run("quiz", "cats-chase-mice", "--count", "1", "--seed", "1", input="\n0.16\n")
    out = heard(result.stdout)
    assert "Z = weights times V: the row's weights blend a column of V" in out
    # e^1.41 would be read aloud as a power: the plain view names a form to type
    assert "exp(1.41)/(...)" in out and "e^" not in out


def test_learn_status_names_each_mark(plain_run) -> None:  # type: ignore[no-untyped-def]
    result = plain_run("learn", "--status")
    assert result.exit_code == 0, result.stderr
    said = lines(heard(result.stdout))
    assert "0/14 stages passed" in said
    assert any(line.startswith("not yet:  1. ") for line in said)


def test_learn_stage_in_plain(run) -> None:  # type: ignore[no-untyped-def]
    result = run("learn", "--stage", "1", "--plain", input="q\n" * 3)
    heard(result.stdout + result.stderr)


@pytest.mark.parametrize("command", ["walk", "quiz", "learn", "explain", "softmax"])
def test_each_command_offers_it(run, command: str) -> None:  # type: ignore[no-untyped-def]
    out = run(command, "--help").stdout
    assert "--plain" in out and "ATTN_TUTOR_PLAIN" in out


@pytest.mark.parametrize(
    ("shown", "said"),
    [
        ("= 2·2 + 0·1 = 4", "= 2 times 2 + 0 times 1 = 4"),
        ("query of cats · key of chase", "query of cats times key of chase"),
        ("Enter: next · b: back · q: stop", "Enter: next; b: back; q: stop"),
        ("e^x / total", "e to the x / total"),
        ("── scores (1/2) · Enter: next ──", "scores (1/2); Enter: next"),
        ("✓ Right, from the exact value", "Right, from the exact value"),
        ("[████░░░░] 3/9 stages passed", "3/9 stages passed"),
        ("✓  3. Scores", "passed:  3. Scores"),
        ("▸ MHA", "(marked) MHA"),
    ],
)
def test_signs_in_words(shown: str, said: str) -> None:
    assert words_of(shown) == said
