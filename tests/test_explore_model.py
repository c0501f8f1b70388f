"""The explorer's pure model: its variant derivation, edits, undo/redo, and what it marks."""

from __future__ import annotations

import random

import numpy as np
import pytest
import sympy

from tests import lessongen, reference
from tests.conftest import LESSONS, bundled_lessons
from tutor.core.engine import derive
from tutor.core.errors import AnswerError
from tutor.core.lessonfile import load_lesson
from tutor.explore.model import DOWN, UP, Explorer, Settings, factor_text
from tutor.text import format as fmt


def values(step) -> np.ndarray:  # type: ignore[no-untyped-def]
    return np.array([[c.value for c in row] for row in step.cells], dtype=np.float64)


def shown(step, places=6) -> list[list[str]]:  # type: ignore[no-untyped-def]
    return [[fmt.shown(c, step, places) for c in row] for row in step.cells]


@pytest.mark.parametrize("path", bundled_lessons(), ids=lambda p: p.stem)
def test_default_settings_work_the_lesson_as_the_engine_does(path) -> None:  # type: ignore[no-untyped-def]
    lesson = load_lesson(path)  # every kind: the explorer's derivation is the engine's
    ours = derive(lesson, Settings(mask=lesson.mask == "causal"))
    theirs = derive(lesson)
    assert [s.key for s in ours.steps] == [s.key for s in theirs.steps]
    for a, b in zip(ours.steps, theirs.steps, strict=True):
        assert shown(a) == shown(b), a.key


def test_default_settings_agree_with_the_engine_on_random_lessons(tmp_path) -> None:  # type: ignore[no-untyped-def]
    rng = random.Random(16)
    for k in range(12):
        path = tmp_path / f"r{k}.yaml"
        path.write_text(
            lessongen.lesson_text(
                rng,
                rng.randint(1, 5),
                rng.randint(1, 4),
                rng.randint(1, 3),
                rng.randint(1, 3),
                rng.choice(["i", "idf"]),
                heads=rng.choice([0, 2]),
                causal=k % 3 == 0,
            )
        )
        lesson = load_lesson(path)
        ours = derive(lesson, Settings(mask=lesson.mask == "causal"))
        for a, b in zip(ours.steps, derive(lesson).steps, strict=True):
            assert shown(a, 4) == shown(b, 4), a.key


def numpy_weights(lesson, divisor: float, factor: float, mask: bool) -> np.ndarray:  # type: ignore[no-untyped-def]
    """weights by the textbook formula in float64, with the explorer's variations."""
    X = reference.as_array(lesson.X)
    head = lesson.heads[0]
    Q, K = X @ reference.as_array(head.W_Q), X @ reference.as_array(head.W_K)
    logits = Q @ K.T / divisor * factor
    if mask:
        logits = np.where(np.triu(np.ones_like(logits, dtype=bool), k=1), -np.inf, logits)
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


@pytest.mark.parametrize("divisor", ["root", "one", "d_k"])
@pytest.mark.parametrize("factor", [(0, 1), (1, 2), (1, 1), (10, 1)])
@pytest.mark.parametrize("mask", [False, True])
def test_variations_agree_with_numpy(divisor: str, factor: tuple[int, int], mask: bool) -> None:
    lesson = load_lesson(LESSONS / "the-cake.yaml")
    d = derive(lesson, Settings(mask=mask, divisor=divisor, factor=factor))
    d_k = lesson.d_k
    by = {"root": np.sqrt(d_k), "one": 1.0, "d_k": float(d_k)}[divisor]
    want = numpy_weights(lesson, by, factor[0] / factor[1], mask)
    np.testing.assert_allclose(values(d.step("weights")), want, rtol=1e-12, atol=1e-15)
    assert d.has("tempered") == (factor != (1, 1))
    assert d.has("masked") == mask


def test_an_edit_recomputes_every_step_exactly() -> None:
    lesson = load_lesson(LESSONS / "the-cake.yaml")
    e = Explorer(lesson)
    e.edit(e.derivation.step("X"), 5, 0, "3/2")  # "it" now has some food in it
    assert e.lesson.X[5][0] == (3, 2)
    want = reference.attention(e.lesson)
    for name in ("Q", "scores", "weights", "Z"):
        np.testing.assert_allclose(values(e.derivation.step(name)), want[(name, None)], rtol=1e-12)


def test_marks_say_which_shown_values_went_up_or_down() -> None:
    e = Explorer(load_lesson(LESSONS / "cats-chase-mice.yaml"))
    before = e.derivation
    e.edit(before.step("X"), 0, 0, "2")  # cats gets more of feature 1
    after = e.derivation
    assert e.marks[("X", 0, 0)] == UP
    assert e.marks[("Q", 0, 0)] == UP  # Q[cats, 1] = 1·1 + … grows from 2 to 3
    for (key, i, j), mark in e.marks.items():
        old, new = before.step(key).cells[i][j], after.step(key).cells[i][j]
        assert (new.approx > old.approx) == (mark == UP), (key, i, j)
    unchanged = [(k, i, j) for (k, i, j) in e.marks if k == "K"]
    assert unchanged == [(k, i, j) for k, i, j in unchanged if k == "K"]
    assert ("W_Q", 0, 0) not in e.marks  # a given matrix that was not edited
    e.edit(after.step("X"), 0, 0, "-1")
    assert e.marks[("X", 0, 0)] == DOWN


