"""Grading hand-worked answer sheets: the round trip from `export --format sheet`, follow-through,
rounding by hand, misconceptions, bad sheets and the --json contract."""

from __future__ import annotations

import json
import math
import re
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, LESSONS
from tutor.core.catalog import find_lesson
from tutor.core.engine import derive
from tutor.core.lessonfile import load_lesson
from tutor.text import format as fmt

TWO_HEADS = str(FIXTURES / "grade" / "two-heads-causal.yaml")
# a row to fill: nulls, and the causal mask's given -inf and 0 entries
ROW = re.compile(r"^(\s*- )\[(?:null|-inf|0)(?:, (?:null|-inf|0))*\](.*)$")
KEY = re.compile(r"^(\s*)(\w+):\s*$")


def blank_sheet(run, lesson: str) -> str:  # type: ignore[no-untyped-def]
    result = run("export", lesson, "--format", "sheet")
    assert result.exit_code == 0, result.stderr
    return result.stdout


def fill(sheet: str, values: dict[str, list[list[str]]]) -> str:
    """Fill an exported sheet's rows of nulls, keeping its comments: values by step key."""
    out, key, head, row = [], None, None, 0
    for line in sheet.splitlines():
        if m := re.match(r"^\s*- # Head (\d+)", line):
            head = int(m[1])
        elif m := KEY.match(line):
            indent, name = m.groups()
            if not indent:
                head = None
            key, row = (f"head{head}.{name}" if head else name), 0
        elif (m := ROW.match(line)) and key in values:
            cells = ", ".join(f'"{v}"' if v is not None else "null" for v in values[key][row])
            line = f"{m[1]}[{cells}]{m[2]}"
            row += 1
        out.append(line)
    return "\n".join(out) + "\n"


def derivation(lesson: str):  # type: ignore[no-untyped-def]
    path = find_lesson(lesson)
    return derive(load_lesson(path, path.stem))


def true_values(lesson: str, how: str) -> dict[str, list[list[str]]]:
    """Every step to fill, as exact strings (``how="exact"``) or decimals to N places."""
    from tutor.export.worksheet import fill_steps

    out = {}
    for step in fill_steps(derivation(lesson)):
        rows = []
        for row in step.cells:
            if how == "exact":
                rows.append([str(c.exact) for c in row])
            else:
                rows.append([fmt.decimal_text(fmt.round_half_up(c, int(how))) for c in row])
        out[step.key] = rows
    return out


def grade_json(run, tmp_path: Path, lesson: str, text: str) -> dict:  # type: ignore[no-untyped-def, type-arg]
    sheet = tmp_path / "sheet.yaml"
    sheet.write_text(text)
    result = run("grade", lesson, str(sheet), "--json")
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def cell_key(c: dict) -> str:  # type: ignore[type-arg]
    """``Q[cats, 1]`` or ``head2.Z[the, 1]``, as the grade report names cells."""
    head = f"head{c['head']}." if c["head"] else ""
    return f"{head}{c['step']}[{c['row']}, {c['col']}]"


def verdicts(data: dict) -> dict[str, str]:  # type: ignore[type-arg]
    return {cell_key(c): c["verdict"] for c in data["cells"]}


# ---------------------------------------------------------------------------------------------
# the round trip


@pytest.mark.parametrize("lesson", ["cats-chase-mice", "the-cake", TWO_HEADS])
def test_a_blank_sheet_grades_every_cell_blank(run, tmp_path, lesson: str) -> None:  # type: ignore[no-untyped-def]
    data = grade_json(run, tmp_path, lesson, blank_sheet(run, lesson))
    assert data["score"] == 0
    assert data["total"] == len(data["cells"]) > 0
    assert {c["verdict"] for c in data["cells"]} == {"blank"}
    assert {c["given"] for c in data["cells"]} == {None}


