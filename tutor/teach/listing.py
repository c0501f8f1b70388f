"""``list``: the lessons that can be named, as plain aligned columns, and the folders searched.

Returns text; never prints (``tutor.cli`` does). Each file is read and validated only when it is new
or has changed since the last list (``core.summaries``), so YAML is not even imported otherwise.
"""

from __future__ import annotations

from pathlib import Path

from tutor.core.catalog import LESSONS_ENV, iter_lessons, lesson_dirs, same_lesson
from tutor.core.summaries import Cache, course_order, lesson_summary
from tutor.text.columns import columns, wrap
from tutor.text.visible import visible

LEGEND = "Folders, searched in this order (the first lesson of a name wins):"


def lesson_list(lessons_dir: list[Path] | None, width: int) -> str:
    """Every lesson found (name, sizes, where, title), then the folders in search order, as
    plain text ``width`` columns wide (no Rich: ``list`` starts in the time of ``import typer``
    and half as much again)."""
    rows = []
    levels: dict[str, str] = {}  # name -> difficulty, of the lesson that wins
    first: dict[str, str] = {}  # name -> origin of the lesson that wins
    cache = Cache()
    found = list(iter_lessons(lessons_dir))
    bundled = {name: path for name, origin, path in found if origin == "bundled"}
    copies = {  # ./lessons in a clone holds the bundled files: one lesson, listed once
        name
        for name, origin, path in found
        if origin == "./lessons" and name in bundled and same_lesson(path, bundled[name])
    }
    for name, origin, path in found:
        if name in copies and origin == "bundled":
            continue
        lesson = lesson_summary(cache, path, name)
        where = "bundled" if name in copies else origin  # the folder is in the legend below
        if name in first:
            where += f" (shadowed by {first[name]})"
        first.setdefault(name, origin)
        shown = visible(name)  # a file name: any escape sequence in it is spelled out
        if lesson.title is None:
            rows.append([shown, "", "", "", "", where, "(invalid: run attn-tutor check)"])
            continue
        levels.setdefault(name, lesson.difficulty)
        sizes = [str(s) if s else "-" for s in lesson.sizes]  # 0: a size the lesson has not
        rows.append([shown, *sizes, where, lesson.title])
    folders = []
    for origin, folder in lesson_dirs(lessons_dir):
        tags = [LESSONS_ENV] if origin.startswith("env") else []
        tags += [] if folder.is_dir() else ["no such folder"]
        folders.append([origin, f"{folder} ({'; '.join(tags)})" if tags else str(folder)])
    header = ("name", "N", "d_model", "d_k", "d_v", "from", "title")
    lines = columns(rows, width, header, right=(1, 2, 3, 4))
    lines += [] if rows else ["(no lessons found)"]
    lines += path_lines(levels, course_order(cache), width)
    cache.save()
    lines += ["", *wrap(LEGEND, width)]
    lines += columns(folders, width)
    return "\n".join(lines)


def path_lines(levels: dict[str, str], order: dict[str, list[int]], width: int) -> list[str]:
    """The lessons in the order of the learning path (``attn-tutor learn``; ``order``: each
    lesson's stages), each with its difficulty and stages; then the lessons the path does not
    use."""
    rows = []
    for k, (name, stages) in enumerate((n, s) for n, s in order.items() if n in levels):
        where = f"stage {stages[0]}" if len(stages) == 1 else f"stages {stages[0]}-{stages[-1]}"
        rows.append([f"{k + 1}.", visible(name), levels[name], where])
    rows += [
        ["-", visible(n), level, "not on the path"] for n, level in levels.items() if n not in order
    ]
    if not rows:
        return []
    title = "The learning path (attn-tutor learn), with each lesson's difficulty:"
    return ["", *wrap(title, width), *columns(rows, width)]
