"""Causal mask and multi-head attention: agreement with numpy, the JSON contract, the walk."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest

from tests import lessongen, reference
from tests.conftest import LESSONS
from tests.test_engine import assert_matches_numpy
from tests.test_walk import check_golden
from tutor.core.engine import derive
from tutor.core.lessonfile import load_lesson


def lesson(name: str):  # type: ignore[no-untyped-def]
    return derive(load_lesson(LESSONS / f"{name}.yaml", name=name))


@pytest.mark.parametrize("name", ["the-cake-causal", "the-cake-two-heads"])
def test_new_bundled_lessons_agree_with_numpy(name: str) -> None:
    assert_matches_numpy(LESSONS / f"{name}.yaml")


def random_heads_and_masks(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [
        lessongen.lesson_text(
            rng,
            rng.randint(1, 6),
            rng.randint(1, 4),
            rng.randint(1, 3),
            rng.randint(1, 3),
            rng.choice(["i", "id", "idf"]),
            heads=rng.choice([0, 1, 2, 3, 4]),
            causal=True if k % 2 else rng.random() < 0.5,
            w_o=rng.random() < 0.8,
        )
        for k in range(count)
    ]


@pytest.mark.parametrize("text", random_heads_and_masks(80, seed=3))
def test_random_masked_multi_head_lessons_agree_with_numpy(tmp_path: Path, text: str) -> None:
    path = tmp_path / "random.yaml"
    path.write_text(text)
    assert_matches_numpy(path)


def test_causal_weights_above_the_diagonal_are_exactly_zero() -> None:
    d = lesson("the-cake-causal")
    masked, weights = d.step("masked"), d.step("weights")
    for i, row in enumerate(weights.cells):
        for j, cell in enumerate(row):
            assert masked.cells[i][j].masked == (j > i)
            if j > i:
                assert cell.q == 0
    assert weights.cells[0][0].q == 1  # the first token can only attend to itself


def test_it_still_finds_cake_under_the_mask() -> None:
    d = lesson("the-cake-causal")
    it = d.lesson.labels.index("it")
    row = [c.value for c in d.step("weights").cells[it]]
    assert d.lesson.labels[int(np.argmax(row))] == "cake"


def test_the_two_heads_attend_to_different_things() -> None:
    d = lesson("the-cake-two-heads")
    labels = d.lesson.labels

    def favourite(head: int, token: str) -> tuple[str, float]:
        row = [c.value for c in d.step("weights", head).cells[labels.index(token)]]
        return labels[int(np.argmax(row))], max(row)

    assert favourite(1, "it") == ("cake", pytest.approx(0.91, abs=0.01))
    assert favourite(2, "ate")[0] == "cake" and favourite(2, "ate")[1] > 0.9
    # and each head ignores the other's question: it is even-handed in head 2, ate in head 1
    assert favourite(2, "it")[1] < 0.2
    assert favourite(1, "ate")[1] < 0.2


def test_concat_and_output_shapes() -> None:
    d = lesson("the-cake-two-heads")
    ref = reference.attention(d.lesson)
    assert d.step("concat").shape == (8, 4)
    assert d.step("concat").cols == ("h1.1", "h1.2", "h2.1", "h2.2")
    assert d.step("output").shape == ref[("output", None)].shape == (8, 4)


def test_json_heads_and_masked_nulls(run) -> None:  # type: ignore[no-untyped-def]
    data = json.loads(run("walk", "the-cake-two-heads", "--json").stdout)
    heads = {(s["name"], s["head"]) for s in data["steps"]}
    assert ("Z", 1) in heads and ("Z", 2) in heads
    assert ("concat", None) in heads and ("output", None) in heads and ("X", None) in heads
    one = json.loads(run("walk", "the-cake-two-heads", "--json", "--head", "2").stdout)
    assert {s["head"] for s in one["steps"]} == {None, 2}
    masked = json.loads(run("walk", "the-cake-causal", "--json", "--exact", "-s", "masked").stdout)
    (step,) = masked["steps"]
    assert step["value"][0][1] is None and step["exact"][0][1] == "-oo"
    assert step["value"][1][0] == 0.0


def test_walk_shows_mask_and_heads(run) -> None:  # type: ignore[no-untyped-def]
    out = run("walk", "the-cake-causal", "--step", "masked,weights").stdout
    assert "must not peek" in out
    assert 'softmax of the row "it"' in out  # the lesson's focus: a row that hides keys
    assert "Masked keys (was, delicious) have e^(−∞) = 0" in out
    out = run("walk", "the-cake-causal", "--step", "weights", "--row", "was").stdout
    assert "Masked keys (delicious) have e^(−∞) = 0" in out
    out = run("walk", "the-cake-two-heads", "--step", "concat,output").stdout
    assert "h × d_v = 2 × 2 = 4 columns, so 8 × 4" in out
    assert "8 heads of 4 columns would give 32" in out
    assert "concat[it] = [head1.Z[it] | head2.Z[it]]" in out  # the lesson's focus: it
    assert 'output[it, 1] = row "it" of concat · column 1 of W_O' in out
    two = run("walk", "the-cake-two-heads", "--head", "2", "--step", "Z").stdout
    assert "Head 2: action looks for its object" in two and "Head 1" not in two


def test_walk_golden_two_heads(run) -> None:  # type: ignore[no-untyped-def]
    result = run("walk", "the-cake-two-heads", "--step", "weights,concat,output")
    assert result.exit_code == 0, result.stderr
    check_golden("walk-the-cake-two-heads.txt", result.stdout)


# ---------------------------------------------------------------------------------------------
# --pause


def test_pause_without_a_terminal_runs_straight_through(run) -> None:  # type: ignore[no-untyped-def]
    result = run("walk", "cats-chase-mice", "--pause")
    assert result.exit_code == 0
    assert "Z = weights · V" in result.stdout
    assert "Enter" not in result.stdout


def test_pause_in_a_real_terminal() -> None:
    pexpect = pytest.importorskip("pexpect")
    import sys

    child = pexpect.spawn(
        sys.executable,
        ["-m", "tutor", "walk", "cats-chase-mice", "--pause", "--step", "Q,K,V"],
        env={"NO_COLOR": "1", "COLUMNS": "100", "TERM": "dumb", "PATH": "/usr/bin:/bin"},
        cwd=str(LESSONS.parent),
        encoding="utf-8",
        timeout=20,
    )
    child.expect("Enter: next")
    assert "K = X · W_K" not in child.before
    child.sendline("")
    child.expect("K = X · W_K")
    child.expect("Enter: next")
    child.sendline("q")
    child.expect(pexpect.EOF)
    assert "V = X · W_V" not in child.before
    child.close()
    assert child.exitstatus == 0