def test_the_true_values_as_exact_strings_get_full_marks(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    values = true_values("cats-chase-mice", "exact")
    assert values["Z"][0][0] == "3/(2 + exp(sqrt(2)))"
    data = grade_json(
        run, tmp_path, "cats-chase-mice", fill(blank_sheet(run, "cats-chase-mice"), values)
    )
    assert data["score"] == data["total"] == 51
    assert {c["verdict"] for c in data["cells"]} == {"correct"}


@pytest.mark.parametrize("places", ["2", "4"])
@pytest.mark.parametrize("lesson", ["cats-chase-mice", "the-cake", TWO_HEADS])
def test_the_true_values_as_decimals_get_full_marks(
    run, tmp_path, lesson: str, places: str
) -> None:  # type: ignore[no-untyped-def]
    data = grade_json(
        run, tmp_path, lesson, fill(blank_sheet(run, lesson), true_values(lesson, places))
    )
    assert data["score"] == data["total"], [c for c in data["cells"] if c["verdict"] != "correct"]


# ---------------------------------------------------------------------------------------------
# a student working by hand, rounding to 2 places at every step (independent of the engine)


def r2(x: float) -> Decimal:
    return Decimal(repr(x)).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)


def by_hand(lesson: str) -> dict[str, list[list[str]]]:
    """What a careful student writes: each step from the previous step's rounded numbers."""
    d = derivation(lesson)
    X = [[float(c.value) for c in row] for row in d.step("X").cells]

    def mat(name: str) -> list[list[float]]:
        return [[c.value for c in row] for row in d.step(name).cells]

    def mul(A, B):  # type: ignore[no-untyped-def]
        return [
            [sum(a * b for a, b in zip(row, col, strict=True)) for col in zip(*B, strict=True)]
            for row in A
        ]

    def text(M) -> list[list[str]]:  # type: ignore[no-untyped-def]
        return [[str(x) for x in row] for row in M]

    Q, K, V = (mul(X, mat(w)) for w in ("W_Q", "W_K", "W_V"))
    scores = mul(Q, [list(col) for col in zip(*K, strict=True)])
    d_k = len(Q[0])
    scaled = [[r2(s / math.sqrt(d_k)) for s in row] for row in scores]
    weights = []
    for row in scaled:
        e = [r2(math.exp(float(x))) for x in row]  # e^x rounded too, as on paper
        total = sum(e)
        weights.append([r2(float(x / total)) for x in e])
    Z = [
        [
            r2(float(sum(w * Decimal(repr(v)) for w, v in zip(wrow, col, strict=True))))
            for col in zip(*V, strict=True)
        ]
        for wrow in weights
    ]
    ints = lambda M: [[str(int(x)) if float(x).is_integer() else repr(x) for x in row] for row in M]  # noqa: E731
    return {
        "Q": ints(Q),
        "K": ints(K),
        "V": ints(V),
        "scores": ints(scores),
        "scaled": text(scaled),
        "weights": text(weights),
        "Z": text(Z),
    }


@pytest.mark.parametrize("lesson", ["cats-chase-mice", "the-cake"])
def test_a_sheet_worked_by_hand_rounding_every_step_gets_full_marks(
    run, tmp_path, lesson: str
) -> None:  # type: ignore[no-untyped-def]
    values = by_hand(lesson)
    if lesson == "cats-chase-mice":  # the NOTES trap: 0.48 and 0.75, not 0.49 and 0.74
        assert values["Z"][0][0] == "0.48" and values["Z"][2][0] == "0.75"
    data = grade_json(run, tmp_path, lesson, fill(blank_sheet(run, lesson), values))
    assert data["score"] == data["total"], [c for c in data["cells"] if c["verdict"] != "correct"]


# ---------------------------------------------------------------------------------------------
# follow-through


def slipped_sheet(run) -> str:  # type: ignore[no-untyped-def]
    """Q[cats, 1] = 1 instead of 2 (a term of 1·1 + 0·0 + 1·1 + 0·0 dropped), then every later
    step honestly computed from it."""
    values = {
        "Q": [["1", "0"], ["0", "3"], ["1", "1"]],
        "K": [["1", "1"], ["2", "1"], ["1", "1"]],
        "V": [["2", "1"], ["0", "2"], ["1", "1"]],
        "scores": [["1", "2", "1"], ["3", "3", "3"], ["2", "3", "2"]],
        "scaled": [["0.71", "1.41", "0.71"], ["2.12", "2.12", "2.12"], ["1.41", "2.12", "1.41"]],
        "weights": [["0.25", "0.50", "0.25"], ["0.33", "0.33", "0.33"], ["0.25", "0.5", "0.25"]],
        "Z": [["0.74", "1.50"], ["1.00", "1.33"], ["0.74", "1.50"]],
    }
    return fill(blank_sheet(run, "cats-chase-mice"), values)


