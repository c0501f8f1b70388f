"""What the command line used to do itself, called as a notebook would (issue 37): a quiz planned,
sat and saved without a terminal; a class's variants written; a folder of them exported one
file each; a gradebook named after its lesson."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console

from tests.conftest import LESSONS
from tutor.assess.classgrade import ClassGrades
from tutor.assess.gradebooks import gradebook
from tutor.assess.session import QuizSitting, quiz_plan
from tutor.author.variants import folder_lessons, make_variants, write_variants
from tutor.core.engine import derive
from tutor.core.errors import TutorError
from tutor.core.lessonfile import load_lesson
from tutor.export import worksheet
from tutor.export.folder import export_folder

CATS = LESSONS / "cats-chase-mice.yaml"


def quiet() -> Console:
    return Console(file=io.StringIO(), width=100, color_system=None)


def test_a_quiz_is_planned_sat_and_saved_without_a_terminal() -> None:
    d = derive(load_lesson(CATS, name="cats-chase-mice"))
    plan = quiz_plan(d, ["Q"], count=2, seed=1)
    assert len(plan.questions) == 2 and {q.step.name for q in plan.questions} == {"Q"}
    assert plan.heading()[0].plain.startswith(f"Quiz: {d.lesson.title}  (2 questions, seed 1;")
    sitting = QuizSitting(plan)
    sitting.run(quiet(), io.StringIO("quit\n"))
    assert sitting.result.ended == "quit" and sitting.problems == []
    assert sitting.next_command() == "Next: attn-tutor learn  (the path, stage by stage)"
    # the record was saved: nothing is due yet, and the plan says when something will be
    review = quiz_plan(d, review=True)
    assert review.questions == [] and review.nothing_due


def test_variants_are_written_and_a_forced_run_replaces_the_last(tmp_path: Path) -> None:
    original = load_lesson(CATS, name="cats-chase-mice")
    made = make_variants(original, None, 2, 7)
    out = tmp_path / "class"
    written = write_variants(made, original, out, "attn-tutor variants …", 7)
    assert sorted(p.name for p in out.iterdir()) == sorted(p.name for p in written.paths)
    with pytest.raises(TutorError, match="already exists"):
        write_variants(made, original, out, "attn-tutor variants …", 7)
    again = write_variants(made[:1], original, out, "attn-tutor variants …", 7, force=True)
    assert (again.removed, again.replaced) == (1, 1)
    assert [p.name for p in out.iterdir()] == [made[0].file_name]


def test_a_folder_of_variants_exports_one_file_each(tmp_path: Path) -> None:
    original = load_lesson(CATS, name="cats-chase-mice")
    write_variants(make_variants(original, None, 2, 3), original, tmp_path / "class", "…", 3)
    found = folder_lessons(tmp_path / "class")
    paths = export_folder(
        found, tmp_path / "out", "md", lambda d, who, variant: worksheet.markdown(d, answers=True)
    )
    assert [p.name for p in paths] == [path.stem + ".md" for path, _, _ in found]
    assert all(p.read_text(encoding="utf-8").startswith("#") for p in paths)
    with pytest.raises(TutorError, match="would be replaced"):
        export_folder(found, tmp_path / "out", "md", lambda d, who, variant: "")


def test_a_gradebook_is_named_by_the_assignment_else_a_default() -> None:
    assert (
        gradebook(ClassGrades(), "canvas", assignment="HW 1").text.splitlines()[0].endswith(",HW 1")
    )
    assert gradebook(ClassGrades(), "canvas").text.splitlines()[0].endswith(",attn-tutor")
