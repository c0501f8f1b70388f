"""``list``: the lessons that can be named, as plain aligned columns, and the folders searched.

Returns text; never prints (``cli.py`` does).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from rich.text import Text

from tutor.core.catalog import LESSONS_ENV, iter_lessons, lesson_dirs
from tutor.core.course import difficulty, load_course
from tutor.core.errors import LessonError
from tutor.core.lessonfile import check_lesson
from tutor.text.columns import columns
from tutor.text.words import visible

if TYPE_CHECKING:
    from rich.console import Console


LEGEND = "Folders, searched in this order (the first lesson of a name wins):"


def lesson_list(lessons_dir: list[Path] | None, console: Console) -> Text:
    """Every lesson found (name, sizes, where, title), then the folders in search order."""
    rows = []
    levels: dict[str, str] = {}  # name -> difficulty, of the lesson that wins
    first: dict[str, str] = {}  # name -> origin of the lesson that wins
    for name, origin, path in iter_lessons(lessons_dir):
        lesson, _ = check_lesson(path, name)
        where = origin  # the folder is in the legend below the list
        if name in first:
            where += f" (shadowed by {first[name]})"
        first.setdefault(name, origin)
        shown = visible(name)  # a file name: any escape sequence in it is spelled out
        if lesson is None:
            rows.append([shown, "", "", "", "", where, "(invalid: run attn-tutor check)"])
            continue
        levels.setdefault(name, difficulty(lesson))
        sizes = (lesson.n, lesson.d_model, lesson.d_k, lesson.d_v)
        rows.append([shown, *map(str, sizes), where, lesson.title])
    folders = []
    for origin, folder in lesson_dirs(lessons_dir):
        tags = [LESSONS_ENV] if origin.startswith("env") else []
        tags += [] if folder.is_dir() else ["no such folder"]
        folders.append([origin, f"{folder} ({'; '.join(tags)})" if tags else str(folder)])
    header = ("name", "N", "d_model", "d_k", "d_v", "from", "title")
    lines = columns(rows, console.width, header, right=(1, 2, 3, 4), console=console)
    lines += [] if rows else [Text("(no lessons found)")]
    lines += path_lines(levels, console)
    lines += [Text(), Text(LEGEND)]
    lines += columns(folders, console.width, console=console)
    return Text("\n").join(lines)  # Text, not str: no markup or emoji to parse


def path_lines(levels: dict[str, str], console: Console) -> list[Text]:
    """The lessons in the order of the learning path (``attn-tutor learn``), each with its
    difficulty and stages; then the lessons the path does not use."""
    try:
        order = load_course().lesson_order()
    except LessonError:  # a broken install: the list itself still works
        order = {}
    rows = []
    for k, (name, stages) in enumerate((n, s) for n, s in order.items() if n in levels):
        where = f"stage {stages[0]}" if len(stages) == 1 else f"stages {stages[0]}-{stages[-1]}"
        rows.append([f"{k + 1}.", visible(name), levels[name], where])
    rows += [
        ["-", visible(n), level, "not on the path"] for n, level in levels.items() if n not in order
    ]
    if not rows:
        return []
    title = Text("The learning path (attn-tutor learn), with each lesson's difficulty:")
    return [Text(), title, *columns(rows, console.width, console=console)]
