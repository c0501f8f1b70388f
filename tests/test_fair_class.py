"""Follow-through from what the student wrote (issue 37, item 4): over random lessons of every
kind, a student who makes one slip (forgets P, forgets the mask, takes −∞ as 0, forgets √d_k,
reads W across, …) and then works every later step honestly from their own numbers loses the
slipped step's cells and nothing after it; an honest student loses nothing."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from tests import lessongen, students
from tutor.assess.grade import grade
from tutor.assess.judge import judge_for
from tutor.assess.sheet import read_sheet
from tutor.core.engine import Derivation, derive
from tutor.core.errors import AnswerError
from tutor.core.lessonfile import load_lesson
from tutor.core.numbers import read_answer

# the named slips a student makes (the pen's, unnamed, have their own class in test_simclass)
ONE_SLIP = [s for s in students.SLIPS if s not in students.UNNAMED]
# each kind of lesson, twice (a causal decoding row comes up at random)
LESSONS = [(kind, seed) for kind in lessongen.KINDS for seed in (1, 2)]


def _lesson(tmp_path: Path, kind: str, seed: int) -> tuple[Path, Derivation]:
    rng = random.Random(1000 * seed + lessongen.KINDS.index(kind))
    path = tmp_path / f"{kind}{seed}.yaml"
    path.write_text(lessongen.kind_text(rng, kind, 2 + seed % 2))
    return path, derive(load_lesson(path))


def lost(path: Path, d: Derivation, written: dict[str, list[list[str]]]) -> list[tuple]:  # type: ignore[type-arg]
    """The cells of the graded sheet that earn nothing: (step key, row, col, verdict, slips),
    but a concatenation's copy of a head's lost Z (a copy earns what it copies, no more)."""
    sheet = path.with_suffix(".sheet.yaml")
    sheet.write_text(students.sheet_text(d, written))
    report = grade(d, read_sheet(sheet, d))
    out = [g for g in report.cells if not g.points]
    gone = {(id(g.step), g.i, g.j) for g in out}
    return [
        (g.step.key, g.i, g.j, g.verdict, [s.name for s in g.slips])
        for g in out
        if (copied := g.step.copy_of(g.i, g.j)) is None
        or (id(copied.step), copied.i, copied.j) not in gone
    ]


def readable(text: str) -> bool:
    try:
        read_answer(text)
    except AnswerError:
        return False
    return True


@pytest.mark.parametrize(("kind", "seed"), LESSONS, ids=[f"{k}{s}" for k, s in LESSONS])
def test_one_slip_costs_the_slipped_step_alone(tmp_path: Path, kind: str, seed: int) -> None:
    path, d = _lesson(tmp_path, kind, seed)
    assert lost(path, d, students.Student(d, "carry1").work()) == []
    for slip in ONE_SLIP:
        st = students.Student(d, "carry1", slip)
        written = st.work()
        if st.slipped is None:
            continue  # the slip does not apply to this lesson
        step, i, j = st.slipped
        if not readable(written[step.key][i][j]):
            continue  # e^93 written out: unreadable, so never an input (test_simclass)
        elsewhere = [c for c in lost(path, d, written) if c[0] != step.key]
        assert elsewhere == [], (slip, step.key, elsewhere)


def test_forgetting_p_costs_x_alone(tmp_path: Path) -> None:
    for kind in ("given", "sinusoidal"):
        path, d = _lesson(tmp_path, kind, 3)
        st = students.Student(d, "exact", "forgot-position")
        cells = lost(path, d, st.work())
        assert cells and {c[0] for c in cells} == {"X"}, (kind, cells)
        assert all("forgot-position" in c[4] for c in cells), (kind, cells)


@pytest.mark.parametrize("slip", ["forgot-mask", "inf-as-zero"])
def test_weights_written_over_the_masks_zeros_carry_into_z(tmp_path: Path, slip: str) -> None:
    for seed in range(3):
        path, d = _lesson(tmp_path, "causal", 4 + seed)
        st = students.Student(d, "exact", slip)
        written = st.work()
        if st.slipped is None:
            continue
        step, i, _ = st.slipped
        assert any(float(x) for x in written[step.key][i][i + 1 :]), "a mask's 0 written over"
        cells = lost(path, d, written)
        assert cells and {c[0] for c in cells} == {step.key}, (seed, cells)
        assert all(slip in c[4] for c in cells), (seed, cells)


# ---------------------------------------------------------------------------------------------
# issue 39, item 6: a slip is named only when it explains better than a slip of the pen


def _cats(tmp_path: Path) -> tuple[Path, Derivation]:
    from tests.conftest import LESSONS as BUNDLED

    path = tmp_path / "cats-chase-mice.yaml"
    path.write_text((BUNDLED / "cats-chase-mice.yaml").read_text(encoding="utf-8"))
    return path, derive(load_lesson(path))


def test_a_plus_one_in_one_cell_is_a_pen_slip_not_a_misconception(tmp_path: Path) -> None:
    """Q[cats, 2] is 0; a 1 there is what X·W_K and X·W_V give too, but one cell one digit off
    is a slip of the pen: the cell is lost, and no misconception is named. Where the whole row
    follows X·W_K, the slip is named."""
    path, d = _cats(tmp_path)
    written = students.Student(d, "exact").work()
    assert float(written["Q"][0][1]) == 0
    written["Q"][0][1] = "1.00"  # one digit: 1 for 0
    assert lost(path, d, written) == [("Q", 0, 1, "wrong", [])]
    # the same 1, with the whole row of Q worked as X·W_K: the slip explains the row
    X, W_K = d.step("X"), d.step("W_K")
    row = [sum(X.cells[0][k].q * W_K.cells[k][j].q for k in range(len(X.cols))) for j in (0, 1)]
    written["Q"][0] = [str(int(v)) for v in row]
    cells = [c for c in lost(path, d, written) if c[0] == "Q"]
    assert len(cells) == 2 and all("used-W_K" in c[4] for c in cells), cells  # the 1 too


def test_a_junk_sheet_is_charged_with_no_misconception(tmp_path: Path) -> None:
    path, d = _cats(tmp_path)
    for kind in ("zeros", "ones", "random"):
        cells = lost(path, d, students.junk(d, kind, seed=3))
        assert cells and all(not slips for *_, slips in cells), (kind, cells)


class _DropsATerm(students.Student):
    """Leaves one term out of every cell of the scores (a habit, not one slip of the pen), then
    works every later step honestly from those numbers."""

    def _slip(self, step, i, j, v):  # type: ignore[no-untyped-def]
        if step.name != "scores":
            return None
        alt = students.PEN["dropped-term"](self, step, i, j, students.dec(v, self.places))
        return None if alt is None else students.text(alt)


def test_a_term_dropped_all_over_a_step_is_an_attempt_and_is_followed(tmp_path: Path) -> None:
    """Each wrong score is a sum with a term left out, a recognisable attempt (Judge.pen_slip):
    the step is read as worked, so the honest steps after it earn follow-through. Were the
    dropped terms not recognised, the scores would read as no attempt and every later cell
    would be judged against the true scores."""
    for seed in (1, 3):  # random one-head lessons whose dropped terms move scores by more
        path = tmp_path / f"single{seed}.yaml"  # than one digit
        path.write_text(lessongen.kind_text(random.Random(seed), "single", 2))
        d = derive(load_lesson(path))
        written = _DropsATerm(d, "exact").work()
        cells = lost(path, d, written)
        assert len(cells) >= 4 and {c[0] for c in cells} == {"scores"}, (seed, cells)
        judge, scores = judge_for(d), d.step("scores")
        for _, i, j, *_ in cells:
            assert judge.pen_slip(scores, i, j, read_answer(written["scores"][i][j])), (i, j)
        assert not judge.pen_slip(scores, 0, 0, read_answer("77.77"))
