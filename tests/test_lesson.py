"""Lesson files: exact reading of numbers and one precise error per bad fixture."""

from __future__ import annotations

import re
from dataclasses import FrozenInstanceError, is_dataclass
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, LESSONS, bundled_lessons
from tutor.core.catalog import find_lesson
from tutor.core.errors import LessonError
from tutor.core.lesson import unique_labels
from tutor.core.lessonfile import load_lesson

BAD = sorted((FIXTURES / "lessons" / "bad").glob("*.yaml"))
CATS = LESSONS / "cats-chase-mice.yaml"


def expectation(path: Path) -> tuple[int, int, str]:
    m = re.match(r"# expect: (\d+):(\d+): (.*)", path.read_text().splitlines()[0])
    assert m, f"{path} needs a '# expect: LINE:COL: fragment' first line"
    return int(m[1]), int(m[2]), m[3]


@pytest.mark.parametrize("path", BAD, ids=lambda p: p.stem)
def test_bad_lesson_reports_file_line_col_and_message(path: Path) -> None:
    line, col, fragment = expectation(path)
    with pytest.raises(LessonError) as err:
        load_lesson(path)
    first = str(err.value.problems[0])
    assert first.startswith(f"{path}:{line}:{col}: "), first
    assert fragment in first


@pytest.mark.parametrize("path", BAD, ids=lambda p: p.stem)
def test_bad_lesson_through_cli_exits_1_without_traceback(run, path: Path) -> None:
    result = run("walk", str(path))
    assert result.exit_code == 1
    assert str(path) in result.stderr
    assert "Traceback" not in result.output + result.stderr


def test_empty_file_is_an_error(tmp_path: Path) -> None:
    empty = tmp_path / "nothing.yaml"
    empty.write_text("")
    with pytest.raises(LessonError, match=r"nothing\.yaml:1:1: the file is empty"):
        load_lesson(empty)


def test_every_problem_is_reported_not_only_the_first() -> None:
    with pytest.raises(LessonError) as err:
        load_lesson(FIXTURES / "lessons" / "bad" / "unknown-key.yaml")
    messages = [p.message for p in err.value.problems]
    assert any("W_q" in m for m in messages)
    assert any("missing key 'W_Q'" in m for m in messages)


def test_decimals_are_exact_as_written_and_yaml11_oddities_are_not_applied() -> None:
    lesson = load_lesson(FIXTURES / "lessons" / "good" / "decimals.yaml")
    assert lesson.X[0] == ((1, 10), (10, 1), (1, 3))  # 0.1 is 1/10, 010 is ten
    assert lesson.X[1] == ((10, 1), (-1, 2), (-2, 7))  # 1e1 is ten
    assert lesson.precision == 3


def test_repeated_tokens_get_distinct_labels() -> None:
    assert unique_labels(["the", "dog", "saw", "the", "cat"]) == (
        "the#1",
        "dog",
        "saw",
        "the#2",
        "cat",
    )
    lesson = load_lesson(FIXTURES / "lessons" / "good" / "decimals.yaml")
    assert len(set(lesson.labels)) == lesson.n


@pytest.mark.parametrize("path", bundled_lessons(), ids=lambda p: p.stem)
def test_bundled_lessons_load_by_name(path: Path) -> None:
    assert find_lesson(path.stem) == path
    assert load_lesson(find_lesson(path.stem)).title


def test_unknown_name_suggests_close_ones() -> None:
    with pytest.raises(LessonError, match="did you mean cats-chase-mice"):
        find_lesson("cats-chase-mouse")


