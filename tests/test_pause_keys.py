"""``walk --pause`` at a terminal (issue 40): its keys act at once, without Enter. A space or
Enter moves on, ``b`` goes back, ``q`` stops; Ctrl-C and Ctrl-D still end cleanly. Without a
terminal the pager reads lines, as before."""

from __future__ import annotations

import pytest

from tests.test_learn_terminal import finish, spawn

pexpect = pytest.importorskip("pexpect")


def test_pause_keys_act_without_enter(tmp_path) -> None:  # type: ignore[no-untyped-def]
    child = spawn(tmp_path / "home", "walk", "cats-chase-mice", "--pause")
    child.expect_exact("Enter: next")
    child.send(" ")  # no Enter
    child.expect_exact("b: back")
    child.send("b")
    child.expect_exact("Enter: next · q: stop")  # the first screen again, with no way back
    child.send("q")
    finish(child)
    assert child.exitstatus == 0


@pytest.mark.parametrize(("key", "status"), [("\x03", 130), ("\x04", 0)])
def test_ctrl_c_and_ctrl_d_end_the_pager_cleanly(tmp_path, key: str, status: int) -> None:  # type: ignore[no-untyped-def]
    child = spawn(tmp_path / "home", "walk", "cats-chase-mice", "--pause")
    child.expect_exact("Enter: next")
    child.send(key)
    finish(child)
    assert child.exitstatus == status


@pytest.mark.parametrize(("key", "status"), [("\x03", 130), ("\x04", 0)])
def test_ctrl_c_and_ctrl_d_at_a_prediction_end_the_walk_cleanly(
    tmp_path, key: str, status: int
) -> None:  # type: ignore[no-untyped-def]
    """``walk --predict`` reads a number as a line (Enter sends it, as the prompt says);
    Ctrl-C and Ctrl-D at that prompt end the walk as they end the pager."""
    child = spawn(tmp_path / "home", "walk", "cats-chase-mice", "--predict")
    while child.expect_exact(["Type your answer and press Enter;", "Enter: next"]) == 1:
        child.send(" ")  # the pages before the first prediction, a key each
    child.expect_exact("Q[cats, 1] = ")
    child.send(key)
    out = finish(child)
    assert child.exitstatus == status and "Aborted" not in out


def test_a_prediction_is_read_as_a_quiz_answer_is(run) -> None:  # type: ignore[no-untyped-def]
    """An overlong line is one answer refused once (as the quiz reads it), not cut in pieces
    that each count as an answer."""
    r = run("walk", "cats-chase-mice", "--predict", input="x" * 1500 + "\n2\n")
    assert r.exit_code == 0, r.stderr
    assert "… (1500 characters)" in r.stdout
    assert r.stdout.count("Could not read") == 1
    assert "✓ Right: Q[cats, 1] = 2" in r.stdout
