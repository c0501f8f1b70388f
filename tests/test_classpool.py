"""A class graded on every core (issue 39, item 9): the pool's outputs are the serial code's,
byte for byte; one core or a few sheets stay serial; Ctrl-C ends the pool (exit 130, no worker
left)."""

from __future__ import annotations

import json
import os
import random
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from tests import students
from tests.conftest import LESSONS, ROOT
from tutor.assess import classpool
from tutor.core.engine import derive
from tutor.core.lessonfile import load_lesson

LESSON = LESSONS / "cats-chase-mice.yaml"


@pytest.fixture(scope="module")
def blank() -> str:
    return subprocess.run(
        [sys.executable, "-m", "tutor", "export", str(LESSON), "--format", "sheet"],
        cwd=ROOT, capture_output=True, text=True, check=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    ).stdout  # fmt: skip


def a_class(folder: Path, blank: str, count: int) -> Path:
    """Honest sheets of every habit, a named slip on some, junk, a blank one and a copy."""
    folder.mkdir()
    d = derive(load_lesson(LESSON))
    slips = ("not-scaled", "softmax-column", "digit", "truncated")
    for k in range(count):
        data = yaml.safe_load(blank)
        rng = random.Random(k)
        if k % 5 == 4:  # junk: random digits everywhere
            for key, rows in list(data.items()):
                if isinstance(rows, list):
                    data[key] = [[f"{rng.uniform(-9, 9):.2f}" for _ in row] for row in rows]
        elif k != 7:  # (sheet 7 is left blank)
            slip = slips[k % 4] if k % 2 else None
            data.update(students.Student(d, students.HABITS[k % 5], slip, seed=k).work())
        data["student"], data["student_id"] = f"Student {k:02d}", f"{100 + k}"
        (folder / f"s{k:02d}.yaml").write_text(json.dumps(data))
    copy = json.loads((folder / "s01.yaml").read_text())
    copy["student"], copy["student_id"] = "Copier", "999"
    (folder / "s99.yaml").write_text(json.dumps(copy))
    return folder


def outputs(run, folder: Path, out: Path) -> dict[str, str]:  # type: ignore[no-untyped-def]
    out.mkdir()
    got = run(
        "grade", str(LESSON), str(folder), "--json", "--csv", str(out / "book.csv"),
        "--report", "--output", str(out / "report.md"), "--feedback", str(out / "fb"),
        "--items", str(out / "items.csv"),
    )  # fmt: skip
    table = run("grade", str(LESSON), str(folder))
    files = {str(p.relative_to(out)): p.read_text() for p in sorted(out.rglob("*")) if p.is_file()}
    return {"json": got.stdout, "err": got.stderr, "table": table.output, **files}


