"""Large but legal numbers: scores in the hundreds (up to 1800 here) still give correct weights,
and no inf or nan appears anywhere: walk, walk --json, explain, quiz questions and judging."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from tests import reference
from tests.conftest import FIXTURES
from tutor.assess import judge as jd
from tutor.assess import quiz as qz
from tutor.core.engine import derive
from tutor.core.lessonfile import load_lesson
from tutor.core.numbers import read_answer
from tutor.text import format as fmt

LARGE = FIXTURES / "lessons" / "large-scores.yaml"
BAD_WORDS = ("nan", "inf", "NaN", "Infinity")


def variants(tmp_path: Path) -> list[Path]:
    """The lesson as it is, with a causal mask, and as two heads with a W_O."""
    text = LARGE.read_text()
    causal = tmp_path / "large-causal.yaml"
    causal.write_text(text + "mask: causal\n")
    heads = tmp_path / "large-heads.yaml"
    lines = [line for line in text.splitlines() if not line.startswith("W_")]
    body = {k: v for k, _, v in (line.partition(": ") for line in text.splitlines())}
    lines += ["heads:"]
    for _ in range(2):
        lines += [f"  - W_Q: {body['W_Q']}", f"    W_K: {body['W_K']}", f"    W_V: {body['W_V']}"]
    lines += ["W_O: [[1, 0], [0, 1], [1, 0], [0, 1]]"]
    heads.write_text("\n".join(lines) + "\n")
    return [LARGE, causal, heads]


def refuse_constants(name: str) -> None:
    raise AssertionError(f"{name} in the JSON")


def test_scores_really_are_large() -> None:
    d = derive(load_lesson(LARGE))
    assert max(abs(c.value) for row in d.step("scores").cells for c in row) >= 900


def test_walk_json_agrees_with_numpy_and_has_no_inf_or_nan(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    for path in variants(tmp_path):
        r = run("walk", str(path), "--json")
        assert r.exit_code == 0, r.stderr
        out = json.loads(r.stdout, parse_constant=refuse_constants)
        ref = reference.attention(load_lesson(path))
        for step in out["steps"]:
            got = np.array([[np.nan if v is None else v for v in row] for row in step["value"]])
            expected = ref.get((step["name"], step["head"]))
            if expected is None:
                continue
            finite = np.isfinite(expected)
            assert np.isnan(got[~finite]).all()  # masked cells, written as null
            np.testing.assert_allclose(got[finite], expected[finite], rtol=1e-9, atol=1e-12)
            if step["name"] == "weights":
                assert np.allclose(np.nansum(got, axis=1), 1)


def test_walk_and_explain_show_no_inf_or_nan(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    for path in variants(tmp_path):
        r = run("walk", str(path), "--exact")
        assert r.exit_code == 0, r.stderr
        assert not any(w in r.stdout for w in BAD_WORDS)
        d = derive(load_lesson(path))
        z = "head1.Z" if d.head_count > 1 else "Z"
        for cell in (f"{z}[mid, 1]", "scores[small, small]", f"{z}[big, 2]"):
            cell = cell if d.head_count == 1 or cell.startswith("head") else "head2." + cell
            r = run("explain", str(path), cell)
            assert r.exit_code == 0, (cell, r.stderr)
            assert not any(w in r.stdout for w in BAD_WORDS), cell


@pytest.mark.parametrize("which", [0, 1, 2])
def test_quiz_questions_and_judging(tmp_path: Path, which: int) -> None:
    d = derive(load_lesson(variants(tmp_path)[which]))
    places = d.lesson.precision
    for q in qz.choose(d, count=200, seed=1):
        cell = q.step.cells[q.i][q.j]
        assert math.isfinite(cell.value)
        texts = [*qz.inputs(q, places), qz.hint(q, places), qz.working(q, places)]
        texts.append(qz.value_text(q, places))
        assert not any(w in t for t in texts for w in BAD_WORDS), texts
        shown = fmt.shown(cell, q.step, places).replace("−", "-")
        verdict = jd.judge_for(d).judge(q.step, q.i, q.j, read_answer(shown))
        assert verdict.right, (q.name, shown, verdict)


# ---------------------------------------------------------------------------------------------
# huge scores: differences far below the scores' 40th digit (issue 19.1)

ISSUE_19 = """title: cancellation
tokens: [a, b, c]
X: [[1, 1], [1, 2], [1, 3]]
W_Q: [[1e30], [0]]
W_K: [[1e30], [1e-30]]
W_V: [[1, 0], [0, 1]]
"""
BIG = "9999999999999999999999999999e30"  # the largest entry a lesson may hold (~10^58)
HUGE = {
    "issue": ISSUE_19,  # scores 10^60 + {1, 2, 3}: weights 0.09, 0.24, 0.67
    "negative": ISSUE_19.replace("[[1e30], [0]]", "[[-1e30], [0]]"),
    "surd-causal": """title: huge, d_k 2, causal
