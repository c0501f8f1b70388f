"""Issue 37, tests that see every mark: each rule here changed a student's mark when a one-line
bug was planted in it, and no test noticed. Every case goes through ``grade --json`` with the
sheet a student would write (``bench/mutate.py`` plants such bugs and runs these files)."""

from __future__ import annotations

import json
from pathlib import Path

from tests import students
from tests.test_grade import TWO_HEADS, blank_sheet, derivation, fill, grade_json, true_values
from tutor.assess.grade import JUNK_SHARE
from tutor.core.engine import derive
from tutor.core.lessonfile import load_lesson

CATS = "cats-chase-mice"  # Q = [[2, 0], [0, 3], [1, 1]], K = [[1, 1], [2, 1], [1, 1]]
BLANK3 = [None, None, None]


def graded(run, tmp_path: Path, lesson: str, values: dict) -> dict:  # type: ignore[no-untyped-def, type-arg]
    """``{cell name: (what was written, verdict)}`` of the cells written, and the score."""
    data = grade_json(run, tmp_path, lesson, fill(blank_sheet(run, lesson), values))
    cells = {}
    for c in data["cells"]:
        head = f"head{c['head']}." if c["head"] else ""
        cells[f"{head}{c['step']}[{c['row']}, {c['col']}]"] = (c["given"], c["verdict"])
    return {
        "cells": cells,
        "score": data["score"],
        "total": data["total"],
        "percent": data["percent"],
    }


def verdict(rep: dict, name: str) -> str:  # type: ignore[type-arg]
    return rep["cells"][name][1]  # type: ignore[no-any-return]


# ---------------------------------------------------------------------------------------------
# the causal mask: −∞ only above the diagonal (judge.py, ``Judge.hides``)