def test_the_pool_writes_what_the_serial_grading_writes(run, tmp_path, blank, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    folder = a_class(tmp_path / "class", blank, 12)
    pooled: list[int] = []
    grade_all = classpool.grade_all

    def counting(jobs, *rest):  # type: ignore[no-untyped-def]
        pooled.append(classpool.workers(len(jobs)))
        return grade_all(jobs, *rest)

    monkeypatch.setattr(classpool, "grade_all", counting)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    parallel = outputs(run, folder, tmp_path / "a")
    monkeypatch.setattr(classpool, "MIN_SHEETS", 10**6)
    serial = outputs(run, folder, tmp_path / "b")
    assert pooled[0] == 2 and pooled[-1] == 0  # the first run used two workers, the last none
    parallel = {k: v.replace(str(tmp_path / "a"), "OUT") for k, v in parallel.items()}
    serial = {k: v.replace(str(tmp_path / "b"), "OUT") for k, v in serial.items()}
    assert parallel.keys() == serial.keys()
    for name in serial:
        assert parallel[name] == serial[name], name
    doc = json.loads(parallel["json"])
    kinds = {f["kind"] for s in doc["sheets"] for f in s["flags"]}
    slips = {c["slip"] for s in doc["sheets"] for c in s["cells"] if c["slip"]}
    assert "identical" in kinds and slips  # the class has flags and named slips to compare
    assert any(s["percent"] == 100 for s in doc["sheets"])


@pytest.mark.parametrize(("cores", "sheets"), [(1, 100), (2, classpool.MIN_SHEETS - 1)])
def test_one_core_or_a_few_sheets_stay_serial(monkeypatch, cores, sheets) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(os, "cpu_count", lambda: cores)
    assert classpool.workers(sheets) == 0
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    assert classpool.workers(classpool.MIN_SHEETS) == 2


def _children(pid: int) -> list[int]:
    out = []
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            text = status.read_text()
        except OSError:
            continue
        if re.search(rf"^PPid:\s+{pid}$", text, re.M):
            out.append(int(status.parent.name))
    return out


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc to see the workers")
def test_ctrl_c_ends_the_pool_with_exit_130_and_no_worker_left(tmp_path, blank) -> None:
    folder = tmp_path / "class"
    folder.mkdir()
    wrong = re.sub(r"\bnull\b(?=[,\]])", "7.77", blank)  # all wrong: every cell searched
    for k in range(60):
        (folder / f"s{k:02d}.yaml").write_text(wrong.replace('student: ""', f'student: "S{k}"'))
    proc = subprocess.Popen(
        [sys.executable, "-m", "tutor", "grade", str(LESSON), str(folder), "--csv",
         str(tmp_path / "book.csv")],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)}, start_new_session=True,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while len(_children(proc.pid)) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    workers = _children(proc.pid)
    if len(workers) < 2:
        proc.kill()
        pytest.skip("the pool did not start (one core?)")
    os.killpg(proc.pid, signal.SIGINT)  # a terminal's Ctrl-C: the whole foreground group
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, (out, err)
    assert "Traceback" not in out + err
    assert not (tmp_path / "book.csv").exists()
    deadline = time.monotonic() + 5
    while any(Path(f"/proc/{w}").exists() for w in workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [w for w in workers if Path(f"/proc/{w}").exists()]


# -- memory flat in the class size (issue 39, item 9): what a class keeps of each sheet --------


def _reachable(root: object, stop: tuple[type, ...]) -> list[object]:
    """Every object ``root`` refers to, directly or not, not looking inside ``stop``'s types
    (the lesson's derivation, shared by the class, holds no sheet)."""
    import gc

    seen, out, todo = {id(root)}, [], [root]
    while todo:
        for x in gc.get_referents(todo.pop()):
            if id(x) in seen or isinstance(x, type) or type(x).__name__ == "module":
                continue
            seen.add(id(x))
            out.append(x)
            if not isinstance(x, stop):
                todo.append(x)
    return out


@pytest.mark.parametrize("cores", [1, 2])
def test_a_graded_class_keeps_no_sheet_entry_or_cell(tmp_path, blank, monkeypatch, cores) -> None:  # type: ignore[no-untyped-def]
    from tutor.assess import grade as gr
    from tutor.assess.classgrade import Lessons, grade_class
    from tutor.assess.sheet import Entry, Sheet, read_sheet
    from tutor.core.engine import Derivation, Step
    from tutor.core.lesson import Lesson

    monkeypatch.setattr(os, "cpu_count", lambda: cores)
    folder = a_class(tmp_path / "class", blank, 12)
    grades = grade_class(Lessons([load_lesson(LESSON)], "cats"), sorted(folder.iterdir()))
    assert len(grades.graded) == 13 and not grades.bad
    kept = _reachable(grades, (Derivation, Step, Lesson))
    held = {type(x).__name__ for x in kept if isinstance(x, Sheet | Entry | gr.Graded | gr.Report)}
    assert not held  # the marks only: a byte a cell
    # what the outputs read is what grading the sheet alone gives: points step by step, each
    # cell's verdict, slips, carried and attempt; and the whole report, rebuilt on demand
    d = grades.graded[0].d
    kinds = set()
    for m in grades.graded:
        alone = gr.grade(d, read_sheet(m.file, d))
        cells = [(g.step, g.i, g.j, g.verdict, g.carried, g.slips, g.attempt) for g in alone.cells]
        assert [tuple(g) for g in m.cells] == cells
        assert [(s, [tuple(g) for g in c]) for s, c in m.steps()] == [
            (s, [c for c in cells if c[0] is s]) for s, _ in alone.steps()
        ]
        assert m.points_by_step() == alone.points_by_step()
        assert (m.points, m.out_of) == (alone.points, alone.out_of)
        alone.flags = m.flags
        again = m.report()
        assert gr.report_json(again) == gr.report_json(alone)
        # (the steps read as attempts too: a weight written over the mask's 0 follows from them)
        assert again.usable.__self__._attempts == alone.usable.__self__._attempts
        kinds |= {g.verdict for g in alone.cells}
        kinds |= {
            k for k in ("carried", "attempt", "slips") if any(getattr(g, k) for g in alone.cells)
        }
    assert kinds >= {"correct", "follow-through", "wrong", "blank", "carried", "attempt", "slips"}


def test_a_sheet_changed_after_it_was_graded_is_named_not_misreported(tmp_path, blank) -> None:  # type: ignore[no-untyped-def]
    from tutor.assess.classgrade import Lessons, grade_class
    from tutor.core.errors import TutorError

    folder = a_class(tmp_path / "class", blank, 2)
    grades = grade_class(Lessons([load_lesson(LESSON)], "cats"), sorted(folder.iterdir()))
    changed = Path(grades.graded[0].file)
    changed.write_text(changed.read_text().replace("Student 00", "Student 0O"))
    with pytest.raises(TutorError, match=r"s00\.yaml changed while the class was being graded"):
        grades.graded[0].report()
    assert grades.graded[1].report().sheet.student == "Student 01"  # the others read as graded


def test_the_judge_remembers_a_bounded_number_of_verdicts_and_judges_the_same(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A class of guesses repeats no answer: the judge's memory of verdicts starts afresh at
    its bound, and the verdicts are those of a judge that forgets nothing."""
    from tutor.assess import grade as gr
    from tutor.assess.judge import judge_for
    from tutor.assess.sheet import read_sheet

    folder = tmp_path / "guesses"
    wrong_sheets(folder, 6)
    bounded, free = derive(load_lesson(LESSON)), derive(load_lesson(LESSON))
    judge = judge_for(bounded)
    judge._verdicts_kept = 40  # a few sheets' worth (cats-chase-mice asks 51 cells)
    sizes = []
    for path in sorted(folder.iterdir()):
        a, b = gr.grade(bounded, read_sheet(path, bounded)), gr.grade(free, read_sheet(path, free))
        sizes.append(len(judge._verdicts))
        assert gr.report_json(a) == gr.report_json(b)
    assert max(sizes) <= 40 and len(judge_for(free)._verdicts) > 40


def wrong_sheets(folder: Path, count: int) -> None:
    """``count`` sheets of random numbers (every cell wrong, none repeated)."""
    blank_text = subprocess.run(
        [sys.executable, "-m", "tutor", "export", str(LESSON), "--format", "sheet"],
        cwd=ROOT, capture_output=True, text=True, check=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    ).stdout  # fmt: skip
    folder.mkdir()
    for k in range(count):
        rng = random.Random(k)
        text = re.sub(r"\bnull\b(?=[,\]])", lambda _, r=rng: f"{r.uniform(-9, 9):.2f}", blank_text)
        (folder / f"g{k}.yaml").write_text(text)
