"""The cell you choose (issue 14.4): --cell, --row, a lesson's focus:, the automatic lively row,
and operators that stay with the table they lead into at 80 columns (issue 14.7).

Regenerate the goldens after an intended change of output with:
    UPDATE_GOLDEN=1 python -m pytest tests/test_focus.py
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import LESSONS
from tests.reference import attention
from tests.test_walk import check_golden
from tutor.core.lessonfile import load_lesson

WORKING_STEPS = ("--step", "Q,K,V,scores,scaled,weights,Z")


def softmax_rows(out: str) -> list[str]:
    """The row of each softmax table the walk works: ``the cats row``, ``the row "it"``."""
    return [a or b for a, b in re.findall(r'softmax of the (?:row "([^"]+)"|(\S+) row)', out)]


def worked_rows(out: str) -> dict[str, str]:
    """The cell each step works, read off the walk's working lines (``K[cake, 1] = …``)."""
    found = {}
    for step, cell in re.findall(
        r"^((?:head\d\.)?(?:Q|K|V|scores|scaled))(\[[^\]]*\]) = ", out, re.M
    ):
        found.setdefault(step, cell)
    softmax = softmax_rows(out)
    blends = re.findall(r"^((?:head\d\.)?Z)\[([^\]]*)\] = ", out, re.M)
    if softmax:
        found["weights"] = softmax[0]
    for step, row in blends:
        found.setdefault(step, row)
    return found


def test_the_cake_works_it_and_cake_as_its_focus_says(run) -> None:  # type: ignore[no-untyped-def]
    out = run("walk", "the-cake", *WORKING_STEPS).stdout
    rows = worked_rows(out)
    assert rows["Q"] == "[it, 1]"
    assert rows["K"] == rows["V"] == "[cake, 1]"  # the key and value that it's cell reads
    assert rows["scores"] == rows["scaled"] == "[it, cake]"
    assert rows["weights"] == "it" and rows["Z"] == "it"


def test_cell_chooses_row_and_key_in_every_step(run) -> None:  # type: ignore[no-untyped-def]
    out = run("walk", "the-cake", *WORKING_STEPS, "--cell", "weights[was, ate]").stdout
    rows = worked_rows(out)
    assert rows["Q"] == "[was, 1]" and rows["K"] == "[ate, 1]" and rows["V"] == "[ate, 1]"
    assert rows["scores"] == rows["scaled"] == "[was, ate]"
    assert rows["weights"] == "was" and rows["Z"] == "was"


def test_cell_of_q_pins_that_column(run) -> None:  # type: ignore[no-untyped-def]
    out = run("walk", "the-cake", "--step", "Q,K", "--cell", "Q[and, 3]").stdout
    assert 'Q[and, 3] = row "and" of X · column 3 of W_Q' in out
    assert "K[" in out and "K[and, 3]" not in out  # the pinned column is Q's alone


def test_row_takes_the_key_of_the_rows_largest_weight(run) -> None:  # type: ignore[no-untyped-def]
    lesson = load_lesson(LESSONS / "the-cake.yaml")
    weights = attention(lesson)[("weights", None)]
    for i, token in enumerate(lesson.labels):
        key = lesson.labels[int(np.argmax(weights[i]))]  # the first of equal largest weights
        out = run("walk", "the-cake", "--step", "scores", "--row", token).stdout
        assert worked_rows(out)["scores"] == f"[{token}, {key}]"


def lively_rows(path: Path) -> list[int]:
    """Per head, the row the docs promise: the largest spread of weights (the first on a tie)."""
    lesson = load_lesson(path)
    rows = []
    for h in range(1, len(lesson.heads) + 1):
        w = attention(lesson)[("weights", h if lesson.multi_head else None)]
        spread = np.round(w.max(axis=1) - w.min(axis=1), 12)
        rows.append(int(np.argmax(spread)))
    return rows


