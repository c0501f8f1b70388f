"""From hand to code (issue 29): ``attn-tutor code`` prints a NumPy program that reproduces the
lesson, checked by running it against the exact engine for every bundled lesson and random
lessons of every kind; ``attn-tutor check-code`` runs a student's file (correct, each classic
slip, one that raises, loops, prints or names its function otherwise)."""

from __future__ import annotations

import contextlib
import io
import random

import numpy as np
import pytest

from tests import lessongen
from tests.conftest import FIXTURES, bundled_lessons
from tutor.core.engine import derive
from tutor.core.lessonfile import load_lesson
from tutor.export.code import variables

CODE = FIXTURES / "code"
# each classic slip: fixtures/code/good.py with one line changed, as a student would get it wrong
SLIPPED = {
    "not_scaled.py": [("scores / np.sqrt(K.shape[1])", "scores")],
    "divided_by_dk.py": [("scores / np.sqrt(K.shape[1])", "scores / K.shape[1]")],
    "softmax_column.py": [("axis=1, keepdims", "axis=0, keepdims")],
    "k_not_transposed.py": [("scores = Q @ K.T", "scores = Q @ K")],
    "mask_after_softmax.py": [
        ("        scaled = np.where(mask, scaled, -np.inf)\n", "        pass\n"),
        ("    weights = e / e.sum(axis=1, keepdims=True)\n",
         "    weights = e / e.sum(axis=1, keepdims=True)\n"
         "    if mask is not None:\n        weights = np.where(mask, weights, 0.0)\n"),
    ],
}  # fmt: skip


@pytest.fixture(scope="module")
def code_dir(tmp_path_factory):  # type: ignore[no-untyped-def]
    """fixtures/code, and each slipped copy of good.py made from it."""
    folder = tmp_path_factory.mktemp("code")
    good = (CODE / "good.py").read_text()
    for f in CODE.glob("*.py"):
        (folder / f.name).write_text(f.read_text())
    for name, changes in SLIPPED.items():
        text = good
        for old, new in changes:
            assert old in text, (name, old)
            text = text.replace(old, new)
        (folder / name).write_text(text)
    return folder


def _run_program(source: str) -> dict:  # type: ignore[type-arg]
    space: dict = {}  # type: ignore[type-arg]
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(source, "<attn-tutor code>", "exec"), space)  # our own generated program
    return space


def _agrees(d, space) -> list[str]:  # type: ignore[no-untyped-def]
    bad = []
    for name, step in variables(d).items():
        want = np.array([[float(c.approx) for c in row] for row in step.cells])
        got = np.asarray(space[name], dtype=np.float64)
        if got.shape != want.shape or not np.allclose(got, want, rtol=1e-9, atol=1e-12):
            bad.append(name)
    return bad


@pytest.mark.parametrize("path", bundled_lessons(), ids=lambda p: p.stem)
def test_the_program_reproduces_every_bundled_lesson(run, path) -> None:  # type: ignore[no-untyped-def]
    result = run("code", str(path))
    assert result.exit_code == 0, result.stderr
    d = derive(load_lesson(path))
    assert _agrees(d, _run_program(result.stdout)) == []


@pytest.mark.parametrize("kind", lessongen.KINDS)
def test_the_program_reproduces_random_lessons_of_every_kind(run, tmp_path, kind) -> None:  # type: ignore[no-untyped-def]
    for seed in range(3):
        path = tmp_path / f"{kind}{seed}.yaml"
        path.write_text(lessongen.kind_text(random.Random(seed), kind))
        result = run("code", str(path))
        assert result.exit_code == 0, result.stderr
        assert _agrees(derive(load_lesson(path)), _run_program(result.stdout)) == []


def test_the_program_reads_like_the_formula(run) -> None:  # type: ignore[no-untyped-def]
    text = run("code", "cats-chase-mice").stdout
    for line in ("Q = X @ W_Q", "scores = Q @ K.T", "scaled = scores / np.sqrt(2)",
                 "weights = softmax(scaled)", "Z = weights @ V"):  # fmt: skip
        assert line in text


@pytest.fixture
def check(run, code_dir):  # type: ignore[no-untyped-def]
    def go(lesson: str, name: str, *more: str):  # type: ignore[no-untyped-def]
        return run("check-code", lesson, str(code_dir / name), *more)

    return go


def test_a_correct_function_passes_every_step(check) -> None:  # type: ignore[no-untyped-def]
    for lesson in ("cats-chase-mice", "the-cake-causal", "the-cake-two-heads", "the-cake-grouped"):
        result = check(lesson, "good.py")
        assert result.exit_code == 0, result.output
        assert "Every step your function returns matches the lesson." in result.stdout
        assert "the student's own print" in result.stdout  # shown apart, as what it printed


@pytest.mark.parametrize(
    ("lesson", "name", "slip"),
    [
        ("cats-chase-mice", "not_scaled.py", "not-scaled"),
        ("cats-chase-mice", "divided_by_dk.py", "divided-by-dk"),
        ("cats-chase-mice", "softmax_column.py", "softmax-column"),
        ("the-cake-causal", "mask_after_softmax.py", "mask-after-softmax"),
        ("the-cake-causal", "not_scaled.py", "not-scaled"),
    ],
)
def test_each_classic_slip_is_named_at_its_first_cell(check, lesson, name, slip) -> None:  # type: ignore[no-untyped-def]
    result = check(lesson, name)
    assert result.exit_code == 1
    assert f"({slip})" in result.stdout
    assert "your code gives" in result.stdout