def test_the_strongest_key_is_called_out_when_it_moves() -> None:
    e = Explorer(load_lesson(LESSONS / "cats-chase-mice.yaml"))
    e.configure(mask=True)  # cats may only look at itself
    assert "weights[cats]: chase → cats" in [str(m) for m in e.moved]
    (move,) = [m for m in e.moved if m.label == "cats"]
    assert (move.key, move.row, move.before, move.after) == ("weights", 0, "chase", "cats")
    e.configure(divisor="one")
    assert not any(m.label == "cats" for m in e.moved)


def test_undo_and_redo_walk_the_history() -> None:
    lesson = load_lesson(LESSONS / "cats-chase-mice.yaml")
    e = Explorer(lesson)
    X = e.derivation.step("X")
    e.edit(X, 0, 0, "5")
    e.configure(factor=(10, 1))
    assert e.undo() and e.settings == Settings(mask=False)
    assert e.undo() and e.lesson == lesson and not e.edited
    assert not e.undo()
    assert e.redo() and e.lesson.X[0][0] == (5, 1)
    e.edit(X, 1, 1, "0.5")  # a new change forgets what was undone
    assert not e.redo()


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("abc", "expected a number"),
        ("", "nothing typed"),
        ("__import__('os').system('true')", "expected a number"),
        ("1/0", "division by zero"),
        ("1e99", "exponent 99"),
        ("9" * 40, "40 digits"),
        ("sqrt(2)", "not a fraction; a lesson's given numbers are exact fractions"),
    ],
)
def test_a_bad_entry_is_refused_and_nothing_changes(text: str, fragment: str) -> None:
    e = Explorer(load_lesson(LESSONS / "cats-chase-mice.yaml"))
    with pytest.raises(AnswerError, match=fragment.replace("(", r"\(")):
        e.edit(e.derivation.step("X"), 0, 0, text)
    assert not e.edited and not e.done


def test_an_entry_is_read_as_the_quiz_reads_numbers() -> None:
    """Issue 40: one reader. What the quiz takes as a rational number the explorer takes."""
    e = Explorer(load_lesson(LESSONS / "cats-chase-mice.yaml"))
    X = e.derivation.step("X")
    e.edit(X, 0, 1, "4/sqrt(4)")
    e.edit(e.derivation.step("X"), 0, 2, "1/(2+1)")
    assert [c.exact for c in e.derivation.step("X").cells[0][1:3]] == [2, sympy.Rational(1, 3)]


def test_an_entry_that_makes_the_denominator_too_long_is_refused() -> None:
    e = Explorer(load_lesson(LESSONS / "cats-chase-mice.yaml"))
    X = e.derivation.step("X")
    e.edit(X, 0, 0, f"1/{2**80}")  # 25 digits: fine alone
    with pytest.raises(AnswerError, match="common denominator of more than 40 digits"):
        e.edit(e.derivation.step("X"), 0, 1, f"1/{3**50}")  # 24 more digits over the two


def test_worked_steps_cannot_be_edited() -> None:
    e = Explorer(load_lesson(LESSONS / "cats-chase-mice.yaml"))
    with pytest.raises(AnswerError, match="edit a given matrix"):
        e.edit(e.derivation.step("Q"), 0, 0, "1")


def test_heads_and_w_o_are_edited_in_place() -> None:
    lesson = load_lesson(LESSONS / "the-cake-two-heads.yaml")
    e = Explorer(lesson)
    e.edit(e.derivation.step("W_V", 2), 0, 0, "7")
    e.edit(e.derivation.step("W_O"), 0, 0, "-2")
    assert e.lesson.heads[1].W_V[0][0] == (7, 1)
    assert e.lesson.heads[0] == lesson.heads[0]
    want = reference.attention(e.lesson)
    np.testing.assert_allclose(values(e.derivation.step("output")), want[("output", None)])


def test_temperature_zero_gives_every_key_the_same_weight() -> None:
    lesson = load_lesson(LESSONS / "the-cake.yaml")
    d = derive(lesson, Settings(factor=(0, 1)))
    assert {c.q for row in d.step("weights").cells for c in row} == {
        d.step("weights").cells[0][0].q
    }
    assert factor_text(Settings(factor=(1, 4))) == "1/4"


