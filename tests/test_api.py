"""The Python API (issue 29), through its public names only: ``tutor.lesson``, the derivation
(exact and NumPy), a cell's working, the quiz's judge, grading a sheet, checking a function, and
display in a notebook (HTML and Markdown). The library never prints."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
import sympy

import tutor
from tests.conftest import LESSONS, ROOT


def test_the_api_is_what_dir_says_and_loads_on_first_use() -> None:
    assert {"lesson", "judge", "grade", "check_function", "LessonError"} <= set(dir(tutor))
    code = "import sys, tutor; print('sympy' in sys.modules, 'tutor.api' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.stdout.split() == ["False", "False"]  # `import tutor` stays light


def test_a_lesson_by_name_path_or_dict(tmp_path) -> None:
    by_name = tutor.lesson("cats-chase-mice")
    by_path = tutor.lesson(LESSONS / "cats-chase-mice.yaml")
    assert by_name.title == by_path.title == "Cats chase mice"
    from_dict = tutor.lesson(
        {"title": "Two", "tokens": ["a", "b"], "X": [[1, 0.5], [0, "1/3"]],
         "W_Q": [[1, 0], [0, 1]], "W_K": [[1, 0], [0, 1]], "W_V": [[1, 0], [0, 1]]}
    )  # fmt: skip
    X = from_dict.derive()["X"].exact
    assert X[0, 1] == sympy.Rational(1, 2) and X[1, 1] == sympy.Rational(1, 3)  # exact, not 0.5


def test_the_derivation_is_exact_and_numpy() -> None:
    d = tutor.lesson("cats-chase-mice").derive()
    w = d["weights"]
    assert w.exact[0, 0] == 1 / (2 + sympy.exp(sympy.sqrt(2)))  # seed 000, exactly
    assert isinstance(w.numpy(), np.ndarray) and w.numpy().dtype == np.float64
    assert np.allclose(w.numpy().sum(axis=1), 1)
    cell = d.cell("Z[cats, 1]")
    assert cell.exact == 3 / (2 + sympy.exp(sympy.sqrt(2)))
    assert abs(cell.value - 0.4907) < 1e-4 and "Z[cats, 1] =" in cell.working
    with pytest.raises(KeyError, match="the steps are"):
        d["weigths"]


def test_the_judge_is_the_quizs() -> None:
    v = tutor.judge("cats-chase-mice", "Z[cats, 1]", "0.49")
    assert v.right and v.kind == "rounded"
    v = tutor.judge("cats-chase-mice", "scaled[cats, chase]", "4")
    assert not v.right and v.slips == ("not-scaled",)
    with pytest.raises(tutor.TutorError):
        tutor.judge("cats-chase-mice", "Z[dogs, 1]", "0.49")


def test_a_sheet_as_a_dict_is_graded_with_follow_through() -> None:
    lesson = tutor.lesson("cats-chase-mice")
    d = lesson.derive()
    sheet = {"Q": d["Q"].numpy().tolist()}
    sheet["Q"][0][0] = 3  # a slip; nothing else written
    report = tutor.grade(lesson, sheet)
    assert (report.score, report.total) == (5, 51)
    assert report.to_dict()["cells"][0]["verdict"] == "wrong"


def test_a_function_is_checked_step_by_step() -> None:
    def attention(X, W_Q, W_K, W_V, mask=None):  # type: ignore[no-untyped-def]
        Q, K, V = X @ W_Q, X @ W_K, X @ W_V
        s = Q @ K.T  # forgot √d_k
        e = np.exp(s - s.max(axis=1, keepdims=True))
        w = e / e.sum(axis=1, keepdims=True)
        return w @ V, {"scaled": s, "weights": w}

    result = tutor.check_function("cats-chase-mice", attention)
    assert not result.ok and result.difference.slip == "not-scaled"
    assert "not-scaled" in str(result)


def test_steps_walks_and_verdicts_show_themselves_in_a_notebook(capsys) -> None:
    lesson = tutor.lesson("cats-chase-mice")
    walk = lesson.walk(step="weights")
    page = walk._repr_html_()
    assert "<style>" in page and "weights" in page
    assert walk._repr_markdown_().startswith("```text")
    assert "softmax" in str(walk)
    assert "1.41" in lesson.derive()["scaled"]._repr_markdown_()
    assert "✓" in tutor.judge(lesson, "Z[cats, 1]", "0.49")._repr_html_()
    with pytest.raises(tutor.TutorError, match="no step 'weigths'"):
        lesson.walk(step="weigths")
    assert capsys.readouterr().out == ""  # the library never prints


def test_a_bad_lesson_is_a_lesson_error_with_its_place(tmp_path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("title: x\ntokens: [a]\nX: [[1, 2]]\nW_Q: [[1]]\nW_K: [[1]]\nW_V: [[1]]\n")
    with pytest.raises(tutor.LessonError, match=r"bad.yaml:\d+:\d+"):
        tutor.lesson(bad)
