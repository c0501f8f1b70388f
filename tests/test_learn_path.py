"""The whole learning path (issue 30): every bundled lesson kind in order, stages that pass on
their idea (three right in a row, cells the idea changes, never a cell whose answer is 0),
retry in place with new cells, review of what was missed, ``--status`` and ``--stage``.
Through the CLI: CliRunner for piped input, a pseudo-terminal where the student reads the
question before answering it."""

from __future__ import annotations

import dataclasses
import io
import json
import re
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest
from rich.console import Console

from tests.conftest import LESSONS
from tests.reference import attention
from tests.test_learn import SMALL, Student, ago, cell
from tutor.assess import history
from tutor.assess import learn as ln
from tutor.assess.stageplan import plan
from tutor.core.course import bundled_course_path, load_course
from tutor.core.engine import derive
from tutor.core.lessonfile import load_lesson
from tutor.text import format as fmt

COURSE = load_course()
N = len(COURSE.stages)


def lesson(name: str):  # type: ignore[no-untyped-def]
    return load_lesson(LESSONS / f"{name}.yaml", name=name)


DERIVED = {s.lesson: derive(lesson(s.lesson)) for s in COURSE.stages}


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ATTN_TUTOR_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def kind(name: str) -> str:
    """What a bundled lesson adds to plain attention (one word per kind)."""
    les = lesson(name)
    if les.layout == "columns":
        return "columns"
    if les.next is not None:
        return "next"
    if les.kv_groups is not None:
        return "grouped"
    if les.source is not None:
        return "cross"
    if les.positions == "rope":
        return "rope"
    if les.embedded:
        return "positions"
    if les.multi_head:
        return "heads"
    return "mask" if les.mask == "causal" else "vanilla"


# ---------------------------------------------------------------------------------------------
# the bundled path


def test_the_path_takes_every_bundled_lesson_kind_in_order() -> None:
    assert COURSE.path == str(bundled_course_path()) and bundled_course_path().is_file()
    kinds = [kind(s.lesson) for s in COURSE.stages]
    order = ["vanilla", "mask", "heads", "positions", "rope", "cross", "next", "grouped", "columns"]
    assert list(dict.fromkeys(kinds)) == order
    assert {kind(p.stem) for p in LESSONS.glob("*.yaml")} == set(order)
    assert [s.steps for s in COURSE.stages[:6]] == [
        ("Q",),
        ("K", "V"),
        ("scores",),
        ("scaled",),
        ("weights",),
        ("Z",),
    ]
    for stage in COURSE.stages:  # each opens with two or three lines on its idea
        assert 80 <= len(stage.about) <= 400, stage.title
        assert stage.count == 3
    # the softmax warm-up opens the weights stage, where softmax is first needed
    assert [s.title for s in COURSE.stages if s.warmup] == ["Attention weights"]
    ln.check_lessons(COURSE, lesson)  # no stage shows what it, or a later stage, asks


def test_no_stage_can_be_passed_by_typing_0_and_each_asks_its_idea() -> None:
    for stage in COURSE.stages:
        d = DERIVED[stage.lesson]
        pools = ln.pool(d, stage)
        assert list(pools) == list(stage.steps) and all(pools.values()), stage.title
        for qs in pools.values():
            for q in qs:
                assert fmt.as_shown(q.step.cells[q.i][q.j], d.lesson.precision) != 0, q.name
        # enough cells for a round of new ones after a failed round
        assert sum(map(len, pools.values())) >= stage.count + 1, stage.title


def test_the_mask_stage_asks_only_weights_the_mask_changes_against_numpy() -> None:
    (stage,) = [s for s in COURSE.stages if kind(s.lesson) == "mask"]
    les = lesson(stage.lesson)
    masked = attention(les)[("weights", None)]
    plain = attention(dataclasses.replace(les, mask="none"))[("weights", None)]
    (qs,) = ln.pool(DERIVED[stage.lesson], stage).values()
    asked = {(q.i, q.j) for q in qs}
    n = len(les.tokens)
    assert all(i < n - 1 for i, _ in asked)  # the last row sees every token: never asked
    for i in range(n):
        for j in range(i + 1):  # every visible weight the mask moves (at 2 places) is asked
            moved = round(masked[i, j], 2) != round(plain[i, j], 2)
            assert ((i, j) in asked) == (moved and round(masked[i, j], 2) != 0), (i, j)


