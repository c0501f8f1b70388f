"""A simulated class over random lessons, graded through the public ``grade --json`` command.

Run from the repository root:

    python bench/simclass.py            # --lessons N (default 24), --seed S
    python bench/simclass.py --names    # precision and recall of the named slips

Prints, per kind of student, how the sheets fared: honest students of every rounding habit
(should all get full marks), one slip then honest work (should lose exactly one cell), each
named slip (should be named), and junk sheets (should score no more than the cells whose true
value is that number).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from typer.testing import CliRunner

from tests import lessongen, students
from tutor.assess import judge as jd
from tutor.assess.sheet import fill_steps
from tutor.cli import app
from tutor.core.engine import derive
from tutor.core.lessonfile import load_lesson
from tutor.core.numbers import read_answer

ENV = {"NO_COLOR": "1", "COLUMNS": "100", "ATTN_TUTOR_LESSONS": ""}


def lessons(count: int, seed: int, folder: Path) -> list[Path]:
    """Random lessons: single-head, causal and two-head in turn."""
    rng = random.Random(seed)
    out = []
    for k in range(count):
        kind = ("single", "causal", "heads")[k % 3]
        n = rng.randint(2, 4)
        d_k = n if k % 4 == 0 else rng.randint(1, 3)  # sometimes Kᵀ and K both fit
        text = lessongen.lesson_text(
            rng,
            n,
            rng.randint(2, 4),
            d_k,
            rng.randint(1, 3),
            rng.choice(("i", "id", "idf")),
            heads=2 if kind == "heads" else 0,
            causal=kind == "causal" or (kind == "heads" and rng.random() < 0.5),
            w_o=kind == "heads",
        )
        path = folder / f"lesson{k}.yaml"
        path.write_text(text)
        out.append(path)
    return out


def grade(runner: CliRunner, lesson: Path, d, written, folder: Path) -> dict:  # type: ignore[no-untyped-def, type-arg]
    sheet = folder / "sheet.yaml"
    sheet.write_text(students.sheet_text(d, written))
    result = runner.invoke(app, ["grade", str(lesson), str(sheet), "--json"], env=ENV)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def true_shown(d) -> dict[str, list[list[str]]]:  # type: ignore[no-untyped-def]
    return students.Student(d, "exact").work()


def cell_slips(cell: dict) -> list[str]:  # type: ignore[type-arg]
    """The slips a report names for a cell (``slip`` and, when several explain it, ``slips``)."""
    return list(cell.get("slips") or ([cell["slip"]] if cell.get("slip") else []))


def slip_students(runner: CliRunner, lesson: Path, d, folder: Path):  # type: ignore[no-untyped-def]
    """(slip, student, report) for each slip of ``students.SLIPS`` a carry1 student can make in
    the lesson, then works on honestly from."""
    for slip in students.SLIPS:
        st = students.Student(d, "carry1", slip)
        written = st.work()
        if st.slipped is not None:
            yield slip, st, grade(runner, lesson, d, written, folder)


def slipped_cell(rep: dict, step, i: int, j: int) -> dict:  # type: ignore[no-untyped-def, type-arg]
    """The slipped cell of a report, or (a row slip that began in a cell the mask fills in, so
    not graded) the first cell of its row that is not right."""
    row = [
        c
        for c in rep["cells"]
        if (c["step"], c["head"], c["row"]) == (step.name, step.head, step.rows[i])
    ]
    return next(
        (c for c in row if c["col"] == step.cols[j]),
        next((c for c in row if c["verdict"] != "correct"), row[0]),
    )


def simulate(count: int, seed: int) -> dict[str, list]:  # type: ignore[type-arg]
    runner = CliRunner()
    stats: dict[str, list] = defaultdict(list)  # type: ignore[type-arg]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for path in lessons(count, seed, folder):
            d = derive(load_lesson(path))
            for habit in students.HABITS:
                rep = grade(runner, path, d, students.Student(d, habit).work(), folder)
                stats[f"honest {habit}"].append(rep["score"] == rep["total"])
            for kind in ("zeros", "ones", "random"):
                written = students.junk(d, kind, seed)
                judge = jd.judge_for(d)  # the cells that number is right for, as the quiz says
                allowed = sum(
                    judge.judge(s, i, j, read_answer(written[s.key][i][j])).right
                    for s in fill_steps(d)
                    for i, j in d.asked(s)
                )
                rep = grade(runner, path, d, written, folder)
                stats[f"junk {kind}"].append(rep["score"] <= allowed)
            for slip, st, rep in slip_students(runner, path, d, folder):
                step, i, j = st.slipped
                cell = slipped_cell(rep, step, i, j)
                lost = rep["total"] - rep["score"]
                if cell["verdict"] == "correct":  # an honest path reaches it too: no slip
                    stats[f"slip {slip} (invisible: honest too)"].append(True)
                elif slip in students.UNNAMED:
                    ft = sum(c["verdict"] == "follow-through" for c in rep["cells"])
                    stats[f"one {slip} slip loses one cell"].append(lost == 1)
                    stats[f"one {slip} slip earns follow-through"].append(ft > 0 or lost == 1)
                else:
                    stats[f"slip {slip} named"].append(slip in cell_slips(cell))
    return stats


def expected_loss(d, step) -> int:  # type: ignore[no-untyped-def]
    """The cells one slip in ``step`` costs: itself, and the concat cell that copies it."""
    copies = {"Z": "concat", "z_new": "concat_new"}.get(step.name)
    return 1 + bool(step.head is not None and copies and d.has(copies))


def pen_case(runner: CliRunner, path: Path, d, slip: str, rng: random.Random, folder: Path):  # type: ignore[no-untyped-def]
    """One student with one pen slip at a random cell of a random step, then honest work:
    (slipped step, cells lost, cells lost expected, slip names on other cells), or None when
    the slip cannot be made there."""
    steps = students.fill_steps(d)
    for _ in range(8):
        step = rng.choice(steps)
        cells = d.asked(step)  # not the cells the mask fills in: the sheet gives them
        if not cells:
            continue
        i, j = rng.choice(cells)
        st = students.Student(d, rng.choice(students.HABITS), slip, at=(step.key, i, j))
        written = st.work()
        if st.slipped is None:
            continue
        rep = grade(runner, path, d, written, folder)
        lost = rep["total"] - rep["score"]
        at = (step.name, step.head, step.rows[i], step.cols[j])
        named = [
            c
            for c in rep["cells"]
            if (c["step"], c["head"], c["row"], c["col"]) != at and cell_slips(c)
        ]
        return step, lost, expected_loss(d, step), named, rep
    return None


def pen_cases(runner: CliRunner, count: int, rng: random.Random, folder: Path):  # type: ignore[no-untyped-def]
    """(kind, pen slip, ``pen_case``) over ``count`` lessons of every kind, precisions 2 to 4."""
    for k in range(count):
        kind = lessongen.KINDS[k % len(lessongen.KINDS)]
        path = folder / f"{kind}{k}.yaml"
        path.write_text(lessongen.kind_text(rng, kind, 2 + k % 3))
        d = derive(load_lesson(path))
        for slip in students.PEN:
            yield kind, slip, pen_case(runner, path, d, slip, rng, folder)


def pen_simulate(count: int, seed: int) -> dict[str, list]:  # type: ignore[type-arg]
    """Pen slips (``students.PEN``) at random cells of random steps, over lessons of every kind
    and precisions 2 to 4: each should cost its cell (and a concat copy) and nothing else."""
    runner = CliRunner()
    rng = random.Random(seed)
    stats: dict[str, list] = defaultdict(list)  # type: ignore[type-arg]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for kind, slip, got in pen_cases(runner, count, rng, folder):
            if got is not None:
                step, lost, expected, named, _ = got
                ok = lost <= expected and not named
                stats[f"pen {slip}: costs its cell alone"].append(ok)
                stats[f"kind {kind}: a pen slip costs its cell alone"].append(ok)
                stats[f"step {step.name}: a pen slip costs its cell alone"].append(ok)
    return stats


ALIKE = {"dmodel-for-dk": "divided-by-dk"}  # named alike when they are one computation


def names_simulate(count: int, seed: int) -> dict[str, list]:  # type: ignore[type-arg]
    """How true the named slips are (issue 39, item 6). Every cell a report names a slip on is
    one *naming*: true when the student made that slip in that step (a misconception student,
    ``students.SLIPS`` less the pen slips ``UNNAMED``), false anywhere else (a pen slip of
    ``students.PEN``, a ``digit`` or ``sign`` slip, a junk sheet, the honest cells around a
    slip). Precision: true namings over all namings; recall: misconception slips named on
    their own cell over the misconception slips that showed."""
    runner = CliRunner()
    rng = random.Random(seed)
    stats: dict[str, list] = defaultdict(list)  # type: ignore[type-arg]

    def namings(rep, truth=None):  # type: ignore[no-untyped-def]
        for c in rep["cells"]:
            # where d_model = d_k², dividing by √d_model is dividing by d_k: one slip, one name
            names = [ALIKE.get(n, n) for n in cell_slips(c)]
            if names:
                ok = truth is not None and truth[0] in names and truth[1] == (c["step"], c["head"])
                stats["naming true"].append(ok)
                if not ok:
                    stats[f"false naming: {truth[0] if truth else 'no slip made'}"].append(False)

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for path in lessons(count, seed, folder):
            d = derive(load_lesson(path))
            for slip, st, rep in slip_students(runner, path, d, folder):
                step, i, j = st.slipped
                if slip in students.UNNAMED:  # a slip of the pen: no name is true
                    namings(rep)
                    continue
                namings(rep, (ALIKE.get(slip, slip), (step.name, step.head)))
                cell = slipped_cell(rep, step, i, j)
                if cell["verdict"] != "correct":  # a slip that shows
                    names = [ALIKE.get(n, n) for n in cell_slips(cell)]
                    named = ALIKE.get(slip, slip) in names
                    stats["slip named (recall)"].append(named)
                    if not named:
                        stats[f"not named: {slip}"].append(False)
            for kind in ("zeros", "ones", "random"):
                namings(grade(runner, path, d, students.junk(d, kind, seed), folder))
        for _, _, got in pen_cases(runner, count, rng, folder):
            if got is not None:
                namings(got[4])
    return stats


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lessons", type=int, default=24)
    parser.add_argument("--seed", type=int, default=12)
    parser.add_argument("--pen", action="store_true", help="pen slips over every lesson kind")
    parser.add_argument("--names", action="store_true", help="how true the named slips are")
    args = parser.parse_args()
    if args.names:
        stats = names_simulate(args.lessons, args.seed)
        named, recall = stats.pop("naming true", []), stats.pop("slip named (recall)", [])
        for key, results in sorted(stats.items()):
            print(f"{key}: {len(results)}")
        print(f"precision: {sum(named)}/{len(named)} named slips are true")
        print(f"recall: {sum(recall)}/{len(recall)} misconception slips named on their cell")
        return
    stats = (pen_simulate if args.pen else simulate)(args.lessons, args.seed)
    width = max(len(k) for k in stats)
    for key, results in stats.items():
        print(f"{key:<{width}}  {sum(results):>4}/{len(results):<4} as they should")


if __name__ == "__main__":
    main()
