"""Issue 28: the six-problem exercise set in fixtures/exercises (scaled dot-product, causal,
multi-head, RoPE in radians, KV-cache decoding, MQA/GQA), and a seventh decoding three tokens
in a row (next: as a list), each through every command and against numpy, and each showing
what its problem teaches."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pytest
import yaml

from tests import students
from tests.conftest import FIXTURES
from tests.test_engine import assert_matches_numpy
from tutor.core.engine import derive
from tutor.core.lessonfile import load_lesson

EXERCISES = sorted((FIXTURES / "exercises").glob("*.yaml"))
# what each problem is there to show, as the walk (80 columns, no colour) writes it
SHOWS = {
    "1-scaled-dot-product": ["Q, the given queries", "d_k = 4, so every score is simply halved"],
    "2-causal": ["masked: the causal mask", "−∞", "Row we keeps one score"],
    "3-multi-head": ["Head 1: adjective to noun", "output = concat · W_O", "concat ="],
    "4-rope-radians": ["cos(1)", "RoPE's point: scores[three, two]", "depends only on n − m = −1"],
    "5-kv-cache": ["K_cache", "z_new"],
    "6-grouped-heads": ["▸ GQA G=2", "W_K+W_V ×24", "W_Q is the same in every row"],
    "7-kv-cache-three-steps": [
        "then 3 decoding steps: the, quiet, town arrive one after another",
        "masked_new: each new token sees only what came before it",
        "the sees the 3 cached tokens and itself",
        "step 3, town: 5 rows of K and V reused",
        "in all, 3 steps: 12 rows reused",
        "grows like t²",
    ],
}


def test_there_is_one_for_each_problem() -> None:
    assert [p.stem for p in EXERCISES] == sorted(SHOWS)


@pytest.mark.parametrize("path", EXERCISES, ids=lambda p: p.stem)
def test_each_exercise_agrees_with_numpy(path: Path) -> None:
    assert_matches_numpy(path)


def test_the_first_exercise_by_numpy_alone() -> None:
    Q = np.array([[2, 0, 1, 1], [0, 1, 0, 1], [1, 1, 1, 1]], dtype=float)
    K = np.array([[1, 1, 0, 0], [0, 2, 1, 1], [1, 0, 1, 0]], dtype=float)
    V = np.array([[1, 0], [0, 1], [2, 2]], dtype=float)
    s = Q @ K.T / 2
    w = np.exp(s) / np.exp(s).sum(axis=1, keepdims=True)
    d = derive(load_lesson(EXERCISES[0]))
    got = np.array([[c.value for c in row] for row in d.step("Z").cells])
    np.testing.assert_allclose(got, w @ V, rtol=1e-12)


@pytest.mark.parametrize("path", EXERCISES, ids=lambda p: p.stem)
def test_each_exercise_goes_through_every_command(run, path: Path) -> None:  # type: ignore[no-untyped-def]
    from tests.test_schema import errors_of

    assert errors_of(yaml.safe_load(path.read_text())) == []
    check = run("check", str(path))
    assert check.exit_code == 0 and "error" not in check.stdout
    walk = run("walk", str(path), env={"COLUMNS": "80"})
    assert walk.exit_code == 0 and max(len(x) for x in walk.stdout.splitlines()) <= 80
    flat = " ".join(walk.stdout.split())
    for shown in SHOWS[path.stem]:
        assert shown in flat, shown
    doc = json.loads(run("walk", str(path), "--json", "--exact").stdout)
    assert doc["steps"]
    for fmt in ("md", "tex", "sheet"):
        result = run("export", str(path), "--format", fmt, "-o", "-")
        assert result.exit_code == 0 and "Traceback" not in result.output, fmt
    quiz = run("quiz", str(path), "--count", "1", "--seed", "1", input="show\n")
    assert quiz.exit_code == 0 and "Traceback" not in quiz.output


@pytest.mark.parametrize("path", EXERCISES, ids=lambda p: p.stem)
def test_an_honest_answer_sheet_gets_full_marks(run, tmp_path: Path, path: Path) -> None:  # type: ignore[no-untyped-def]
    rep = students.honest_report(run, path, tmp_path)
    assert rep["score"] == rep["total"] > 0


def test_the_json_carries_what_the_problems_compare(run) -> None:  # type: ignore[no-untyped-def]
    by = {p.stem: p for p in EXERCISES}
    rope = json.loads(run("walk", str(by["4-rope-radians"]), "--json").stdout)["rope"]
    assert rope["theta"][0]["radians"] == "1" and rope["angles"]["three"][0]["radians"] == "2"
    kv = json.loads(run("walk", str(by["6-grouped-heads"]), "--json").stdout)["kv"]
    rows = {r["attention"]: r for r in kv["compared"]}
    # d_model 2, d_k = d_v = 2: a K/V head has 2×2 + 2×2 = 8 weights and caches 4 numbers
    assert (rows["MHA"]["kv_weights"], rows["GQA"]["kv_weights"], rows["MQA"]["kv_weights"]) == (
        32,
        16,
        8,
    )
    assert rows["GQA"]["this_lesson"] and rows["GQA"]["kv_cache_per_token_all_layers"] == 2 * 4 * 24
    assert kv["W_Q_weights"] == 4 * 2 * 2
    given = json.loads(run("walk", str(by["1-scaled-dot-product"]), "--json").stdout)
    assert given["given"] == ["Q", "K", "V"]


def test_the_three_decoding_steps_by_numpy_alone() -> None:
    """Exercise 7 worked as a decoder does, one token at a time in numpy: each new token's
    q against the keys so far (the cache plus its own), then its k and v join the cache."""
    path = FIXTURES / "exercises" / "7-kv-cache-three-steps.yaml"
    lesson = load_lesson(path)
    X = np.array([[1, 1], [0, 2], [2, 0]], dtype=float)  # the file's numbers, typed again
    W_Q = np.array([[1, 1], [0, 1]], dtype=float)
    W_K = np.array([[1, 0], [1, 1]], dtype=float)
    W_V = np.array([[1, 2], [0, 1]], dtype=float)
    news = np.array([[0, 1], [1, 0], [1, 2]], dtype=float)
    K, V = X @ W_K, X @ W_V  # the cache after the lesson's own three tokens
    zs = []
    for x in news:  # one step each: the cache grows by a row
        K, V = np.vstack([K, x @ W_K]), np.vstack([V, x @ W_V])
        s = (x @ W_Q) @ K.T / np.sqrt(2)
        w = np.exp(s) / np.exp(s).sum()
        zs.append(w @ V)
    d = derive(lesson)
    got = np.array([[c.value for c in row] for row in d.step("z_new").cells])
    np.testing.assert_allclose(got, np.array(zs), rtol=1e-12)
    assert np.array([[c.value for c in r] for r in d.step("K_cache").cells]) == pytest.approx(K)


def test_the_json_counts_every_decoding_step(run) -> None:  # type: ignore[no-untyped-def]
    path = FIXTURES / "exercises" / "7-kv-cache-three-steps.yaml"
    nxt = json.loads(run("walk", str(path), "--json").stdout)["next"]
    assert nxt["tokens"] == ["the", "quiet", "town"]
    assert [s["reused_rows"] for s in nxt["steps"]] == [3, 4, 5]
    cached = [s["multiplications"]["cached"] for s in nxt["steps"]]
    full = [s["multiplications"]["full"] for s in nxt["steps"]]
    # with the cache each step grows by a constant (one more key and value: d_k + d_v = 4);
    # working again grows by more each time (every pair of tokens)
    assert [b - a for a, b in itertools.pairwise(cached)] == [4, 4]
    steps_up = [b - a for a, b in itertools.pairwise(full)]
    assert steps_up[1] > steps_up[0]
    assert nxt["multiplications"] == {
        "cached": sum(cached),
        "full": sum(full),
        "saved": sum(full) - sum(cached),
    }
