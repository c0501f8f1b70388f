"""Hostile input on the newest surfaces (grading a class, rosters, walk's --cell/--row, the
command line's --next-token), each fed through the CLI as a user would; then random small
lessons that combine the new lesson keys (kv_groups, next, layout, focus, points) go through
every command, which must exit 0 or 1 with a message, never a traceback or an internal error.
"""

from __future__ import annotations

import csv
import io
import random
from pathlib import Path

import pytest

from tests import lessongen
from tests.conftest import LESSONS

# ---------------------------------------------------------------------------------------------
# grade: one sheet per student, each file once


def blank_sheet(run, tmp_path: Path, name: str, student: str, student_id: str) -> Path:  # type: ignore[no-untyped-def]
    result = run("export", "cats-chase-mice", "--format", "sheet")
    assert result.exit_code == 0, result.stderr
    text = result.stdout.replace('student: ""', f'student: "{student}"')
    text = text.replace('student_id: ""', f'student_id: "{student_id}"')
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def gradebook(path: Path) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8"))))


def test_two_sheets_with_one_student_id_are_not_both_graded(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    first = blank_sheet(run, tmp_path, "ann.yaml", "Ann", "s1")
    second = blank_sheet(run, tmp_path, "bob.yaml", "Bob", "S1")  # ids compare without case
    out = tmp_path / "book.csv"
    result = run("grade", "cats-chase-mice", str(first), str(second), "--csv", str(out))
    assert result.exit_code == 1
    assert "Traceback" not in result.output
    lines = second.read_text(encoding="utf-8").splitlines()
    line = next(i for i, t in enumerate(lines, 1) if t.startswith('student_id: "S1"'))
    said = "".join(result.stdout.split())  # the table wraps long paths; compare unwrapped
    assert f"bob.yaml:{line}:13:student_idS1isalsoon{first}".replace(" ", "") in said
    assert [row["Student"] for row in gradebook(out)] == ["Ann"]


def test_a_sheet_given_twice_is_graded_once_and_said(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    sheet = blank_sheet(run, tmp_path, "ann.yaml", "Ann", "s1")
    out = tmp_path / "book.csv"
    # the file itself and its folder: the same sheet twice
    result = run("grade", "cats-chase-mice", str(sheet), str(tmp_path), "--csv", str(out))
    assert result.exit_code == 0, result.output
    assert "is given twice; it is graded once" in result.stderr
    assert len(gradebook(out)) == 1


def test_sheets_without_ids_are_all_graded(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    a = blank_sheet(run, tmp_path, "a.yaml", "Ann", "")
    b = blank_sheet(run, tmp_path, "b.yaml", "Bob", "")
    out = tmp_path / "book.csv"
    result = run("grade", "cats-chase-mice", str(a), str(b), "--csv", str(out))
    assert result.exit_code == 0, result.output
    assert [row["Student"] for row in gradebook(out)] == ["Ann", "Bob"]


# ---------------------------------------------------------------------------------------------
# rosters: an id names one student


def test_a_roster_giving_one_id_to_two_students_is_refused(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    roster = tmp_path / "roster.csv"
    roster.write_text("name,id\nAnn Lee,s1\nBob Roe,S1\n", encoding="utf-8")
    out = tmp_path / "variants"
    result = run("variants", "the-cake", "--roster", str(roster), "--seed", "1", "-o", str(out))
    assert result.exit_code == 1
    assert (
        f"{roster}:3:1: the id S1 is given twice: to Ann Lee on line 2 and to Bob Roe; "
        "expected one id per student"
    ) in result.stderr.replace("\n", " ")
    assert not out.exists()


def test_a_roster_with_two_students_of_one_name_is_fine(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    roster = tmp_path / "roster.csv"
    roster.write_text("name,id\nAnn Lee,s1\nAnn Lee,s2\n", encoding="utf-8")
    out = tmp_path / "variants"
    result = run("variants", "the-cake", "--roster", str(roster), "--seed", "1", "-o", str(out))
    assert result.exit_code == 0, result.output
    assert len(list(out.glob("*.yaml"))) == 2


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda p: p.mkdir(), "is a folder; expected a roster file (.csv)"),
        (lambda p: p.write_bytes(b"name,id\n\x00\x01,s1\n"), "binary file; expected a CSV roster"),
    ],
)
def test_a_roster_that_is_no_csv_file_is_named_as_a_csv(run, tmp_path, make, message) -> None:  # type: ignore[no-untyped-def]
    roster = tmp_path / "roster.csv"
    make(roster)
    result = run("variants", "the-cake", "--roster", str(roster), "-o", str(tmp_path / "v"))
    assert result.exit_code == 1
    assert f"{roster}:1:1: " in result.stderr and message in result.stderr
    assert "YAML" not in result.stderr and ".yaml" not in result.stderr


# ---------------------------------------------------------------------------------------------
# walk: an empty --cell or --row is given, not left out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--cell", ""], "--cell: cannot read '' as a cell"),
        (["--row", ""], "--row '' is not a token of this lesson"),
        (["--json", "--cell", ""], "--cell does not apply to --json"),
        (["--json", "--row", ""], "--row does not apply to --json"),
    ],
)
def test_an_empty_cell_or_row_is_a_usage_error(run, args, message) -> None:  # type: ignore[no-untyped-def]
    result = run("walk", "the-cake", *args)
    assert result.exit_code == 2
    assert message in result.stderr
    assert result.stdout == ""


