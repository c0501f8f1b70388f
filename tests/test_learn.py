"""The learning path (``learn``), course files, practice that remembers (``quiz --review``) and
progress that names slips: through the loop with an injected stream and through the CLI."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from rich.console import Console

from tests.conftest import FIXTURES, LESSONS, ROOT
from tutor.assess import history, review
from tutor.assess import learn as ln
from tutor.assess import quiz as qz
from tutor.core.course import load_course
from tutor.core.engine import derive
from tutor.core.errors import LessonError
from tutor.core.lessonfile import load_lesson
from tutor.text import format as fmt
from tutor.text.cells import parse_cell

SMALL = FIXTURES / "courses" / "small.yaml"
BUNDLED = ROOT / "courses" / "attention.yaml"
CATS = derive(load_lesson(LESSONS / "cats-chase-mice.yaml", name="cats-chase-mice"))
PROMPT = re.compile(r"(\S+\[[^\]\n]+\]) = $")


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No test writes to the real home."""
    monkeypatch.setenv("ATTN_TUTOR_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def right_answer(d, name: str) -> str:  # type: ignore[no-untyped-def]
    """What the table shows for the cell a prompt names: an answer the judge takes."""
    step, i, j = parse_cell(d, name)
    return fmt.shown(step.cells[i][j], step, d.lesson.precision)


class Student(io.StringIO):
    """Reads the prompt the quiz just printed and answers it by plan: "right", "wrong",
    "hint", "" (Enter), or anything else typed as it is; the end of the plan is Ctrl-D."""

    def __init__(self, console: Console, plan: list[str]) -> None:
        super().__init__()
        self.console, self.plan = console, plan
        self.d = CATS  # the derivation the stage asks (its plan's: new numbers, maybe)

    def readline(self, *args) -> str:  # type: ignore[no-untyped-def, override]
        if not self.plan:
            return ""
        move = self.plan.pop(0)
        last = self.console.file.getvalue().splitlines()[-1]  # type: ignore[attr-defined]
        m = PROMPT.search(last)
        if move == "right":
            assert m, last
            return right_answer(self.d, m[1]) + "\n"
        if move == "wrong":
            return "12345\n"
        return move + "\n"


def sit(plan: list[str], passed: list[str] | None = None, seed: int = 3):  # type: ignore[no-untyped-def]
    course = load_course(SMALL)
    c = Console(file=io.StringIO(), width=80, color_system=None, highlight=False)
    kept: list[tuple[str, str, list[str]]] = []

    def keep(stage, d, result, draw, now_passed):  # type: ignore[no-untyped-def]
        kept.append((stage.id, result.ended, list(now_passed)))

    student = Student(c, plan)

    def prepare(stage):  # type: ignore[no-untyped-def]
        from tutor.assess.stageplan import plan as stage_plan
        from tutor.teach.course_view import stage_intro

        p = stage_plan(CATS, stage)
        student.d = p.d
        return p, stage_intro(p, stage, 80)

    sitting = ln.run(course, passed or [], c, student, prepare, keep, seed=seed)
    return sitting, c.file.getvalue(), kept  # type: ignore[attr-defined]


# ---------------------------------------------------------------------------------------------
# course files


BAD_COURSES = [
    ("", "bad.yaml:1:1: the file is empty; expected a course"),
    ("title: x\nstages: [\n", "bad.yaml:3:1: not valid YAML"),
    ("title: x\n", "bad.yaml:1:1: the course has no 'stages'"),
    ("title: x\nstages: 3\n", "bad.yaml:2:9: stages should be a list of stages, but found 3"),
    (
        "title: x\nstages:\n  - title: A\n    lesson: cats-chase-mice\n    steps: [Q]\n"
        "    colour: red\n",
        "bad.yaml:6:5: unknown key 'colour' in stage 1",
    ),
    (
        "title: x\nstages:\n  - title: A\n    lesson: cats-chase-mice\n    steps: [Q, scorse]\n",
        "bad.yaml:5:16: the steps of stage 1: 'scorse' is not one of X, Q, K, V, Q_rot, K_rot, "
        "scores, scaled, weights, Z, output, q_new, k_new, v_new, scores_new, scaled_new, "
        "weights_new, z_new (did you mean scores?)",
    ),
    (
        "title: x\nstages:\n  - title: A\n    lesson: cats-chase-mice\n    steps: [Q]\n"
        "    count: 0\n",
        "bad.yaml:6:12: count is 0; expected a whole number from 1 to 20",
    ),
    (
        "title: x\nstages:\n  - title: A\n    lesson: cats-chase-mice\n    steps: [Q]\n"
        "    show: [X, Q]\n",
        "bad.yaml:6:11: show in stage 1: 'Q' is asked in this stage, and its table would give "
        "the answers away",
    ),
    (
        "title: x\nstages:\n  - title: A\n    lesson: l\n    steps: [Q]\n"
        "  - title: A\n    lesson: l\n    steps: [K]\n",
        "bad.yaml:6:5: stage id 'a' is used twice (first on line 3)",
    ),
    ("title: x\nstages:\n  - lesson: l\n    steps: [Q]\n", "bad.yaml:3:5: stage 1 has no title"),
    (
        "title: x\nstages:\n  - title: A\n    lesson: l\n    steps: [Q]\n    warmup: [1, two]\n",
        "bad.yaml:6:17: a warmup number: found 'two', expected a number",
    ),
    ("title: &a x\nstages: *a\n", "bad.yaml:1:8"),  # anchors and aliases are refused
]


@pytest.mark.parametrize(("text", "message"), BAD_COURSES)
def test_a_bad_course_file_is_named_with_line_and_column(
    run, tmp_path: Path, text: str, message: str
) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "bad.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(LessonError) as err:
        load_course(path)
    assert message in str(err.value)
    r = run("learn", "--course", str(path))
    assert r.exit_code == 1 and message in r.stderr and "Traceback" not in r.stderr


def test_a_course_naming_a_missing_lesson_or_step_fails_before_any_question(
    run, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "c.yaml"
    path.write_text("title: x\nstages:\n  - title: A\n    lesson: cats-chase-mic\n    steps: [Q]\n")
    r = run("learn", "--course", str(path), input="")
    assert r.exit_code == 1
    assert "c.yaml:3:1: stage 1: " in r.stderr and "did you mean cats-chase-mice" in r.stderr
    path.write_text(
        "title: x\nstages:\n  - title: A\n    lesson: cats-chase-mice\n    steps: [output]\n"
    )
    r = run("learn", "--course", str(path), input="")
    assert r.exit_code == 1
    assert "c.yaml:3:1: stage 1 (A): the lesson cats-chase-mice has no output step" in r.stderr
    assert "Question" not in r.stdout


# ---------------------------------------------------------------------------------------------
# the loop


def test_a_full_sitting_with_right_wrong_and_hinted_answers() -> None:
    # stage 1: wrong, then right after the automatic hint; stage 2: hint, then right;
    # stage 3: right at the first try (each stage of the small course needs 1 in a row)
    sitting, out, kept = sit(["wrong", "right", "", "hint", "right", "", "right"])
    assert sitting.passed == ["queries", "scaled-scores", "weights"]
    assert [k[:2] for k in kept] == [
        ("queries", "finished"),
        ("scaled-scores", "finished"),
        ("weights", "finished"),
    ]
    assert kept[0][2] == ["queries"]  # saved as soon as the stage ends
    assert "Stage 1/3: Queries" in out and "Warm-up: softmax of 0, 1, worked by hand" in out
    assert "To pass: 1 right in a row, each at the first or second try with at most one" in out
    assert "✓ Stage 1 passed: 1 right in a row. [███████░░░░░░░░░░░░░] 1/3 stages passed" in out
    # the round's table says why each answer counted, as the pass message does
    assert re.search(r"│ 1 │ Q\[\w+, \d\] +│ second try, 1 hint +│ ✓ +│", out)
    assert re.search(r"│ 1 │ scaled\[\w+, \w+\] +│ first try, 1 hint +│ ✓ +│", out)
    assert out.rstrip().endswith("Course complete: every stage passed.")


def test_two_hints_or_a_third_try_do_not_count_and_the_round_goes_on() -> None:
    sitting, out, _ = sit(["hint", "hint", "right", "right"])
    assert sitting.passed == ["queries"]
    assert re.search(r"│ 1 │ Q\[\w+, \d\] +│ first try, 2 hints +│ ✗ +│", out)
    assert re.search(r"│ 2 │ Q\[\w+, \d\] +│ first try +│ ✓ +│", out)
    assert "In a row: 0 of 1." in out
    sitting, out, _ = sit(["wrong", "wrong", "right", *["wrong"] * 6, "q"])
    assert sitting.passed == [] and sitting.ended == "stopped"  # q at "Enter: try again"
    assert re.search(r"│ 1 │ Q\[\w+, \d\] +│ third try, 1 hint +│ ✗ +│", out)
    assert re.search(r"│ 2 │ Q\[\w+, \d\] +│ missed +│ ✗ +│", out)
    assert "Not passed yet: 0 in a row at best this round, and 1 are needed." in out


def test_a_sitting_resumes_at_the_first_stage_not_passed() -> None:
    sitting, out, _ = sit(["right"], passed=["queries"])
    assert "Stage 1/3" not in out and "Stage 2/3: Scaled scores" in out
    assert sitting.ended == "ctrl-d"  # the plan ran out at the prompt between stages
    assert sitting.passed == ["queries", "scaled-scores"]


def test_q_between_stages_stops_and_keeps_what_was_passed() -> None:
    sitting, _, _ = sit(["right", "q"])
    assert sitting.ended == "stopped" and sitting.passed == ["queries"]


def test_the_explanation_shows_inputs_never_the_answers() -> None:
    from tutor.assess.stageplan import plan
    from tutor.teach.course_view import stage_intro

    course = load_course()
    c = Console(file=io.StringIO(), width=80, color_system=None, highlight=False)
    p = plan(CATS, course.stages[2])
    for part in stage_intro(p, course.stages[2], 80):  # scores: Q and K in full
        c.print(part)
    out = c.file.getvalue()
    assert "Q (3 × 2)" in out and "K (3 × 2)" in out
    assert f"Worked for you: {p.worked.name}" in out  # one cell of the step, worked
    assert "scores (3 × 3)" not in out  # but not its table


# ---------------------------------------------------------------------------------------------
# the command


def test_learn_status_reset_and_course_progress_file(run, home: Path) -> None:  # type: ignore[no-untyped-def]
    r = run("learn", "--course", str(SMALL), "--status")
    assert r.exit_code == 0, r.stderr
    assert "[░░░░░░░░░░░░░░░░░░░░] 0/3 stages passed" in r.stdout
    assert "Up next: stage 1, Queries (cats-chase-mice: Q)" in r.stdout
    assert r.stdout.rstrip().splitlines()[-1].startswith("Next: attn-tutor learn --course ")
    assert ln.save_passed(load_course(SMALL), ["queries"]) == []
    r = run("learn", "--course", str(SMALL), "--status")
    assert "1/3 stages passed" in r.stdout and "Up next: stage 2, Scaled scores" in r.stdout
    r = run("learn", "--course", str(SMALL), "--reset", input="")
    assert r.exit_code == 2 and "add --yes" in r.stderr
    r = run("learn", "--course", str(SMALL), "--reset", "--yes")
    assert r.exit_code == 0 and "starting over" in r.stdout
    data = json.loads((home / "course.json").read_text())
    assert data["courses"][load_course(SMALL).id]["passed"] == []  # by id, not by path


def test_learn_records_each_stage_in_the_history(run, home: Path) -> None:  # type: ignore[no-untyped-def]
    r = run("learn", "--course", str(SMALL), "--seed", "1", input="12345\n" * 9 + "q\n")
    assert r.exit_code == 0, r.stderr
    assert "Not passed yet" in r.stdout and "Enter: try again · q: stop" in r.stdout
    assert r.stdout.rstrip().splitlines()[-1] == (
        f"Saved. Next: attn-tutor learn --course {SMALL}  (resumes at stage 1)"
    )
    rec = history.read().records[0]
    assert rec["course"] == "small" and rec["stage"] == "queries"
    assert rec["cells"][0]["outcome"] == "missed" and rec["cells"][0]["hints"] == 1


def test_a_damaged_course_progress_file_is_a_warning(run, home: Path) -> None:  # type: ignore[no-untyped-def]
    home.mkdir(parents=True)
    (home / "course.json").write_text("{not json")
    r = run("learn", "--course", str(SMALL), "--status")
    assert r.exit_code == 0 and "warning: could not read the course progress" in r.stderr
    assert "0/3 stages passed" in r.stdout


# ---------------------------------------------------------------------------------------------
# practice that remembers


def cell(step: str, outcome: str, slips: list[str] | None = None, head: int | None = None) -> dict:  # type: ignore[type-arg]
    return {"step": step, "head": head, "outcome": outcome, "slips": slips or []}


def seed_history(home: Path, records: list[dict]) -> None:  # type: ignore[type-arg]
    home.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps({"version": 1, "lesson": "cats-chase-mice", **r}) for r in records]
    (home / history.FILE_NAME).write_text("\n".join(lines) + "\n")


def ago(days: float) -> str:
    return (datetime.now(UTC) - timedelta(days=days)).isoformat(timespec="seconds")


def test_leitner_boxes_move_up_on_first_try_and_back_on_a_miss_or_hint() -> None:
    recs = [
        {"lesson": "l", "time": ago(9), "cells": [cell("Q", "first"), cell("Z", "first")]},
        {"lesson": "l", "time": ago(8), "cells": [cell("Q", "first"), cell("Z", "hints")]},
        {"lesson": "l", "time": ago(5), "cells": [cell("Q", "first"), cell("Z", "first", head=2)]},
    ]
    cards = review.cards(recs)
    assert cards[("l", "Q")].box == 4 and cards[("l", "Z")].box == 1
    assert cards[("l", "head2.Z")].box == 2
    assert review.boxes(cards, "l") == {"Q": 4, "Z": 1}
    due = review.due(cards, "l", datetime.now(UTC))
    assert [c.step for c in due] == ["Z", "head2.Z"]  # Q (box 4) waits a week


def test_the_choice_leans_on_steps_missed_and_away_from_mastered() -> None:
    plain = qz.choose(CATS, None, 8, 0)
    leaning = qz.choose(CATS, None, 8, 0, {"scores": 1, "Q": 5, "K": 5})
    count = lambda qs, n: sum(q.step.name == n for q in qs)  # noqa: E731
    assert count(leaning, "scores") == 3 > count(plain, "scores")
    assert count(leaning, "Q") <= count(plain, "Q")
    assert [q.step.name for q in leaning] == sorted(
        (q.step.name for q in leaning), key=qz.QUIZ_STEPS.index
    )


def test_quiz_review_asks_only_what_is_due(run, home: Path) -> None:  # type: ignore[no-untyped-def]
    seed_history(
        home,
        [
            {
                "time": ago(2),
                "cells": [cell("Q", "first"), cell("scaled", "missed", ["not-scaled"])],
            },
            {"time": ago(0.1), "cells": [cell("Q", "first")]},
        ],
    )
    r = run("quiz", "--review", "--seed", "1", input="skip\nskip\nskip\n")
    assert r.exit_code == 0, r.stderr
    asked = re.findall(r"Question \d+/\d+: (\w+)\[", r.stdout)
    assert asked and set(asked) == {"scaled"}
    assert "Review of the steps due: scaled" in r.stdout


def test_quiz_review_says_when_nothing_is_due_and_when_the_next_is(run, home: Path) -> None:  # type: ignore[no-untyped-def]
    r = run("quiz", "--review")
    assert r.exit_code == 0 and "no quizzes of it. Start with: attn-tutor quiz" in r.stdout
    seed_history(home, [{"time": ago(0.5), "cells": [cell("Q", "first"), cell("K", "first")]}])
    r = run("quiz", "--review")
    assert r.exit_code == 0
    assert "Nothing is due for review in cats-chase-mice. Next due: Q, in 12 hours." in r.stdout
    assert run("quiz", "--review", "--steps", "Q").exit_code == 2


# ---------------------------------------------------------------------------------------------
# progress that names slips


SLIPPY = [
    {
        "time": ago(3),
        "cells": [
            cell("K", "hints"),
            cell("scores", "missed", ["swapped"]),
            cell("weights", "missed", ["softmax-column"]),
        ],
    },
    {
        "time": ago(2),
        "cells": [
            cell("scores", "missed", ["query-query"]),
            cell("scaled", "hints", ["not-scaled"]),
            cell("weights", "missed", ["softmax-column"]),
        ],
    },
    {
        "time": ago(1),
        "cells": [cell("Q", "first"), cell("weights", "hints", ["softmax-column", "unnormalised"])],
    },
]


def test_practise_next_is_the_step_missed_outright_not_one_that_needed_a_hint() -> None:
    recs = [
        {"lesson": "l", "cells": [cell("K", "hints")]},
        {"lesson": "l", "cells": [cell("scores", "missed"), cell("scores", "missed")]},
    ]
    assert history.practise_next(history.progress(recs)).step == "scores"  # type: ignore[union-attr]


def test_progress_golden_at_80_columns(run, home: Path) -> None:  # type: ignore[no-untyped-def]
    from tests.test_walk import check_golden

    seed_history(home, SLIPPY)
    r = run("progress", env={"COLUMNS": "80"})
    assert r.exit_code == 0, r.stderr
    out = r.stdout.replace(str(home / history.FILE_NAME), "HISTORY")
    check_golden("progress-80.txt", out)
    assert "  weights: 3 times: softmax down a column; softmax runs along each row" in out
    # scores was missed outright both times: it comes before weights, which once needed a hint
    assert "Practise next: scores in cats-chase-mice (missed 2 of 2 lately)\n" in out
    assert "\n  attn-tutor quiz cats-chase-mice --steps scores\n" in out
    assert max(len(line) for line in out.splitlines() if "HISTORY" not in line) <= 80


def test_the_next_command_is_never_broken_across_lines(run, home: Path) -> None:  # type: ignore[no-untyped-def]
    long = "a-lesson-with-a-really-quite-long-name-for-its-own-good"
    seed_history(home, [{"lesson": long, "cells": [cell("scores", "missed")]}])
    r = run("progress", env={"COLUMNS": "40"})
    assert f"\n  attn-tutor quiz {long} --steps scores\n" in r.stdout


def test_progress_json(run, home: Path) -> None:  # type: ignore[no-untyped-def]
    seed_history(home, SLIPPY)
    r = run("progress", "--json")
    assert r.exit_code == 0, r.stderr
    data = json.loads(r.stdout)
    steps = {s["step"]: s for s in data["lessons"][0]["steps"]}
    assert steps["weights"]["missed"] == 2 and steps["weights"]["after_hints"] == 1
    assert steps["weights"]["slips"][0] == {
        "slip": "softmax-column",
        "count": 3,
        "reminder": "3 times: softmax down a column; softmax runs along each row",
    }
    assert steps["Q"]["first_try_rate"] == 1.0
    assert data["next"]["command"] == "attn-tutor quiz cats-chase-mice --steps scores"


def test_every_slip_the_judge_names_has_a_reminder() -> None:
    import tutor.assess.catalogue as catalogue
    from tutor.assess.slips import REMINDERS

    source = Path(catalogue.__file__).read_text(encoding="utf-8")
    named = set(re.findall(r'Slip\(\s*"([a-z][\w-]*)"', source))
    named |= {f"used-{w}" for w in ("W_Q", "W_K", "W_V")}
    named |= set(re.findall(r'\(\w+(?: \* \w+)?, "([a-z-]+)"\)', source))
    assert named and named <= set(REMINDERS), named - set(REMINDERS)


def test_list_shows_the_path_order_and_a_difficulty_per_lesson(run) -> None:  # type: ignore[no-untyped-def]
    out = run("list", env={"COLUMNS": "80"}).stdout
    path = out.split("The learning path (attn-tutor learn), with each lesson's difficulty:\n")[1]
    rows = [line.split() for line in path.split("\n\n")[0].splitlines()]
    assert rows[:3] == [
        ["1.", "cats-chase-mice", "easy", "stages", "1-6"],
        ["2.", "the-cake-causal", "harder", "stage", "7"],
        ["3.", "the-cake-two-heads", "harder", "stage", "8"],
    ]
    assert [r[1] for r in rows[3:9]] == [
        "dog-bites-dog",
        "ha-ha-ha-rope",
        "chat-noir-cross",
        "the-cake-next-token",
        "the-cake-grouped",
        "tokens-as-columns",
    ]
    # the two bundled lessons whose kind the path already has are listed off it
    bundled = {p.stem for p in (Path(__file__).parents[1] / "lessons").glob("*.yaml")}
    rest = rows[9:]
    assert {r[1] for r in rest} == bundled - {r[1] for r in rows[:9]} == {"go-go-go", "the-cake"}
    assert all(r[0] == "-" and r[2] in ("easy", "medium", "harder") for r in rest)
    assert all(r[3:] == ["not", "on", "the", "path"] for r in rest)
    assert ["-", "the-cake", "medium", "not", "on", "the", "path"] in rest


def test_a_plain_quiz_leans_on_what_was_missed(run, home: Path) -> None:  # type: ignore[no-untyped-def]
    seed_history(home, [{"time": ago(1), "cells": [cell("Q", "first"), cell("scores", "missed")]}])
    r = run("quiz", "--seed", "0", input="skip\n" * 8)
    assert "More of what you missed lately: scores" in r.stdout
    asked = re.findall(r"Question \d+/8: (\w+)\[", r.stdout)
    assert len(asked) == 8 and asked.count("scores") == 3  # one a round for the others
    assert asked == sorted(asked, key=qz.QUIZ_STEPS.index)  # still in computation order


def test_learn_status_starts_without_sympy(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    from tests.conftest import ROOT

    code = (
        "import sys; from typer.testing import CliRunner; from tutor.cli import app; "
        "r = CliRunner().invoke(app, ['learn', '--status']); "
        "print(r.exit_code, 'sympy' in sys.modules)"
    )
    env = {**os.environ, "ATTN_TUTOR_HOME": str(tmp_path)}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=env
    )
    assert out.stdout.split() == ["0", "False"], out.stderr


def test_a_history_naming_steps_the_lesson_cannot_ask_is_not_believed(run, home: Path) -> None:  # type: ignore[no-untyped-def]
    odd = "\x1b[31mX"
    seed_history(home, [{"time": ago(1), "cells": [cell(odd, "missed"), cell("masked", "missed")]}])
    r = run("quiz", "--review")
    assert r.exit_code == 0 and "\x1b" not in r.stdout and "masked" not in r.stdout
    assert "no quizzes of it" in r.stdout
    r = run("quiz", "--seed", "0", input="")
    assert r.exit_code == 0 and "More of what you missed" not in r.stdout


def test_a_damaged_course_progress_file_is_set_aside_not_written_over(run, home: Path) -> None:  # type: ignore[no-untyped-def]
    home.mkdir(parents=True)
    damaged = '{"version": 1, "courses": {"other": {"passed": ["a", "b"]}'  # three bytes short
    (home / "course.json").write_text(damaged)
    r = run("learn", "--course", str(SMALL), "--status")
    assert r.exit_code == 0 and "moved it to" in r.stderr
    (aside,) = home.glob("course.json.damaged-*")
    assert aside.read_text() == damaged  # every course's progress is still there, by hand
    assert ln.save_passed(load_course(SMALL), ["queries"]) == []
    assert aside.read_text() == damaged


def test_course_progress_is_kept_per_course_id_not_per_path(home: Path, tmp_path: Path) -> None:
    """Issue 40: the same course installed at two paths (a reinstall, another venv) is one
    course; two courses with ids of their own are two, wherever their files are."""
    installs = [tmp_path / v / "lib/python3.11/site-packages/tutor/courses" for v in ("a", "b")]
    for folder in installs:
        folder.mkdir(parents=True)
        (folder / "attention.yaml").write_text(BUNDLED.read_text())
    first, second = (load_course(f / "attention.yaml") for f in installs)
    ids = [s.id for s in first.stages]
    assert ln.save_passed(first, ids[:2]) == []
    assert ln.load_passed(second) == (ids[:2], [])
    data = json.loads((home / "course.json").read_text())
    assert list(data["courses"]) == ["attention"]
    assert data["courses"]["attention"]["fingerprint"] == first.fingerprint
    week1, week2 = tmp_path / "week1.yaml", tmp_path / "week2.yaml"
    week1.write_text("id: week-1\n" + SMALL.read_text())
    week2.write_text("id: week-2\n" + SMALL.read_text())
    assert ln.save_passed(load_course(week1), ["queries"]) == []
    assert ln.load_passed(load_course(week2)) == ([], [])
    assert ln.load_passed(load_course(week1)) == (["queries"], [])


def test_progress_written_by_an_older_version_is_carried_over(home: Path) -> None:
    """Older files keyed a course by the absolute path it was installed at: read under the
    course's id on first read, and written under it (the old key gone) on the next save."""
    course = load_course(BUNDLED)
    ids = [s.id for s in course.stages]
    old = "/old/venv/lib/python3.11/site-packages/tutor/courses/attention.yaml"
    other = "/somewhere/else/my-course.yaml"
    home.mkdir(parents=True)
    (home / "course.json").write_text(json.dumps({"version": 1, "courses": {
        old: {"passed": ids[:3]}, other: {"passed": ["x"]}}}))  # fmt: skip
    assert ln.load_passed(course) == (ids[:3], [])
    assert ln.save_passed(course, ids[:4]) == []
    data = json.loads((home / "course.json").read_text())
    assert data["courses"]["attention"]["passed"] == ids[:4]
    assert old not in data["courses"] and data["courses"][other] == {"passed": ["x"]}


def test_a_changed_course_or_lesson_is_noticed(home: Path, tmp_path: Path) -> None:
    """The fingerprints kept beside the passed stages tell when the course or a lesson changed
    since: the passed stages it still has are kept, and the student is told."""
    course = load_course(SMALL)
    assert ln.save_passed(course, ["queries"], lessons={"cats-chase-mice": "0123abcd"}) == []
    changed = tmp_path / "small.yaml"
    changed.write_text(SMALL.read_text().replace("count: 1", "count: 2", 1))
    passed, notes = ln.load_passed(load_course(changed))
    assert passed == ["queries"] and notes == [
        "the course A small test course has changed since you last saved your progress; "
        "the stages you passed that it still has are kept"
    ]
    assert ln.load_passed(course) == (["queries"], [])
    passed, notes = ln.load_passed(course, lessons={"cats-chase-mice": "ffff0000"})
    assert passed == ["queries"] and notes == [
        "lesson cats-chase-mice has changed since you passed stage 1 on it; it stays passed"
    ]


def test_two_sessions_merge_their_progress(home: Path) -> None:
    course = load_course(SMALL)
    first, _ = ln.load_passed(course)  # session 1 starts
    second, _ = ln.load_passed(course)  # session 2 starts
    assert ln.save_passed(course, [*second, "queries"], before=second) == []
    ids = [s.id for s in course.stages]
    assert ln.save_passed(course, [*first, ids[1]], before=first) == []  # the older session
    assert ln.load_passed(course)[0] == ["queries", ids[1]]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="POSIX FIFOs")