def test_minus_infinity_on_a_causal_diagonal_is_graded_wrong(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A token sees itself: −∞ written on the diagonal of ``scaled`` loses that cell; the −∞
    above the diagonal are the mask's, given and not graded."""
    lesson = "the-cake-causal"
    shown = true_values(lesson, "2")["scaled"]
    n = len(shown)
    scaled = [[shown[i][j] if j <= i else "-inf" for j in range(n)] for i in range(n)]
    scaled[1][1] = "-inf"  # scaled[ate, ate] is 0
    rep = graded(run, tmp_path, lesson, {"scaled": scaled})
    graded_scaled = {k: v for k, v in rep["cells"].items() if k.startswith("scaled[")}
    assert len(graded_scaled) == n * (n + 1) // 2  # the diagonal and below: the rest is given
    assert graded_scaled.pop("scaled[ate, ate]") == ("-inf", "wrong")
    assert {v for _, v in graded_scaled.values()} == {"correct"}


# ---------------------------------------------------------------------------------------------
# a copy earns what it copies (grade.py, concat)


def test_a_concat_cell_that_is_not_the_students_z_loses_its_point(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Both heads' Z right, and 999 typed into concat where Z[cat, 1] of head 2 goes: concat
    copies Z, so that cell is wrong (it is neither the Z written nor the true value)."""
    values = true_values(TWO_HEADS, "4")
    token = derivation(TWO_HEADS).lesson.labels[1]
    values["concat"][1][2] = "999"
    rep = graded(run, tmp_path, TWO_HEADS, values)
    assert verdict(rep, f"head2.Z[{token}, 1]") == "correct"
    assert verdict(rep, f"concat[{token}, h2.1]") == "wrong"
    assert rep["score"] == rep["total"] - 1


def test_a_concat_cell_copying_a_followed_through_z_follows_through(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """V[the, 1] of head 2 written 1 (a slip: +1), then honest work: head 2's Z[·, 1] follow
    through, and concat, copying them, earns what they earned."""
    d = derive(load_lesson(TWO_HEADS))
    st = students.Student(d, "carry1", "plus1", at=("head2.V", 0, 0))
    sheet = tmp_path / "sheet.yaml"
    sheet.write_text(students.sheet_text(d, st.work()))
    result = run("grade", TWO_HEADS, str(sheet), "--json")
    assert result.exit_code == 0, result.stderr
    cells = json.loads(result.stdout)["cells"]
    got = {(c["step"], c["head"]): c["verdict"] for c in cells if c["col"] in ("1", "h2.1")
           and c["verdict"] != "correct"}  # fmt: skip
    assert got == {("V", 2): "wrong", ("Z", 2): "follow-through", ("concat", None):
                   "follow-through", ("output", None): "follow-through"}  # fmt: skip
    assert sum(c["points"] for c in cells) == len(cells) - 1


# ---------------------------------------------------------------------------------------------
# an attempt: half of a step right is enough for its wrong cells to carry (grade.py)


def test_a_step_with_half_its_cells_right_is_an_attempt(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Q with 3 of its 6 cells right and 3 numbers no slip explains: still an attempt, so the
    scores worked honestly from that Q follow through."""
    q = [[2, 5], [4, 3], [1, 6]]  # right: Q[cats, 1], Q[chase, 2], Q[mice, 1]
    k = [[1, 1], [2, 1], [1, 1]]
    scores = [[str(sum(a * b for a, b in zip(qi, kj, strict=True))) for kj in k] for qi in q]
    rep = graded(run, tmp_path, CATS, {"Q": [[str(x) for x in r] for r in q], "scores": scores})
    wrong_q = ["Q[cats, 2]", "Q[chase, 1]", "Q[mice, 2]"]
    assert [verdict(rep, c) for c in wrong_q] == ["wrong"] * 3
    got = {v for name, (_, v) in rep["cells"].items() if name.startswith("scores[")}
    assert got == {"follow-through"}  # every score uses a wrong Q cell
    assert rep["score"] == 3 + 9
    assert rep["percent"] == 23.5  # 12 of 51 points, to one place


# ---------------------------------------------------------------------------------------------
# a written decimal stands for ± half a unit of its last place (judge.py, ``written_range``)


def test_a_written_decimal_is_half_a_unit_either_way_not_one(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Q[cats, 1] written 2.5 stands for [2.495, 2.505] (padded to the lesson's 2 places), so
    scores[cats, chase] = 2·Q[cats, 1] + 1·Q[cats, 2] from it lies in [4.99, 5.01]: 5.01
    follows through, 5.02 (which ±1 unit, [4.98, 5.02], would allow) is wrong, and so is
    5.011 (it stands for [5.0105, 5.0115])."""
    q = [["2.5", "0"], ["0", "3"], ["1", "1"]]
    for written, want in (("5.01", "follow-through"), ("5.02", "wrong"), ("4.99", "follow-through"),
                          ("4.98", "wrong"), ("5.011", "wrong")):  # fmt: skip
        rep = graded(
            run, tmp_path, CATS, {"Q": q, "scores": [[None, written, None], *[BLANK3] * 2]}
        )
        assert verdict(rep, "Q[cats, 1]") == "wrong"
        assert verdict(rep, "scores[cats, chase]") == want, written


# ---------------------------------------------------------------------------------------------
# the junk sheet: one number nearly everywhere, where the truth is not mostly that number


def _ones(extra: dict[str, list[list[str | None]]] | None = None) -> dict:  # type: ignore[type-arg]
    """Q[cats, 1] = 1 (a slip: it is 2), Q[mice, 1] = 1 (right) and scores[cats, cats] = 1,
    honest from that Q (1·1 + 0·1): three entries of one number."""
    values: dict[str, list[list[str | None]]] = {
        "Q": [["1", None], [None, None], ["1", None]],
        "scores": [["1", None, None], BLANK3, BLANK3],
    }
    for key, rows in (extra or {}).items():
        values[key] = [[b if b is not None else a for a, b in zip(r, e, strict=True)]
                       for r, e in zip(values[key], rows, strict=True)]  # fmt: skip
    return values


def test_three_entries_of_one_number_are_too_few_to_call_a_sheet_junk(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    rep = graded(run, tmp_path, CATS, _ones())
    assert verdict(rep, "Q[cats, 1]") == "wrong"
    assert verdict(rep, "scores[cats, cats]") == "follow-through"
    assert rep["score"] == 2


def test_one_number_in_four_entries_is_a_junk_sheet_that_carries_nothing(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Four 1s (Q[mice, 2] = 1 too, right): no step is an attempt, so the 1 in scores is judged
    against the truth (2)."""
    rep = graded(run, tmp_path, CATS, _ones({"Q": [[None, None], [None, None], [None, "1"]]}))
    assert verdict(rep, "scores[cats, cats]") == "wrong"
    assert rep["score"] == 2  # Q[mice, 1] and Q[mice, 2]


def test_one_number_in_exactly_the_junk_share_of_entries_is_junk(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Four 1s and a 2 (scores[cats, chase] = 1·2 + 0·1, honest from Q[cats, 1] = 1): one
    number in 4 of 5 entries, JUNK_SHARE of them, is junk; nothing carries."""
    assert JUNK_SHARE * 5 == 4
    more = {"Q": [[None, None], [None, None], [None, "1"]], "scores": [[None, "2", None], BLANK3,
                                                                      BLANK3]}  # fmt: skip
    rep = graded(run, tmp_path, CATS, _ones(more))
    assert verdict(rep, "scores[cats, cats]") == verdict(rep, "scores[cats, chase]") == "wrong"


def test_one_number_written_mostly_where_it_is_mostly_true_is_no_junk(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A lesson whose cells are mostly 0, and a sheet of mostly 0s (30 of 36 entries): the work
    is read as work, so V[a, 1] written 2 (it is 1) carries into Z (4/3, shown 1.33)."""
    lesson = tmp_path / "zeros.yaml"
    lesson.write_text(
        "title: Mostly zeros\ntokens: [a, b, c]\nX: [[1, 0], [1, 0], [1, 0]]\n"
        "W_Q: [[1, 0], [0, 1]]\nW_K: [[0, 0], [0, 0]]\nW_V: [[1, 0], [0, 1]]\nprecision: 2\n"
    )
    zeros = [["0"] * 3] * 3
    values = {"K": [["0", "0"]] * 3, "V": [["2", "0"], ["1", "0"], ["1", "0"]], "scores": zeros,
              "scaled": zeros, "Z": [["1.33", "0"]] * 3}  # fmt: skip
    written = [x for rows in values.values() for r in rows for x in r]
    assert written.count("0") >= JUNK_SHARE * len(written)
    rep = graded(run, tmp_path, str(lesson), values)
    assert verdict(rep, "V[a, 1]") == "wrong"
    assert [verdict(rep, f"Z[{t}, 1]") for t in "abc"] == ["follow-through"] * 3
    assert rep["score"] == len(written) - 1


def test_a_number_true_in_exactly_half_the_cells_is_not_junk(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """14 of the lesson's 28 cells are 0, and 13 of the sheet's 15 entries: the truth is not
    mostly other numbers, so the sheet is work; V[a, 1] written 0 (it is 1) carries into Z
    (½·0 + ½·1)."""
    lesson = tmp_path / "half.yaml"
    lesson.write_text(
        "title: Half zeros\ntokens: [a, b]\nX: [[1, 0], [1, 0]]\nW_Q: [[1, 0], [0, 1]]\n"
        "W_K: [[0, 0], [0, 0]]\nW_V: [[1, 1], [0, 0]]\nprecision: 2\n"
    )
    zeros = [["0", "0"]] * 2
    values = {"K": zeros, "scores": zeros, "scaled": zeros, "V": [["0", None], [None, None]],
              "Z": [["0.5", None], ["0.5", None]]}  # fmt: skip
    rep = graded(run, tmp_path, str(lesson), values)
    assert rep["total"] == 28
    assert verdict(rep, "Z[a, 1]") == verdict(rep, "Z[b, 1]") == "follow-through"
    assert rep["score"] == 14


def test_a_given_matrix_copied_into_a_step_is_no_attempt(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """X copied into Q (the same shape in the-cake) is no attempt, though every wrong cell of
    it looks like a slip: the scores worked from that Q carry nothing and are wrong where the
    truth differs. One slip in Q, with the rest of Q right, does carry."""
    lesson = "the-cake"
    d = derivation(lesson)
    x = [[c.q for c in row] for row in d.step("X").cells]
    k = [[c.q for c in row] for row in d.step("K").cells]
    q = [[c.q for c in row] for row in d.step("Q").cells]

    def scores(rows: list) -> list[list[str]]:  # type: ignore[type-arg]
        return [[str(sum(a * b for a, b in zip(r, kj, strict=True))) for kj in k] for r in rows]

    true = scores(q)
    rep = graded(
        run, tmp_path, lesson, {"Q": [[str(v) for v in r] for r in x], "scores": scores(x)}
    )
    got = {verdict(rep, f"scores[{a}, {b}]") for a, b in _differ(d, scores(x), true)}
    assert got == {"wrong"}
    slipped = [r[:] for r in q]
    slipped[3][2] = q[3][2] + 1  # Q[cake, 3]: 3 for 2
    rep = graded(run, tmp_path, lesson, {"Q": [[str(v) for v in r] for r in slipped],
                                         "scores": scores(slipped)})  # fmt: skip
    assert rep["score"] == 32 + 64 - 1  # every Q and score cell but the slip


def _differ(d, mine: list[list[str]], true: list[list[str]]) -> list[tuple[str, str]]:  # type: ignore[no-untyped-def]
    labels = d.lesson.labels
    return [(labels[i], labels[j]) for i, row in enumerate(mine) for j, v in enumerate(row)
            if v != true[i][j]]  # fmt: skip


def test_a_near_miss_keeps_its_slip_name_only_when_most_wrong_cells_follow_it() -> None:
    """grade.named_fairly: a near-miss cell keeps its named slip when MORE than half of the wrong
    cells of its row (or step) show that slip, two at least; exactly half is not most."""
    from types import SimpleNamespace

    from tutor.assess.catalogue import Slip
    from tutor.assess.grade import Graded, named_fairly

    d = derive(load_lesson(Path(__file__).resolve().parent.parent / "lessons" / "the-cake.yaml"))
    step = d.step("Q")
    slip = Slip("used-W_K", "that is X·W_K")
    near = SimpleNamespace(judge=SimpleNamespace(near_miss=lambda *a: True), junk=False)
    entry = SimpleNamespace(answer=object())

    def row(slipped: int, wrong: int) -> list[Graded]:
        return [
            Graded(step, 0, j, entry, "wrong", slips=(slip,) if j < slipped else ())
            for j in range(wrong)
        ]

    def named(cells: list[Graded]) -> int:
        return sum(bool(g.slips) for g in named_fairly(near, cells))  # type: ignore[arg-type]

    assert named(row(3, 4)) == 3  # three of four wrong cells follow it: it stands
    assert named(row(2, 4)) == 0  # two of four: half is not most, each is a pen slip
    assert named(row(1, 3)) == 0  # one of three: a pen slip
