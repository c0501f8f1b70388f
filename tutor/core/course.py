"""A course file: the order in which a student meets lessons and steps, written in YAML the way
lessons are, read with the same safe loader, and validated with file:line:col errors.

    version: 1
    id: attention                  # optional: what progress is kept under (default: from title)
    title: Self-attention by hand
    stages:
      - title: One dot product     # what the student sees; the id is made from it
        lesson: cats-chase-mice    # a lesson's name (looked up as the CLI looks it up)
        about: A query is ...      # optional: two or three lines on the idea, shown first
        steps: [Q]                 # the steps the stage's questions are about
        count: 3                   # right answers in a row that pass the stage (default 3)
        show: [X, W_Q]             # walk steps shown in full first (inputs, never the steps
                                   # asked: their tables hold the answers)
        warmup: [1, 2, 3]          # optional: the softmax of these numbers, worked, first

The bundled course is ``courses/attention.yaml`` (installed inside the package).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import yaml

from tutor.core.catalog import bundled_course_path
from tutor.core.errors import LessonError
from tutor.core.lesson import Lesson
from tutor.core.spec import MAX_VALUES, QUIZ_STEPS, STEP_NAMES
from tutor.core.yamlsrc import (
    Checker,
    Enough,
    compose,
    describe,
    pos,
    read_text,
    suggest,
    whole_number,
)

COURSE_KEYS = ("version", "id", "title", "stages")
STAGE_KEYS = ("id", "title", "lesson", "about", "steps", "count", "show", "warmup")
MAX_STAGES = 50
MAX_COUNT = 20
COUNT = 3  # right in a row, by default
MAX_ABOUT = 600  # characters: two or three lines, not an essay
MAX_WARMUP = 8


@dataclass(frozen=True)
class Stage:
    """One stop on the path: questions on some steps of one lesson, until ``count`` are right
    in a row (see ``tutor.assess.learn``)."""

    id: str
    title: str
    lesson: str
    steps: tuple[str, ...]
    count: int = COUNT
    show: tuple[str, ...] = ()
    warmup: tuple[tuple[int, int], ...] = ()  # exact numbers (numerator, denominator)
    line: int = 0  # where the stage starts in its file, for messages
    show_at: tuple[int, int] = (0, 0)  # (line, col) of its show: list, for messages
    about: str = ""  # the idea in a few lines, shown when the stage opens


@dataclass(frozen=True)
class Course:
    name: str
    title: str
    stages: tuple[Stage, ...]
    path: str = ""
    id: str = ""  # what a student's progress is kept under: never the path it is installed at

    @property
    def fingerprint(self) -> str:
        """Twelve hex digits that change when the stages change (their ids, lessons, steps and
        counts; not the words), so progress can notice a course that changed since."""
        import hashlib
        import json

        stages = [[s.id, s.lesson, list(s.steps), s.count] for s in self.stages]
        return hashlib.sha256(json.dumps(stages).encode()).hexdigest()[:12]

    def lesson_order(self) -> dict[str, list[int]]:
        """Each lesson's stage numbers (1-based), in the order of the path."""
        out: dict[str, list[int]] = {}
        for n, stage in enumerate(self.stages, 1):
            out.setdefault(stage.lesson, []).append(n)
        return out


LEVELS = ("easy", "medium", "harder")


def difficulty(lesson: Lesson) -> str:
    """How hard a lesson is to work by hand: more tokens and wider vectors mean more arithmetic,
    a mask one more idea, heads a whole second pass (and the concat and W_O after it)."""
    points = (lesson.n > 4) + (lesson.d_k > 2 or lesson.d_model > 4)
    points += (lesson.mask == "causal") + 2 * lesson.multi_head
    return LEVELS[0 if points == 0 else 1 if points <= 2 else 2]


def load_course(path: str | Path | None = None) -> Course:
    """Read and validate a course file; raise ``LessonError`` listing every problem."""
    path = path or bundled_course_path()
    shown = str(path)
    root = compose(read_text(path, "course"), shown, MAX_VALUES)
    c = Checker(shown, 50)
    if root is None:
        c.error(None, "the file is empty; expected a course (title, stages)")
        raise LessonError(c.problems)
    try:
        course = _build(c, root, Path(path).stem, shown)
    except Enough:
        course = None
    if c.problems or course is None:
        raise LessonError(c.problems)
    return course


