"""Lessons from arrays and from a real layer (issue 41, item 3): ``tutor.lesson_from_arrays``
writes every entry as an exact decimal at ``places`` and says how far that moves the output;
``tutor.lesson_from_torch`` reads a torch.nn.MultiheadAttention (skipped without torch)."""

from __future__ import annotations

import numpy as np
import pytest

import tutor
from tutor.core.errors import TutorError
from tutor.core.lessonfile import load_lesson_text

CATS = {
    "X": [[1, 0, 1, 0], [0, 2, 0, 1], [1, 1, 0, 0]],
    "W_Q": [[1, 0], [0, 1], [1, 0], [0, 1]],
    "W_K": [[0, 1], [1, 0], [1, 0], [0, 1]],
    "W_V": [[1, 0], [0, 1], [1, 1], [0, 0]],
}
TOKENS = ["cats", "chase", "mice"]


def test_whole_arrays_make_the_same_numbers_and_move_nothing() -> None:
    made = tutor.lesson_from_arrays(CATS, TOKENS, places=2)
    assert made.drift < 1e-15
    assert made.lesson.X[1] == ((0, 1), (2, 1), (0, 1), (1, 1))
    again = load_lesson_text(made.text, "again.yaml", "again")  # the YAML is a valid lesson
    assert again.fingerprint == made.lesson.fingerprint


def test_entries_are_rounded_half_away_from_zero_and_the_drift_is_said() -> None:
    arrays = dict(CATS, b_Q=[0.125, -0.125], W_V=np.array(CATS["W_V"]) * 0.3333)
    made = tutor.lesson_from_arrays(arrays, TOKENS, places=2)
    assert made.lesson.heads[0].b_Q == ((13, 100), (-13, 100))  # 0.125 → 0.13, −0.125 → −0.13
    assert made.lesson.heads[0].W_V[0][0] == (33, 100)
    assert 0 < made.drift < 0.02  # the rounded V moves Z by about a hundredth at most
    assert tutor.lesson_from_arrays(arrays, TOKENS, places=6).drift < 1e-6


def test_heads_are_numbered_and_w_o_with_b_o_follows() -> None:
    rng = np.random.default_rng(1)
    arrays = {"X": rng.normal(size=(3, 4))}
    for h in (1, 2):
        for w in ("W_Q", "W_K", "W_V"):
            arrays[f"{w}.{h}"] = rng.normal(size=(4, 2))
        arrays[f"b_K.{h}"] = rng.normal(size=2)
    arrays |= {"W_O": rng.normal(size=(4, 3)), "b_O": rng.normal(size=3)}
    made = tutor.lesson_from_arrays(arrays, TOKENS, places=5, mask="causal")
    assert len(made.lesson.heads) == 2 and made.lesson.b_O is not None
    assert made.drift < 1e-3


@pytest.mark.parametrize(
    ("arrays", "places", "message"),
    [
        ({k: v for k, v in CATS.items() if k != "W_V"}, 2, "W_V is missing"),
        ({"X": CATS["X"], "W_Q.2": CATS["W_Q"]}, 2, "the heads are numbered [2]"),
        ({"W_Q": CATS["W_Q"]}, 2, "no X among the arrays"),
        ({"X": CATS["X"]}, 2, "no W_Q among the arrays; name them X, W_Q"),
        (CATS, 9, "places is 9; expected 0 to 8"),
        (dict(CATS, X=[[1, 0, float("nan"), 0]] * 3), 2, "an array holds nan"),
    ],
)
def test_bad_arrays_are_refused_in_words(arrays, places: int, message: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(TutorError) as err:
        tutor.lesson_from_arrays(arrays, TOKENS, places=places)
    assert message in str(err.value)


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("bias", [True, False])
def test_a_torch_layer_becomes_a_lesson_that_reproduces_it(batch_first: bool, bias: bool) -> None:
    torch = pytest.importorskip("torch", reason="torch is not installed (pip install torch)")
    torch.manual_seed(0)
    layer = torch.nn.MultiheadAttention(4, 2, bias=bias, batch_first=batch_first)
    x = torch.randn(3, 4)
    before = layer.in_proj_weight.dtype
    made = tutor.lesson_from_torch(layer, x, TOKENS, places=4)
    assert layer.in_proj_weight.dtype == before  # the caller's layer is left as it was
    assert made.drift < 1e-3  # the walk's output agrees with the layer's to 3 places
    assert (made.lesson.heads[0].b_Q is not None) == bias
    load_lesson_text(made.text, "layer.yaml", "layer")


def test_new_from_an_npz_writes_the_lesson_and_says_the_drift(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    npz = tmp_path / "cats.npz"
    np.savez(npz, **{k: np.array(v, dtype=float) for k, v in CATS.items()}, b_Q=[0.125, -0.5])
    out = tmp_path / "cats-npz.yaml"
    result = run("new", "cats-npz", "--from", str(npz), "--places", "2", "-o", str(out))
    assert result.exit_code == 0, result.output
    assert "every entry at 2 places; rounding moves the output by at most" in result.output
    lesson = load_lesson_text(out.read_text(), str(out), "cats-npz")
    assert lesson.tokens == ("t1", "t2", "t3") and lesson.heads[0].b_Q == ((13, 100), (-1, 2))
    named = run("new", "c", "--from", str(npz), "--tokens", "cats chase mice", "-o", "-")
    assert "tokens: [cats, chase, mice]" in named.stdout


def test_new_from_refuses_what_is_not_an_npz_of_arrays(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    bad = tmp_path / "x.npz"
    bad.write_text("title: not arrays\n")
    result = run("new", "x", "--from", str(bad))
    assert result.exit_code == 1
    assert "it is not a NumPy .npz of plain arrays (numpy.savez makes one)" in result.output
    assert "Traceback" not in result.output
    np.savez(tmp_path / "two.npz", X=np.eye(2), W_Q=np.eye(2), W_K=np.eye(2), W_V=np.eye(2))
    short = run("new", "y", "--from", str(tmp_path / "two.npz"), "--tokens", "a b c")
    assert short.exit_code == 1 and "--tokens gives 3 words, but X in" in short.output
    assert run("new", "z").exit_code == 2  # neither --tokens nor --from: a usage error