def test_rope_grouped_positions_and_the_cache_stages_ask_their_idea() -> None:
    by_kind = {kind(s.lesson): s for s in COURSE.stages if kind(s.lesson) != "vanilla"}
    rope = ln.pool(DERIVED[by_kind["rope"].lesson], by_kind["rope"])
    les = lesson(by_kind["rope"].lesson)
    ref = attention(les)
    for name in ("Q_rot", "K_rot"):  # a turned pair: position 0 is not turned
        for q in rope[name]:
            assert q.i > 0
            turned, plain = ref[(name, None)][q.i, q.j], ref[(name[0], None)][q.i, q.j]
            assert not np.isclose(turned, plain)
    grouped = ln.pool(DERIVED[by_kind["grouped"].lesson], by_kind["grouped"])
    # four query heads in two groups: heads 2 and 4 read K and V made by heads 1 and 3
    assert {q.step.head for qs in grouped.values() for q in qs} == {2, 4}
    positions = ln.pool(DERIVED[by_kind["positions"].lesson], by_kind["positions"])
    P = np.array([[p / q for p, q in row] for row in lesson(by_kind["positions"].lesson).P])
    assert positions["X"] and all(P[q.i, q.j] != 0 for q in positions["X"])
    cache = ln.pool(DERIVED[by_kind["next"].lesson], by_kind["next"])
    assert all(name.endswith("_new") for name in cache)  # the decoding row
    cross = ln.pool(DERIVED[by_kind["cross"].lesson], by_kind["cross"])
    source = lesson(by_kind["cross"].lesson).source
    assert all(q.step.rows[q.i] in source for q in cross["K"])  # keys: one per source token
    assert all(q.step.cols[q.j] in source for q in cross["weights"])  # a source column


# ---------------------------------------------------------------------------------------------
# through the CLI, piped


@pytest.mark.parametrize("n", range(1, N + 1))
def test_a_student_who_answers_0_everywhere_never_passes(run, n: int) -> None:  # type: ignore[no-untyped-def]
    r = run("learn", "--stage", str(n), "--seed", "4", input="0\n" * 40)
    assert r.exit_code == 0, r.stderr
    assert f"Stage {n}/{N}: {COURSE.stages[n - 1].title}" in r.stdout
    assert "passed:" not in r.stdout and "✓ Right" not in r.stdout
    assert "Not passed yet" in r.stdout or "ended early" in r.stdout
    status = run("learn", "--status").stdout
    assert f"  ✗ {n:>2}. {COURSE.stages[n - 1].title} (" in status
    assert "0/14 stages passed" in status


def test_status_lists_every_stage_with_its_mark(run, home: Path) -> None:  # type: ignore[no-untyped-def]
    ids = [s.id for s in COURSE.stages]
    assert ln.save_passed(COURSE, ids[:2]) == []
    home.mkdir(parents=True, exist_ok=True)
    rec = {"lesson": "cats-chase-mice", "course": COURSE.name, "stage": ids[2], "cells": []}
    (home / history.FILE_NAME).write_text(json.dumps(rec) + "\n")
    r = run("learn", "--status", env={"COLUMNS": "80"})
    lines = r.stdout.splitlines()
    assert lines[1] == "[███░░░░░░░░░░░░░░░░░] 2/14 stages passed"
    marks = [line.split()[0] for line in lines[2 : 2 + N]]
    assert marks == ["✓", "✓", "✗", *["—"] * (N - 3)]
    assert lines[2 + 9] == "  — 10. Rotary positions (RoPE) (ha-ha-ha-rope: Q_rot, K_rot)"
    assert lines[2 + N] == "Up next: stage 3, Scores (cats-chase-mice: scores)"
    assert lines[-1] == "Next: attn-tutor learn  (stage 3)"


