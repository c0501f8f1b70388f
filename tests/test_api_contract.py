"""The library's error contract (issue 43, item 1): every public function of ``tutor`` raises
only ``tutor.TutorError`` subclasses, whatever it is handed, and measures what it is given
before any work.

First the failures the issue found, each with the bad input itself; then a Hypothesis test that
drives every public function with values of the wrong type, size and shape. Its default run is
small (a few seconds); ``pytest -m battery`` runs it with many more examples.
"""

from __future__ import annotations

import math
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tutor

LESSON = tutor.lesson("cats-chase-mice")
EYE = np.eye(2)
D = LESSON.derive()
TWO = {
    "title": "Two",
    "tokens": ["a", "b"],
    "X": [[1, 0], [0, 1]],
    "W_Q": [[1, 0], [0, 1]],
    "W_K": [[1, 0], [0, 1]],
    "W_V": [[1, 0], [0, 1]],
}


def self_referencing() -> dict[str, Any]:
    sheet: dict[str, Any] = {}
    sheet["Q"] = sheet
    return sheet


# (what is called, the error it must raise, a fragment of its message)
CASES = {
    "lesson, a 5,000-digit entry": (
        lambda: tutor.lesson({**TWO, "X": [[10**5000, 0], [0, 1]]}),
        tutor.LessonError,
        "X[0][0]: a whole number of about 5,001 digits",
    ),
    "lesson, a 5,000-character name": (
        lambda: tutor.lesson("a" * 5000),
        tutor.LessonError,
        "no lesson named 'aaaa",
    ),
    "lesson, a NUL in the name": (
        lambda: tutor.lesson("cats\0chase"),
        tutor.ArgumentError,
        "cannot hold a NUL",
    ),
    "lesson, a dict of 400,000 rows": (
        lambda: tutor.lesson({**TWO, "X": [[1, 0]] * 400_000}),
        tutor.LessonError,
        "<dict>: X: 400,000 entries; a lesson or sheet holds at most 20,000 values",
    ),
    "lesson, a dict nested 20 deep": (
        lambda: tutor.lesson({**TWO, "X": [[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]}),
        tutor.LessonError,
        "nested more than 16 deep",
    ),
    "lesson, a key that is a tuple": (
        lambda: tutor.lesson({**TWO, ("X", 1): 1}),
        tutor.LessonError,
        "a key of type tuple",
    ),
    "grade, a self-referencing dict": (
        lambda: tutor.grade(LESSON, self_referencing()),
        tutor.LessonError,
        "<sheet>: Q: contains itself",
    ),
    "grade, a tuple key": (
        lambda: tutor.grade(LESSON, {("Q", 1): [[1, 2]]}),
        tutor.LessonError,
        "a key of type tuple",
    ),
    "grade, None": (
        lambda: tutor.grade(LESSON, None),
        tutor.ArgumentError,
        "a sheet is a dict or a path, not None",
    ),
    "grade, 5": (
        lambda: tutor.grade(LESSON, 5),
        tutor.ArgumentError,
        "not an int",
    ),
    "grade, [1, 2]": (
        lambda: tutor.grade(LESSON, [1, 2]),
        tutor.ArgumentError,
        "not a list",
    ),
    "grade, a NUL in the path": (
        lambda: tutor.grade(LESSON, "sheet\0.yaml"),
        tutor.ArgumentError,
        "cannot hold a NUL",
    ),
    "judge, None as the cell": (
        lambda: tutor.judge(LESSON, None, "1"),
        tutor.ArgumentError,
        "cell is None; expected a cell's name",
    ),
    "judge, a list as the answer": (
        lambda: tutor.judge(LESSON, "Z[cats, 1]", [0.49]),
        tutor.ArgumentError,
        "answer is a list",
    ),
    "walk, step=5": (
        lambda: LESSON.walk(step=5),
        tutor.ArgumentError,
        "step is an int",
    ),
    "cell, places='x'": (
        lambda: D.cell("Z[cats, 1]", places="x"),
        tutor.ArgumentError,
        "places is a str",
    ),
    "cell, places=1000": (
        lambda: D.cell("Z[cats, 1]", places=1000),
        tutor.ArgumentError,
        "places is 1000; expected 0 to 10",
    ),
    "cell, places=60 (zeros past 40 digits)": (
        lambda: D.cell("Z[cats, 1]", places=60),
        tutor.ArgumentError,
        "places is 60; expected 0 to 10",
    ),
    "cell, places=-3 (0·2 + 0·0 …)": (
        lambda: D.cell("Z[cats, 1]", places=-3),
        tutor.ArgumentError,
        "places is -3",
    ),
    "d['nope']": (
        lambda: D["nope"],
        tutor.NoSuchStep,
        "no step 'nope'; the steps are: X, W_Q",
    ),
    "Lesson, made from a name": (
        lambda: tutor.Lesson("cats-chase-mice"),
        tutor.ArgumentError,
        "a Lesson is made by tutor.lesson(...), not from a str",
    ),
    "lesson_from_arrays, a NaN": (
        lambda: tutor.lesson_from_arrays([[math.nan, 0], [0, 1]], EYE, EYE, EYE),
        tutor.TutorError,
        "<arrays>: X[0, 0] is nan; expected finite numbers",
    ),
    "lesson_from_arrays, a ragged X": (
        lambda: tutor.lesson_from_arrays([[1, 0], [1]], EYE, EYE, EYE),
        tutor.TutorError,
        "<arrays>: X is not an array",
    ),
    "lesson_from_torch, not a module": (
        lambda: tutor.lesson_from_torch(LESSON, EYE),
        tutor.TutorError,
        "",
    ),
    "check_function, not a function": (
        lambda: tutor.check_function(LESSON, None),
        tutor.ArgumentError,
        "fn is None",
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_each_failure_the_issue_found_is_a_tutor_error(case: str) -> None:
    call, kind, fragment = CASES[case]
    with pytest.raises(kind) as caught:
        call()
    assert isinstance(caught.value, tutor.TutorError)
    assert fragment in str(caught.value)
    assert "\n" not in str(caught.value)  # one line


def test_a_missing_step_is_a_key_error_too_as_a_mapping_promises() -> None:
    with pytest.raises(KeyError):
        D["nope"]
    assert str(tutor.NoSuchStep("no step 'x'")) == "no step 'x'"  # not KeyError's repr


def test_a_usage_error_is_a_tutor_error_and_the_cli_would_exit_2_for_it() -> None:
    assert issubclass(tutor.ArgumentError, tutor.UsageError)
    assert issubclass(tutor.UsageError, tutor.TutorError)
    assert issubclass(tutor.NoSuchStep, tutor.TutorError)
    assert issubclass(tutor.AnswerError, tutor.TutorError)


def test_numbers_as_python_objects_are_read_exactly() -> None:
    """What the measuring copy keeps: a Fraction as its text, NumPy numbers and arrays as the
    values they hold, tuples as lists."""
    X = ((Fraction(1, 3), np.float64(0.5)), (np.int64(0), 1))
    got = tutor.lesson({**TWO, "X": X}).derive()["X"].exact
    assert got.tolist() == [[Fraction(1, 3), Fraction(1, 2)], [0, 1]]
    sheet = {"Q": D["Q"].numpy()}  # an array, as a notebook has it
    assert tutor.grade(LESSON, sheet).to_dict()["cells"][0]["verdict"] != "wrong"
    rows = {k: list(D[k].numpy()) for k in ("Q", "K", "V")}  # a list of arrays, one per row
    assert tutor.grade(LESSON, rows).score == 18


def test_a_row_given_twice_is_two_rows_not_a_yaml_anchor() -> None:
    """``[[1, 0]] * 2`` holds one list twice: yaml.safe_dump wrote it as an anchor and an alias,
    which the loader refuses ("YAML anchors (&name) are not allowed here"). The measured copy
    is two lists."""
    row = [1, 0]
    X = tutor.lesson({**TWO, "X": [row, row]}).derive()["X"].exact
    assert X.tolist() == [[1, 0], [1, 0]]


def test_a_refusal_says_how_many_came_before() -> None:
    with pytest.raises(tutor.LessonError, match=r"X\[49\]: 400 entries, after 19,655 values"):
        tutor.lesson({**TWO, "X": [list(range(400))] * 1000})


def test_a_number_may_be_typed_as_an_int_or_float() -> None:
    assert tutor.judge(LESSON, "Q[cats, 1]", 2).right
    assert tutor.judge(LESSON, "Z[cats, 1]", 0.49).right


# ---------------------------------------------------------------------------------------------
# every public function, driven with what it was never meant to get

HUGE = st.sampled_from(["9" * 5000, "x" * 100_000, "[" * 5000, "1e999999", "\0" * 10])
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=10**40, max_value=10**1500),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=30),
    st.binary(max_size=20),
    HUGE,
    st.builds(Path, st.sampled_from(["/", "/dev/null", "/etc", "no/such.yaml", "/proc/self"])),
    st.fractions(),
    st.complex_numbers(),
    st.sampled_from([math.inf, -0.0, object(), {1, 2}, frozenset(), len, np.zeros((2, 2))]),
)
KEYS = st.one_of(st.text(max_size=8), st.integers(), st.none())
WRONG = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=5),
        st.tuples(inner, inner),
        st.dictionaries(KEYS, inner, max_size=4),
    ),
    max_leaves=20,
)
LESSON_KEY = st.sampled_from([*sorted(TWO), "heads", "mask", "precision", "positions", "next"])