def test_a_fifo_as_course_progress_is_refused_without_waiting(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    os.mkfifo(home / "course.json")
    code = (
        "from typer.testing import CliRunner; from tutor.cli import app; "
        f"r = CliRunner().invoke(app, ['learn', '--course', {str(SMALL)!r}, '--status']); "
        "print(r.exit_code); print(r.stderr)"
    )
    env = {**os.environ, "ATTN_TUTOR_HOME": str(home)}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60
    )
    assert done.stdout.startswith("0\n"), done.stdout + done.stderr
    # the console wraps the message where the temporary path's length puts it
    assert "a FIFO, not a course progress file" in " ".join(done.stdout.split())
    assert not (home / "course.json").exists()  # set aside, out of the way


def test_show_never_reveals_a_step_still_to_be_asked(run, home: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    text = SMALL.read_text().replace("    show: [X, W_Q]\n", "    show: [scores]\n", 1)
    path = tmp_path / "course.yaml"
    path.write_text(text)
    line = next(n for n, row in enumerate(text.splitlines(), 1) if "show: [scores]" in row)
    r = run("learn", "--course", str(path), input="")
    assert r.exit_code == 1
    assert (
        f"{path}:{line}:11: show in stage 1: its tables hold Q, which this stage asks" in r.stderr
    )
    assert "Q[" not in r.stdout  # nothing of the table was printed


def test_learn_status_says_which_passed_stage_is_on_a_changed_lesson(run, home: Path) -> None:  # type: ignore[no-untyped-def]
    """A stage passed on a lesson whose numbers changed since stays passed, and ``--status``
    says so (before, only ``learn`` itself did, once the questions were about to start)."""
    course = load_course(SMALL)
    assert ln.save_passed(course, ["queries"], lessons={"cats-chase-mice": "0123abcd"}) == []
    r = run("learn", "--course", str(SMALL), "--status")
    assert r.exit_code == 0, r.stderr
    said = " ".join(r.stdout.split())
    assert (
        "Note: lesson cats-chase-mice has changed since you passed stage 1 on it; it stays passed"
        in said
    )
    assert "✓ 1. Queries" in said and "1/3 stages passed" in said
    assert (
        ln.save_passed(course, ["queries"], lessons={"cats-chase-mice": CATS.lesson.fingerprint})
        == []
    )
    assert "Note:" not in run("learn", "--course", str(SMALL), "--status").stdout  # unchanged