# ---------------------------------------------------------------------------------------------
# walk --next-token: the lesson's notes on its own next token are not shown for another one


def test_the_lessons_next_notes_are_dropped_for_another_next_token(run) -> None:  # type: ignore[no-untyped-def]
    lesson = str(LESSONS / "the-cake-next-token.yaml")
    own = run("walk", lesson, "--step", "z_new", env={"COLUMNS": "200"})
    assert own.exit_code == 0, own.output
    assert "cake's own" in own.stdout  # the lesson's note on z_new
    same = run("walk", lesson, "--step", "z_new", "--next-token", "cake", "--x", "[2, 0, 1]")
    assert same.exit_code == 0, same.output
    assert "What to notice" in same.stdout  # the same token and row: the note still holds
    other = run("walk", lesson, "--step", "z_new", "--next-token", "dog", "--x", "[1, 0, 0]")
    assert other.exit_code == 0, other.output
    assert "What to notice" not in other.stdout and "cake's own" not in other.stdout


# ---------------------------------------------------------------------------------------------
# random lessons combining the new keys, through every command

SEED_COUNT = 16


def random_lesson(rng: random.Random) -> str:
    """A small lesson, valid or not, combining kv_groups, next, layout, focus and points with
    sometimes hostile values."""
    n, d_model, d_k = rng.randint(1, 3), rng.randint(1, 3), rng.randint(1, 2)
    causal = rng.random() < 0.5
    if rng.random() < 0.5:
        groups = rng.choice([1, 2])
        text = lessongen.grouped_lesson_text(
            rng, n, d_model, d_k, d_k, heads=groups * rng.randint(1, 2), groups=groups,
            kinds="if", causal=causal, w_o=rng.random() < 0.5,
        )  # fmt: skip
    else:
        heads = rng.choice([0, 0, 2])
        text = lessongen.lesson_text(
            rng, n, d_model, d_k, d_k, kinds="if", heads=heads, causal=causal,
            w_o=heads > 0 and rng.random() < 0.5,
        )  # fmt: skip
    tokens = text.split("tokens: [", 1)[1].split("]", 1)[0].split(", ")
    if rng.random() < 0.5:
        width = d_model if rng.random() < 0.8 else d_model + 1
        text += lessongen.next_entry(rng, width, kinds="if")
    if rng.random() < 0.5:
        text += f"layout: {rng.choice(['columns'] * 6 + ['rows'] * 2 + ['diagonal', '1'])}\n"
    if rng.random() < 0.5:
        row, col = rng.choice(tokens), rng.choice(tokens) if rng.random() < 0.8 else "nobody"
        z = f"'Z[{row}, {rng.randint(1, d_k + 1)}]'"
        text += "focus: " + rng.choice([row, row, f"'weights[{row}, {col}]'", z, "nobody"])
        text += "\n"
    if rng.random() < 0.5:
        step = rng.choice(["Q", "weights", "Z"] * 3 + ["concat", "output", "scores_new", "weigths"])
        value = rng.choice(["1", "4", "0", "7"] * 2 + ["-1", "2.5", "1001", "many"])
        text += f"points: {{{step}: {value}}}\n"
    return text


