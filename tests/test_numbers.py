"""Reading numbers without eval: lesson entries and typed answers."""

from __future__ import annotations

import pytest
import sympy
from hypothesis import example, given, settings
from hypothesis import strategies as st

from tests.in_a_process import read_answers
from tutor.core.errors import AnswerError
from tutor.core.numbers import parse_answer, parse_entry
from tutor.text.lessonyaml import entry_text


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("3", (3, 1)),
        ("-3", (-3, 1)),
        ("0.1", (1, 10)),
        ("010", (10, 1)),
        ("1e3", (1000, 1)),
        ("-2/7", (-2, 7)),
        ("4/6", (2, 3)),
        (".5", (1, 2)),
        ("2.50", (5, 2)),
        ("−1", (-1, 1)),
    ],
)
def test_entries_are_exact(text: str, value: tuple[int, int]) -> None:
    assert parse_entry(text) == value


@pytest.mark.parametrize(
    "text",
    ["yes", "1:30", "1/0", "two", "", "1e99", "9" * 31, "0x10", "1_000", "nan", ".inf", "1/2/3"],
)
def test_bad_entries_are_refused(text: str) -> None:
    with pytest.raises(AnswerError):
        parse_entry(text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("sqrt(2)", sympy.sqrt(2)),
        ("2/sqrt(2)", sympy.sqrt(2)),
        ("√2", sympy.sqrt(2)),
        ("exp(2)", sympy.exp(2)),
        ("e^2", sympy.exp(2)),
        ("2*0.16 + 0.67*0", sympy.Rational(8, 25)),
        ("1/3", sympy.Rational(1, 3)),
        ("-0.5", sympy.Rational(-1, 2)),
        ("3 × 2", sympy.Integer(6)),
    ],
)
def test_answers_are_read_exactly(text: str, expected: sympy.Expr) -> None:
    assert sympy.simplify(parse_answer(text) - expected) == 0


def test_softmax_expression_answer() -> None:
    value = parse_answer("e^1.41/(e^1.41+e^2.83+e^1.41)")
    assert float(value) == pytest.approx(0.1636, abs=1e-3)


PAYLOADS = [
    "__import__('os').system('echo pwned')",
    "().__class__",
    "lambda: 1",
    "sqrt.__globals__",
    "[1, 2]",
    "x",
    "banana",
    "1 if 1 else 2",
    "'1'",
    "9^9^9^9",
    "10**10**10",
    "exp(1000)",
    "1/0",
    "sqrt(-1)",
    "ln(0)",
    "(-8)^(1/3)",
    "1e100000000",
    "True",
    "1j",
    "f(1)",
    "",
    "(" * 5000 + "1" + ")" * 5000,
]
POWERS = [
    "(1-1e-30)^(-1e30)",  # a float rounds the base to 1, so the size check was skipped
    "(1+1e-30)^1e30",
    "(1e-30*1e-30*1e-30*1e-30*1e-30*1e-30*1e-30*1e-30*1e-30*1e-30*1e-30)^1e30",  # underflow
    "((1+1e-30)^60)^(1/3)",
]


@pytest.fixture(scope="module")
def refused() -> dict[str, str]:
    """Every payload and huge value, read in one child process: its timeout is the guard that
    each is refused at once (before the caps, some ran for ever), not a clock in the test."""
    texts = PAYLOADS + POWERS
    return {t: out.get("refused", "") for t, out in zip(texts, read_answers(texts), strict=True)}


@pytest.mark.parametrize("text", PAYLOADS)
def test_payloads_and_huge_values_are_refused(refused: dict[str, str], text: str) -> None:
    assert refused[text]


@pytest.mark.parametrize("text", POWERS)
def test_powers_too_large_to_work_exactly_are_refused(refused: dict[str, str], text: str) -> None:
    """Regression: these ran for ever (sympy worked the exact power digit by digit)."""
    assert "power is too large" in refused[text]