def test_stage_out_of_range_is_a_usage_error(run) -> None:  # type: ignore[no-untyped-def]
    for bad in ("0", "15"):
        r = run("learn", "--stage", bad)
        assert r.exit_code == 2
        assert f"--stage {bad}: the course has stages 1 to 14" in r.stderr


def test_a_replayed_stage_plays_that_one_and_stops() -> None:
    course = load_course(SMALL)
    c = Console(file=io.StringIO(), width=80, color_system=None, highlight=False)

    student = Student(c, ["right"])

    def prepare(stage):  # type: ignore[no-untyped-def]
        p = plan(DERIVED["cats-chase-mice"], stage)
        student.d = p.d
        return p, []

    sitting = ln.run(course, [], c, student, prepare, lambda *a: None, 1, only=2)
    out = c.file.getvalue()  # type: ignore[attr-defined]
    assert sitting.passed == ["scaled-scores"] and sitting.ended == "replayed"
    assert "Stage 2/3: Scaled scores" in out and "Stage 1/3" not in out and "Stage 3/3" not in out
    line = ln.next_command(course, sitting.passed, sitting.ended)
    assert line == "Next: attn-tutor learn  (carries on at stage 1)"


def test_what_was_missed_in_a_passed_stage_comes_back_for_review(run, home: Path) -> None:  # type: ignore[no-untyped-def]
    course = load_course(SMALL)
    assert ln.save_passed(course, ["queries"]) == []
    rec = {
        "version": 1,
        "lesson": "cats-chase-mice",
        "course": "small",
        "stage": "queries",
        "time": ago(1),
        "cells": [cell("Q", "missed"), cell("Q", "first")],
    }
    (home / history.FILE_NAME).write_text(json.dumps(rec) + "\n")
    r = run("learn", "--course", str(SMALL), "--seed", "2", input="skip\nskip\n")
    assert "Review first, as your history says it is due: Q (cats-chase-mice)" in r.stdout
    asked = re.findall(r"Question \d+/\d+: (\w+)\[", r.stdout)
    assert asked[0] == "Q" and set(asked[1:]) == {"scaled"}  # review, then stage 2
    assert "Stage 2/3: Scaled scores" in r.stdout
    records = history.read(home / history.FILE_NAME).records
    assert [r.get("stage") for r in records] == ["queries", "queries", "scaled-scores"]
    now = datetime.now(UTC)
    assert ln.due_reviews(course, ["queries"], records[:1], now) == [(course.stages[0], "Q")]
    assert ln.due_reviews(course, [], records[:1], now) == []  # only stages passed


def test_a_finished_course_still_brings_back_what_is_due(run, home: Path) -> None:  # type: ignore[no-untyped-def]
    course = load_course(SMALL)
    assert ln.save_passed(course, [s.id for s in course.stages]) == []
    r = run("learn", "--course", str(SMALL), "--status")
    assert "Due for review" not in r.stdout and "Course complete" in r.stdout
    rec = {"lesson": "cats-chase-mice", "time": ago(2), "cells": [cell("scaled", "missed")]}
    (home / history.FILE_NAME).write_text(json.dumps(rec) + "\n")
    r = run("learn", "--course", str(SMALL), "--status")
    assert "Due for review: scaled (cats-chase-mice)\n" in r.stdout
    r = run("learn", "--course", str(SMALL), "--seed", "1", input="skip\n")
    assert "Review first, as your history says it is due: scaled (cats-chase-mice)" in r.stdout
    assert re.findall(r"Question \d+/\d+: (\w+)\[", r.stdout) == ["scaled"]
    assert "Course complete: every stage passed." in r.stdout
    assert r.stdout.rstrip().splitlines()[-1].startswith("Next: attn-tutor progress")


