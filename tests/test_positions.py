"""Issue 17: positions (E + P, sinusoidal, RoPE) and cross-attention, against numpy."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
import sympy

from tests import lessongen
from tests.test_engine import assert_matches_numpy
from tutor.core.engine import Exact, derive
from tutor.core.lessonfile import load_lesson


def position_cases(count: int, seed: int) -> list[str]:
    """Random lessons with positions or a source sentence (the kinds issue 17 adds)."""
    rng = random.Random(seed)
    cases = []
    for k in range(count):
        kind = ("given", "sinusoidal", "rope", "cross")[k % 4]
        n = rng.choice([1, 2, 3, 4, 5])
        d_model, d_v = rng.randint(1, 5), rng.randint(1, 3)
        d_k = rng.choice([2, 4]) if kind == "rope" else rng.randint(1, 4)
        heads = rng.choice([0, 0, 2])
        cases.append(
            lessongen.lesson_text(
                rng,
                n,
                d_model,
                d_k,
                d_v,
                rng.choice(["i", "id", "idf"]),
                heads=heads,
                causal=kind != "cross" and rng.random() < 0.3,
                w_o=heads > 0 and rng.random() < 0.5,
                positions=kind if kind != "cross" else "none",
                source=rng.randint(1, 4) if kind == "cross" else 0,
            )
        )
    return cases


@pytest.mark.parametrize("text", position_cases(40, seed=17))
def test_random_position_lessons_agree_with_numpy(tmp_path: Path, text: str) -> None:
    path = tmp_path / "random.yaml"
    path.write_text(text)
    assert_matches_numpy(path)


@pytest.mark.parametrize("text", position_cases(16, seed=170))
def test_each_new_steps_rule_gives_its_cells(tmp_path: Path, text: str) -> None:
    """``Step.combine`` of every cell (E + P, Q_rot, K_rot, cross-attention's scores) gives
    the value ``derive`` computed."""
    path = tmp_path / "random.yaml"
    path.write_text(text)
    d = derive(load_lesson(path))
    kit = Exact()
    for step in d.steps:
        for i in range(len(step.rows)):
            for j in range(len(step.cols)):
                cell = step.cells[i][j]
                made = step.combine(i, j, lambda r: r.step.cells[r.i][r.j].exact, kit)
                if cell.masked:
                    assert made == -sympy.oo
                    continue
                gap = abs(sympy.N(made - cell.exact, 40))
                assert gap < sympy.Rational(1, 10**30), (step.key, i, j, made, cell)


# ---------------------------------------------------------------------------------------------
# graded fairly: honest students of every habit, and each new slip named


def _graded(run, path: Path, d, written) -> dict:  # type: ignore[no-untyped-def, type-arg]
    from tests import students

    sheet = path.with_suffix(".sheet.yaml")
    sheet.write_text(students.sheet_text(d, written))
    result = run("grade", str(path), str(sheet), "--json")
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


@pytest.mark.parametrize("text", position_cases(8, seed=1717))
def test_every_honest_student_gets_full_marks(run, tmp_path: Path, text: str) -> None:  # type: ignore[no-untyped-def]
    from tests import students

    path = tmp_path / "lesson.yaml"
    path.write_text(text)
    d = derive(load_lesson(path))
    for habit in students.HABITS:
        rep = _graded(run, path, d, students.Student(d, habit).work())
        assert rep["score"] == rep["total"], (
            habit,
            [c for c in rep["cells"] if c["verdict"] != "correct"],
        )
