"""Biases (issue 41): b_Q, b_K, b_V (one row each, added to every row of X·W; per head inside
heads:, per group inside kv_heads:) and b_O (after W_O). The walk's working, --json, code,
check-code, the judge's "forgot the bias" with follow-through, check's shape errors, and
torch.nn.MultiheadAttention(bias=True) as a reference where torch is installed."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import numpy as np
import pytest
import sympy

from tests import reference
from tests.conftest import LESSONS
from tutor.assess.codecheck import check_function
from tutor.assess.grade import grade
from tutor.assess.judge import judge_for
from tutor.assess.sheet import read_sheet
from tutor.core.engine import derive
from tutor.core.lessonfile import load_lesson
from tutor.core.numbers import read_answer
from tutor.export.code import program

BASE = (LESSONS / "cats-chase-mice.yaml").read_text()
BIASES = "b_Q: [0.5, 0]\nb_K: [0, 1]\nb_V: [1, -1]\n"
TWO_HEADS = """title: two heads with biases
tokens: [cats, chase, mice]
X: [[1, 0, 1, 0], [0, 2, 0, 1], [1, 1, 0, 0]]
heads:
  - W_Q: [[1, 0], [0, 1], [1, 0], [0, 1]]
    W_K: [[0, 1], [1, 0], [1, 0], [0, 1]]
    W_V: [[1, 0], [0, 1], [1, 1], [0, 0]]
    b_Q: [0.5, 0]
    b_V: [1, -1]
  - W_Q: [[0, 1], [1, 0], [0, 0], [1, 1]]
    W_K: [[1, 0], [0, 1], [1, 1], [0, 0]]
    W_V: [[0, 1], [1, 0], [0, 0], [1, 1]]
    b_K: [-1, 0.25]