def test_steps_that_do_not_depend_on_an_edit_are_reused() -> None:
    e = Explorer(load_lesson(LESSONS / "the-cake.yaml"))
    before = e.derivation
    e.edit(before.step("W_V"), 0, 0, "3")
    for name in ("X", "W_Q", "W_K", "Q", "K", "scores", "scaled", "weights"):
        assert e.derivation.step(name) is before.step(name), name
    for name in ("W_V", "V", "Z"):
        assert e.derivation.step(name) is not before.step(name), name
    assert not any(key in ("Q", "weights") for key, _, _ in e.marks)


def test_any_history_of_changes_gives_what_a_fresh_derivation_gives() -> None:
    """Reused steps and cached texts never go stale: after every edit, setting, undo and redo
    the shown values are those of the state worked from scratch."""
    rng = random.Random(7)
    e = Explorer(load_lesson(LESSONS / "the-cake-two-heads.yaml"))
    for _ in range(25):
        move = rng.choice(["edit", "edit", "mask", "divisor", "factor", "undo", "redo"])
        if move == "edit":
            givens = [s for s in e.derivation.steps if s.given]
            s = rng.choice(givens)
            e.edit(
                s, rng.randrange(len(s.rows)), rng.randrange(len(s.cols)), str(rng.randint(-2, 3))
            )
        elif move == "mask":
            e.configure(mask=not e.settings.mask)
        elif move == "divisor":
            e.configure(divisor=rng.choice(["root", "one", "d_k"]))
        elif move == "factor":
            e.configure(factor=rng.choice([(0, 1), (1, 2), (1, 1), (4, 1)]))
        else:
            getattr(e, move)()
        fresh = derive(e.lesson, e.settings)
        assert [s.key for s in e.derivation.steps] == [s.key for s in fresh.steps]
        for s in fresh.steps:
            assert e.texts[s.key] == shown(s, e.places), s.key


@pytest.mark.parametrize(
    ("lesson", "step", "head", "cell"),
    [
        ("go-go-go", "E", None, (0, 0)),  # X = E + P recomputed
        ("chat-noir-cross", "X_src", None, (0, 0)),  # the source's keys and values
        ("the-cake-next-token", "x_new", None, (0, 0)),  # the decoding row
        ("the-cake-grouped", "W_K", 1, (0, 0)),  # every head of the group
        ("ha-ha-ha-rope", "W_Q", None, (0, 1)),
        ("tokens-as-columns", "W_V", None, (0, 0)),
    ],
)
def test_every_lesson_kind_is_edited_as_the_engine_works_it(lesson, step, head, cell) -> None:  # type: ignore[no-untyped-def]
    e = Explorer(load_lesson(LESSONS / f"{lesson}.yaml"))
    target = e.derivation.step(step, head)
    i, j = cell
    said = e.edit(target, i, j, "7")
    assert said.endswith("= 7")
    fresh = derive(e.lesson)  # the walk of the edited lesson
    for a, b in zip(e.derivation.steps, fresh.steps, strict=True):
        assert a.key == b.key and shown(a) == shown(b), a.key
    if lesson == "the-cake-grouped":  # W_K belongs to the group: both its heads read 7
        group = e.lesson.group_heads(e.lesson.group_of(1))
        assert all(e.lesson.heads[h - 1].W_K[0][0] == (7, 1) for h in group)
    assert e.undo() and e.lesson == e.original


def test_a_worked_step_or_the_sine_table_cannot_be_edited() -> None:
    from tutor.core.errors import AnswerError

    e = Explorer(load_lesson(LESSONS / "cats-chase-mice.yaml"))
    with pytest.raises(AnswerError, match="worked out from other steps; edit a given matrix"):
        e.edit(e.derivation.step("Q"), 0, 0, "1")


def test_explore_opens_every_lesson_kind(run) -> None:  # type: ignore[no-untyped-def]
    for p in bundled_lessons():
        assert Explorer(load_lesson(p)).derivation.steps  # nothing refused


@pytest.mark.parametrize(("divisor", "said"), [("root", "√d_k"), ("one", "1"), ("d_k", "d_k")])
def test_the_decoding_rows_heading_says_the_divisor_the_d_key_chose(divisor, said) -> None:  # type: ignore[no-untyped-def]
    """The heading and the working of scaled_new come from its rule's divisor, as scaled's do:
    after the ``d`` key chose 1, neither says √d_k (issue 37, item 4)."""
    from tutor.core.engine import Options
    from tutor.explore.views import title, working_text

    lesson = load_lesson(LESSONS / "the-cake-next-token.yaml", "the-cake-next-token")
    settings = Settings(divisor=divisor)
    d = derive(lesson, Options(divisor=divisor))
    for name in ("scaled", "scaled_new"):
        step = d.step(name)
        source = step.args[0].name
        assert title(step, settings).endswith(f"{source} ÷ {said}"), name
        first = working_text(step, 0, 0, 2, settings).splitlines()[0]
        assert first.endswith(f"{source}[{step.rows[0]}, {step.cols[0]}] / {said}"), first
