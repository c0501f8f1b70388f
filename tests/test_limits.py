"""Stated limits, enforced with clear errors; and what the largest legal lesson costs to show.

Sizes: size, tokens, dimensions, heads, values in a file, nesting, aliases. Costs: errors and
warnings stop at a count, exact forms too large to build are elided (as long sums are), the
console width is clamped, and the blank sheet of the largest lesson can be graded. Timings are
in bench/bench.py --limits, not here.
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest

from tests import lessongen
from tests.conftest import FIXTURES
from tests.test_hostile import tutor
from tutor.core.spec import (
    MAX_DENOMINATOR_DIGITS,
    MAX_DIM,
    MAX_ERRORS,
    MAX_HEADS,
    MAX_TOKENS,
    MAX_VALUES,
)


def lesson(tokens: int = 2, d_model: int = 1, d_k: int = 1) -> str:
    row = "[" + ", ".join(["1"] * d_model) + "]"
    w = "[" + ", ".join(["[" + ", ".join(["1"] * d_k) + "]"] * d_model) + "]"
    toks = ", ".join(f"t{i}" for i in range(tokens))
    x = "[" + ", ".join([row] * tokens) + "]"
    return f"title: Limits\ntokens: [{toks}]\nX: {x}\nW_Q: {w}\nW_K: {w}\nW_V: {w}\n"


def heads_lesson(heads: int, d_v: int = 1, w_o_rows: int | None = None) -> str:
    head = f"  - {{W_Q: [[1]], W_K: [[1]], W_V: [[{', '.join(['1'] * d_v)}]]}}\n"
    text = "title: t\ntokens: [a, b]\nX: [[1], [2]]\nheads:\n" + head * heads
    if w_o_rows is not None:
        text += "W_O: [" + ", ".join(["[1]"] * w_o_rows) + "]\n"
    return text


def largest(rng: random.Random, heads: int = 0, kinds: str = "idf") -> str:
    """A lesson at every limit; with heads, W_O as tall as allowed (heads × d_v = MAX_DIM)."""
    d_v = MAX_DIM // heads if heads else MAX_DIM
    text = lessongen.lesson_text(
        rng, MAX_TOKENS, MAX_DIM, MAX_DIM, d_v, kinds, heads, w_o=heads > 0, d_out=MAX_DIM
    )
    tokens = "tokens: [" + ", ".join(f"t{i}" for i in range(MAX_TOKENS)) + "]"
    return re.sub(r"^tokens: .*$", tokens, text, count=1, flags=re.M)


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        (
            lesson(tokens=MAX_TOKENS + 1),
            f"tokens has {MAX_TOKENS + 1} entries; at most {MAX_TOKENS} are allowed",
        ),
        (
            lesson(d_model=MAX_DIM + 1),
            f"row 1 of X has {MAX_DIM + 1} entries; at most {MAX_DIM} are allowed",
        ),
        (
            lesson(d_k=MAX_DIM + 1),
            f"row 1 of W_Q has {MAX_DIM + 1} entries; at most {MAX_DIM} are allowed",
        ),
        (
            heads_lesson(MAX_HEADS + 1),
            f"heads has {MAX_HEADS + 1} heads; at most {MAX_HEADS} are allowed",
        ),
        (
            heads_lesson(2, d_v=MAX_DIM, w_o_rows=2 * MAX_DIM),
            f"W_O has {2 * MAX_DIM} rows; at most {MAX_DIM} are allowed",
        ),
        ("[" * 20000, "nested more than 16 levels deep"),
        ("x: " + "[" * 20000 + "]" * 20000, "nested more than 16 levels deep"),
        ("title: t\n" + "\n".join(f"k{i}: &a{i} [1]" for i in range(5)), "anchors"),
        ("\ufefftitle: BOM only", "missing key 'tokens'"),
    ],
)
def test_limits_give_a_clean_error_quickly(tmp_path: Path, text: str, fragment: str) -> None:
    """In a real process: its timeout is the guard that the refusal comes at once."""
    path = tmp_path / "limit.yaml"
    path.write_text(text, encoding="utf-8")
    result = tutor("walk", str(path), "--json", env={"COLUMNS": "1000"}, text=True)
    assert result.returncode == 1
    assert fragment in result.stderr
    assert str(path) in result.stderr
    assert "Traceback" not in result.stderr


def test_largest_legal_lessons_are_accepted(run, tmp_path: Path) -> None:
    for heads in (0, MAX_HEADS):
        path = tmp_path / f"big{heads}.yaml"
        path.write_text(largest(random.Random(heads), heads))
        result = run("walk", str(path), "--json", "--step", "Z")
        assert result.exit_code == 0, result.stderr


def test_largest_lesson_holds_far_fewer_values_than_the_cap() -> None:
    """Every head at full size (no W_O, which would cap d_v) is the most a lesson can hold."""
    from tutor.core.yamlsrc import compose

    rng = random.Random(1)
    text = lessongen.lesson_text(rng, MAX_TOKENS, MAX_DIM, MAX_DIM, MAX_DIM, "i", MAX_HEADS)
    nodes, stack = 0, [compose(text, "big.yaml")]
    while stack:
        node = stack.pop()
        nodes += 1
        if isinstance(node.value, list):
            stack += [
                x for item in node.value for x in (item if isinstance(item, tuple) else [item])
            ]
    assert nodes < MAX_VALUES / 2


def test_a_megabyte_of_entries_is_refused_where_the_cap_is_passed(run, tmp_path: Path) -> None:
    row = "[" + ", ".join(["x"] * 500) + "]"
    path = tmp_path / "many.yaml"
    path.write_text("title: bad\ntokens: [a]\nX: [" + ", ".join([row] * 500) + "]\n")
    result = run("check", str(path))
    assert result.exit_code == 1
    assert f"{path}:3:" in result.stdout
    assert f"holds more than {MAX_VALUES:,} values" in result.stdout
    assert result.stdout.count("\n") < 5  # one error and the summary, not 250,000 lines


def test_check_stops_after_max_errors(run, tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    bad = ", ".join(["x"] * MAX_DIM)
    w = "[" + ", ".join([f"[{bad}]"] * MAX_DIM) + "]"
    toks = ", ".join(f"t{i}" for i in range(MAX_TOKENS))
    x = "[" + ", ".join([f"[{bad}]"] * MAX_TOKENS) + "]"
    path.write_text(f"title: t\ntokens: [{toks}]\nX: {x}\nW_Q: {w}\nW_K: {w}\nW_V: {w}\n")
    result = run("check", str(path))
    assert result.exit_code == 1
    lines = [line for line in result.stdout.splitlines() if line.startswith(str(path))]
    assert len(lines) == MAX_ERRORS + 1
    assert "X row 1, column 1: found 'x'" in lines[0]
    assert lines[-1].endswith(f"stopped after {MAX_ERRORS} errors; fix these and check again")
    assert f"checked 1 lesson: invalid ({MAX_ERRORS + 1} errors)" in result.stdout


def test_check_counts_the_warnings_it_does_not_show(run, tmp_path: Path) -> None:
    path = tmp_path / "places.yaml"
    entries = ", ".join(["0.1234"] * MAX_DIM)
    w = "[" + ", ".join([f"[{entries}]"] * MAX_DIM) + "]"
    path.write_text(f"title: t\ntokens: [a, b]\nX: [[{entries}], [{entries}]]\nW_Q: {w}\n"
                    f"W_K: {w}\nW_V: {w}\n")  # fmt: skip
    result = run("check", str(path))
    assert result.exit_code == 0
    warnings = [line for line in result.stdout.splitlines() if ": warning: " in line]
    assert len(warnings) == MAX_ERRORS + 1
    entries = 2 * MAX_DIM + 3 * MAX_DIM * MAX_DIM  # one warning each: four decimal places
    uniform = 2  # and one per row of weights: the rows of X are equal, so the scores are too
    uniform += 1  # and one for two different words with the same row of X
    assert warnings[-1].endswith(f"{entries + uniform - MAX_ERRORS} more warnings not shown")


def test_a_folder_of_such_files_reports_each_briefly(run, tmp_path: Path) -> None:
    row = "[" + ", ".join(["x"] * 500) + "]"
    for i in range(3):
        (tmp_path / f"bad{i}.yaml").write_text("title: t\ntokens: [a]\nX: [" + row + "]\n")
    result = run("check", str(tmp_path))
    assert result.exit_code == 1
    assert result.stdout.count("\n") <= 3 * (MAX_ERRORS + 1) + 1
    assert "checked 3 lessons: 0 valid, 3 invalid" in result.stdout


@pytest.mark.parametrize("columns", ["99999999", "0"])
def test_the_width_is_clamped(run, columns: str) -> None:
    result = run("walk", "cats-chase-mice", "--step", "Z", env={"COLUMNS": columns})
    assert result.exit_code == 0
    widths = [len(line) for line in result.stdout.splitlines()]
    assert max(widths) <= 1000
    assert "Z = weights · V" in result.stdout  # something is drawn, however narrow


def test_exact_forms_too_large_are_elided_with_a_note(run, tmp_path: Path) -> None:
    """Six tokens of distinct scores: each weight has five exponentials, above the cap of 4;
    the weights of cats-chase-mice (one exponential) are shown whole."""
    from tutor.core.exact_size import MAX_EXPS

    path = tmp_path / "six.yaml"
    path.write_text(
        "title: six\ntokens: [a, b, c, d, e, f]\nX: [[1], [2], [3], [4], [5], [6]]\n"
        "W_Q: [[1]]\nW_K: [[1]]\nW_V: [[1]]\n"
    )
    result = run("walk", str(path), "--exact", "--step", "weights")
    assert result.exit_code == 0
    assert "… ≈ 0.00" in result.stdout
    assert f"…: exact form too long to show (more than {MAX_EXPS} exponentials" in result.stdout
    data = json.loads(run("walk", str(path), "--json", "--exact", "--step", "weights").stdout)
    assert data["steps"][0]["exact"][0] == [None] * 6
    cats = json.loads(
        run("walk", "cats-chase-mice", "--json", "--exact", "--step", "weights").stdout
    )
    assert cats["steps"][0]["exact"][0][0] == "1/(2 + exp(sqrt(2)))"
    plain = run("walk", "cats-chase-mice", "--exact", "--step", "weights").stdout
    assert "exact form too long" not in plain and "1/(2 + e^√2) ≈ 0.16" in plain


def test_exact_fractions_of_many_digits_are_elided(run, tmp_path: Path) -> None:
    path = tmp_path / "digits.yaml"
    path.write_text(
        'title: digits\ntokens: [a, b]\nX: [["1/100000000000007"], ["2/100000000000009"]]\n'
        'W_Q: [["3/100000000000013"]]\nW_K: [[1]]\nW_V: [[1]]\n'
    )
    data = json.loads(run("walk", str(path), "--json", "--exact", "--step", "Q").stdout)
    assert data["steps"][0]["exact"] == [[None], [None]]
    explained = run("explain", str(path), "Q[a, 1]").stdout
    assert "Q[a, 1]" in explained and "≈ 0.00" in explained


def test_the_blank_sheet_of_the_largest_lesson_is_gradable(run, tmp_path: Path) -> None:
    path = tmp_path / "big.yaml"
    path.write_text(largest(random.Random(3), MAX_HEADS))
    sheet = tmp_path / "sheet.yaml"
    assert run("export", str(path), "--format", "sheet", "-o", str(sheet)).exit_code == 0
    assert sheet.stat().st_size < 1024 * 1024
    result = run("grade", str(path), str(sheet), "--json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)


def test_file_over_one_mebibyte_is_refused_before_parsing(run, tmp_path: Path) -> None:
    path = tmp_path / "huge.yaml"
    path.write_text("# " + "x" * (1024 * 1024) + "\n")
    result = run("walk", str(path))
    assert result.exit_code == 1
    assert "may be at most 1 MiB" in result.stderr


def test_alias_bomb_is_refused_at_once() -> None:
    """In a real process: its timeout is the guard (expanded, the bomb runs out of memory)."""
    result = tutor("walk", str(FIXTURES / "lessons" / "bad" / "alias-bomb.yaml"), text=True)
    assert result.returncode == 1 and "anchors" in result.stderr


def test_a_matrix_of_many_long_denominators_is_refused(run, tmp_path: Path) -> None:
    """Each entry is legal (30 digits), but three different 15-digit denominators in one matrix
    would make every product of the lesson thousands of digits long."""
    path = tmp_path / "dens.yaml"
    path.write_text(
        'title: t\ntokens: [a, b]\nX: [["1/100000000000031", "1/100000000000067"],\n'
        '    ["1/100000000000097", 1]]\nW_Q: [[1], [1]]\nW_K: [[1], [1]]\nW_V: [[1], [1]]\n'
    )
    result = run("check", str(path))
    assert result.exit_code == 1
    assert (
        f"{path}:4:6: X row 2, column 1: with this entry the entries of X have a common "
        f"denominator of more than {MAX_DENOMINATOR_DIGITS} digits" in result.stdout
    )