W_O: [[1, 0], [0, 1], [1, 1], [0, 2]]
b_O: [0.5, -0.5]
"""


def write(tmp_path: Path, text: str, name: str = "biased.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def biased(tmp_path: Path) -> Path:
    return write(tmp_path, BASE + BIASES)


def test_the_engine_adds_each_bias_as_numpy_does(tmp_path: Path) -> None:
    for text in (BASE + BIASES, TWO_HEADS, BASE + BIASES + "mask: causal\n"):
        lesson = load_lesson(write(tmp_path, text))
        d = derive(lesson)
        for (name, h), want in reference.attention(lesson).items():
            got = np.array([[c.value for c in row] for row in d.step(name, h).cells])
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12, err_msg=name)
    d = derive(load_lesson(write(tmp_path, BASE + BIASES)))
    assert [c.exact for c in d.step("Q").cells[0]] == [sympy.Rational(5, 2), 0]  # 2 + 0.5


def test_the_working_shows_the_bias_term(run, tmp_path: Path) -> None:
    out = " ".join(run("walk", str(biased(tmp_path))).stdout.split())
    assert "Q[cats, 1] = row cats of X · column 1 of W_Q + b_Q" in out
    assert "= 1·1 + 0·0 + 1·1 + 0·0 + 0.50 = 2.50" in out
    assert "b_Q, the query bias" in out


def test_walk_json_has_the_biases_to_reproduce_the_lesson(run, tmp_path: Path) -> None:
    doc = json.loads(run("walk", str(write(tmp_path, TWO_HEADS)), "--json").stdout)
    steps = {(s["name"], s["head"]): np.array(s["value"]) for s in doc["steps"]}
    assert doc["biases"] == {"head1.Q": "head1.b_Q", "head1.V": "head1.b_V",
                             "head2.K": "head2.b_K", "output": "b_O"}  # fmt: skip
    np.testing.assert_array_equal(steps[("b_O", None)], [[0.5, -0.5]])
    X = np.array([[1, 0, 1, 0], [0, 2, 0, 1], [1, 1, 0, 0]])
    W_Q = np.array([[1, 0], [0, 1], [1, 0], [0, 1]])
    np.testing.assert_allclose(steps[("Q", 1)], X @ W_Q + steps[("b_Q", 1)])


def test_no_bias_cells_on_the_sheet(run, tmp_path: Path) -> None:
    sheet = run("export", str(biased(tmp_path)), "-f", "sheet").stdout
    assert "\nQ:" in sheet and "\nb_Q:" not in sheet and "b_Q[" not in sheet


def test_code_adds_the_bias_and_its_variables_equal_the_walk(tmp_path: Path) -> None:
    d = derive(load_lesson(write(tmp_path, TWO_HEADS)))
    source = program(d)
    assert "Q_1 = X @ W_Q_1 + b_Q_1" in source or "+ b_Q" in source
    assert "output = concat @ W_O + b_O" in source
    space: dict = {}  # type: ignore[type-arg]
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(source, "<code>", "exec"), space)  # our own generated program
    from tutor.export.code import variables

    for name, step in variables(d).items():
        want = np.array([[c.value for c in row] for row in step.cells])
        np.testing.assert_allclose(space[name], want, rtol=1e-12, err_msg=name)


def _student(with_bias: bool):  # type: ignore[no-untyped-def]
    def attention(X, W_Q, W_K, W_V, mask=None, b_Q=None, b_K=None, b_V=None):  # type: ignore[no-untyped-def]
        Q, K, V = X @ W_Q, X @ W_K, X @ W_V
        if with_bias:
            Q, K, V = Q + b_Q, K + b_K, V + b_V
        scores = Q @ K.T
        scaled = scores / np.sqrt(K.shape[1])
        e = np.exp(scaled - scaled.max(axis=1, keepdims=True))
        weights = e / e.sum(axis=1, keepdims=True)
        return {"Q": Q, "scores": scores, "weights": weights, "Z": weights @ V}

    return attention


def test_check_code_passes_the_biases_and_names_a_forgotten_one(tmp_path: Path) -> None:
    d = derive(load_lesson(biased(tmp_path)))
    assert check_function(d, _student(True)).ok
    wrong = check_function(d, _student(False))
    assert wrong.difference is not None and wrong.difference.step == "Q"
    assert wrong.difference.slip == "forgot-bias"


def test_check_code_runs_a_file_with_biases(tmp_path: Path) -> None:
    from tutor.assess.codecheck import check_file

    student = tmp_path / "mine.py"
    student.write_text(
        "import numpy as np\n"
        "def attention(X, W_Q, W_K, W_V, mask=None, b_Q=0, b_K=0, b_V=0):\n"
        "    Q, K, V = X @ W_Q + b_Q, X @ W_K + b_K, X @ W_V + b_V\n"
        "    s = Q @ K.T / np.sqrt(K.shape[1])\n"
        "    e = np.exp(s - s.max(axis=1, keepdims=True))\n"
        "    return e / e.sum(axis=1, keepdims=True) @ V\n"
    )
    report, _ = check_file(derive(load_lesson(biased(tmp_path))), str(student))
    assert report.ok, report


def test_the_judge_names_forgot_the_bias(tmp_path: Path) -> None:
    d = derive(load_lesson(biased(tmp_path)))
    judge = judge_for(d)
    Q = d.step("Q")
    assert judge.judge(Q, 0, 0, read_answer("2.5")).right
    (slip,) = judge.slips(Q, 0, 0, read_answer("2"))  # 1·1 + 1·1, b_Q's 0.5 left out
    assert slip.name == "forgot-bias"
    assert "add the bias: b_Q's entry 1 is added to every row" in slip.message


def test_a_forgotten_bias_loses_only_the_cells_of_that_product(tmp_path: Path) -> None:
    """Follow-through: Q written without b_Q, every later step worked right from that Q."""
    lesson = load_lesson(biased(tmp_path))
    d = derive(lesson)
    X = np.array([[1, 0, 1, 0], [0, 2, 0, 1], [1, 1, 0, 0]], dtype=float)
    W_Q = np.array([[1, 0], [0, 1], [1, 0], [0, 1]], dtype=float)
    Q = X @ W_Q  # no b_Q
    K = np.array([[c.value for c in row] for row in d.step("K").cells])
    V = np.array([[c.value for c in row] for row in d.step("V").cells])
    scores = Q @ K.T
    scaled = scores / np.sqrt(2)
    e = np.exp(scaled - scaled.max(axis=1, keepdims=True))
    weights = e / e.sum(axis=1, keepdims=True)
    own = {"Q": Q, "K": K, "V": V, "scores": scores, "scaled": scaled, "weights": weights,
           "Z": weights @ V}  # fmt: skip
    lines = [f'lesson: "{lesson.name}"', f'fingerprint: "{lesson.fingerprint}"']
    for name, m in own.items():
        lines.append(f"{name}:")
        lines += ["  - [" + ", ".join(f"{x:.4f}" for x in row) + "]" for row in m]
    sheet = write(tmp_path, "\n".join(lines) + "\n", "ann.yaml")
    report = grade(d, read_sheet(sheet, d))
    wrong = {(g.step.name, g.i, g.j) for g in report.cells if g.verdict == "wrong"}
    assert wrong == {("Q", 0, 0), ("Q", 1, 0), ("Q", 2, 0)}  # b_Q = [0.5, 0]: column 1 only
    assert all(
        g.slip is not None and g.slip.name == "forgot-bias"
        for g in report.cells
        if g.verdict == "wrong"
    )
    assert {g.verdict for g in report.cells if g.step.name != "Q"} <= {"correct", "follow-through"}


@pytest.mark.parametrize(
    ("text", "at", "message"),
    [
        (BASE + "b_Q: [1, 2, 3]\n", "b_Q", "b_Q has 3 entries, but W_Q has 2 columns; b_Q needs"),
        (BASE + "b_V: [[1, 2]]\n", "b_V", "b_V should be one row of numbers, added to every row"),
        (BASE + "b_K: 3\n", "b_K", "b_K should be one row of numbers"),
        (BASE + "b_K: [1, x]\n", "b_K", "b_K row 1, column 2: found 'x', expected a number"),
        (BASE + "b_O: [1, 2]\n", "b_O", "b_O is added to the output projection concat · W_O, but"),
        (TWO_HEADS + "b_Q: [1, 1]\n", "b_Q", "b_Q given at the top level and also 'heads'"),
        (
            TWO_HEADS.replace("b_O: [0.5, -0.5]", "b_O: [1]"),
            "b_O",
            "b_O has 1 entry, but W_O has 2",
        ),
    ],
    ids=["wide", "matrix", "scalar", "word", "no-W_O", "top-and-heads", "b_O-short"],
)
def test_check_says_where_a_bias_is_wrong(
    run, tmp_path: Path, text: str, at: str, message: str
) -> None:  # type: ignore[no-untyped-def]
    path = write(tmp_path, text)
    result = run("check", str(path))
    assert result.exit_code == 1, result.output
    line = next(k for k, row in enumerate(text.splitlines(), 1) if row.startswith(f"{at}:"))
    col = 1 if "top level" in message else len(at) + 3  # (at the key, as for W_Q)
    if "found 'x'" in message:
        col = text.splitlines()[line - 1].index("x") + 1  # at the entry itself
    assert f"{path}:{line}:{col}: {message}" in result.output


def test_a_head_bias_of_the_wrong_width_is_said_at_its_line(run, tmp_path: Path) -> None:
    text = TWO_HEADS.replace("    b_K: [-1, 0.25]", "    b_K: [-1, 0.25, 2]")
    result = run("check", str(write(tmp_path, text)))
    line = text.splitlines().index("    b_K: [-1, 0.25, 2]") + 1
    assert f":{line}:10: b_K of head 2 has 3 entries, but W_K has 2 columns" in result.output


def test_grouped_heads_take_their_groups_biases(tmp_path: Path) -> None:
    text = """title: grouped with biases