def _layer() -> Any:
    """A real torch.nn.MultiheadAttention (with biases) where torch is installed, else None
    (then lesson_from_torch says torch is missing: a TutorError too)."""
    try:
        import torch
    except ImportError:
        return None
    return torch.nn.MultiheadAttention(2, 1)


def _call(name: str, a: Any, b: Any) -> Any:
    """Call public function ``name`` with ``a`` and ``b`` where its arguments go."""
    calls = {
        "lesson": lambda: tutor.lesson(a),
        "lesson(dict)": lambda: tutor.lesson({**TWO, str(b)[:12]: a}).derive(),
        "grade(sheet)": lambda: tutor.grade(LESSON, a),
        "grade(lesson)": lambda: tutor.grade(a, {"Q": b}),
        "judge(cell)": lambda: tutor.judge(LESSON, a, b),
        "judge(answer)": lambda: tutor.judge(LESSON, "Z[cats, 1]", a),
        "judge(lesson)": lambda: tutor.judge(a, "Z[cats, 1]", "0.49"),
        "walk": lambda: LESSON.walk(step=a, exact=b),
        "walk(step)": lambda: LESSON.walk(step=a),
        "d[key]": lambda: D[a],
        "cell": lambda: D.cell(a, places=b),
        "cell(places)": lambda: D.cell("Z[cats, 1]", places=a),
        "check_function": lambda: tutor.check_function(LESSON, a),
        "check_function(lesson)": lambda: tutor.check_function(a, lambda *x, **k: 0),
        "Lesson": lambda: tutor.Lesson(a).derive(),
        "Derivation": lambda: tutor.Derivation(a).steps,
        "lesson_from_arrays": lambda: tutor.lesson_from_arrays(a, b, b, b),
        "lesson_from_arrays(options)": lambda: tutor.lesson_from_arrays(
            EYE, EYE, EYE, EYE, W_O=a if isinstance(b, str) else None, tokens=b, places=a
        ),
        "lesson_from_arrays(heads)": lambda: tutor.lesson_from_arrays(EYE, [EYE, a], EYE, b),
        "lesson_from_arrays(biases)": lambda: tutor.lesson_from_arrays(
            EYE, EYE, EYE, EYE, W_O=EYE, b_Q=a, b_O=b
        ),
        "lesson_from_torch": lambda: tutor.lesson_from_torch(a, b),
        "lesson_from_torch(x)": lambda: tutor.lesson_from_torch(_layer(), a, tokens=b),
    }
    return calls[name]()


