"""Legal lessons with entries of 1e30 whose quiz never finished (issue 31): the judge turned a
weight of e^(−10^60), or the slip "e^x alone" of a scaled score of 10^60, into an exact fraction
of 10^60 bits. Each quiz runs in a child process whose timeout is the bound (not a clock)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import mpmath
import pytest
from sympy.polys.domains import QQ

from tests.conftest import LESSONS, PLAIN_ENV, ROOT
from tutor.assess import honest as hn

MAIN = "from tutor.cli import main; main()"
BIG_NEXT = (
    (LESSONS / "the-cake-next-token.yaml")
    .read_text()
    .replace("x: [2, 0, 1]", "x: [1e30, -1e30, 1e-30]")
)
BIG_P = """\
title: positions of 1e30
tokens: [a, b, c]
E: [[1, 0], [0, 1], [1, 1]]
P: [[1e30, 0], [0, 1e30], [1e30, 1e30]]
W_Q: [[1, 0], [0, 1]]
W_K: [[1, 0], [0, 1]]
W_V: [[1, 0], [0, 1]]
"""


def test_a_vanishing_value_is_held_by_a_small_range() -> None:
    tiny = hn.MPX.exp(-(hn.MPX.mpf(10) ** 60))  # 2^(−1.4·10^60): no fraction of sensible size
    r = hn.around(tiny, 38)
    assert r.lo == 0 < r.hi <= QQ(1, 2**hn.TINY)
    r = hn.around(-tiny)
    assert r.lo < 0 == r.hi
    # an ordinary value keeps its tight range
    r = hn.around(mpmath.mpf(0.25), 38)
    assert r.lo < QQ(1, 4) < r.hi and r.hi - r.lo < QQ(1, 10**30)


@pytest.mark.parametrize("text", [BIG_NEXT, BIG_P], ids=["next-x-1e30", "P-1e30"])
@pytest.mark.parametrize("answer", ["-1", "1e30", "0.5"])
def test_a_quiz_with_entries_of_1e30_finishes(tmp_path: Path, text: str, answer: str) -> None:
    lesson = tmp_path / "big.yaml"
    lesson.write_text(text)
    env = {**PLAIN_ENV, "ATTN_TUTOR_HOME": str(tmp_path / "home"), "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [sys.executable, "-c", MAIN, "quiz", str(lesson), "--seed", "2", "--count", "40"],
        input=f"{answer}\n" * 200,
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=120,  # it ran for minutes, to 8.6 GB; now about 2 s
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr
    assert "Score:" in done.stdout
