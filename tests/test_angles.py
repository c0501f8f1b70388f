"""Issue 28, item 2: RoPE's θ in degrees or radians, exact, printed as a course writes it."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import sympy

from tests import reference
from tests.test_engine import assert_matches_numpy
from tutor.core.engine import derive
from tutor.core.errors import LessonError
from tutor.core.lessonfile import load_lesson

BASE = """title: turned by one radian
tokens: [we, saw, it]
X: [[1, 0, 2], [0, 1, 1], [2, 1, 0]]
positions: rope
{theta}
W_Q: [[1, 0], [0, 1], [1, 1]]
W_K: [[0, 1], [1, 0], [1, 0]]
W_V: [[1, 0], [0, 1], [1, 1]]
"""


def lesson_file(tmp_path: Path, theta: str, name: str = "rad.yaml") -> Path:
    path = tmp_path / name
    path.write_text(BASE.format(theta=theta))
    return path


@pytest.mark.parametrize(
    "theta",
    ["theta: [1 rad]", "theta: [1rad]", "theta: [1 radians]", "theta_unit: radians\ntheta: [1]"],
)
def test_an_angle_in_radians_is_kept_exact_and_agrees_with_numpy(tmp_path, theta) -> None:  # type: ignore[no-untyped-def]
    path = lesson_file(tmp_path, theta)
    lesson = load_lesson(path)
    assert lesson.theta == ((1, 1),) and lesson.theta_units == ("rad",)
    d = derive(lesson)
    q_rot = d.step("Q_rot", None)
    # the token at position 1 is turned by exactly 1 radian: its cells hold cos(1) and sin(1)
    assert q_rot.angles == (sympy.Integer(1),)
    row = [c.exact for c in q_rot.cells[1]]
    q = [c.exact for c in d.step("Q", None).cells[1]]
    one = sympy.Integer(1)
    assert sympy.simplify(row[0] - (q[0] * sympy.cos(one) - q[1] * sympy.sin(one))) == 0
    assert_matches_numpy(path)
    # numpy on its own: rotate by 1 and 2 radians, then Q·Kᵀ
    Q = np.array([[3, 2], [1, 2], [2, 1]], dtype=float)
    K = np.array([[2, 1], [2, 0], [1, 2]], dtype=float)

    def turn(M):  # type: ignore[no-untyped-def]
        out = M.copy()
        for p in range(3):
            c, s = np.cos(p), np.sin(p)
            out[p] = [M[p, 0] * c - M[p, 1] * s, M[p, 0] * s + M[p, 1] * c]
        return out

    scores = turn(Q) @ turn(K).T
    got = np.array([[c.value for c in r] for r in d.step("scores", None).cells])
    np.testing.assert_allclose(got, scores, rtol=1e-12)


def test_degrees_and_radians_mix_entry_by_entry(tmp_path) -> None:  # type: ignore[no-untyped-def]
    text = BASE.replace(
        "[[1, 0], [0, 1], [1, 1]]\nW_K", "[[1, 0, 1, 0], [0, 1, 0, 1], [1, 1, 0, 0]]\nW_K"
    )
    text = text.replace(
        "W_K: [[0, 1], [1, 0], [1, 0]]", "W_K: [[0, 1, 1, 0], [1, 0, 0, 1], [1, 0, 1, 1]]"
    )
    path = tmp_path / "mixed.yaml"
    path.write_text(text.format(theta="theta: [90, 0.5 rad]"))
    lesson = load_lesson(path)
    assert lesson.theta_units == ("deg", "rad")
    assert derive(lesson).step("Q_rot", None).angles == (sympy.pi / 2, sympy.Rational(1, 2))
    assert_matches_numpy(path)
    np.testing.assert_allclose(reference.rope_theta(lesson, 4), [np.pi / 2, 0.5])


def test_degrees_only_lessons_keep_their_fingerprint(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from tutor.core.lesson import fingerprint_of as fingerprint

    deg = load_lesson(lesson_file(tmp_path, "theta: [60]", "a.yaml"))
    unit = load_lesson(lesson_file(tmp_path, "theta_unit: degrees\ntheta: [60]", "b.yaml"))
    rad = load_lesson(lesson_file(tmp_path, "theta: [60 rad]", "c.yaml"))
    assert deg.theta_units is None and unit.theta_units is None
    assert fingerprint(deg) == fingerprint(unit) != fingerprint(rad)


def test_the_walk_writes_radians_as_cos_of_the_number(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    out = run("walk", str(lesson_file(tmp_path, "theta: [1 rad]")), "--step", "Q_rot").stdout
    assert "turns by 1 × 1 rad = 1 rad: cos = 0.5403, sin = 0.8415" in " ".join(out.split())
    assert "Q_rot[saw, 1] = Q[saw, 1]·cos(1) − Q[saw, 2]·sin(1)" in out
    assert "rad ≈" not in out and "cos (1)" not in out and "°" not in out


def test_exact_forms_have_no_python_powers(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    out = run("walk", str(lesson_file(tmp_path, "theta: [1 rad]")), "--exact").stdout
    assert "**" not in out and "sin(1)" in out


def test_a_degree_in_an_exact_form_reads_as_degrees(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    out = run("walk", str(lesson_file(tmp_path, 'theta: ["57.5°"]')), "--exact").stdout
    assert "cos 57.5°" in out and "pi" not in out and "115/2" not in out


def test_json_has_the_angles(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    doc = json.loads(run("walk", str(lesson_file(tmp_path, "theta: [1 rad]")), "--json").stdout)
    assert doc["rope"]["theta"] == [{"radians": "1", "value": 1.0, "degrees": None}]
    assert [a[0]["radians"] for a in doc["rope"]["angles"].values()] == ["0", "1", "2"]
    doc = json.loads(run("walk", str(lesson_file(tmp_path, "theta: [45]")), "--json").stdout)
    assert doc["rope"]["angles"]["it"] == [
        {"radians": "pi/2", "value": pytest.approx(np.pi / 2), "degrees": "90"}
    ]


def test_check_does_not_warn_about_radians_asked_for(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    rad = run("check", str(lesson_file(tmp_path, "theta: [1 rad]", "r.yaml")))
    assert rad.exit_code == 0 and "theta" not in rad.stdout + rad.stderr
    deg = run("check", str(lesson_file(tmp_path, "theta: [57.5]", "d.yaml")))
    assert "not known by heart" in deg.stdout + deg.stderr


BAD = {
    "pi-formula": ('theta: ["180/pi"]', "5:9", "theta entry 1: found '180/pi', expected an angle"),
    "pi-rad": ("theta: [pi rad]", "5:9", "theta entry 1: found 'pi rad', expected an angle"),
    "python": ("theta: [\"__import__('os')\"]", "5:9", "theta entry 1: found"),
    "unit-word": ("theta: [1 grad]", "5:9", "theta entry 1: found '1 grad'"),
    "too-far": ("theta: [70 rad]", "5:9", "theta entry 1 is 70 rad; expected radians from -62.8"),
    "unit-unknown": (
        "theta_unit: turns\ntheta: [1]",
        "5:13",
        "theta_unit is 'turns'; expected one",
    ),
    "unit-alone": ("theta_unit: radians", "5:1", "theta_unit says how to read theta, but"),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_a_bad_angle_names_file_line_col(run, tmp_path, name) -> None:  # type: ignore[no-untyped-def]
    theta, where, fragment = BAD[name]
    path = lesson_file(tmp_path, theta)
    with pytest.raises(LessonError) as err:
        load_lesson(path)
    first = str(err.value.problems[0])
    assert first.startswith(f"{path}:{where}: ") and fragment in first, first
    result = run("walk", str(path))
    assert result.exit_code == 1 and "Traceback" not in result.stderr
    assert fragment in " ".join(result.stderr.split())
