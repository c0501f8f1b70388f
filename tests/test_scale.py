"""A lesson's own ``scale:`` (issue 41): none (no scaled step), sqrt_d_model, or a number; every
consumer (walk and its words, --json, quiz and judge, sheet, code, check-code, explorer, check)
on cats-chase-mice with each scale, cross-checked against numpy."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import LESSONS
from tutor.assess.codecheck import check_function
from tutor.assess.judge import judge_for
from tutor.core.engine import derive
from tutor.core.lessonfile import load_lesson
from tutor.core.numbers import read_answer
from tutor.explore.model import divisors
from tutor.export.code import program

BASE = (LESSONS / "cats-chase-mice.yaml").read_text()
X = np.array([[1, 0, 1, 0], [0, 2, 0, 1], [1, 1, 0, 0]], dtype=float)
W_Q = np.array([[1, 0], [0, 1], [1, 0], [0, 1]], dtype=float)
W_K = np.array([[0, 1], [1, 0], [1, 0], [0, 1]], dtype=float)
W_V = np.array([[1, 0], [0, 1], [1, 1], [0, 0]], dtype=float)
# what each scale: divides the scores by (cats-chase-mice: d_k = 2, d_model = 4)
DIVIDES = {"none": 1.0, "sqrt_d_model": 2.0, "2.5": 2.5, "5/3": 5 / 3, "sqrt_d_k": np.sqrt(2)}


def lesson_file(tmp_path: Path, scale: str, text: str = BASE) -> Path:
    path = tmp_path / f"cats-{scale.replace('/', '-over-')}.yaml"
    path.write_text(text + f"scale: {scale}\n")
    return path


def numpy_steps(divisor: float) -> dict[str, np.ndarray]:
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    scores = Q @ K.T
    scaled = scores / divisor
    e = np.exp(scaled - scaled.max(axis=1, keepdims=True))
    weights = e / e.sum(axis=1, keepdims=True)
    return {"scores": scores, "scaled": scaled, "weights": weights, "Z": weights @ V}


@pytest.mark.parametrize("scale", ["none", "sqrt_d_model", "2.5", "5/3"])
def test_walk_json_reproduces_numpy_and_says_the_scale(run, tmp_path: Path, scale: str) -> None:
    result = run("walk", str(lesson_file(tmp_path, scale)), "--json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    steps = {s["name"]: np.array(s["value"]) for s in doc["steps"]}
    want = numpy_steps(DIVIDES[scale])
    assert ("scaled" in steps) == (scale != "none")  # none: no scaled step at all
    for name, values in want.items():
        if name in steps:
            np.testing.assert_allclose(steps[name], values, rtol=1e-12)
    choice = {"none": "none", "sqrt_d_model": "sqrt_d_model"}.get(scale, "number")
    assert doc["scale"]["choice"] == choice
    if scale != "none":
        assert doc["scale"]["value"] == pytest.approx(DIVIDES[scale])


def test_a_lesson_without_scale_keeps_its_json_and_fingerprint(run) -> None:
    doc = json.loads(run("walk", "cats-chase-mice", "--json").stdout)
    assert "scale" not in doc
    assert load_lesson(LESSONS / "cats-chase-mice.yaml").fingerprint == "2cd71fbe"


def test_the_walk_says_why_it_divides_as_it_does(run, tmp_path: Path) -> None:
    model = " ".join(run("walk", str(lesson_file(tmp_path, "sqrt_d_model"))).stdout.split())
    assert "scaled = scores / √d_model" in model
    assert "d_model = 4, so every score is divided by √4, the root of d_model, as this" in model
    number = " ".join(run("walk", str(lesson_file(tmp_path, "2.5"))).stdout.split())
    assert "every score is divided by 2.5" in number
    assert "= 4 / 2.5 = 1.60" in number  # scaled[cats, chase]: 4 / 2.5
    raw = " ".join(run("walk", str(lesson_file(tmp_path, "none"))).stdout.split())
    assert "scaled" not in raw.split("weights = softmax")[1].split("Z = weights")[0]
    assert "softmax takes the raw scores" in raw


def test_no_scaled_cells_on_the_sheet_or_the_form_when_none(run, tmp_path: Path) -> None:
    path = str(lesson_file(tmp_path, "none"))
    sheet = run("export", path, "-f", "sheet").stdout
    assert "\nscores:" in sheet and "\nweights:" in sheet and "\nscaled:" not in sheet
    form = run("export", path, "-f", "form").stdout
    assert 'data-step="scaled"' not in form and "scaled[" not in form
    assert "Z = softmax(Q·Kᵀ) · V" in form  # the raw scores, as the lesson says
    assert "scaled[" in run("export", str(lesson_file(tmp_path, "2.5")), "-f", "form").stdout


def test_the_judge_names_the_usual_scale_as_a_slip(tmp_path: Path) -> None:
    d = derive(load_lesson(lesson_file(tmp_path, "2.5")))
    scaled = d.step("scaled")
    judge = judge_for(d)
    right = judge.judge(scaled, 0, 1, read_answer("1.6"))  # 4 / 2.5
    assert right.right
    usual = read_answer("2.83")  # 4 / √2, the usual scale
    assert not judge.judge(scaled, 0, 1, usual).right
    (slip,) = judge.slips(scaled, 0, 1, usual)
    assert slip.name == "usual-scale"
    assert "√d_k = √2; this lesson divides by 2.5" in slip.message
    (raw,) = judge.slips(scaled, 0, 1, read_answer("4"))
    assert raw.name == "not-scaled"
    assert "the raw score; this lesson divides it by 2.5" in raw.message


def test_code_writes_the_lessons_scale(tmp_path: Path) -> None:
    for scale, line in (("2.5", "scaled = scores / (5 / 2)"), ("sqrt_d_model", "np.sqrt(4)")):
        d = derive(load_lesson(lesson_file(tmp_path, scale)))
        source = program(d)
        assert line in source
        space: dict = {}  # type: ignore[type-arg]
        with contextlib.redirect_stdout(io.StringIO()):
            exec(compile(source, "<code>", "exec"), space)  # our own generated program
        np.testing.assert_allclose(space["Z"], numpy_steps(DIVIDES[scale])["Z"], rtol=1e-12)
    none = program(derive(load_lesson(lesson_file(tmp_path, "none"))))
    assert "scaled" not in none and "weights = softmax(scores)" in none


def _student(divide_by):  # type: ignore[no-untyped-def]
    def attention(X, W_Q, W_K, W_V, mask=None, scale=None):  # type: ignore[no-untyped-def]
        Q, K, V = X @ W_Q, X @ W_K, X @ W_V
        scores = Q @ K.T
        scaled = scores / divide_by(scale, K)
        e = np.exp(scaled - scaled.max(axis=1, keepdims=True))
        weights = e / e.sum(axis=1, keepdims=True)
        return {"scores": scores, "scaled": scaled, "weights": weights, "Z": weights @ V}

    return attention


@pytest.mark.parametrize("scale", ["none", "sqrt_d_model", "2.5"])
def test_check_code_passes_the_scale_and_names_the_usual_one(tmp_path: Path, scale: str) -> None:
    d = derive(load_lesson(lesson_file(tmp_path, scale)))
    good = check_function(d, _student(lambda s, K: s))
    assert good.ok, good
    usual = check_function(d, _student(lambda s, K: np.sqrt(K.shape[1])))
    assert not usual.ok and usual.difference is not None
    assert usual.difference.slip == "usual-scale"


def test_check_code_of_a_plain_lesson_passes_no_scale() -> None:
    d = derive(load_lesson(LESSONS / "cats-chase-mice.yaml"))

    def attention(X, W_Q, W_K, W_V, mask=None):  # type: ignore[no-untyped-def]
        Q, K = X @ W_Q, X @ W_K
        return {"scaled": Q @ K.T / np.sqrt(K.shape[1])}

    assert check_function(d, attention).ok


def test_the_explorer_starts_from_the_lessons_scale(tmp_path: Path) -> None:
    from tutor.explore.model import divisor_text

    none = load_lesson(lesson_file(tmp_path, "none"))
    assert divisors(none) == ("lesson", "root", "d_k")  # ÷ 1 is the lesson's own
    assert divisor_text("lesson", none) == "1"
    number = load_lesson(lesson_file(tmp_path, "2.5"))
    assert divisors(number) == ("lesson", "root", "one", "d_k")
    assert divisor_text("lesson", number) == "2.5"


@pytest.mark.parametrize(
    ("scale", "message"),
    [
        ("sqrt_dk", "scale is 'sqrt_dk' (did you mean sqrt_d_k?); expected one of: sqrt_d_k"),
        ("None", "scale is 'None' (did you mean none?)"),
        ("-2", "scale is -2; expected a positive number to divide the scores by"),
        ("0", "scale is 0; expected a positive number"),
        ("1/0", "scale: found '1/0', a division by zero"),
        ("[2]", "scale should be text, but found"),
    ],
)
def test_check_refuses_a_bad_scale_at_its_line(run, tmp_path: Path, scale: str, message) -> None:  # type: ignore[no-untyped-def]
    path = lesson_file(tmp_path, scale)
    result = run("check", str(path))
    assert result.exit_code == 1
    line = BASE.count("\n") + 1
    assert f"{path}:{line}:8: {message}" in result.output


def test_sqrt_d_model_is_refused_where_q_k_v_are_given(run, tmp_path: Path) -> None:
    text = (
        "title: given\ntokens: [a, b]\nQ: [[1, 0], [0, 1]]\nK: [[1, 0], [0, 1]]\n"
        "V: [[1, 0], [0, 1]]\n"
    )
    result = run("check", str(lesson_file(tmp_path, "sqrt_d_model", text)))
    assert result.exit_code == 1 and ":6:8: scale is sqrt_d_model, but Q, K and V are given" in (
        result.output
    )
    assert run("check", str(lesson_file(tmp_path, "none", text))).exit_code == 0


def test_check_warns_when_large_scores_are_not_scaled(run, tmp_path: Path) -> None:
    loud = BASE.replace("- [0, 2, 0, 1]", "- [0, 9, 0, 1]")  # chase's row: scores up to 18
    result = run("check", str(lesson_file(tmp_path, "none", loud)))
    assert result.exit_code == 0
    assert "warning: scale is none, and a score is 18.00 (|score| above 10)" in result.output
    assert "as its scores run from 2 to 18" in result.output  # (not "scaled": there are none)
    calm = run("check", str(lesson_file(tmp_path, "none")))
    assert "scale is none" not in calm.output  # scores up to 4: no warning
    scaled = run("check", str(lesson_file(tmp_path, "sqrt_d_model", loud)))
    assert "scale is none" not in scaled.output


def test_variants_keep_the_scale(run, tmp_path: Path) -> None:
    path = lesson_file(tmp_path, "2.5")
    out = tmp_path / "variants"
    result = run("variants", str(path), "--count", "2", "--seed", "1", "-o", str(out))
    assert result.exit_code == 0, result.output
    made = sorted(out.glob("*.yaml"))
    assert made
    for f in made:
        assert load_lesson(f).scale_by == (5, 2)


def test_the_documents_formula_divides_as_the_lesson_does(run, tmp_path: Path) -> None:
    none, model = str(lesson_file(tmp_path, "none")), str(lesson_file(tmp_path, "sqrt_d_model"))
    assert r"\left(Q K^\top\right) V" in run("export", none, "-f", "tex", "-o", "-").stdout
    assert '"softmax"(Q K^top) V' in run("export", none, "-f", "typ", "-o", "-").stdout
    md = run("export", model, "-f", "md", "-o", "-").stdout
    assert r"\frac{Q K^\top}{\sqrt{d_{\mathrm{model}}}}" in md
    assert r"{\sqrt{d_k}}" in run("export", "cats-chase-mice", "-f", "md", "-o", "-").stdout
