"""Issue 28, item 5: RoPE's exact scores simplified (cos²+sin² = 1, products combined), written
with the walk's symbols, and the note that a score is q_m·R((n − m)θ)·k_nᵀ, against numpy."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
import sympy

from tests import lessongen, reference
from tutor.core import positions
from tutor.core.engine import derive
from tutor.core.lessonfile import load_lesson

RAD = """title: one radian a step
tokens: [a, b, c]
X: [[1, 0], [0, 1], [1, 1]]
positions: rope
theta: [1 rad]
W_Q: [[1, 0], [0, 1]]
W_K: [[1, 0], [0, 1]]
W_V: [[1, 0], [0, 1]]
"""


def rope_cases(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [
        lessongen.lesson_text(
            rng,
            rng.randint(2, 4),
            rng.randint(1, 3),
            rng.choice([2, 4]),
            2,
            "id",
            heads=rng.choice([0, 2]),
            positions="rope",
        )
        for _ in range(count)
    ]


def in_radians(path: Path, text: str) -> str:
    """The same lesson with θ of 1, 1/2, … radians (theta_unit), one per pair."""
    path.write_text(text)
    pairs = load_lesson(path).d_k // 2
    lines = [x for x in text.splitlines() if not x.startswith("theta:")]
    at = next(n for n, x in enumerate(lines) if x.startswith("positions:"))
    angles = ", ".join(f'"1/{p}"' for p in range(1, pairs + 1))
    lines[at + 1 : at + 1] = ["theta_unit: radians", f"theta: [{angles}]"]
    return "\n".join(lines) + "\n"


def turn(v: np.ndarray, angles: np.ndarray) -> np.ndarray:
    """numpy's own turn of each pair (a, b) by its angle."""
    out = v.copy()
    c, s = np.cos(angles), np.sin(angles)
    out[0::2], out[1::2] = v[0::2] * c - v[1::2] * s, v[0::2] * s + v[1::2] * c
    return out


def test_the_identity_holds_for_every_cell_against_numpy(tmp_path: Path) -> None:
    for k, text in enumerate(rope_cases(12, seed=28)):
        path = tmp_path / f"r{k}.yaml"
        path.write_text(in_radians(path, text) if k % 2 else text)
        lesson = load_lesson(path)
        assert (lesson.theta_units is not None) == bool(k % 2)
        d = derive(lesson)
        ref = reference.attention(lesson)
        for s in d.steps:
            if s.name != "scores":
                continue
            theta = reference.rope_theta(lesson, len(s.args[0].cols))
            Q, K = ref[("Q", s.head)], ref[("K", s.head)]
            for i in range(len(s.rows)):
                for j in range(len(s.cols)):
                    turns, value = positions.relative(s, i, j)
                    expected = Q[i] @ turn(K[j], (j - i) * theta)
                    assert float(value) == pytest.approx(expected, rel=1e-9, abs=1e-12)
                    assert s.cells[i][j].value == pytest.approx(expected, rel=1e-9, abs=1e-12)
                    # the simplified exact form keeps the value
                    exact = s.cells[i][j].exact
                    assert float(exact) == pytest.approx(expected, rel=1e-9, abs=1e-12)
                    np.testing.assert_allclose([float(t) for t in turns], (j - i) * theta)


def test_cos_squared_plus_sin_squared_is_one(tmp_path: Path) -> None:
    path = tmp_path / "rad.yaml"
    path.write_text(RAD)
    scores = derive(load_lesson(path)).step("scores", None)
    # b = [0, 1] turned by 1 rad, with itself: cos(1)² + sin(1)², held as the fraction 1
    assert scores.cells[1][1].is_rational and scores.cells[1][1].exact == 1
    # b with c: cos(2)·cos(1) + … combined into cos(1) + sin(1)
    assert scores.cells[1][2].exact == sympy.cos(1) + sympy.sin(1)


def test_combined_keeps_a_longer_form_out() -> None:
    x = sympy.cos(sympy.pi * sympy.Rational(23, 72)) * sympy.sin(sympy.pi * sympy.Rational(23, 36))
    y = positions.combined(x)
    assert sympy.count_ops(y) <= sympy.count_ops(x) and abs(float(x - y)) < 1e-15
    assert positions.combined(sympy.cos(1) ** 2 + sympy.sin(1) ** 2) == 1


def test_the_walk_writes_simplified_forms_and_the_note(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "rad.yaml"
    path.write_text(RAD)
    out = run("walk", str(path), "--exact", "--step", "scores", "--cell", "scores[b, c]").stdout
    flat = " ".join(out.split())
    assert "**" not in out and "cos(1)² + sin(1)²" not in out
    assert "cos(1) + sin(1) ≈ 1.38" in out
    assert "RoPE's point: scores[b, c] = Q[b]·R((2 − 1)θ)·K[c]ᵀ" in flat
    assert "turning the key alone by (n − m)θ = 1 rad: [0, 1] · ([1, 1] turned by 1 rad)" in flat
    assert "= cos(1) + sin(1) ≈ 1.38, the score above" in flat
    assert "depends only on n − m = 1" in flat
    same = " ".join(
        run("walk", str(path), "--step", "scores", "--cell", "scores[b, b]").stdout.split()
    )
    assert "scores[b, b] = Q[b]·R((1 − 1)θ)·K[b]ᵀ = Q[b]·K[b]ᵀ = 1" in same
    plain = run("walk", "cats-chase-mice", "--step", "scores").stdout
    assert "RoPE's point" not in plain