tokens: [a, b, c]
X: [[1, 0], [0, 1], [1, 1]]
kv_groups: 1
heads:
  - W_Q: [[1, 0], [0, 1]]
    b_Q: [1, 0]
  - W_Q: [[0, 1], [1, 0]]
kv_heads:
  - W_K: [[1, 1], [0, 1]]
    W_V: [[1, 0], [0, 2]]
    b_K: [0, -1]
    b_V: [0.5, 0.5]
"""
    lesson = load_lesson(write(tmp_path, text))
    assert [h.b_K for h in lesson.heads] == [((0, 1), (-1, 1))] * 2
    d = derive(lesson)
    for (name, h), want in reference.attention(lesson).items():
        got = np.array([[c.value for c in row] for row in d.step(name, h).cells])
        np.testing.assert_allclose(got, want, rtol=1e-12, err_msg=f"{name} {h}")


def test_q_k_v_given_refuse_a_bias_at_its_line(run, tmp_path: Path) -> None:
    text = "title: qkv\ntokens: [a, b]\nQ: [[1, 0], [0, 1]]\nK: [[1, 0], [0, 1]]\n"
    text += "V: [[1, 0], [0, 1]]\nb_Q: [1, 0]\n"
    result = run("check", str(write(tmp_path, text)))
    assert result.exit_code == 1
    assert ":6:6: Q, K and V are given, so there is no X · W for a bias" in result.output


def test_a_lesson_without_biases_keeps_its_fingerprint() -> None:
    assert load_lesson(LESSONS / "cats-chase-mice.yaml").fingerprint == "2cd71fbe"


# torch packs every head into one d_model × d_model projection: W_O square, every bias given
TORCH_LESSON = (
    TWO_HEADS.replace("title: two heads with biases", "title: as a torch layer has them")
    .replace("    b_V: [1, -1]\n", "    b_K: [0, 0.25]\n    b_V: [1, -1]\n")
    .replace("    b_K: [-1, 0.25]\n", "    b_Q: [0, 0]\n    b_K: [-1, 0.25]\n    b_V: [0, 0.5]\n")
    .replace(
        "W_O: [[1, 0], [0, 1], [1, 1], [0, 2]]",
        "W_O: " + str([[1, 0, 0, 1], [0, 1, 0, 0], [1, 1, 0, 0], [0, 2, 1, 0]]),
    )
    .replace("b_O: [0.5, -0.5]", "b_O: [0.5, -0.5, 0, 1]")
)


def test_torch_multihead_attention_with_bias_agrees(tmp_path: Path) -> None:
    """nn.MultiheadAttention(bias=True), the lesson's weights set in: its packed in-projection
    (rows of W_Q.T, then W_K.T, then W_V.T, used as x @ W.T), in_proj_bias, out_proj, and its
    √head_dim scaling give the lesson's output."""
    nn = pytest.importorskip("torch.nn", reason="torch is not installed (pip install torch)")
    import torch as t

    lesson = load_lesson(write(tmp_path, TORCH_LESSON))
    d = derive(lesson)

    def arr(m) -> t.Tensor:  # type: ignore[no-untyped-def]
        return t.tensor([[p / q for p, q in row] for row in m], dtype=t.float64)

    def cat(key: str) -> t.Tensor:  # every head's W side by side: (d_model, heads·d)
        return t.cat([arr(getattr(h, key)) for h in lesson.heads], dim=1)

    def bias(key: str) -> t.Tensor:
        return t.cat([arr((getattr(h, key),))[0] for h in lesson.heads])

    E = cat("W_Q").shape[1]
    mha = nn.MultiheadAttention(E, len(lesson.heads), bias=True, dtype=t.float64)
    with t.no_grad():
        mha.in_proj_weight.copy_(t.cat([cat("W_Q").T, cat("W_K").T, cat("W_V").T]))
        mha.in_proj_bias.copy_(t.cat([bias("b_Q"), bias("b_K"), bias("b_V")]))
        mha.out_proj.weight.copy_(arr(lesson.W_O).T)
        mha.out_proj.bias.copy_(arr((lesson.b_O,))[0])
    x = arr(lesson.X)[:, None, :]  # (N, batch 1, d_model): batch_first=False
    out, _ = mha(x, x, x, need_weights=False)
    want = np.array([[c.value for c in row] for row in d.step("output").cells])
    np.testing.assert_allclose(out[:, 0, :].detach().numpy(), want, rtol=1e-12)


def test_the_lesson_writer_keeps_biases_and_the_scale() -> None:
    """What the explorer saves (and new writes): the biases and the scale come back as read."""
    from tutor.core.lessonfile import load_lesson_text
    from tutor.text.lessonyaml import lesson_yaml

    for text in (BASE + BIASES + "scale: 5/2\n", TWO_HEADS + "notes:\n  Q: biased\n"):
        lesson = load_lesson_text(text, "x.yaml", "x")
        again = load_lesson_text(lesson_yaml(lesson, "attn-tutor explore x", "x.yaml"), "y", "x")
        assert again.heads == lesson.heads and again.b_O == lesson.b_O
        assert again.scale_by == lesson.scale_by and again.fingerprint == lesson.fingerprint
