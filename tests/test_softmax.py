"""attn-tutor softmax: the article's warm-up for any numbers, negative and large ones too."""

from __future__ import annotations

import math

import pytest

from tutor.teach.warmup import read_numbers, softmax_row


def test_one_two_three_gives_the_articles_shares(run) -> None:  # type: ignore[no-untyped-def]
    result = run("softmax", "1", "2", "3")
    assert result.exit_code == 0, result.stderr
    out = result.stdout
    for text in ("2.72", "7.39", "20.09", "30.19", "≈ 0.09", "≈ 0.24", "≈ 0.67"):
        assert text in out
    assert "add up to 1.00 ✓" in out


def test_shares_are_exact_and_add_to_one() -> None:
    row = softmax_row(read_numbers(["1", "2", "3"]))
    shares = [c.value for c in row.cells[0]]
    expected = [math.exp(k) / sum(math.exp(j) for j in (1, 2, 3)) for k in (1, 2, 3)]
    assert shares == pytest.approx(expected, rel=1e-15)
    assert sum(c.approx for c in row.cells[0]) == pytest.approx(1, abs=1e-35)


@pytest.mark.parametrize(
    "args",
    [("-1", "2", "3"), ("--", "-1", "2", "3"), ("2", "-1", "3"), ("-1.5", "-1/2", "−2")],
)
def test_negative_numbers_work_without_dash_dash(run, args) -> None:  # type: ignore[no-untyped-def]
    result = run("softmax", *args)
    assert result.exit_code == 0, result.stderr + result.stdout
    assert "add up to" in result.stdout


def test_large_numbers_use_the_max_subtraction_trick(run) -> None:  # type: ignore[no-untyped-def]
    out = run("softmax", "1000", "1001", "1002").stdout
    assert "e^(x − m)" in out and "m = 1002 is the largest x" in out
    assert "≈ 0.09" in out and "≈ 0.67" in out  # same shares as 1 2 3
    huge = softmax_row(read_numbers(["1e30", "-1e30"]))
    assert [c.value for c in huge.cells[0]] == [1.0, 0.0]


def test_times_makes_softmax_peaky(run) -> None:  # type: ignore[no-untyped-def]
    out = run("softmax", "1", "2", "3", "--times", "10").stdout
    assert "softmax(10, 20, 30)" in out
    assert "before multiplying: 0.09, 0.24, 0.67; after: 0.00, 0.00, 1.00" in out
    assert "√d_k" in out


@pytest.mark.parametrize(
    ("times", "shown", "says", "flipped"),
    [
        ("10", "10", "peakier", False),
        ("-2", "−2", "peakier", True),
        ("1/3", "1/3", "flatter", False),
        ("-0.5", "−0.5", "flatter", True),
        ("0", "0", "every share is the same", False),
        ("-1", "−1", "just as peaky", True),
    ],
)
def test_times_says_what_the_factor_did(
    run, times: str, shown: str, says: str, flipped: bool
) -> None:  # type: ignore[no-untyped-def]
    result = run("softmax", "1", "2", "3", "--times", times)
    assert result.exit_code == 0, result.stderr
    out = " ".join(result.stdout.split())  # unwrapped
    assert f"Each of 1, 2, 3 multiplied by {shown} first." in out
    assert says in out
    for other in {"peakier", "flatter", "every share is the same", "just as peaky"} - {says}:
        assert other not in out
    assert ("the smallest input gets the largest share" in out) == flipped


def test_a_bad_number_on_the_command_line_needs_no_quotes(run) -> None:  # type: ignore[no-untyped-def]
    result = run("softmax", "1", "2", "--times", "ten")
    assert result.exit_code == 2
    assert "or a fraction (1/3)" in result.stderr and "quotes" not in result.stderr


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (("1", "two"), "number 2: found 'two'"),
        (("1", "__import__('os')"), "number 2"),
        (("1", "2**999"), "number 2"),
        (("1", "--times", "ten"), "--times: found 'ten'"),
        (("1", "1/0"), "division by zero"),
        (("1", "1e999"), "exponent"),
        ((), "Missing argument"),
    ],
)
def test_bad_numbers_exit_2_with_one_line(run, args, fragment: str) -> None:  # type: ignore[no-untyped-def]
    result = run("softmax", *args)
    assert result.exit_code == 2
    assert fragment in result.stderr + result.stdout
    assert "Traceback" not in result.stderr + result.stdout


def test_small_inputs_are_shifted_so_the_working_adds_up(run) -> None:  # type: ignore[no-untyped-def]
    out = run("softmax", "--", "-5", "-6").stdout
    assert "1.00 / 1.37 ≈ 0.73" in out
    assert "0.37 / 1.37 ≈ 0.27" in out


def test_an_astronomical_input_is_worked_not_crashed(run) -> None:  # type: ignore[no-untyped-def]
    result = run("softmax", "1e30", "1")
    assert result.exit_code == 0, result.stderr
    assert "≈ 1.00" in result.stdout


def test_softmax_reads_numbers_as_the_quiz_does(run) -> None:  # type: ignore[no-untyped-def]
    """Issue 40: one reader for a person's numbers. The walk's scaled scores are 4/√2 and 2/√2:
    typed as the quiz takes them, softmax works them (exactly, shown to the places asked)."""
    result = run("softmax", "4/sqrt(2)", "2/sqrt(2)", "2/√2")
    assert result.exit_code == 0, result.stderr
    typed = run("softmax", "2.8284271247461903", "1.4142135623730951", "1.4142135623730951")
    shares = [line for line in result.stdout.splitlines() if "share" in line.lower()]
    assert "2.83" in result.stdout and "0.67" in result.stdout
    assert shares == [line for line in typed.stdout.splitlines() if "share" in line.lower()]
    assert run("softmax", "1", "2", "--times", "1/sqrt(2)").exit_code == 0
    bad = run("softmax", "__import__('os')")
    assert bad.exit_code == 2 and "Traceback" not in bad.stderr + bad.stdout