@pytest.mark.parametrize(
    ("make", "fragment"),
    [
        (lambda p: p.mkdir(), "is a folder"),
        (lambda p: None, "no such lesson file"),
        (lambda p: p.write_bytes(b"title: \xff\xfe"), "is not UTF-8"),
        (lambda p: p.write_bytes(b"\x00\x01binary"), "binary file"),
    ],
)
def test_unreadable_paths_give_one_line(tmp_path: Path, make, fragment: str) -> None:  # type: ignore[no-untyped-def]
    target = tmp_path / "x.yaml"
    make(target)
    with pytest.raises(LessonError) as err:
        load_lesson(target)
    assert fragment in str(err.value)
    assert str(target) in str(err.value)
    assert "\n" not in str(err.value)


# ---------------------------------------------------------------------------------------------
# one of a thing is singular


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "tokens: [a, b]\nX: [[1, 2], [1]]\nW_Q: [[1], [1]]\nW_K: [[1], [1]]\nW_V: [[1], [1]]\n",
            "row 2 of X has 1 entry, but row 1 has 2; every row needs 2",
        ),
        (
            "tokens: [a, b]\nX: [[1], [2]]\nW_Q: [[1], [1]]\nW_K: [[1]]\nW_V: [[1]]\n",
            "W_Q has 2 rows, but X has 1 column, so W_Q needs 1 row",
        ),
        (
            "tokens: [a, b]\nX: [[1, 0], [0, 1]]\nheads:\n"
            "  - {W_Q: [[1], [0]], W_K: [[0], [1]], W_V: [[1], [1]]}\nW_O: [[1], [1]]\n",
            "W_O has 2 rows, but the concatenation has 1 × 1 = 1 column, so W_O needs 1 row",
        ),
        (
            "tokens: [a, b]\nX: [[1, 0], [0, 1]]\nheads:\n"
            "  - {W_Q: [[1], [0]], W_K: [[0], [1]], W_V: [[1], [1]]}\n"
            "  - {W_Q: [[1], [0]], W_K: [[0], [1]], W_V: [[1], [1]]}\nW_O: [[1]]\n",
            "W_O has 1 row, but the concatenation has 2 × 1 = 2 columns, so W_O needs 2 rows",
        ),
    ],
)
def test_counts_of_one_are_singular(tmp_path, run, text: str, message: str) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "one.yaml"
    path.write_text("title: t\n" + text)
    result = run("check", str(path))
    assert result.exit_code == 1
    assert message in " ".join(result.stdout.split())


def test_a_folder_for_an_answer_sheet_says_an(tmp_path, run) -> None:  # type: ignore[no-untyped-def]
    result = run("grade", "cats-chase-mice", str(tmp_path))
    assert result.exit_code == 1
    assert "is a folder; expected an answer sheet file (.yaml)" in result.stderr
    result = run("walk", str(tmp_path))
    assert "is a folder; expected a lesson file (.yaml)" in result.stderr


@pytest.mark.parametrize("name", ["notes", "where"])
def test_a_loaded_lessons_notes_and_positions_cannot_be_changed(name: str) -> None:
    view = getattr(load_lesson(CATS), name)
    before = dict(view)
    key = next(iter(view))
    with pytest.raises(TypeError):
        view[key] = view[key]
    with pytest.raises(TypeError):
        view["a new key"] = view[key]
    with pytest.raises(TypeError):
        del view[key]
    assert dict(view) == before


@pytest.mark.parametrize("field", ["steps", "count"])
def test_a_loaded_lessons_quiz_defaults_cannot_be_changed(field: str) -> None:
    lesson = load_lesson(CATS)
    with pytest.raises(FrozenInstanceError):
        setattr(lesson.quiz, field, None)


@pytest.mark.parametrize(
    "section, steps, count",
    [
        ("", (), 8),  # no quiz: section, the defaults
        ("quiz:\n  steps: [scores, Z]\n  count: 3\n", ("scores", "Z"), 3),
        ("quiz:\n  count: 012\n", (), 12),  # read from the text: 012 is twelve, not octal
        ("quiz:\n  steps: [weights]\n", ("weights",), 8),
        ("quiz:\n  steps: []\n", (), 8),
        ("quiz: {}\n", (), 8),
    ],
    ids=["no quiz section", "steps and count", "count only", "steps only", "no steps", "empty"],
)
def test_quiz_defaults_come_out_typed(tmp_path: Path, section: str, steps, count) -> None:  # type: ignore[no-untyped-def]
    p = tmp_path / "q.yaml"
    p.write_text(CATS.read_text() + section)
    quiz = load_lesson(p).quiz
    assert is_dataclass(quiz)
    assert (quiz.steps, quiz.count) == (steps, count)
    assert type(quiz.steps) is tuple and type(quiz.count) is int


