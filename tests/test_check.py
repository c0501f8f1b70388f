"""check: every problem as file:line:col, teaching warnings that do not fail, one summary."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import FIXTURES, LESSONS
from tests.test_lesson import BAD, expectation
from tutor.author.check import hard_entry, teaching_warnings
from tutor.core.lessonfile import load_lesson
from tutor.text.format import decimal_places

GOOD = FIXTURES / "lessons" / "good"


def write(tmp_path: Path, text: str, name: str = "x.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def problem_lines(stdout: str) -> list[str]:
    return [line for line in stdout.splitlines() if not line.startswith("checked ")]


@pytest.mark.parametrize("path", BAD, ids=lambda p: p.stem)
def test_each_bad_fixture_is_reported_at_its_line_and_column(run, path: Path) -> None:  # type: ignore[no-untyped-def]
    line, col, fragment = expectation(path)
    result = run("check", str(path))
    assert result.exit_code == 1
    lines = problem_lines(result.stdout)  # in file order: the expected one need not be first
    assert any(x.startswith(f"{path}:{line}:{col}: ") and fragment in x for x in lines), lines
    assert result.stdout.splitlines()[-1].startswith("checked 1 lesson: invalid (")


MANY_MISTAKES = (
    "title: Many mistakes\n"  # 1
    "tokens: [a, b]\n"  # 2
    "X: [[1, x], [1, 2, 3]]\n"  # 3
    "W_Q: [[1], [1]]\n"  # 4
    "W_k: [[1], [1]]\n"  # 5
    "W_V: [[1], [1]]\n"  # 6
    "mask: future\n"  # 7
)


def test_every_problem_in_a_file_is_printed(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = write(tmp_path, MANY_MISTAKES)
    result = run("check", str(path))
    assert result.exit_code == 1
    lines = problem_lines(result.stdout)
    assert f"{path}:3:9: X row 1, column 2: found 'x'" in result.stdout
    assert f"{path}:3:13: row 2 of X has 3 entries, but row 1 has 2" in result.stdout
    assert f"{path}:5:1: unknown key 'W_k' in the lesson (did you mean W_K?)" in result.stdout
    assert f"{path}:7:7: mask is 'future'" in result.stdout
    assert f"{path}:1:1: missing key 'W_K'" in result.stdout
    assert len(lines) == 5
    assert result.stdout.splitlines()[-1] == "checked 1 lesson: invalid (5 errors)"


def test_valid_files_pass_and_the_summary_counts_them(run) -> None:  # type: ignore[no-untyped-def]
    result = run("check", str(GOOD / "single.yaml"), str(LESSONS / "the-cake.yaml"))
    assert result.exit_code == 0, result.stdout
    assert result.stdout.splitlines() == [
        f"{LESSONS / 'the-cake.yaml'}:14:5: warning: the row of X of and is the same as the's, "
        "so the two are the same token to attention (the same query, key and value, the same "
        "weights and Z); unless that is the point, give them different features",
        "checked 2 lessons: all valid (1 warning)",
    ]


def test_one_bad_file_among_good_ones_fails_and_all_are_checked(run) -> None:  # type: ignore[no-untyped-def]
    bad = [str(BAD[0]), str(FIXTURES / "lessons" / "bad" / "wq-rows.yaml")]
    result = run("check", str(GOOD / "single.yaml"), *bad)
    assert result.exit_code == 1
    assert str(BAD[0]) in result.stdout and "wq-rows.yaml:7:6:" in result.stdout
    assert result.stdout.splitlines()[-1].startswith("checked 3 lessons: 1 valid, 2 invalid")


def test_folders_and_names_are_checked_too(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    write(tmp_path, (GOOD / "single.yaml").read_text(), "mine.yaml")
    result = run("check", "cats-chase-mice", "mine", "--lessons-dir", str(tmp_path))
    assert result.exit_code == 0, result.stdout
    assert result.stdout.splitlines()[-1].startswith("checked 2 lessons: all valid")
    result = run("check", str(GOOD))
    assert "checked 2 lessons" in result.stdout


def test_an_unknown_name_is_a_problem_not_a_crash(run) -> None:  # type: ignore[no-untyped-def]
    result = run("check", "cats-chase-mouse", str(GOOD / "single.yaml"))
    assert result.exit_code == 1
    assert "no lesson named 'cats-chase-mouse'; did you mean cats-chase-mice?" in result.stdout
    assert "checked 2 lessons: 1 valid, 1 invalid (1 error)" in result.stdout


def test_check_needs_a_file(run) -> None:  # type: ignore[no-untyped-def]
    assert run("check").exit_code == 2


# ---------------------------------------------------------------------------------------------
# teaching warnings

UNIFORM = """\
title: Even split
tokens: [a, b, c]
X:
  - [1, 0]
  - [0, 0]
  - [1, 1]
