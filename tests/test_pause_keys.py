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
