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
from tutor import format as fmt
from tutor import judge as jd
from tutor import quiz as qz
from tutor.engine import derive
from tutor.lesson import load_lesson
from tutor.numbers import read_answer

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
