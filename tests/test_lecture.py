"""Lecture mode (walk --pause, issue 14.5) and predict-then-see (walk --predict, issue 15.5):
the pager with an injected console and reader, and both in a pseudo-terminal at 80 × 24."""

from __future__ import annotations

import io
import os
import re
import sys

import pytest
from rich.console import Console

from tests.conftest import PLAIN_ENV, ROOT
from tests.test_quiz import default_sigint

# ---------------------------------------------------------------------------------------------
# the pager, without a terminal


def lecture_transcript(
    answers: list[str], height: int, *args: str, colour: str | None = None
) -> tuple[str, list[str]]:
    """Run the pager over a walk with a console of ``height`` lines; return what it printed
    and the prompts' count. ``answers`` are the keys typed at each status line."""
    from tutor.core.engine import derive
    from tutor.core.lessonfile import load_lesson
    from tutor.teach.lecture import Lecture
    from tutor.teach.walk import WalkOptions, step_pages

    d = derive(load_lesson(ROOT / "lessons" / f"{args[0]}.yaml"))
    console = Console(width=80, height=height, file=io.StringIO(), color_system=colour)
    keys = iter(answers)
    asked: list[str] = []

    def read(prompt: str) -> str:
        asked.append(prompt)
        console.file.write("\n")  # a terminal echoes the Enter
        return next(keys)  # StopIteration would mean the pager asked more than expected

    opts = WalkOptions(steps=list(args[1:]) or None, width=80)
    Lecture(console, step_pages(d, opts), read, clear=True).run()
    return console.file.getvalue(), asked  # type: ignore[attr-defined]


def screens_of(text: str) -> list[list[str]]:
    """The printed screens, split at their status lines (``── weights (2/3) · Enter…``)."""
    out: list[list[str]] = [[]]
    for line in text.splitlines():
        if line.startswith("── ") and "q: stop" in line:
            out[-1].append(line)
            out.append([])
        else:
            out[-1].append(line)
    return [s for s in out if s]


def test_a_tall_step_is_paged_and_every_screen_keeps_its_heading() -> None:
    text, asked = lecture_transcript(["", "", "", "", "q"], 24, "the-cake", "weights")
    screens = screens_of(text)
    assert len(asked) == 4  # four screens (no table is cut), then Enter at the end ends it
    for n, screen in enumerate(screens, 1):
        assert len(screen) <= 24  # fits the terminal, status line included
        assert f"weights ({n}/4)" in screen[-1]
        assert any(line.startswith("weights = softmax of each row") for line in screen)
    assert "Enter: end" in screens[-1][-1]
    joined = "\n".join(line for s in screens for line in s[:-1] if not line.startswith("weights ="))
    assert 'softmax of the row "it"' in joined and "total" in joined  # nothing was left out


def test_b_goes_back_a_screen_then_to_the_previous_step() -> None:
    text, _ = lecture_transcript(["", "b", "b", "q"], 40, "cats-chase-mice", "Q", "K")
    statuses = [s[-1] for s in screens_of(text)]
    assert ["── Q " in statuses[0], "── K " in statuses[1], "── Q " in statuses[2]] == [True] * 3
    assert "b: back" not in statuses[0] and "b: back" in statuses[1]
    assert len(statuses) == 4  # b on the first screen stays there


def test_unknown_keys_show_the_same_screen_again() -> None:
    text, _ = lecture_transcript(["x", "q"], 40, "cats-chase-mice", "Q")
    statuses = [s[-1] for s in screens_of(text)]
    assert len(statuses) == 2 and statuses[0] == statuses[1]


# ---------------------------------------------------------------------------------------------
# in a pseudo-terminal, as a lecturer and a student meet it


def spawn(*args: str, rows: int = 24):  # type: ignore[no-untyped-def]
    pexpect = pytest.importorskip("pexpect")
    env = {**os.environ, **PLAIN_ENV, "TERM": "xterm"}
    env.pop("COLUMNS"), env.pop("LINES")  # the terminal's own size: 80 × rows
    env.pop("FORCE_COLOR")  # rich reads an empty FORCE_COLOR as "not a terminal"
    return pexpect.spawn(
        sys.executable,
        ["-m", "tutor", "walk", *args],
        cwd=str(ROOT),
        env=env,
        encoding="utf-8",
        timeout=30,
        dimensions=(rows, 80),
        preexec_fn=default_sigint,
    )


def finish(child, code: int) -> str:  # type: ignore[no-untyped-def]
    pexpect = pytest.importorskip("pexpect")
    child.expect(pexpect.EOF)
    rest = child.before
    child.close()
    assert child.exitstatus == code, rest
    assert "Traceback" not in rest and "error:" not in rest
    return rest


CLEAR = "\x1b[2J"


def test_pause_pages_clears_and_goes_back_at_80_by_24() -> None:
    child = spawn("the-cake", "--pause", "--step", "scaled,weights")
    child.expect_exact("scaled (1/3)")
    assert CLEAR in child.before
    child.sendline("")
    child.expect_exact("scaled (2/3)")
    screen = child.before.rsplit(CLEAR, 1)[-1]
    assert "scaled = scores / √d_k" in screen  # the heading is kept on top
    child.sendline("")
    child.expect_exact("scaled (3/3)")
    child.sendline("")
    child.expect_exact("weights (1/3)")
    child.sendline("")
    child.expect_exact("weights (2/3)")
    child.sendline("b")
    child.expect_exact("weights (1/3)")  # back a screen
    child.sendline("b")
    child.expect_exact("scaled (1/3)")  # from a step's first screen: the step before's first
    child.sendline("")
    child.expect_exact("scaled (2/3)")
    child.sendline("")
    child.expect_exact("scaled (3/3)")
    child.sendline("")
    child.expect_exact("weights (1/3)")
    child.sendline("")
    child.expect_exact("weights (2/3)")
    assert "weights = softmax of each row" in child.before.rsplit(CLEAR, 1)[-1]
    child.sendline("")
    child.expect_exact("weights (3/3) · Enter: end")
    child.sendline("")
    finish(child, 0)