tokens: [a, b, c]
X: [[1, 1], [1, 2], [1, 3]]
W_Q: [[1e30, 0], [0, 0]]
W_K: [[1e30, 0], [1e-30, 0]]
W_V: [[1e30, -1e30], [1, 1]]
mask: causal
""",
    # Z = Σ w·v cancels: V's huge parts sum to 0 and leave the small ones
    "cancelling-Z": """title: Z cancels
tokens: [a, b, c]
X: [[1, 1, 0], [1, 2, 1], [1, 3, -1]]
W_Q: [[1e30, 1], [0, 0], [0, 1]]
W_K: [[1e30, 0], [1e-30, 0], [0, 1]]
W_V: [[0, 1], [1, 0], [1e30, 3]]
""",
    "largest-two-heads": f"""title: largest entries, two heads
tokens: [a, b, c]
X: [[{BIG}, 1e-30], [{BIG}, 2e-30], [-{BIG}, 3e-30]]
heads:
  - W_Q: [[{BIG}, 1, -1], [0, 1, 1]]
    W_K: [[{BIG}, 2, 1], [1e-30, 0, 3]]
    W_V: [[{BIG}, -{BIG}], [1, 1]]
  - W_Q: [["1/3"], [0]]
    W_K: [[1], [7]]
    W_V: [[1, 0], [0, 1]]
W_O: [[1, 0], [1, 0], [0, 1], [0, "1/7"]]
mask: causal
""",
}


def half_up(x, places: int):  # type: ignore[no-untyped-def]
    """A reference value rounded half away from zero, as a Decimal (independent of format.py)."""
    from decimal import Decimal

    mp = x.context  # the reference's own 600-digit context
    n = int(mp.floor(abs(x) * mp.mpf(10) ** places + mp.mpf(1) / 2))
    return Decimal(f"{'-' if x < 0 else ''}{n}E-{places}")  # exact: no context rounding


@pytest.fixture(params=sorted(HUGE))
def huge(request, tmp_path: Path) -> Path:  # type: ignore[no-untyped-def]
    path = tmp_path / f"{request.param}.yaml"
    path.write_text(HUGE[request.param])
    return path


def test_huge_scores_every_cell_as_shown_and_as_a_double(huge: Path) -> None:
    lesson = load_lesson(huge)
    d = derive(lesson)
    ref = reference.attention_mp(lesson)
    assert max(abs(c.value) for row in d.step("scores", d.steps[1].head).cells for c in row) > 1e59
    for step in d.steps:
        expected = ref.get((step.name, step.head))
        if expected is None:
            continue
        for i, row in enumerate(step.cells):
            for j, cell in enumerate(row):
                x = expected[i][j]
                if cell.masked:
                    assert x == float("-inf")
                    continue
                where = (step.key, i, j)
                for places in (0, 2, 5):
                    assert fmt.round_half_up(cell, places) == half_up(x, places), where
                assert cell.value == pytest.approx(float(x), rel=1e-12, abs=1e-300), where


def test_issue_lesson_weights_walk_json_and_exact_decimals(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "cancellation.yaml"
    path.write_text(ISSUE_19)
    r = run("walk", str(path), "--json")
    assert r.exit_code == 0, r.stderr
    weights = next(s for s in json.loads(r.stdout)["steps"] if s["name"] == "weights")
    for row in weights["value"]:
        np.testing.assert_allclose(row, [0.0900305731703805, 0.244728471054798, 0.665240955774822])
    r = run("walk", str(path), "--step", "weights", "--exact")
    assert r.exit_code == 0, r.stderr
    # the exact form is sized from its scores (10^60 + k) before it is built, and left out
    # as too large; the decimal beside it is the right one
    assert "≈ 0.09" in r.stdout and "≈ 0.33" not in r.stdout
    assert "≈ 0.24" in r.stdout
    assert "≈ 0.67" in r.stdout
    assert "≈ 0.33" not in r.stdout
    # the softmax table: e^(x − m) from the exact differences, m the true largest score
    assert "0.14 / 1.50 ≈ 0.09" in r.stdout
    assert "m = 1" + "0" * 59 + "3 is the largest" in r.stdout.replace("\n", " ")
    r = run("walk", str(path), "--step", "Z")
    assert "2.58" in r.stdout and "2.00" not in r.stdout


def test_issue_lesson_quiz_takes_the_right_weights(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "cancellation.yaml"
    path.write_text(ISSUE_19)
    right = ["0.09", "0.24", "0.67"]  # each row: softmax(1, 2, 3)
    questions = qz.choose(derive(load_lesson(path)), ["weights"], 9, seed=1)
    answers = "".join(right[q.j] + "\n" for q in questions)
    r = run("quiz", str(path), "--steps", "weights", "--count", "9", "--seed", "1", input=answers)
    assert r.exit_code == 0, r.stderr
    assert "Score: 9/9" in r.stdout
    assert "Not quite" not in r.stdout