def test_one_early_slip_with_honest_follow_through_loses_only_that_cell(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    data = grade_json(run, tmp_path, "cats-chase-mice", slipped_sheet(run))
    v = verdicts(data)
    assert [k for k, x in v.items() if x == "wrong"] == ["Q[cats, 1]"]
    assert data["score"] == data["total"] - 1 == 50
    carried = [k for k, x in v.items() if x == "follow-through"]
    assert carried == [
        "scores[cats, cats]", "scores[cats, chase]", "scores[cats, mice]",
        "scaled[cats, cats]", "scaled[cats, chase]", "scaled[cats, mice]",
        "weights[cats, cats]", "weights[cats, chase]", "weights[cats, mice]",
        "Z[cats, 1]", "Z[cats, 2]",
    ]  # fmt: skip
    # rows that did not use the slip are simply correct
    assert v["scores[chase, cats]"] == v["Z[mice, 1]"] == "correct"


def test_follow_through_is_not_a_free_pass(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    text = slipped_sheet(run).replace('["1", "2", "1"]', '["1", "7", "1"]')  # a number from nowhere
    v = verdicts(grade_json(run, tmp_path, "cats-chase-mice", text))
    assert v["scores[cats, chase]"] == "wrong"
    assert v["scaled[cats, chase]"] == "wrong"  # 1.41 is neither 7/√2 nor the truth
    assert v["scaled[cats, cats]"] == "follow-through"


def test_blank_inputs_are_replaced_by_the_true_values(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    values = {"Z": [["0.49", "1.67"], ["1", "1.33"], ["0.74", "1.5"]]}
    v = verdicts(
        grade_json(
            run, tmp_path, "cats-chase-mice", fill(blank_sheet(run, "cats-chase-mice"), values)
        )
    )
    assert {v[f"Z[{r}, {c}]"] for r in ("cats", "chase", "mice") for c in "12"} == {"correct"}
    assert v["Q[cats, 1]"] == "blank"


def test_follow_through_in_a_multi_head_causal_lesson(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    values = true_values(TWO_HEADS, "4")
    z = values["head2.Z"]
    slip = "-" + z[1][0]  # the sign flipped: a slip, in head 2 (row 1 is 0)
    values["head2.Z"] = [z[0], [slip, z[1][1]], *z[2:]]
    concat = values["concat"]
    concat[1][2] = slip  # copied into concat: a copy earns no more than what it copies ...
    d = derivation(TWO_HEADS)
    W_O = [[c.exact for c in row] for row in d.step("W_O").cells]
    row1 = [Decimal(x) for x in concat[1]]
    values["output"][1] = [
        str(sum(a * Decimal(str(w[j])) for a, w in zip(row1, W_O, strict=True))) for j in range(2)
    ]
    v = verdicts(grade_json(run, tmp_path, TWO_HEADS, fill(blank_sheet(run, TWO_HEADS), values)))
    token = d.lesson.labels[1]
    assert v[f"head2.Z[{token}, 1]"] == "wrong"
    assert v[f"concat[{token}, h2.1]"] == "wrong"
    assert v[f"output[{token}, 1]"] == "follow-through"  # ... but what is made from it follows
    assert v[f"head1.Z[{token}, 1]"] == "correct"
    assert [k for k, x in v.items() if x == "wrong"] == [
        f"head2.Z[{token}, 1]",
        f"concat[{token}, h2.1]",
    ]


# ---------------------------------------------------------------------------------------------
# misconceptions and unreadable cells, in the terminal report


def test_wrong_cells_name_the_misconception_and_show_the_working(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    values = {
        "scaled": [["2", "4", "2"], [None] * 3, [None] * 3],  # not divided by √d_k
        "Z": [["1.67", None], [None, None], [None, None]],  # the wrong column of V
    }
    sheet = tmp_path / "sheet.yaml"
    sheet.write_text(fill(blank_sheet(run, "cats-chase-mice"), values))
    result = run("grade", "cats-chase-mice", str(sheet))
    assert result.exit_code == 0, result.stderr
    out = result.stdout
    assert "scaled[cats, chase]: you wrote 4; expected 2.83" in out
    assert "that is the raw score; divide it by √d_k = √2" in out
    assert "scaled[cats, chase] = 4 / √2" in out
    assert "that blends column 2 of V" in out
    assert out.rstrip().endswith("Score: 0/51")


def test_slip_on_top_of_own_answers_is_named_with_their_numbers(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    text = slipped_sheet(run).replace('["0.71", "1.41", "0.71"]', '["1", "2", "1"]')
    sheet = tmp_path / "sheet.yaml"
    sheet.write_text(text)
    out = run("grade", "cats-chase-mice", str(sheet)).stdout
    assert "scaled[cats, chase]: you wrote 2; from your own earlier answers it would be 1.41" in out
    assert "that is the raw score" in out
    assert "scaled[cats, chase] = 2 / √2 ≈ 1.41" in out


def test_an_unreadable_cell_is_reported_with_its_place_and_graded_wrong(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    text = fill(
        blank_sheet(run, "cats-chase-mice"), {"Q": [["2", "banana"], ["0", "3"], ["1", "1"]]}
    )
    sheet = tmp_path / "sheet.yaml"
    sheet.write_text(text.replace('"banana"', "banana"))
    line = next(n for n, x in enumerate(sheet.read_text().splitlines(), 1) if "banana" in x)
    result = run("grade", "cats-chase-mice", str(sheet), "--json")
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    assert verdicts(data)["Q[cats, 2]"] == "wrong" and data["score"] == 5
    assert f"{sheet}:{line}:" in result.stderr and "could not read 'banana'" in result.stderr
    out = run("grade", "cats-chase-mice", str(sheet)).stdout
    assert "Entries that could not be read or placed" in out and "banana" in out
    assert "Q[cats, 2]: cannot read `banana`" in out  # the cell's own verdict says why


def test_payloads_in_a_sheet_are_read_not_run(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    marker = tmp_path / "pwned"
    payload = f"__import__('os').system('touch {marker}')"
    text = fill(
        blank_sheet(run, "cats-chase-mice"), {"Q": [[payload, "9^9^9^9"], ["0", "3"], ["1", "1"]]}
    )
    data = grade_json(run, tmp_path, "cats-chase-mice", text)
    assert not marker.exists()
    assert [c["verdict"] for c in data["cells"][:2]] == ["wrong", "wrong"]


def test_entries_that_cancel_to_zero_are_not_numbers_to_check(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Each of these once made grade exit 70: 0 written so that sympy cannot see it is 0."""
    cancelling = [
        "sqrt(sqrt(11+6*sqrt(2))-3-sqrt(2))",
        "ln(sqrt(sqrt(11+6*sqrt(2))-3-sqrt(2)))",
        "(sqrt(5+2*sqrt(6))-sqrt(2)-sqrt(3))^0.5",
    ]
    values = true_values("cats-chase-mice", "2")
    values["weights"][0] = cancelling
    sheet = tmp_path / "sheet.yaml"
    sheet.write_text(fill(blank_sheet(run, "cats-chase-mice"), values))
    result = run("grade", "cats-chase-mice", str(sheet), "--json")
    assert result.exit_code == 0, result.stderr
    got = verdicts(json.loads(result.stdout))
    assert [got[f"weights[cats, {k}]"] for k in ("cats", "chase", "mice")] == ["wrong"] * 3
    assert result.stderr.count("not a number I can check") == 2  # the third is read as 0


# ---------------------------------------------------------------------------------------------
# the --json contract


def test_json_is_exactly_the_contract(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    sheet = tmp_path / "s.yaml"
    sheet.write_text(slipped_sheet(run))
    result = run("grade", "cats-chase-mice", str(sheet), "--json")
    assert result.exit_code == 0 and result.stderr == ""
    data = json.loads(result.stdout)  # nothing else on stdout
    assert list(data) == [
        "lesson", "fingerprint", "variant", "sheet", "student", "student_id",
        "score", "total", "points", "out_of", "percent", "flags", "cells", "steps",
    ]  # fmt: skip
    assert data["points"] == data["score"] and data["out_of"] == data["total"]  # no points:
    assert data["lesson"] == "cats-chase-mice"
    assert len(data["cells"]) == data["total"] == 51
    first = data["cells"][0]
    assert first == {
        "step": "Q", "head": None, "row": "cats", "col": "1",
        "given": "1", "expected": "2", "verdict": "wrong", "points": 0,
        "slip": None, "slips": [], "note": None,  # 1 for 2, one cell: a slip of the pen
    }  # fmt: skip
    keys = ["step", "head", "row", "col", "given", "expected", "verdict", "points", "slip"]
    for cell in data["cells"]:
        assert list(cell) == [*keys, "slips", "note"]
        assert cell["verdict"] in ("correct", "follow-through", "wrong", "blank")
        assert cell["points"] == (cell["verdict"] in ("correct", "follow-through"))
    assert data["steps"][0] == {
        "step": "Q", "head": None, "score": 5, "total": 6, "points": 5, "out_of": 6,
    }  # fmt: skip
    assert sum(s["score"] for s in data["steps"]) == data["score"]
    z = next(c for c in data["cells"] if c["step"] == "Z")
    assert z["expected"] == "0.49"


def test_json_heads_are_numbered(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    data = grade_json(run, tmp_path, TWO_HEADS, blank_sheet(run, TWO_HEADS))
    assert {c["head"] for c in data["cells"]} == {1, 2, None}
    assert {c["step"] for c in data["cells"] if c["head"] is None} == {"concat", "output"}


@pytest.mark.parametrize(
    ("text", "where", "fragment", "note"),
    [
        ("Q: [[1, 2], [3, 4]]\n", "1:4", "Q has 2 rows; this lesson's Q is 3 × 2", "2 rows, for 3"),
        (
            "Q: [[1, 2], [3], [5, 6]]\n",
            "1:13",
            "row 2 of Q (chase) should be a list of 2 entries",
            "row 2 of Q has 1 entries, for 2 columns",
        ),
        ("Q: 3\n", "1:4", "Q should be a list of 3 rows", "Q is 3, not a list of 3 rows"),
    ],
)
def test_a_matrix_of_the_wrong_size_costs_only_its_own_cells(
    run, tmp_path, text: str, where: str, fragment: str, note: str
) -> None:  # type: ignore[no-untyped-def]
    sheet = tmp_path / "odd.yaml"
    sheet.write_text(text + "K: [[1, 1], [2, 1], [1, 1]]\n")
    result = run("grade", "cats-chase-mice", str(sheet), "--json")
    assert result.exit_code == 0, result.stderr
    assert f"{sheet}:{where}: warning: {fragment}" in result.stderr
    assert "cannot be told, so these cells are graded wrong" in result.stderr
    cells = json.loads(result.stdout)["cells"]
    assert all(c["verdict"] == "correct" for c in cells if c["step"] == "K")  # the rest graded
    unplaced = [c for c in cells if c["note"] and c["note"].startswith("not placed")]
    assert unplaced and all(c["verdict"] == "wrong" and note in c["note"] for c in unplaced)


# ---------------------------------------------------------------------------------------------
# bad sheets: file:line:col, exit 1


@pytest.mark.parametrize(
    ("text", "where", "fragment"),
    [
        ("Q: [[1, 2]\n", "2:1", "not valid YAML"),
        (
            "weigths: null\n",
            "1:1",
            "unknown key 'weigths' in the answer sheet (did you mean weights?)",
        ),
        ("masked: null\n", "1:1", "unknown key 'masked'"),
        ("heads: []\n", "1:1", "unknown key 'heads'"),
        ("lesson: the-cake\n", "1:9", "this sheet is for lesson 'the-cake'"),
        ("a: &x [1]\nb: *x\n", "1:4", "anchors"),
        ("Q: !!python/object:os.system [1]\n", "1:4", "tag"),
        ("- 1\n", "1:1", "a sheet is a mapping of keys, this file is a list"),
        ("", "1:1", "the sheet is empty"),
        ("Q: " + "[" * 5000 + "\n", "1:", "nested more than"),
    ],
)
def test_bad_sheets_get_file_line_col_and_exit_1(
    run, tmp_path, text: str, where: str, fragment: str
) -> None:  # type: ignore[no-untyped-def]
    sheet = tmp_path / "bad.yaml"
    sheet.write_text(text)
    result = run("grade", "cats-chase-mice", str(sheet))
    assert result.exit_code == 1, result.stdout
    assert f"{sheet}:{where}" in result.stderr
    assert fragment in result.stderr
    assert "Traceback" not in result.stderr


def test_bad_multi_head_sheet(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    sheet = tmp_path / "bad.yaml"
    sheet.write_text("heads:\n  - Q: null\n")
    result = run("grade", TWO_HEADS, str(sheet))
    assert result.exit_code == 1
    assert f"{sheet}:2:3: heads should be a list of 2 heads" in result.stderr


def test_missing_sheet_is_a_clean_error(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    result = run("grade", "cats-chase-mice", str(tmp_path / "nope.yaml"))
    assert result.exit_code == 1
    assert "no such answer sheet file" in result.stderr


def test_help_does_not_import_sympy() -> None:
    import subprocess
    import sys

    code = "import sys; from tutor.cli import app; print('sympy' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.stdout.strip() == "False"


def test_the_report_fits_80_columns_and_ends_with_the_score(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    sheet = tmp_path / "sheet.yaml"
    sheet.write_text(blank_sheet(run, "the-cake").replace("null", "0.5"))
    result = run("grade", "the-cake", str(sheet), env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.rstrip().splitlines()
    assert max(len(line) for line in lines) <= 80
    assert lines[-1] == "Score: 23/320"
    assert "scores (8 × 8): 0/64, columns I–cake" in result.stdout


@pytest.mark.parametrize("odd", ["\u2028", "\u2029", "\x85", "\ufeff", "\ufffe"])
def test_a_lesson_file_name_with_a_yaml_line_break_exports_a_sheet_grade_reads(
    run, tmp_path: Path, odd: str
) -> None:  # type: ignore[no-untyped-def]
    source = (FIXTURES / "grade" / "two-heads-causal.yaml").read_text()
    lesson = tmp_path / f"we{odd}ird.yaml"
    lesson.write_text(source)
    sheet = tmp_path / "sheet.yaml"
    r = run("export", str(lesson), "--format", "sheet", "-o", str(sheet))
    assert r.exit_code == 0, r.stderr
    text = sheet.read_text()
    assert odd not in text
    result = run("grade", str(lesson), str(sheet), "--json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["lesson"] == lesson.stem


@pytest.mark.parametrize("target", ["sheet", "lesson"])
def test_grade_csv_refuses_to_write_over_a_sheet_or_the_lesson(run, tmp_path, target) -> None:  # type: ignore[no-untyped-def]
    lesson = tmp_path / "lesson.yaml"
    lesson.write_text((LESSONS / "cats-chase-mice.yaml").read_text())
    sheet = tmp_path / "alice.yaml"
    sheet.write_text(run("export", str(lesson), "--format", "sheet", "-o", "-").stdout)
    victim = sheet if target == "sheet" else lesson
    before = victim.read_text()
    r = run("grade", str(lesson), str(sheet), "--csv", str(victim))
    assert r.exit_code == 2, r.output
    assert "one of the files being graded" in r.stderr
    assert victim.read_text() == before


def test_the_report_works_again_at_most_LOOK_AGAIN_wrong_cells_a_step(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A step of more wrong cells than LOOK_AGAIN (64: a whole step of 8 tokens) works the
    first 64 again in full and says how many more there are; its table and --json still give
    every cell's verdict. An all-wrong sheet of 4 heads at 32 tokens had 17,021 worked again."""
    import random

    from tests.lessongen import lesson_text
    from tutor.assess.report import LOOK_AGAIN

    path = tmp_path / "nine.yaml"
    path.write_text(lesson_text(random.Random(5), 9, 2, 2, 2, "i"))
    d = derive(load_lesson(path))
    scores = next(s for s in d.steps if s.name == "scores")
    assert len(scores.rows) * len(scores.cols) == 81 > LOOK_AGAIN
    wrong = [[str(c.exact + 1000) for c in row] for row in scores.cells]  # no slip explains it
    sheet = tmp_path / "sheet.yaml"
    sheet.write_text(fill(blank_sheet(run, str(path)), {"scores": wrong}))
    result = run("grade", str(path), str(sheet))
    assert result.exit_code == 0, result.stderr
    text = " ".join(result.stdout.split())
    worked = re.findall(r"scores\[[^\]]+\]: you wrote", text)
    assert len(worked) == LOOK_AGAIN
    assert f"… and {81 - LOOK_AGAIN} more wrong cells of scores" in text
    data = json.loads(run("grade", str(path), str(sheet), "--json").stdout)
    assert sum(c["verdict"] == "wrong" for c in data["cells"] if c["step"] == "scores") == 81
