"""Saving what the explorer made: the edited lesson as a new, valid lesson file.

The file is written by ``tutor.author.new.lesson_yaml`` (the one writer of lesson files), says in
its first comments what it was derived from and which entries changed, is checked by the lesson
loader before it is put in place, and is put in place atomically (a temporary file in the same
folder, then a link or rename), never over an existing file unless asked.
"""

from __future__ import annotations

import dataclasses
import os
import tempfile
from pathlib import Path

from tutor.author.new import lesson_yaml
from tutor.core.errors import TutorError
from tutor.core.lesson import Lesson, Matrix
from tutor.core.lessonfile import check_lesson
from tutor.explore.model import Explorer, typed_text

MAX_LISTED = 6  # changed entries named in the comment before "and n more"


def default_path(lesson: Lesson, folder: Path) -> Path:
    """``<lesson>-explored.yaml`` in ``folder``, numbered past files that exist."""
    stem = Path(lesson.path).stem if lesson.path else lesson.name
    path = folder / f"{stem}-explored.yaml"
    k = 2
    while path.exists():
        path = folder / f"{stem}-explored-{k}.yaml"
        k += 1
    return path


def _matrices(lesson: Lesson) -> list[tuple[str, Matrix, tuple[str, ...]]]:
    out = [("X", lesson.X, lesson.labels)]
    for n, head in enumerate(lesson.heads, 1):
        prefix = f"head{n}." if lesson.multi_head else ""
        for name in ("W_Q", "W_K", "W_V"):
            m = getattr(head, name)
            out.append((prefix + name, m, tuple(str(i) for i in range(1, len(m) + 1))))
    if lesson.W_O is not None:
        out.append(("W_O", lesson.W_O, tuple(str(i) for i in range(1, len(lesson.W_O) + 1))))
    return out


def changes(original: Lesson, lesson: Lesson) -> list[str]:
    """Every entry that differs: ``X[cats, 1]: 1 → 2``."""
    out = []
    for (key, old, rows), (_, new, _) in zip(_matrices(original), _matrices(lesson), strict=True):
        for i, (a_row, b_row) in enumerate(zip(old, new, strict=True)):
            for j, (a, b) in enumerate(zip(a_row, b_row, strict=True)):
                if a != b:
                    out.append(f"{key}[{rows[i]}, {j + 1}]: {typed_text(a)} → {typed_text(b)}")
    if original.mask != lesson.mask:
        out.append(f"mask: {original.mask} → {lesson.mask}")
    return out


def lesson_text(model: Explorer, path: Path, source: str) -> str:
    """The edited lesson as a commented lesson file."""
    original = model.original
    lesson = dataclasses.replace(
        model.lesson, name=path.stem, mask="causal" if model.settings.mask else "none"
    )
    changed = changes(original, lesson)
    listed = ", ".join(changed[:MAX_LISTED]) or "no entry changed"
    if len(changed) > MAX_LISTED:
        listed += f", and {len(changed) - MAX_LISTED} more"
    header = (
        f"# {path.stem}: a lesson for attn-tutor (format version 1).",
        f"# Derived with attn-tutor explore from {source} ({original.title}); changed: {listed}.",
    )
    text = lesson_yaml(lesson, f"attn-tutor explore {source}", path.name, header)
    if original.quiz.steps or original.quiz.count != 8:
        text += "quiz:\n"
        if original.quiz.steps:
            text += f"  steps: [{', '.join(original.quiz.steps)}]\n"
        text += f"  count: {original.quiz.count}\n"
    return text


def save_lesson(model: Explorer, path: Path, source: str, replace: bool = False) -> None:
    """Write the edited lesson to ``path``; raise ``TutorError`` (nothing written) when it
    exists and ``replace`` is not set, when the folder cannot be written, or when the loader
    would refuse the file."""
    if path.is_dir():
        raise TutorError(f"{path} is a folder; give a file name such as {path}/x.yaml")
    if path.exists() and not replace:
        raise TutorError(f"{path} already exists")
    text = lesson_text(model, path, source)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as err:
        raise TutorError(f"cannot write in {path.parent}: {err.strerror}") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        _, problems = check_lesson(tmp, path.stem)
        if problems:
            raise TutorError(f"the lesson would not load: {problems[0]}")
        if replace:
            os.replace(tmp, path)
        else:
            os.link(tmp, path)  # fails, atomically, if the file appeared meanwhile
    except FileExistsError:
        raise TutorError(f"{path} already exists") from None
    except OSError as err:
        raise TutorError(f"cannot write {path}: {err.strerror}") from None
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
