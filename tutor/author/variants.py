"""``variants``: one lesson per student, each with its own numbers and the same teaching intent.

A variant keeps the lesson's tokens, shapes, mask, heads (and W_O), its title and its kind of
entries, and draws new X, W_Q, W_K and W_V with ``tutor.author.new``'s generator: about half the
entries are drawn afresh, then one entry at a time is changed until every row of every head
meets ``tutor.author.check.row_faults`` measured against the original's row (the strongest key stays
put with a clear margin; no uniform row, no more than 0.9 on one key, no row mostly 0.00 and
no |scaled| above 4, each unless the original has it). The same seed gives the same variants;
no two are the same, and none is the original.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, replace
from pathlib import Path

from tutor.author.new import (
    SMALL_INTEGERS,
    ZERO,
    Palette,
    faults_of,
    fresh_values,
    lesson_yaml,
    wander,
    yaml_text,
)
from tutor.core.errors import TutorError
from tutor.core.lesson import Lesson
from tutor.core.roster import Student

TRIES = 20  # walks for one variant before saying which constraints could not be met
STEPS = 60  # changes proposed in one walk (each kept only if every constraint still holds)


@dataclass(frozen=True)
class Variant:
    """One student's lesson."""

    id: str  # "variant-07"
    student: Student | None
    lesson: Lesson

    @property
    def file_name(self) -> str:
        slug = _slug(self.student.name or self.student.id) if self.student else ""
        return f"{self.id}-{slug}.yaml" if slug else f"{self.id}.yaml"