def test_pause_with_one_step_waits_and_q_stops() -> None:
    child = spawn("cats-chase-mice", "--pause", "--step", "Q,K,V")
    child.expect_exact("── Q · Enter: next")
    assert "K = X · W_K" not in child.before
    child.sendline("q")
    rest = finish(child, 0)
    assert "K = X · W_K" not in rest


def test_ctrl_c_and_ctrl_d_end_the_lecture_cleanly() -> None:
    child = spawn("cats-chase-mice", "--pause")
    child.expect_exact("Enter: next")
    child.sendintr()
    finish(child, 130)
    child = spawn("cats-chase-mice", "--pause")
    child.expect_exact("Enter: next")
    child.sendeof()
    finish(child, 0)


def test_predict_right_wrong_and_skipped_in_a_terminal() -> None:
    child = spawn("cats-chase-mice", "--predict", "--step", "Q,scaled,weights", rows=40)
    child.expect_exact("Q[cats, 1] = ")
    assert "row cats of X: [1, 0, 1, 0]" in child.before  # what the student needs to work it
    assert "Q[cats, 1] = row cats" not in child.before  # and not the answer
    child.sendline("2")
    child.expect_exact("✓ Right: Q[cats, 1] = 2")
    child.expect_exact("Enter: next")
    child.sendline("")
    child.expect_exact("scaled[cats, chase] = ")
    child.sendline("4")
    child.expect_exact("✗ Not quite: that is the raw score")
    child.expect_exact("Enter: next")
    child.sendline("")
    child.expect_exact("weights[cats, chase] = ")
    child.sendline("two")  # cannot be read: asked again, nothing counted
    child.expect_exact("Could not read")
    child.expect_exact("weights[cats, chase] = ")
    child.sendline("")
    child.expect_exact("Skipped. weights[cats, chase]")
    child.expect_exact("Enter: end")
    child.sendline("")
    child.expect_exact("Predictions: 1 right, 1 not quite, 1 skipped.")
    finish(child, 0)


def test_predict_ctrl_c_and_ctrl_d_at_a_prediction() -> None:
    child = spawn("cats-chase-mice", "--predict", "--step", "X,Q")
    child.expect_exact("── X · Enter: next")  # a given matrix: nothing to predict
    child.sendline("")
    child.expect_exact("Q[cats, 1] = ")
    child.sendintr()
    finish(child, 130)
    child = spawn("cats-chase-mice", "--predict", "--step", "Q,K")
    child.expect_exact("Q[cats, 1] = ")
    child.sendeof()
    assert "K = X · W_K" not in finish(child, 0)


# ---------------------------------------------------------------------------------------------
# predictions from a script (stdin not a terminal): one line per step, no waiting


def test_predict_reads_answers_from_a_pipe_and_shows_the_rest_at_its_end(run) -> None:  # type: ignore[no-untyped-def]
    result = run(
        "walk", "cats-chase-mice", "--predict", "--step", "Q,scaled,Z", input="2\n2*sqrt(2)\n"
    )
    assert result.exit_code == 0, result.stderr
    out = result.stdout
    assert "✓ Right: Q[cats, 1] = 2" in out
    assert "✓ Right: scaled[cats, chase] = 2√2 ≈ 2.83" in out
    after = out.split("Predict Z[", 1)[1]  # asked, then the input ended: Z is shown all the same
    assert "Z[cats] = 0.16 × [2, 1]" in after and "✓" not in after and "✗" not in after
    assert "Predictions: 2 right, 0 not quite, 0 skipped." in out
    assert "Enter: next" not in out  # nobody to wait for


def test_help_says_what_pause_and_predict_do(run) -> None:  # type: ignore[no-untyped-def]
    out = run("walk", "--help", env={"COLUMNS": "200"}).stdout
    assert "b: back" in out and "Works with --step" in out and "--predict" in out
    assert "--cell" in out and "--row" in out


BORDERS = set("─━╭╮╰╯├┤┬┴┼┡┩╇ ")


@pytest.mark.parametrize("colour", [None, "truecolor"])
@pytest.mark.parametrize("lesson", ["the-cake", "the-cake-two-heads", "the-cake-causal"])
def test_no_screen_of_a_split_step_starts_with_a_table_border(
    lesson: str, colour: str | None
) -> None:
    text, _ = lecture_transcript([""] * 200, 24, lesson, colour=colour)
    screens = screens_of(re.sub(r"\x1b\[[0-9;]*m", "", text))
    later = [s for s in screens if re.search(r" \(([2-9])/\d\) ", s[-1])]
    assert later  # the-cake's 8 × 8 tables do not fit one 24-line screen
    for screen in later:
        body = screen[1:-1]  # under the repeated heading, above the status line
        first = next(line for line in body if line.strip())
        assert not set(first) <= BORDERS, screen  # never the bottom or a middle border
        tables = [k for k, line in enumerate(body) if line.lstrip().startswith(("╭", "┏"))]
        ends = [k for k, line in enumerate(body) if line.lstrip().startswith(("╰", "└"))]
        # every table on a screen is whole: it opens and closes there (or runs off the end
        # only when it is taller than a screen)
        assert len(ends) == len(tables) or len(body) >= 22, screen
        assert body[-1].strip() not in ("→", "=", "·")  # an operator goes with its table