PUBLIC = [
    "lesson", "lesson(dict)", "grade(sheet)", "grade(lesson)", "judge(cell)", "judge(answer)",
    "judge(lesson)", "walk", "walk(step)", "d[key]", "cell", "cell(places)", "check_function",
    "check_function(lesson)", "Lesson", "Derivation", "lesson_from_arrays",
    "lesson_from_arrays(options)", "lesson_from_arrays(heads)", "lesson_from_arrays(biases)",
    "lesson_from_torch", "lesson_from_torch(x)",
]  # fmt: skip


def only_tutor_errors(name: str, a: Any, b: Any) -> None:
    try:
        _call(name, a, b)
    except tutor.TutorError as err:
        assert str(err).strip(), "an error says what was wrong"


def _contract(examples: int):  # type: ignore[no-untyped-def]
    @settings(
        max_examples=examples,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
        database=None,
    )
    @given(name=st.sampled_from(PUBLIC), a=WRONG, b=st.one_of(WRONG, LESSON_KEY))
    def run(name: str, a: Any, b: Any) -> None:
        only_tutor_errors(name, a, b)

    return run


def test_every_public_function_raises_only_tutor_errors() -> None:
    _contract(120)()


@pytest.mark.battery
def test_battery_every_public_function_raises_only_tutor_errors() -> None:
    _contract(3000)()


def test_the_contract_test_names_every_public_function() -> None:
    """A public name added to ``tutor`` without a place in PUBLIC fails here."""
    functions = {n for n in tutor.__all__ if n[0].islower() and n != "__version__"}
    assert functions <= {p.split("(")[0] for p in PUBLIC}
    assert {"walk", "cell", "d[key]"} <= set(PUBLIC)
