"""Fuzzing typed answers: the parser returns a real number or a clean AnswerError, fast, and
never runs code; the judge never raises on any answer for any cell of any bundled lesson.

Set FUZZ_EXAMPLES to try more (the default keeps the suite fast).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import sympy
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import bundled_lessons
from tests.in_a_process import read_answers
from tutor.assess import judge as jd
from tutor.assess import quiz as qz
from tutor.core.engine import derive
from tutor.core.errors import AnswerError
from tutor.core.lessonfile import load_lesson
from tutor.core.numbers import MAX_ANSWER_CHARS, parse_answer, read_answer

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "150"))
MARKER = Path(os.environ.get("TMPDIR", "/tmp")) / "attn-tutor-fuzz-marker"
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=2000,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)

NUMBERS = (
    st.sampled_from(
        ["0", "1", "2", "-1", "0.5", "1.41", "0.16", "1e30", "1e-30", "9" * 30, "1/1e30", "138"]
    )
    | st.integers(-(10**6), 10**6).map(str)
    | st.decimals(
        min_value=-1000, max_value=1000, allow_nan=False, allow_infinity=False, places=3
    ).map(str)
)
ATOMS = NUMBERS | st.sampled_from(
    ["e", "pi", "π", "x", "os", "__import__", "sqrt", "True", "None", "...", "'1'", "1j", "√2"]
)
FUNCTIONS = st.sampled_from(
    ["sqrt", "exp", "ln", "log", "abs", "eval", "__import__", "getattr", "sin", "f"]
)
BINARY = st.sampled_from(["+", "-", "*", "/", "^", "**", "×", "·", "÷", "//", "%", "@", "<<", "&"])


def expressions() -> st.SearchStrategy[str]:
    """ast-like expression strings: numbers, names, operators, calls, attributes, brackets."""
    return st.recursive(
        ATOMS,
        lambda inner: st.one_of(
            st.tuples(inner, BINARY, inner).map(lambda t: f"{t[0]}{t[1]}{t[2]}"),
            st.tuples(st.sampled_from(["-", "+", "−", "~", "not "]), inner).map("".join),
            inner.map(lambda x: f"({x})"),
            st.tuples(FUNCTIONS, inner).map(lambda t: f"{t[0]}({t[1]})"),
            st.tuples(FUNCTIONS, inner, inner).map(lambda t: f"{t[0]}({t[1]}, {t[2]})"),
            st.tuples(inner, st.sampled_from(["__class__", "real", "__globals__", "p"])).map(
                lambda t: f"{t[0]}.{t[1]}"
            ),
            st.tuples(inner, inner).map(lambda t: f"{t[0]}[{t[1]}]"),
            st.tuples(inner, inner).map(lambda t: f"[{t[0]}, {t[1]}]"),
        ),
        max_leaves=12,
    )


def arithmetic() -> st.SearchStrategy[str]:
    """Expressions the parser accepts in form: the hard cases are their sizes and values."""
    return st.recursive(
        NUMBERS | st.sampled_from(["e", "pi", "√2"]),
        lambda inner: st.one_of(
            st.tuples(inner, st.sampled_from(["+", "-", "*", "/", "^"]), inner).map(
                lambda t: f"({t[0]}){t[1]}({t[2]})"
            ),
            inner.map(lambda x: f"-({x})"),
            st.tuples(st.sampled_from(["sqrt", "exp", "ln"]), inner).map(
                lambda t: f"{t[0]}({t[1]})"
            ),
        ),
        max_leaves=8,
    )


PAYLOADS = [
    f"__import__('pathlib').Path({str(MARKER)!r}).touch()",
    f"open({str(MARKER)!r}, 'w')",
    f"exec(\"open({str(MARKER)!r}, 'w')\")",
    "sqrt.__globals__['__builtins__']",
    "().__class__.__bases__[0].__subclasses__()",
    "(lambda: 1)()",
    "[x for x in ()]",
    "{1: 2}",
    "f'{1}'",
    "a := 1",
    "1; 2",
    "9**9**9",
    "2^2^2^2^2^2",
    "(1-1e-30)^(-1e30)",
    "(1+1e-30)^1e30",
    "(1e-30*1e-30*1e-30*1e-30*1e-30*1e-30*1e-30*1e-30*1e-30*1e-30*1e-30)^1e30",
    "exp(exp(exp(exp(2))))",
    "e^(e^(e^2))",
    "1e30^1e30",
    "10^(1/1e30)",
    "sqrt(" * 30 + "2" + ")" * 30,
    "-" * 199 + "1",
    "(" * 100 + "1" + ")" * 99,
    "1" * 201,
    "\x00",
    "1\x00",
    "\ud800",
    "١٢",
    "𝟏",
    "ℯ",
    "0^-1",
    "0.0^-0.5",
    "ln(1)^-1",
    "(e-e)^-1",
    "(sqrt(2)^2-2)^-1",
    "1/(exp(1)-e)",
    "log(-e)",
    "sqrt(-pi)",
]


def assert_clean(text: str) -> None:
    """One call: a real finite sympy number or AnswerError, and no code run. (How long it may
    take is guarded by a child process's timeout: see test_payloads_in_a_process.)"""
    try:
        value = parse_answer(text)
    except AnswerError as err:
        assert str(err)
    else:
        assert isinstance(value, sympy.Expr)
        assert value.is_number and value.is_finite is not False
        approx = value.evalf(30)
        assert approx.is_extended_real and approx.is_finite, (text, value)
        answer = read_answer(text)
        assert answer.value == value
    assert not MARKER.exists(), text


@pytest.fixture(autouse=True, scope="module")
def _no_marker():  # type: ignore[no-untyped-def]
    MARKER.unlink(missing_ok=True)
    yield
    assert not MARKER.exists()


def test_payloads_in_a_process() -> None:
    """Every payload read in one child process, whose timeout guards against a hang (a clock
    in this process could not stop a call that never returns); no code ran."""
    for text, outcome in zip(PAYLOADS, read_answers(PAYLOADS), strict=True):
        assert outcome.get("refused") or outcome.get("value"), text
    assert not MARKER.exists()


@pytest.mark.parametrize("text", PAYLOADS)
def test_payloads(text: str) -> None:
    assert_clean(text)


@FUZZ
@given(text=st.text(max_size=MAX_ANSWER_CHARS + 20))
def test_random_text(text: str) -> None:
    assert_clean(text)


@FUZZ
@given(text=expressions())
def test_random_expressions(text: str) -> None:
    assert_clean(text)


@FUZZ
@given(text=arithmetic())
def test_random_well_formed_arithmetic(text: str) -> None:
    assert_clean(text)


@FUZZ
@given(text=st.text(alphabet="0123456789.e+-*/^()√ ", max_size=60))
def test_random_arithmetic(text: str) -> None:
    assert_clean(text)


# ---------------------------------------------------------------------------------------------
# the judge, on any answer for any cell


DERIVATIONS = [derive(load_lesson(p, name=p.stem)) for p in bundled_lessons()]


def readable_answers() -> st.SearchStrategy:
    def read(text: str):  # type: ignore[no-untyped-def]
        try:
            return read_answer(text)
        except AnswerError:
            return None

    return (arithmetic() | expressions() | NUMBERS).map(read).filter(lambda a: a is not None)


@FUZZ
@given(data=st.data(), answer=readable_answers(), places=st.integers(0, 10))
def test_judge_never_raises(data: st.DataObject, answer, places: int) -> None:  # type: ignore[no-untyped-def]
    d = data.draw(st.sampled_from(DERIVATIONS))
    step = data.draw(st.sampled_from(d.steps))
    i = data.draw(st.integers(0, len(step.rows) - 1))
    j = data.draw(st.integers(0, len(step.cols) - 1))
    judge = jd.judge_for(d, places)
    verdict = judge.judge(step, i, j, answer)
    assert isinstance(verdict.right, bool) and verdict.message
    judge.slips(step, i, j, answer)
    judge.pen_slip(step, i, j, answer)
    qz.read_as(answer, places)


# ---------------------------------------------------------------------------------------------
# values that are exactly 0, or complex, only by cancellation (issue 19.2): sympy cannot tell
# them from 0 numerically, so their square root, logarithm or power is out of reach

POSITIVE = st.integers(1, 99).map(str) | st.sampled_from(["0.5", "2.25", "1/3", "e", "pi"])


def zeros() -> st.SearchStrategy[str]:
    """Expressions equal to 0 that no rule of sympy's simplifies on sight."""
    denested = st.tuples(POSITIVE, POSITIVE).map(
        lambda t: f"sqrt(({t[0]})+({t[1]})+2*sqrt(({t[0]})*({t[1]})))-sqrt({t[0]})-sqrt({t[1]})"
    )
    logs = st.tuples(POSITIVE, POSITIVE).map(
        lambda t: f"ln(({t[0]})*({t[1]}))-ln({t[0]})-ln({t[1]})"
    )
    fixed = st.sampled_from(
        [
            "sqrt(11+6*sqrt(2))-3-sqrt(2)",
            "sqrt(5+2*sqrt(6))-sqrt(2)-sqrt(3)",
            "(1+sqrt(2))^2-3-2*sqrt(2)",
        ]
    )
    return denested | logs | fixed


def around_zero() -> st.SearchStrategy[str]:
    """A zero as a term, a divisor, under a root or logarithm, as a power's base or exponent;
    a tiny negative nudge makes the root's argument truly negative."""
    shapes = st.sampled_from(
        [
            "sqrt({z})",
            "ln({z})",
            "log(sqrt({z}))",
            "ln(sqrt({z}))",
            "({z})^0.5",
            "({z})^(1/3)",
            "({z})^-1",
            "1/({z})",
            "sqrt({z}-1e-30)",
            "sqrt(({z})*(-1))",
            "e^({z})",
            "2+({z})",
            "({z})*3",
            "2^({z})",
            "sqrt(sqrt({z}))",
        ]
    )
    return st.tuples(shapes, zeros()).map(lambda t: t[0].format(z=t[1]))


@FUZZ
@given(text=around_zero())
def test_cancelling_to_zero_or_complex(text: str) -> None:
    assert_clean(text)


@FUZZ
@given(data=st.data(), text=around_zero())
def test_cancelling_answers_in_a_quiz_cost_no_try_and_never_crash(data, text: str) -> None:  # type: ignore[no-untyped-def]
    """Through the quiz loop, as a student meets it: read and judged, or refused without a try."""
    import io

    from rich.console import Console

    d = data.draw(st.sampled_from(DERIVATIONS))
    question = data.draw(st.sampled_from(qz.choose(d, count=200, seed=1)))
    c = Console(file=io.StringIO(), width=80, color_system=None)
    result = qz.run(d, [question], c, io.StringIO(text + "\nskip\n"))
    shown = c.file.getvalue()  # type: ignore[attr-defined]
    (item,) = result.items
    try:
        read_answer(text)
    except AnswerError:
        assert "That did not use a try" in shown
        assert item.tries == 0
    else:
        assert item.tries == 1 or item.outcome == "first"