def test_sensible_powers_still_work() -> None:
    assert parse_answer("(2/sqrt(2))^2") == 2
    assert parse_answer("(-2)^3") == -8
    assert parse_answer("0^2") == 0
    assert parse_answer("(1+1e-30)^2") == sympy.Rational(10**30 + 1, 10**30) ** 2
    with pytest.raises(AnswerError, match="divides by zero"):
        parse_answer("0^-1")


def test_leading_zeros_read_as_in_lesson_files() -> None:
    assert parse_answer("010") == 10
    assert parse_answer("007+1") == 8
    assert parse_answer("0.05") == sympy.Rational(1, 20)


def test_a_decimal_comma_gets_a_hint() -> None:
    with pytest.raises(AnswerError, match=r"use a decimal point: 0\.5"):
        parse_answer("0,5")


@pytest.mark.parametrize("text", ["2#5", "0.49 # about", "#", "1/3#"])
def test_a_hash_is_refused_not_read_as_the_start_of_a_comment(text: str) -> None:
    with pytest.raises(AnswerError, match="'#' has no meaning here"):
        parse_answer(text)


def test_a_hash_in_a_quiz_answer_does_not_use_a_try(run) -> None:  # type: ignore[no-untyped-def]
    out = run("quiz", "--count", "1", "--seed", "1", input="2#5\nskip\n").stdout
    assert "'#' has no meaning here. That did not use a try." in out


def test_an_expression_sympy_cannot_factor_is_refused_not_a_crash(run) -> None:  # type: ignore[no-untyped-def]
    """sympy raised ValueError ("is not a prime factor") building this legal answer; the fuzz
    found it. It is now "not a number I can check", and the quiz does not count the try."""
    text = "-(sqrt(((1e30)+(138))/((1e30)-(138))))"
    with pytest.raises(AnswerError, match="not a number I can check"):
        parse_answer(text)
    result = run("quiz", "--seed", "1", "--count", "1", input=f"{text}\n")
    assert result.exit_code == 0, result.stderr
    assert "not a number I can check" in result.stdout


# --- every number the loader accepts, the writer writes back (issue 43) -----------------------

_digits = st.text("0123456789", min_size=0, max_size=30)
ENTRY_TEXTS = st.one_of(
    st.builds(
        lambda sign, whole, frac, exp: f"{sign}{whole or '0'}{'.' + frac if frac else ''}{exp}",
        st.sampled_from(["", "-", "+"]),
        _digits,
        _digits,
        st.one_of(st.just(""), st.integers(-30, 30).map(lambda e: f"e{e}")),
    ),
    st.builds(lambda p, q: f"{p}/{q}", st.integers(0, 10**15), st.integers(1, 10**15)),
)


def _accepted(text: str) -> tuple[int, int] | None:
    try:
        return parse_entry(text)
    except AnswerError:
        return None


@settings(max_examples=600, deadline=None)
@given(ENTRY_TEXTS)
@example("4294969/4294967296")  # found by a CI run: 33 digits as a decimal, so a fraction
def test_every_entry_the_loader_accepts_is_written_back_so_it_reads_the_same(text: str) -> None:
    value = _accepted(text)
    if value is None:
        return
    written = entry_text(value)
    assert parse_entry(written.strip('"')) == value, (text, written)


@pytest.mark.parametrize(
    "text",
    [
        "1e-30",
        "1e30",
        "-1e30",
        "1.23456789e-25",
        "0.0000000000000000000000001e-30",
        "123456789012345678901234567e3",
        "1000000000000000000000000000.5",
    ],
)
def test_extreme_entries_round_trip(text: str) -> None:
    value = parse_entry(text)
    written = entry_text(value)
    assert parse_entry(written.strip('"')) == value, written


@pytest.mark.parametrize("text", ["0", "2", "-3", "0.5", "0.125", "1.25", "-0.75"])
def test_ordinary_entries_are_written_as_before(text: str) -> None:
    assert entry_text(parse_entry(text)) == text