def _slug(text: str) -> str:
    """``Ann-Marie O'Neil`` → ``ann-marie-o-neil``: safe in a file name (letters and digits)."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:40]


# ---------------------------------------------------------------------------------------------
# making variants


def palette_of(lesson: Lesson) -> Palette:
    """The entries a variant may use: small integers for an integer lesson; for a lesson with
    decimals or fractions, the lesson's own non-zero values (of X, and of the W's)."""
    X = [e for row in lesson.X for e in row]
    W = [e for h in lesson.heads for m in (h.W_Q, h.W_K, h.W_V) for row in m for e in row]
    if all(q == 1 for _, q in X + W):
        return SMALL_INTEGERS
    x = tuple(sorted({e for e in X if e != ZERO}, key=lambda e: e[0] / e[1]))
    w = tuple(sorted({e for e in W if e != ZERO}, key=lambda e: e[0] / e[1]))
    return replace(SMALL_INTEGERS, x=x or SMALL_INTEGERS.x, w=w or SMALL_INTEGERS.w)


def make_variants(
    lesson: Lesson, students: list[Student] | None, count: int, seed: int
) -> list[Variant]:
    """One variant per student (or ``count`` of them), the same for the same seed; raise
    ``TutorError`` naming the constraints that could not be met rather than return a poor one."""
    unsupported = [
        k for k, used in (("kv_groups", lesson.kv_groups), ("next", lesson.next)) if used
    ]
    if lesson.positions != "none":
        unsupported.append(f"positions: {lesson.positions}")
    if lesson.source is not None:
        unsupported.append("a source sentence")
    if lesson.qkv:  # a variant is written as X and W's
        unsupported.append("Q, K and V given")
    if unsupported:  # new numbers would break the sharing of K, V, drop the decoding step,
        # or write positions and a source sentence as plain self-attention
        raise TutorError(
            f"{lesson.path}: variants cannot yet make new numbers for a lesson with "
            f"{' or '.join(unsupported)}; "
            "copy the lesson and change its numbers by hand (attn-tutor check keeps it valid)"
        )
    total = len(students) if students else count
    width = max(2, len(str(total)))
    palette = palette_of(lesson)
    faults = faults_of(lesson)
    groups = lesson.X  # tokens with equal rows of X (a repeated word) keep equal rows
    taken = {_numbers(lesson)}
    out = []
    for k in range(1, total + 1):
        vid = f"variant-{k:0{width}d}"
        found = None
        left: list[str] = []
        for attempt in range(TRIES):
            rng = random.Random(f"{seed}:{k}:{attempt}")  # str seeds are stable across runs
            candidate = wander(rng, lesson, faults, palette, groups, STEPS)
            candidate = fresh_values(rng, candidate, palette)
            left = faults(candidate)  # none, unless the lesson's own rows are out of reach
            if not left and _numbers(candidate) not in taken:
                found = candidate
                break
        if found is None:
            raise TutorError(_unmet(lesson, vid, left))
        taken.add(_numbers(found))
        variant = Variant(vid, students[k - 1] if students else None, found)
        name = Path(variant.file_name).stem  # as the file will be loaded
        out.append(replace(variant, lesson=replace(found, name=name, path=variant.file_name)))
    return out


def _numbers(lesson: Lesson) -> tuple:
    """What makes two variants the same: their given matrices."""
    return (lesson.X, tuple((h.W_Q, h.W_K, h.W_V) for h in lesson.heads))


def _unmet(lesson: Lesson, vid: str, left: list[str]) -> str:
    if not left:
        return (
            f"could not make {vid} of {lesson.name} different from the variants before it in "
            f"{TRIES} tries; this lesson has too few distinct variants for so many students"
        )
    shown = "; ".join(left[:6]) + (f"; … ({len(left) - 6} more)" if len(left) > 6 else "")
    return (
        f"could not make {vid} of {lesson.name} meet every constraint in {TRIES} tries; "
        f"still unmet: {shown}. Writing none rather than a poor variant: simplify the lesson "
        "(fewer tokens, smaller entries) or check it with attn-tutor check"
    )


# ---------------------------------------------------------------------------------------------
# writing them


def variant_yaml(variant: Variant, original: Lesson, command: str, seed: int) -> str:
    """The variant as a commented lesson: its id and student in the first comment lines."""
    header = (
        f"# {variant.lesson.name}: a variant of {original.name} for attn-tutor (format version 1).",
        f"# variant: {variant.id}",
        *([f"# student: {variant.student.shown}"] if variant.student else []),
        f"# seed: {seed}",
    )
    lesson = replace(variant.lesson, title=original.title, description=original.description)
    text = lesson_yaml(lesson, command, variant.file_name, header)
    if original.quiz.steps or original.quiz.count != 8:
        text += "quiz:\n"
        if original.quiz.steps:
            text += f"  steps: [{', '.join(original.quiz.steps)}]\n"
        text += f"  count: {original.quiz.count}\n"
    if original.points:  # the same grading for every student
        text += "points:  # per step (one point per cell where none is given)\n"
        text += "".join(f"  {k}: {v}\n" for k, v in original.points.items())
    # what a sheet made from this file copies, so grade finds this variant again
    text += "variant:  # written by attn-tutor variants; answer sheets copy it\n"
    text += f"  id: {yaml_text(variant.id)}\n"
    text += f"  of: {yaml_text(original.name)}\n"
    if variant.student is not None:
        text += f"  student: {yaml_text(variant.student.name)}\n"
        text += f"  student_id: {yaml_text(variant.student.id)}\n"
    return text


def folder_lessons(folder: Path) -> list[tuple[Path, str | None, str | None]]:
    """The lessons of a folder ``variants`` wrote, in name order, each with who it is for and
    its variant id (its ``# student:`` and ``# variant:`` lines; None when it has none)."""
    paths = sorted(p for p in folder.iterdir() if p.suffix in (".yaml", ".yml") and p.is_file())
    if not paths:
        raise TutorError(
            f"{folder} has no lesson files (.yaml); write some with attn-tutor variants"
        )
    found = []
    for path in paths:
        who: dict[str, str] = {}
        try:
            with path.open(encoding="utf-8", errors="replace") as f:
                for line in f:
                    if not line.startswith("#"):
                        break
                    key, sep, value = line[1:].partition(":")
                    if sep and key.strip() in ("student", "variant"):
                        who.setdefault(key.strip(), value.strip())
        except OSError as err:
            raise TutorError(f"cannot read {path}: {err.strerror or err}") from None
        found.append((path, who.get("student"), who.get("variant")))
    return found