def test_k_instead_of_k_transposed_is_named(run, tmp_path, code_dir) -> None:  # type: ignore[no-untyped-def]
    # Q @ K has the scores' shape only when d_k = N: three tokens, d_k = 3
    path = tmp_path / "square.yaml"
    path.write_text(
        "title: Square\ntokens: [a, b, c]\nX: [[1, 0, 2], [0, 1, 1], [1, 1, 0]]\n"
        "W_Q: [[1, 0, 1], [0, 1, 0], [1, 1, 0]]\nW_K: [[0, 1, 0], [1, 0, 1], [1, 0, 0]]\n"
        "W_V: [[1, 0], [0, 1], [1, 1]]\n"
    )
    result = run("check-code", str(path), str(code_dir / "k_not_transposed.py"))
    assert result.exit_code == 1 and "(k-not-transposed)" in result.stdout


@pytest.mark.parametrize(
    ("name", "more", "says"),
    [
        ("raises.py", (), "your code raised ValueError"),
        ("loops.py", ("--timeout", "2"), "did not finish within 2 s"),
        ("other_name.py", (), "has no function attention() (functions found: attn)"),
    ],
)
def test_a_file_that_cannot_answer_says_why(check, name, more, says) -> None:  # type: ignore[no-untyped-def]
    result = check("cats-chase-mice", name, *more)
    assert result.exit_code == 1
    assert says in result.stdout
    assert "Traceback" not in result.output


def test_another_function_name_is_chosen_with_function(check) -> None:  # type: ignore[no-untyped-def]
    result = check("cats-chase-mice", "other_name.py", "--function", "attn")
    assert result.exit_code == 1 and "Z has shape (3, 4); the lesson's is (3, 2)" in result.stdout


def test_what_is_not_a_python_file_or_not_checkable_is_refused(run, check, tmp_path) -> None:  # type: ignore[no-untyped-def]
    result = run("check-code", "cats-chase-mice", str(tmp_path / "missing.py"))
    assert result.exit_code == 1 and "expected a Python file (.py)" in result.stderr
    result = check("ha-ha-ha-rope", "good.py")
    assert result.exit_code == 1 and "rotated (RoPE)" in result.stderr
    assert "attn-tutor code ha-ha-ha-rope" in result.stderr


def _json_values(run, path) -> dict[str, np.ndarray]:  # type: ignore[no-untyped-def]
    """Every step's values as ``walk --json`` gives them, by the program's variable name."""
    import json

    result = run("walk", str(path), "--json")
    assert result.exit_code == 0, result.stderr
    steps = json.loads(result.stdout)["steps"]
    named = {}
    for s in steps:
        name = s["name"] if s["head"] is None else f"{s['name']}_{s['head']}"
        named[name] = np.array(s["value"], dtype=np.float64)
    return named


@pytest.mark.parametrize("count", [1, 2, 3])
@pytest.mark.parametrize("kind", ["single", "causal", "heads"])
def test_the_program_of_a_decoding_lesson_equals_walk_json(run, tmp_path, kind, count) -> None:  # type: ignore[no-untyped-def]
    """Several new tokens at once: the program's masked_new is the causal mask moved right by
    the cache (issue 37: it was written without the offset), and every variable equals what
    ``walk --json`` prints for the step."""
    for seed in range(3):
        rng = random.Random(seed)
        text = lessongen.lesson_text(
            rng, rng.randint(2, 3), 3, 2, 2, "id",
            heads=2 if kind == "heads" else 0, causal=kind != "single", w_o=kind == "heads",
        )  # fmt: skip
        path = tmp_path / f"{kind}{count}{seed}.yaml"
        path.write_text(text + lessongen.next_list(rng, 3, count, "id"))
        program = run("code", str(path))
        assert program.exit_code == 0, program.stderr
        space = _run_program(program.stdout)
        shown = _json_values(run, path)
        assert set(shown) <= set(space)
        for name, want in shown.items():
            got = np.asarray(space[name], dtype=np.float64)
            got = np.where(np.isneginf(got), np.nan, got)  # the JSON writes a masked score as null
            assert got.shape == want.shape, name
            assert np.allclose(got, want, rtol=1e-9, atol=1e-12, equal_nan=True), (name, got, want)
        if count > 1:
            assert "k=" + str(1 + len(derive(load_lesson(path)).lesson.tokens)) in program.stdout


def test_the_two_token_decode_of_the_issue_writes_the_shifted_mask(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A causal lesson of 3 tokens decoding 2 more: new token s sees the 3 cached keys and the
    new ones up to itself, so the mask's diagonal starts 3 columns to the right."""
    text = lessongen.lesson_text(random.Random(5), 3, 3, 2, 2, "i", causal=True)
    path = tmp_path / "two.yaml"
    path.write_text(text + lessongen.next_list(random.Random(6), 3, 2, "i"))
    out = run("code", str(path)).stdout
    assert "np.triu(np.ones((2, 5), dtype=bool), k=4)" in out
    assert "np.triu(np.ones((3, 3), dtype=bool), k=1)" in out