# ---------------------------------------------------------------------------------------------
# integers too long for int(), and characters YAML refuses (issues 19.3 and 19.7)

SMALL = """title: t
tokens: [a, b]
X: [[1, 0], [0, 1]]\r
W_Q: [[1], [0]]
W_K: [[1], [0]]
W_V: [[1], [0]]
"""


@pytest.mark.parametrize(
    ("tail", "where", "message"),
    [
        ("precision: " + "1" * 4301, "7:12", "precision is 1111"),
        ("precision: " + "0" * 5000 + "11", "7:12", "expected a whole number from 0 to 10"),
        ("quiz: {count: " + "9" * 5000 + "}", "7:15", "quiz count is 9999"),
        ("quiz: {count: " + "0" * 4999 + "201}", "7:15", "expected a whole number from 1 to 200"),
    ],
    ids=["precision-4301", "precision-zeros", "count-5000", "count-zeros"],
)
def test_a_huge_integer_field_is_a_lesson_error(
    run, tmp_path: Path, tail: str, where: str, message: str
) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "digits.yaml"
    path.write_text(SMALL + tail + "\n")
    r = run("check", str(path))
    out = r.stdout + r.stderr
    assert r.exit_code == 1, out
    assert f"{path}:{where}: " in out and message in out
    assert "internal error" not in out


def test_leading_zeros_do_not_count(tmp_path: Path) -> None:
    path = tmp_path / "zeros.yaml"
    path.write_text(SMALL + "precision: " + "0" * 5000 + "3\nquiz: {count: " + "0" * 4999 + "1}\n")
    lesson = load_lesson(path)
    assert (lesson.precision, lesson.quiz.count) == (3, 1)


@pytest.mark.parametrize("char", ["\x1b", "\x7f", "\x9b", "\ufffe", "\x07"])
def test_a_character_yaml_refuses_is_reported_where_it_is(run, tmp_path: Path, char: str) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "raw.yaml"
    path.write_text(SMALL + 'title_note: 1\nnotes: {scores: "' + char + '[31mred"}\n', newline="")
    r = run("check", str(path))
    assert r.exit_code == 1
    expected = f"{path}:8:18: not valid YAML: the character U+{ord(char):04X} is not allowed"
    assert expected in r.stdout + r.stderr


def test_fingerprint_changes_with_any_number_and_not_with_words(tmp_path):
    from tutor.core.catalog import find_lesson
    from tutor.core.lessonfile import load_lesson

    src = find_lesson("cats-chase-mice").read_text(encoding="utf-8")
    base = load_lesson(find_lesson("cats-chase-mice")).fingerprint
    assert len(base) == 8 and all(c in "0123456789abcdef" for c in base)
    worded = tmp_path / "worded.yaml"
    worded.write_text(src.replace("title:", "title: Renamed —", 1), encoding="utf-8")
    assert load_lesson(worded).fingerprint == base
    import re

    # change exactly one entry of W_V: the first "0" or "1" entry after "W_V:"
    head, tail = src.split("W_V:", 1)
    changed = re.sub(
        r"(?<![\d.])([01])(?![\d.])", lambda m: "2" if m.group(1) != "2" else "3", tail, count=1
    )
    assert changed != tail
    moved = tmp_path / "moved.yaml"
    moved.write_text(head + "W_V:" + changed, encoding="utf-8")
    assert load_lesson(moved).fingerprint != base