def no_crash(result) -> None:  # type: ignore[no-untyped-def]
    assert result.exit_code in (0, 1), (result.exit_code, result.output)
    assert "Traceback" not in result.output and "internal error" not in result.output


@pytest.mark.parametrize("seed", range(SEED_COUNT))
def test_random_lessons_with_the_new_keys_never_crash(run, tmp_path, seed) -> None:  # type: ignore[no-untyped-def]
    rng = random.Random(seed)
    path = tmp_path / f"random-{seed}.yaml"
    path.write_text(random_lesson(rng), encoding="utf-8")
    lesson = str(path)
    walked = run("walk", lesson)
    no_crash(walked)
    if walked.exit_code == 1:  # a bad lesson: every command says the same, by file and line
        assert f"{lesson}:" in walked.stderr
        for args in (["walk", lesson, "--json"], ["export", lesson, "--format", "sheet"]):
            refused = run(*args)
            assert refused.exit_code == 1 and f"{lesson}:" in refused.stderr
        return
    no_crash(run("walk", lesson, "--json"))
    no_crash(run("quiz", lesson, "--seed", str(seed), "--count", "3", input="1\nx\n\n"))
    no_crash(run("export", lesson, "--format", "md"))
    blank = run("export", lesson, "--format", "sheet")
    no_crash(blank)
    sheet = tmp_path / "sheet.yaml"
    sheet.write_text(blank.stdout, encoding="utf-8")
    graded = run("grade", lesson, str(sheet))
    no_crash(graded)
    assert graded.exit_code == 0, graded.output  # a blank sheet is graded: every cell empty


# ---------------------------------------------------------------------------------------------
# a grouped lesson's query head may have its own focus, as every other head may


def grouped_with_head_focus(tmp_path: Path, focus: str) -> Path:
    text = (LESSONS / "the-cake-grouped.yaml").read_text(encoding="utf-8")
    head = "  - name: pronoun asks for food\n"
    assert head in text
    path = tmp_path / "grouped.yaml"
    path.write_text(text.replace(head, head + f"    focus: '{focus}'\n"), encoding="utf-8")
    return path


