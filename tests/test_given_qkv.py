"""Issue 28, item 1: lessons that give Q, K and V (all three, or per head) start at the scores;
walk, JSON, quiz, exports, sheet and grade, each against numpy computed from the given Q, K, V."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest

from tests import lessongen, students
from tests.test_engine import assert_matches_numpy
from tutor.core.engine import derive
from tutor.core.errors import LessonError
from tutor.core.lessonfile import load_lesson

ONE = """title: the sun rises in the east
tokens: [sun, rises, east]
Q: [[1, 0], [0, 2], [1, 1]]
K: [[2, 1], [0, 1], [1, 0]]
V: [[1, 2], [3, 0], [0, 1]]
"""
TWO = """title: two heads, given
tokens: [red, fox, ran]
mask: causal
heads:
  - name: looks back
    Q: [[1, 0], [0, 1], [1, 1]]
    K: [[1, 1], [0, 1], [2, 0]]
    V: [[1, 0], [0, 1], [1, 1]]
  - Q: [[0, 1], [1, 0], [0, 2]]
    K: [[1, 0], [1, 1], [0, 1]]
    V: [[2, 0], [0, 2], [1, 0]]
W_O: [[1, 0], [0, 1], [1, 1], [0, 1]]
"""


def numpy_attention(Q, K, V, causal=False):  # type: ignore[no-untyped-def]
    """The textbook formula on the given matrices, nothing of the engine's."""
    Q, K, V = (np.array(m, dtype=np.float64) for m in (Q, K, V))
    scaled = Q @ K.T / np.sqrt(K.shape[1])
    if causal:
        scaled = np.where(np.triu(np.ones_like(scaled, dtype=bool), 1), -np.inf, scaled)
    e = np.exp(scaled - scaled.max(axis=1, keepdims=True))
    w = e / e.sum(axis=1, keepdims=True)
    return w, w @ V