W_Q: [[1, 0], [0, 1]]
W_K: [[1, 0], [0, 1]]
W_V: [[1, 2], [3, 4]]
"""


def test_a_uniform_row_warns_at_its_row_of_x_but_does_not_fail(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    result = run("check", str(write(tmp_path, UNIFORM)))
    assert result.exit_code == 0
    lines = problem_lines(result.stdout)
    assert len(lines) == 1
    assert lines[0].startswith(f"{tmp_path / 'x.yaml'}:5:5: warning: the weights of b are uniform")
    assert "every score in its row is 0" in lines[0]
    assert result.stdout.splitlines()[-1] == "checked 1 lesson: valid (1 warning)"


def test_the_bundled_lesson_warns_about_its_deliberate_even_split(run) -> None:  # type: ignore[no-untyped-def]
    result = run("check", "cats-chase-mice")
    assert result.exit_code == 0
    assert ":10:5: warning: the weights of chase are uniform" in result.stdout


def test_one_hot_weights_warn(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "title: Loud\ntokens: [a, b]\nX: [[3, 0], [0, 3]]\n"
        "W_Q: [[3, 0], [0, 3]]\nW_K: [[3, 0], [0, 3]]\nW_V: [[1, 0], [0, 1]]\n",
    )
    warnings = teaching_warnings(load_lesson(path))
    assert [(w.line, w.col) for w in warnings] == [(3, 5), (3, 13)]
    assert all(w.severity == "warning" for w in warnings)
    assert "nearly one-hot: 1.000 on a, as its scaled scores run from 0 to 57.28" in str(
        warnings[0]
    )


def test_the_first_row_of_a_causal_lesson_is_not_uniform_by_accident(tmp_path: Path) -> None:
    path = write(tmp_path, UNIFORM.replace("X:\n  - [1, 0]", "mask: causal\nX:\n  - [1, 0]"))
    messages = [w.message for w in teaching_warnings(load_lesson(path))]
    assert messages == [
        "the weights of b are uniform: every score in its row is 0, so the 2 tokens it sees "
        "get the same weight and Z[b] is a plain average; unless that is the point, change "
        "this row of X, or W_Q or W_K"
    ]


def test_one_token_gives_no_warnings() -> None:
    assert teaching_warnings(load_lesson(GOOD / "single.yaml")) == []


def test_long_decimals_and_big_denominators_warn_at_the_entry(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "title: Fiddly\ntokens: [a, b]\nX: [[1, 0.1234], [0, 1]]\n"
        "heads:\n"
        "  - W_Q: [[1], [0]]\n    W_K: [[1], [1]]\n    W_V: [[1], [2]]\n"
        '  - W_Q: [[1], [0]]\n    W_K: [[1], ["5/17"]]\n    W_V: [[0.125], ["1/12"]]\n',
    )
    warnings = [w for w in teaching_warnings(load_lesson(path)) if "row" in w.message]
    found = {(w.line, w.col): w.message for w in warnings}
    assert found[(3, 9)].startswith("X row 1, column 2 is 0.1234, with 4 decimal places")
    assert found[(9, 17)].startswith("W_K of head 2 row 2, column 1 is 5/17; a denominator")
    assert len([w for w in warnings if "decimal" in w.message or "denominator" in w.message]) == 2


@pytest.mark.parametrize(
    ("entry", "hard"),
    [
        ((3, 1), False),
        ((1, 8), False),  # 0.125
        ((-1, 3), False),
        ((5, 12), False),
        ((1, 16), True),  # 0.0625
        ((1, 13), True),
        ((7, 10000), True),
    ],
)
def test_what_counts_as_hard_by_hand(entry: tuple[int, int], hard: bool) -> None:
    assert (hard_entry(entry) is not None) is hard


def test_decimal_places() -> None:
    assert [decimal_places(q) for q in (1, 2, 8, 10, 16, 3, 12)] == [0, 1, 3, 1, 4, None, None]


def test_problems_are_listed_in_file_order(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = write(tmp_path, MANY_MISTAKES)
    lines = problem_lines(run("check", str(path)).stdout)
    places = [tuple(int(n) for n in line.split(":")[1:3]) for line in lines]
    assert places == sorted(places) == [(1, 1), (3, 9), (3, 13), (5, 1), (7, 7)]


def test_uniform_weights_name_the_heads_cell_in_a_multi_head_lesson(run) -> None:  # type: ignore[no-untyped-def]
    out = run("check", str(LESSONS / "the-cake-two-heads.yaml")).stdout
    assert "the weights of cake (head 2) are uniform" in out
    assert "head2.Z[cake] is a plain average" in out and " Z[cake]" not in out
    places = [tuple(int(n) for n in line.split(":")[1:3]) for line in problem_lines(out)]
    assert places == sorted(places)
    single = run("check", str(LESSONS / "cats-chase-mice.yaml")).stdout
    assert " Z[chase] is a plain average" in single


def test_loud_scaled_scores_warn_at_their_row(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "title: Loud\ntokens: [a, b, c]\nX: [[2, 0], [0, 1], [1, 1]]\n"
        "W_Q: [[2, 0], [0, 1]]\nW_K: [[2, 0], [0, 1]]\nW_V: [[1, 0], [0, 1]]\n",
    )
    warnings = teaching_warnings(load_lesson(path))
    # a: scores 16, 0, 8 (one-hot, said once); c: scores 8, 1, 5, scaled 5.66, 0.71, 3.54
    assert [(w.line, w.col, w.message.split(":")[0]) for w in warnings] == [
        (3, 5, "the weights of a are nearly one-hot"),
        (3, 21, "the scaled scores of c run from 0.71 to 5.66, beyond ±4"),
    ]


def test_weights_mostly_zero_warn_once_with_the_scaled_range(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "title: Quiet\ntokens: [a, b, c, d, e]\n"
        "X: [[2, 0], [2, 0], [0, 1], [0, 1], [0, 1]]\n"
        "W_Q: [[2, 0], [0, 0]]\nW_K: [[1, 0], [0, 0]]\nW_V: [[1, 0], [0, 1]]\n",
    )
    warnings = teaching_warnings(load_lesson(path))
    first = [w for w in warnings if (w.line, w.col) == (3, 5)]  # a: scores 8, 8, 0, 0, 0
    assert [w.message for w in first] == [
        "the weights of a are mostly 0.00: 3 of 5 show as 0.00, as its scaled scores run from "
        "0 to 5.66; a student learns little from weights that vanish, so smaller entries in X, "
        "W_Q or W_K share them out"
    ]


def test_different_words_with_the_same_row_of_x_warn(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "title: Twins\ntokens: [the, cat, the, dog]\n"
        "X:\n  - [1, 0]\n  - [0, 1]\n  - [1, 0]\n  - [0, 1]\n"
        "W_Q: [[1, 0], [0, 1]]\nW_K: [[1, 1], [0, 1]]\nW_V: [[1, 0], [0, 1]]\n",
    )
    twins = [w for w in teaching_warnings(load_lesson(path)) if "same token" in w.message]
    assert [(w.line, w.col) for w in twins] == [(7, 5)]  # dog, not the repeated "the"
    assert twins[0].message.startswith("the row of X of dog is the same as cat's")


# ---------------------------------------------------------------------------------------------
# issue 27: constant Z, tied keys, tabs, enum typos, every grouped-heads problem


def numpy_v(lesson) -> list:  # type: ignore[no-untyped-def]
    from tests.reference import attention

    ref = attention(lesson)
    return [ref[k] for k in sorted(ref, key=str) if k[0] == "V"]


@pytest.mark.parametrize(
    ("W_V", "said"),
    [
        ("[[1, 0], [0, 0]]", "every row of V is [1, 0], so every row of Z is that row"),
        ("[[1, 1], [2, 2]]", "in every row of V the columns are equal, so each row of Z repeats"),
        (
            "[[1, 1], [0, 0]]",
            "every row of V is [1, 1], so every row of Z is that row whatever "
            "the weights, and Z is 1 everywhere",
        ),
        ("[[1, 0], [0, 1]]", None),
    ],
)
def test_values_that_make_z_constant_warn(tmp_path: Path, W_V: str, said: str | None) -> None:
    path = write(
        tmp_path,
        "title: Flat\ntokens: [a, b, c]\nX: [[1, 0], [1, 1], [1, 2]]\n"
        f"W_Q: [[1, 0], [0, 1]]\nW_K: [[1, 0], [0, 1]]\nW_V: {W_V}\n",
    )
    lesson = load_lesson(path)
    found = [w for w in teaching_warnings(lesson) if "of V" in w.message]
    (V,) = numpy_v(lesson)  # the independent reference agrees on what V is
    flat = all((row == V[0]).all() for row in V) or all((row == row[0]).all() for row in V)
    assert bool(found) is flat is (said is not None)
    if said:
        assert [(w.line, w.col) for w in found] == [(6, 6)]  # at W_V
        assert said in found[0].message


def test_no_bundled_lesson_has_a_constant_z_unless_one_word_repeats(run) -> None:  # type: ignore[no-untyped-def]
    for path in sorted(LESSONS.glob("*.yaml")):
        lesson = load_lesson(path)
        warned = any("of V" in w.message for w in teaching_warnings(lesson))
        flat = [all((row == V[0]).all() for row in V) for V in numpy_v(lesson)]
        assert warned == (any(flat) and len(set(lesson.tokens)) > 1), path


def test_source_tokens_with_equal_keys_that_tie_warn(tmp_path: Path) -> None:
    text = (LESSONS / "chat-noir-cross.yaml").read_text()
    text = text.replace("  - [1, 0]\n  - [0, 1]\nW_V", "  - [1, 0]\n  - [1, 0]\nW_V")  # W_K
    path = write(tmp_path, text)
    lesson = load_lesson(path)
    assert lesson.heads[0].W_K[2] == ((1, 1), (0, 1))
    from tests.reference import attention

    K, w = attention(lesson)[("K", None)], attention(lesson)[("weights", None)]
    assert (K[1] == K[2]).all() and w[0][1] == w[0][2] == w[0].max()  # black, cat tie for chat
    (found,) = [w for w in teaching_warnings(lesson) if "keys of" in w.message]
    assert found.message.startswith(
        "the keys of black and cat are equal (K[black] = K[cat] = [1, 0]), so they share the "
        "largest weight of chat"
    )
    assert (found.line, found.col) == (lesson.where["X_src.3"])


def test_a_tab_in_the_indentation_is_named_with_its_line(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    text = (
        (LESSONS / "cats-chase-mice.yaml")
        .read_text()
        .replace("  - [0, 2, 0, 1]", "\t- [0, 2, 0, 1]")
    )
    path = write(tmp_path, text)
    result = run("check", str(path))
    assert result.exit_code == 1
    assert f"{path}:10:1: line 10 is indented with a tab; YAML needs spaces" in result.stdout
    assert "cannot start any token" not in result.stdout


@pytest.mark.parametrize(
    ("key", "typo", "meant"),
    [
        ("mask", "casual", "causal"),
        ("positions", "sinusodial", "sinusoidal"),
        ("layout", "colums", "columns"),
    ],
)
def test_every_enum_typo_gets_a_suggestion(
    run, tmp_path: Path, key: str, typo: str, meant: str
) -> None:  # type: ignore[no-untyped-def]
    text = (LESSONS / "cats-chase-mice.yaml").read_text() + f"{key}: {typo}\n"
    path = write(tmp_path, text)
    result = run("check", str(path))
    assert result.exit_code == 1
    assert f"{key} is {typo!r} (did you mean {meant}?); expected one of:" in result.stdout


def test_every_grouped_heads_problem_is_said_at_once(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = write(
        tmp_path,
        "title: g\ntokens: [a, b]\nX: [[1, 0], [0, 1]]\nkv_groups: 2\nW_K: [[1], [0]]\n"
        "heads:\n  - W_Q: [[1], [0]]\n  - W_Q: [[1], [0], [1]]\n  - W_Q: [[0], [1]]\n"
        "kv_heads:\n  - W_K: [[1], [0]]\n    W_V: [[1], [0]]\n",
    )
    result = run("check", str(path))
    assert result.exit_code == 1
    assert problem_lines(result.stdout) == [
        f"{path}:5:1: W_K given at the top level with kv_groups; grouped heads give W_Q under "
        "'heads' and W_K, W_V under 'kv_heads'",
        f"{path}:7:3: heads has 3 query heads, which do not split into 2 equal groups; expected "
        "a multiple of 2 (kv_groups)",
        f"{path}:8:10: W_Q of head 2 has 3 rows, but X has 2 columns, so W_Q needs 2 rows",
        f"{path}:11:3: kv_heads has 1 entry, but kv_groups is 2; expected one W_K, W_V pair per "
        "group",
    ]