def test_a_step_right_at_the_first_try_is_due_a_day_later() -> None:
    course = load_course(SMALL)
    rec = {"lesson": "cats-chase-mice", "time": ago(0.5), "cells": [cell("Q", "first")]}
    assert ln.due_reviews(course, ["queries"], [rec], datetime.now(UTC)) == []
    rec["time"] = ago(1.5)
    assert ln.due_reviews(course, ["queries"], [rec], datetime.now(UTC)) == [
        (course.stages[0], "Q")
    ]


# ---------------------------------------------------------------------------------------------
# course files


def course_file(folder: Path, text: str) -> Path:
    path = folder / "c.yaml"
    path.write_text("title: x\nstages:\n" + text, encoding="utf-8")
    return path


def test_a_show_that_holds_a_later_stage_s_answers_is_refused(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = course_file(
        tmp_path,
        "  - title: Early softmax\n    lesson: cats-chase-mice\n    show: [scaled]\n"
        "    steps: [weights]\n"
        "  - title: Scaled\n    lesson: cats-chase-mice\n    steps: [scaled]\n",
    )
    r = run("learn", "--course", str(path), input="")
    assert r.exit_code == 1
    assert (
        f"{path}:5:11: show in stage 1: its tables hold scaled, which a later stage of "
        "cats-chase-mice asks; show it only after that stage" in r.stderr
    )
    assert "Question" not in r.stdout


def test_about_is_said_first_and_a_long_one_is_refused(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    text = "  - title: A\n    lesson: cats-chase-mice\n    steps: [Q]\n"
    path = course_file(tmp_path, text + "    about: Queries first.\n")
    r = run("learn", "--course", str(path), input="")
    assert "Stage 1/1: A\nQueries first.\n" in r.stdout
    course_file(tmp_path, text + "    about: " + "word " * 130 + "\n")
    r = run("learn", "--course", str(path), input="")
    assert r.exit_code == 1
    assert f"{path}:6:12: the about of stage 1 has 649 characters; keep it to 600" in r.stderr


def test_a_course_can_reorder_and_add_stages(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = course_file(
        tmp_path,
        "  - title: RoPE first\n    lesson: ha-ha-ha-rope\n    steps: [Q_rot]\n    count: 2\n"
        "  - title: Then the cache\n    lesson: the-cake-next-token\n    steps: [z_new]\n",
    )
    r = run("learn", "--course", str(path), "--status")
    assert "  — 1. RoPE first (ha-ha-ha-rope: Q_rot)" in r.stdout
    assert "  — 2. Then the cache (the-cake-next-token: z_new)" in r.stdout
    r = run("learn", "--course", str(path), input="")
    assert "To pass: 2 right in a row" in r.stdout
    assert re.search(r"Question 1/4: Q_rot\[ha#[23], [12]\]", r.stdout)


RACE = """
import sys, time
from pathlib import Path
from tutor.assess import learn as ln
from tutor.assess.stageplan import plan
from tutor.core.course import load_course

course = load_course()
path, stage, start = Path(sys.argv[1]), sys.argv[2], float(sys.argv[3])
before, _ = ln.load_passed(course, path)  # what this session read at its start
while time.time() < start:
    pass
sys.exit(1 if ln.save_passed(course, [*before, stage], path, before=before) else 0)
"""


def test_twenty_sessions_saving_at_once_lose_no_stage(tmp_path: Path) -> None:
    """Issue 43: read, merge and replace without a lock lost passed stages (12 of 20 races).
    Twenty processes, each passing one stage, all saving at the same moment."""
    import subprocess
    import sys
    import time

    root = Path(__file__).resolve().parent.parent
    path = tmp_path / "course.json"
    ids = [s.id for s in COURSE.stages]
    start = time.time() + 4  # every process started and waiting before any saves
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", RACE, str(path), ids[k % len(ids)], str(start)], cwd=root
        )
        for k in range(20)
    ]
    assert all(p.wait(timeout=60) == 0 for p in procs)
    passed, problems = ln.load_passed(COURSE, path)
    assert problems == []
    assert sorted(passed) == sorted(set(ids[k % len(ids)] for k in range(20)))