def write(tmp_path: Path, text: str, name: str = "qkv.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def values(step) -> np.ndarray:  # type: ignore[no-untyped-def]
    return np.array([[c.value for c in row] for row in step.cells])


def test_one_head_starts_at_the_scores_and_agrees_with_numpy(tmp_path: Path) -> None:
    lesson = load_lesson(write(tmp_path, ONE))
    assert lesson.qkv and lesson.features == frozenset({"qkv"})
    d = derive(lesson)
    names = [s.name for s in d.steps]
    assert names == ["Q", "K", "V", "scores", "scaled", "weights", "Z"]
    assert all(s.given for s in d.steps[:3])
    w, z = numpy_attention(
        [[1, 0], [0, 2], [1, 1]], [[2, 1], [0, 1], [1, 0]], [[1, 2], [3, 0], [0, 1]]
    )
    np.testing.assert_allclose(values(d.step("weights")), w, rtol=1e-12)
    np.testing.assert_allclose(values(d.step("Z")), z, rtol=1e-12)
    assert_matches_numpy(lesson)


def test_heads_give_their_own_q_k_v_under_a_mask_with_w_o(tmp_path: Path) -> None:
    lesson = load_lesson(write(tmp_path, TWO))
    d = derive(lesson)
    assert lesson.heads[0].name == "looks back"
    zs = []
    for h, head in enumerate(lesson.heads, 1):
        mats = [[[p / q for p, q in row] for row in m] for m in (head.W_Q, head.W_K, head.W_V)]
        w, z = numpy_attention(*mats, causal=True)
        np.testing.assert_allclose(values(d.step("weights", h)), w, rtol=1e-12, atol=1e-15)
        zs.append(z)
    out = np.concatenate(zs, axis=1) @ np.array([[1, 0], [0, 1], [1, 1], [0, 1]])
    np.testing.assert_allclose(values(d.step("output")), out, rtol=1e-12)
    assert not any(s.name in ("X", "W_Q", "W_K", "W_V") for s in d.steps)


@pytest.mark.parametrize("seed", range(12))
def test_random_given_lessons_agree_with_numpy(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    heads = rng.choice([0, 2, 3])
    text = lessongen.qkv_lesson_text(
        rng,
        rng.randint(1, 5),
        rng.randint(1, 4),
        rng.randint(1, 3),
        heads=heads,
        causal=rng.random() < 0.5,
        w_o=heads > 0 and rng.random() < 0.5,
    )
    assert_matches_numpy(write(tmp_path, text))


def test_the_walk_shows_no_x_or_w(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    out = run("walk", str(write(tmp_path, ONE)), env={"COLUMNS": "80"}).stdout
    assert "N = 3 tokens (sun, rises, east) · Q, K, V given · d_k = 2 · d_v = 2" in out
    assert "Z = softmax(Q·Kᵀ / √d_k) · V,  with Q, K and V given" in out
    assert "Q, the given queries" in out and "scores = Q · Kᵀ" in out
    assert "Q = X" not in out and "W_Q (" not in out and "X (" not in out
    assert "d_model" not in out
    assert "scores[east, sun] = query of east · key of sun" in out


def test_json_marks_the_given_steps(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    doc = json.loads(run("walk", str(write(tmp_path, ONE)), "--json").stdout)
    assert doc["given"] == ["Q", "K", "V"]
    assert [s["name"] for s in doc["steps"]][:4] == ["Q", "K", "V", "scores"]
    assert doc["steps"][3]["value"] == [[2, 0, 1], [2, 2, 0], [3, 1, 1]]


def test_the_quiz_asks_from_the_scores_on(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = str(write(tmp_path, ONE))
    result = run("quiz", path, "--steps", "scores", "--count", "1", "--seed", "3", input="show\n")
    assert result.exit_code == 0 and "scores[" in result.stdout
    refused = run("quiz", path, "--steps", "Q", "--count", "1")
    assert refused.exit_code == 2 and "Traceback" not in refused.output


def test_exports_and_the_sheet_begin_at_the_scores(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = str(write(tmp_path, ONE))
    md = run("export", path, "--format", "md", "-o", "-").stdout
    assert "### Q, the given queries (3 × 2)" in md and "W_Q" not in md
    tex = run("export", path, "--format", "tex", "-o", "-").stdout
    assert r"$Q$, the queries" in tex and "X W_Q" not in tex
    sheet = run("export", path, "--format", "sheet", "-o", "-").stdout
    keys = [line.split(":")[0] for line in sheet.splitlines() if line and line[0].isalpha()]
    assert keys == [
        "lesson",
        "fingerprint",
        "student",
        "student_id",
        "scores",
        "scaled",
        "weights",
        "Z",
    ]


@pytest.mark.parametrize("text", [ONE, TWO], ids=["one", "two"])
def test_an_honest_sheet_gets_full_marks(run, tmp_path: Path, text: str) -> None:  # type: ignore[no-untyped-def]
    path = write(tmp_path, text)
    d = derive(load_lesson(path))
    for habit in students.HABITS:
        sheet = tmp_path / "sheet.yaml"
        sheet.write_text(students.sheet_text(d, students.Student(d, habit).work()))
        result = run("grade", str(path), str(sheet), "--json")
        assert result.exit_code == 0, result.stderr
        rep = json.loads(result.stdout)
        assert rep["score"] == rep["total"] > 0, habit
        assert {c["step"] for c in rep["cells"]} & {"Q", "K", "V"} == set()


BAD = {
    "missing-V": (
        ONE.replace("V: [[1, 2], [3, 0], [0, 1]]\n", ""),
        "1:1",
        "missing key 'V'; a lesson that gives Q",
    ),
    "with-X": (
        ONE + "X: [[1, 0], [0, 1], [1, 1]]\n",
        "6:1",
        "Q, K and V are given, so the lesson starts at the scores and X",
    ),
    "with-W_Q": (ONE + "W_Q: [[1, 0]]\n", "6:1", "and W_Q has no use"),
    "rows": (
        ONE.replace("Q: [[1, 0], [0, 2], [1, 1]]", "Q: [[1, 0], [0, 2]]"),
        "3:4",
        "Q has 2 rows, but tokens lists 3",
    ),
    "d_k": (
        ONE.replace("K: [[2, 1], [0, 1], [1, 0]]", "K: [[2], [0], [1]]"),
        "4:4",
        "K has 1 columns, but Q has 2",
    ),
    "positions": (
        ONE + "positions: sinusoidal\n",
        "6:12",
        "Q, K and V are given, so there is no X to add positions to",
    ),
    "next": (
        ONE + "next: {token: west, x: [1, 0]}\n",
        "6:7",
        "next: (one decoding step) makes the new token's q",
    ),
    "layers": (TWO + "layers: 4\n", "13:1", "but this lesson gives Q, K and V"),
    "top-and-heads": (
        TWO + "Q: [[1, 0], [0, 1], [1, 1]]\n",
        "13:1",
        "Q given at the top level and also 'heads'",
    ),
    "head-W": (
        TWO.replace("  - Q: [[0, 1]", "  - W_Q: [[1]]\n    Q: [[0, 1]"),
        "9:5",
        "unknown key 'W_Q' in head 2",
    ),
    "entry": (ONE.replace("[1, 1]]", "[1, x]]", 1), "3:25", "Q row 3, column 2: found 'x'"),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_a_bad_given_lesson_names_file_line_col(run, tmp_path: Path, name: str) -> None:  # type: ignore[no-untyped-def]
    text, where, fragment = BAD[name]
    path = write(tmp_path, text)
    with pytest.raises(LessonError) as err:
        load_lesson(path)
    found = [str(p) for p in err.value.problems]
    assert any(p.startswith(f"{path}:{where}: ") and fragment in p for p in found), found
    result = run("walk", str(path))
    assert result.exit_code == 1 and "Traceback" not in result.output


def test_variants_refuse_a_given_lesson(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    result = run(
        "variants", str(write(tmp_path, ONE)), "--count", "2", "--output", str(tmp_path / "v")
    )
    assert result.exit_code == 1 and "Q, K and V given" in result.stderr


def test_list_and_check_code_know_there_is_no_x(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = write(tmp_path, ONE, "sun.yaml")
    listed = run("list", "--lessons-dir", str(tmp_path)).stdout
    row = next(line for line in listed.splitlines() if line.startswith("sun "))
    assert row.split()[:5] == ["sun", "3", "-", "2", "2"]  # N, d_model, d_k, d_v
    program = tmp_path / "mine.py"
    assert run("code", str(path), "--output", str(program)).exit_code == 0
    result = run("check-code", str(path), str(program))
    assert result.exit_code == 1 and "it gives Q, K and V, not X and the W's" in result.stderr