def test_without_a_focus_the_walk_never_works_a_uniform_row(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    text = (LESSONS / "the-cake-two-heads.yaml").read_text()
    path = tmp_path / "no-focus.yaml"
    path.write_text("\n".join(line for line in text.splitlines() if "focus:" not in line))
    lesson = load_lesson(path)
    assert lesson.focus is None and all(h.focus is None for h in lesson.heads)
    out = run("walk", str(path), "--step", "weights").stdout
    worked = softmax_rows(out)
    expected = [lesson.labels[i] for i in lively_rows(path)]
    assert worked == expected
    uniform = attention(lesson)[("weights", 2)]
    assert np.ptp(uniform[0]) == 0  # row I of head 2 is uniform: the first row, never worked
    assert worked[1] != "I"


def test_the_lessons_own_focus_and_each_heads(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    out = run("walk", "the-cake-two-heads", "--step", "weights,concat").stdout
    assert softmax_rows(out) == ["it", "ate"]  # the rows they link
    assert "concat[it] = [head1.Z[it] | head2.Z[it]]" in out
    text = (LESSONS / "cats-chase-mice.yaml").read_text() + "\nfocus: mice\n"
    path = tmp_path / "mice.yaml"
    path.write_text(text)
    assert "Q[mice, 1] = row mice" in run("walk", str(path), "--step", "Q").stdout


def test_a_cell_without_head_applies_to_every_head_and_with_one_to_that_head(run) -> None:  # type: ignore[no-untyped-def]
    every = run("walk", "the-cake-two-heads", "--step", "weights", "--cell", "weights[was, cake]")
    assert softmax_rows(every.stdout) == ["was", "was"]
    one = run("walk", "the-cake-two-heads", "--step", "weights", "--cell", "head2.weights[was, I]")
    assert softmax_rows(one.stdout) == ["it", "was"]


@pytest.mark.parametrize(
    ("args", "fragments"),
    [
        (("--cell", "weights[it cake]"), ["write STEP[ROW, COL]", "tokens: I, ate, the, cake"]),
        (("--cell", "weights[it, pie]"), ["no column 'pie'", "columns: I, ate, the, cake"]),
        (("--cell", "wieghts[it, cake]"), ["did you mean weights?", "tokens: I, ate"]),
        (("--cell", "__import__('os').system('echo hi')"), ["cannot read", "tokens: I"]),
        (("--cell", "W_Q[1, 1]"), ["W_Q has no row per token", "like weights["]),
        (("--cell", "x" * 5000), ["at most 200 characters"]),
        (("--row", "pie"), ["not a token of this lesson", "tokens: I, ate, the, cake"]),
        (("--row", "it", "--cell", "Q[it, 1]"), ["give one of them"]),
        (("--cell", "Q[it, 1]", "--json"), ["--cell does not apply to --json"]),
        (("--pause", "--json"), ["--pause does not apply to --json"]),
        (("--predict", "--json"), ["--predict does not apply to --json"]),
        (("--head", "1"), ["single head"]),
    ],
)
def test_bad_choices_exit_2_saying_what_was_expected(run, args, fragments) -> None:  # type: ignore[no-untyped-def]
    result = run("walk", "the-cake", *args)
    assert result.exit_code == 2, result.stdout
    for fragment in fragments:
        assert fragment in result.stderr, result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    assert "hi\n" not in result.stdout  # never evaluated


def test_cell_in_another_head_than_head_is_an_error(run) -> None:  # type: ignore[no-untyped-def]
    result = run("walk", "the-cake-two-heads", "--head", "1", "--cell", "head2.Q[it, 1]")
    assert result.exit_code == 2
    assert "is in head 2, but --head 1" in result.stderr


# ---------------------------------------------------------------------------------------------
# 80 columns: an operator stays with the table it leads into


HANGING = re.compile(r"[│╯╮┤]\s*(=|·|→|\||÷ √\d+ =)\s*$")


@pytest.mark.parametrize(
    ("lesson", "golden"),
    [
        ("the-cake", "walk-the-cake-80.txt"),
        ("cats-chase-mice", "walk-cats-chase-mice-80.txt"),
    ],
)
def test_walk_at_80_columns_golden_without_hanging_operators(run, lesson: str, golden: str) -> None:  # type: ignore[no-untyped-def]
    result = run("walk", lesson, env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert max(len(line.rstrip()) for line in lines) <= 80
    assert not [line for line in lines if HANGING.search(line)]
    check_golden(golden, result.stdout)


def test_every_bundled_lesson_at_80_columns_keeps_operators_with_tables(run) -> None:  # type: ignore[no-untyped-def]
    for path in sorted(LESSONS.glob("*.yaml")):
        out = run("walk", str(path), "--exact", env={"COLUMNS": "80"}).stdout
        assert not [line for line in out.splitlines() if HANGING.search(line)], path.stem


def test_check_warns_about_a_focus_on_a_uniform_row(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    text = (LESSONS / "the-cake-two-heads.yaml").read_text()
    dull = text.replace("focus: weights[ate, cake]", "focus: weights[I, cake]")  # uniform in head 2
    path = tmp_path / "dull.yaml"
    path.write_text(dull)
    line = next(n for n, t in enumerate(dull.splitlines(), 1) if "weights[I, cake]" in t)
    out = run("check", str(path), env={"COLUMNS": "300"}).stdout
    assert f"dull.yaml:{line}:12: warning: focus works the row of I (head 2)" in out
    assert "focus works the row" not in run("check", "the-cake-two-heads").stdout


def test_a_row_as_the_walk_prints_it_is_a_cell_name(run) -> None:  # type: ignore[no-untyped-def]
    """Issue 40: the walk prints ``Z[cats] = …`` for a worked row; --cell takes that name too,
    and works the same row as --row; explain, which works one number, says to name a column."""
    by_row = run("walk", "cats-chase-mice", "--row", "mice")
    for name in ("Z[mice]", "weights[mice]", " Z [ mice ] "):
        r = run("walk", "cats-chase-mice", "--cell", name)
        assert r.exit_code == 0, r.stderr
        assert r.stdout == by_row.stdout
    assert "Z[mice] = " in by_row.stdout
    r = run("explain", "cats-chase-mice", "Z[mice]")
    assert (
        r.exit_code == 2 and "Z[mice] is a row; name one of its cells, like Z[mice, 1]" in r.stderr
    )