def test_a_grouped_query_head_takes_its_own_focus(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from tutor.core.lessonfile import load_lesson

    path = grouped_with_head_focus(tmp_path, "weights[it, cake]")
    lesson = load_lesson(path)
    assert (lesson.heads[0].focus.row, lesson.heads[0].focus.step) == ("it", "weights")
    assert lesson.heads[1].focus is None
    result = run("walk", str(path), "--head", "1", "--step", "weights")
    assert result.exit_code == 0, result.output
    assert 'softmax of the row "it"' in result.stdout


def test_a_grouped_query_heads_bad_focus_is_named_at_its_place(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = grouped_with_head_focus(tmp_path, "weights[it, pie]")
    lines = path.read_text(encoding="utf-8").splitlines()
    line = next(i for i, t in enumerate(lines, 1) if "pie" in t)
    result = run("walk", str(path))
    assert result.exit_code == 1
    assert f"{path}:{line}:12: focus of head 1: the column 'pie' is not a token" in result.stderr


# ---------------------------------------------------------------------------------------------
# points: the decoding step's rows are on the sheet, so they take points too


def test_points_go_to_the_decoding_steps_a_student_fills(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    import json

    lesson = tmp_path / "next.yaml"
    text = (LESSONS / "the-cake-next-token.yaml").read_text(encoding="utf-8")
    lesson.write_text(text + "points:\n  z_new: 4\n  weights_new: 3\n", encoding="utf-8")
    sheet = tmp_path / "sheet.yaml"
    blank = run("export", str(lesson), "--format", "sheet")
    assert blank.exit_code == 0, blank.output
    sheet.write_text(blank.stdout, encoding="utf-8")
    graded = run("grade", str(lesson), str(sheet), "--json")
    assert graded.exit_code == 0, graded.output
    report = json.loads(graded.stdout)
    worth = {s["step"]: (s["total"], s["out_of"]) for s in report["steps"]}
    assert worth["z_new"][1] == 4 and worth["weights_new"][1] == 3
    for step, (cells, out_of) in worth.items():
        if step not in ("z_new", "weights_new"):
            assert out_of == cells  # one point per cell
    assert report["out_of"] == sum(out_of for _, out_of in worth.values())


@pytest.mark.parametrize(
    ("lesson", "points", "message"),
    [
        ("the-cake", "z_new: 4", "this lesson has no z_new step (no next:)"),
        ("the-cake-next-token", "K_cache: 4", "K_cache is given by the lesson"),
        ("the-cake-next-token", "concat_new: 4", "this lesson has no concat_new step (one head)"),
    ],
)
def test_points_for_a_decoding_step_the_sheet_lacks_are_refused(
    run, tmp_path, lesson, points, message
) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "lesson.yaml"
    text = (LESSONS / f"{lesson}.yaml").read_text(encoding="utf-8") + f"points:\n  {points}\n"
    path.write_text(text, encoding="utf-8")
    line = len(text.splitlines())
    result = run("walk", str(path))
    assert result.exit_code == 1
    assert f"{path}:{line}:3: {message}" in result.stderr


# ---------------------------------------------------------------------------------------------
# --x: a decimal comma is named, as in a lesson's rows


@pytest.mark.parametrize(
    ("x", "hint"),
    [
        ("[1, 0, 0,5]", "; looks like a decimal comma: write 0.5"),
        ("[1,5, 0,25, 1]", "; looks like decimal commas: write 1.5 and 0.25"),
        ("[1, 0, 0, 5]", ""),  # spaced commas: four entries, no hint
    ],
)
def test_x_with_a_decimal_comma_says_so(run, x, hint) -> None:  # type: ignore[no-untyped-def]
    result = run("walk", "the-cake-next-token", "--next-token", "dog", "--x", x)
    assert result.exit_code == 2
    said = " ".join(result.stderr.split())
    expected = "but X has 3 columns; the new token's row needs 3" + hint
    assert said.endswith(expected), said


def test_a_set_aside_sheet_with_two_problems_shows_them_on_two_lines(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    sheet = tmp_path / "a.json"
    sheet.write_text('{"lesson": 5, "Qx": "x"}', encoding="utf-8")  # two errors on line 1
    good = blank_sheet(run, tmp_path, "ann.yaml", "Ann", "s1")
    result = run("grade", "cats-chase-mice", str(good), str(sheet))
    assert result.exit_code == 1
    assert "\\n" not in result.stdout  # the line break between problems is not spelled out
    lines = [t for t in result.stdout.splitlines() if t.startswith(f"{sheet}:1:")]
    assert [t.split(":")[2] for t in lines] == ["15", "12"]  # key, then lesson


def test_a_cell_with_no_row_per_token_lists_only_this_lessons_steps(run) -> None:  # type: ignore[no-untyped-def]
    result = run("walk", "the-cake", "--cell", "W_Q[1, 1]")
    assert result.exit_code == 2
    said = " ".join(result.stderr.split())
    assert (
        "W_Q has no row per token; name a cell of X, Q, K, V, scores, scaled, weights, Z," in said
    )


def test_the_column_layouts_notes_speak_of_the_lessons_own_tokens(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "cols.yaml"
    text = (LESSONS / "the-cake-grouped.yaml").read_text(encoding="utf-8")  # cake, I, ate, it
    path.write_text(text + "layout: columns\n", encoding="utf-8")
    result = run("walk", str(path), "--step", "X", "--step", "scores", env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "X[cake, 2] is row 2 of the cake column here" in result.stdout
    assert "scores[cake, I] (the query of cake, the key of I) sits in column cake, row I" in (
        result.stdout
    )
    assert "cats" not in result.stdout


@pytest.mark.parametrize("sep", ["\u2028", "\u2029", "\x0c", "\x0b", "\x85"])
def test_a_line_separator_in_a_roster_name_is_a_space(run, tmp_path, sep) -> None:  # type: ignore[no-untyped-def]
    """Issue 31: str.splitlines broke a row at U+2028 or a form feed, one student became two."""
    roster = tmp_path / "roster.csv"
    roster.write_text(f"name,id\nAnn{sep}Lee,s1\nBob Roe,s2\n", encoding="utf-8")
    out = tmp_path / "variants"
    result = run("variants", "the-cake", "--roster", str(roster), "--seed", "1", "-o", str(out))
    assert result.exit_code == 0, result.output
    students = sorted(
        line.split(":", 1)[1].strip()
        for p in out.glob("*.yaml")
        for line in p.read_text(encoding="utf-8").splitlines()
        if line.strip().startswith("student:")
    )
    assert students == ["Ann Lee", "Bob Roe"]