def _slug(title: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")[:40] or "stage"


def _build(c: Checker, root: yaml.Node, name: str, path: str) -> Course | None:
    keys = c.mapping(root, COURSE_KEYS, "the course")
    if keys is None:
        return None
    for key in ("title", "stages"):
        if key not in keys:
            c.error(root, f"the course has no {key!r}; expected keys: {', '.join(COURSE_KEYS)}")
    if "version" in keys and c.scalar(keys["version"][1], "version") not in ("1", None):
        c.error(keys["version"][1], f"version is {describe(keys['version'][1])}; expected 1")
    title = c.text(keys["title"][1], "the course title", one_line=True) if "title" in keys else ""
    course_id = _slug(title or name)
    if "id" in keys:
        course_id = c.scalar(keys["id"][1], "the course id") or course_id
        if not re.fullmatch(r"[a-z0-9][a-z0-9-]{0,39}", course_id):
            c.error(keys["id"][1], f"id {course_id!r}: expected lower-case letters, digits, -")
    stages: list[Stage] = []
    if "stages" in keys:
        node = keys["stages"][1]
        if not isinstance(node, yaml.SequenceNode) or not node.value:
            c.error(node, f"stages should be a list of stages, but found {describe(node)}")
        elif len(node.value) > MAX_STAGES:
            c.error(node, f"found {len(node.value)} stages; a course may have at most {MAX_STAGES}")
        else:
            seen: dict[str, int] = {}
            for item in node.value:
                stage = _stage(c, item, len(stages) + 1)
                if stage is None:
                    continue
                if stage.id in seen:
                    c.error(
                        item,
                        f"stage id {stage.id!r} is used twice (first on line {seen[stage.id]}); "
                        "give one of them an id of its own",
                    )
                seen.setdefault(stage.id, stage.line)
                stages.append(stage)
    return Course(name, title or "", tuple(stages), path, course_id)


def _names(c: Checker, node: yaml.Node, what: str, allowed: tuple[str, ...]) -> tuple[str, ...]:
    if isinstance(node, yaml.ScalarNode) and node.value:
        items = [node]  # one step may be given without brackets
    elif isinstance(node, yaml.SequenceNode) and node.value:
        items = node.value
    else:
        c.error(node, f"{what} should be a list of step names, but found {describe(node)}")
        return ()
    out = []
    for s in items:
        name = c.scalar(s, f"a step in {what}")
        if name is not None and name not in allowed:
            c.error(
                s, f"{what}: {name!r} is not one of {', '.join(allowed)}{suggest(name, allowed)}"
            )
        elif name is not None:
            out.append(name)
    return tuple(out)


def _stage(c: Checker, node: yaml.Node, number: int) -> Stage | None:
    what = f"stage {number}"
    keys = c.mapping(node, STAGE_KEYS, what)
    if keys is None:
        return None
    line = node.start_mark.line + 1
    missing = [k for k in ("title", "lesson", "steps") if k not in keys]
    if missing:
        c.error(node, f"{what} has no {', '.join(missing)}; a stage needs title, lesson, steps")
        return None
    title = c.text(keys["title"][1], f"the title of {what}", one_line=True)
    lesson = c.text(keys["lesson"][1], f"the lesson of {what}", one_line=True)
    if lesson is not None and not lesson:
        c.error(keys["lesson"][1], f"the lesson of {what} is empty; expected a lesson's name")
    steps = _names(c, keys["steps"][1], f"the steps of {what}", QUIZ_STEPS)
    show: tuple[str, ...] = ()
    show_at = (0, 0)
    if "show" in keys:
        show = _names(c, keys["show"][1], f"show in {what}", STEP_NAMES)
        show_at = pos(keys["show"][1])
        for name in set(show) & set(steps):
            c.error(
                keys["show"][1],
                f"show in {what}: {name!r} is asked in this stage, and its table would give "
                "the answers away; show the steps it is made from",
            )
    about = ""
    if "about" in keys:
        about = c.text(keys["about"][1], f"the about of {what}") or ""
        if len(about) > MAX_ABOUT:
            c.error(
                keys["about"][1],
                f"the about of {what} has {len(about)} characters; keep it to {MAX_ABOUT} "
                "(two or three lines on the idea)",
            )
    count = COUNT
    if "count" in keys:
        v = keys["count"][1]
        text = c.scalar(v, f"the count of {what}")
        n = None if text is None else whole_number(text, 1, MAX_COUNT)
        if text is not None and n is None:
            c.error(v, f"count is {describe(v)}; expected a whole number from 1 to {MAX_COUNT}")
        count = n or count
    warmup: list[tuple[int, int]] = []
    if "warmup" in keys:
        v = keys["warmup"][1]
        if not isinstance(v, yaml.SequenceNode) or not 1 <= len(v.value) <= MAX_WARMUP:
            c.error(v, f"warmup should be a list of 1 to {MAX_WARMUP} numbers, found {describe(v)}")
        else:
            warmup = [x for x in (c.number(e, "a warmup number") for e in v.value) if x]
    stage_id = title and _slug(title)
    if "id" in keys:
        stage_id = c.scalar(keys["id"][1], f"the id of {what}")
        if stage_id is not None and not re.fullmatch(r"[a-z0-9][a-z0-9-]{0,39}", stage_id):
            c.error(keys["id"][1], f"id {stage_id!r}: expected lower-case letters, digits, -")
            stage_id = None
    if not (title and lesson and steps and stage_id):
        return None
    about = " ".join(about.split())  # one paragraph, wrapped by the terminal
    return Stage(stage_id, title, lesson, steps, count, show, tuple(warmup), line, show_at, about)
