"""Saving what the explorer made: the edited lesson as a new, valid lesson file.

The file is the lesson's own text with the edited entries (and the mask) changed in place, so
everything else stays as the lesson has it: its comments, ``focus``, ``points``, ``quiz:``, notes,
positions, source sentence, grouped heads and ``next:``. Its first comments say what it was
derived from and which entries changed. It is checked by the lesson loader (and must give back
the explorer's numbers) before it is written, through ``tutor.core.files``: atomically, through
a symbolic link, keeping an old file's mode, never over an existing file unless asked. A lesson
without a readable file is written by ``tutor.text.lessonyaml.lesson_yaml``.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from tutor.core import kinds
from tutor.core.errors import TutorError
from tutor.core.lesson import Lesson, Matrix
from tutor.core.lessonfile import check_text
from tutor.core.spec import WEIGHT_KEYS
from tutor.core.yamlsrc import read_text
from tutor.explore.model import Explorer, typed_text
from tutor.text.lessonyaml import lesson_yaml

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


def save_path(text: str, folder: Path) -> Path:
    """The file a typed name means: ``~`` and ``~user`` expanded, a relative name in ``folder``;
    a ``TutorError`` saying why when it means none (``~nosuchuser``: no such user)."""
    typed = text.strip()
    try:
        path = Path(typed).expanduser()
    except (RuntimeError, KeyError, OSError):  # pathlib: "Could not determine home directory"
        user = typed[1:].split("/", 1)[0]
        who = f"no user {user!r} on this machine" if user else "no home folder is known"
        raise TutorError(f"cannot save as {typed}: {who}; type another name") from None
    return path if path.is_absolute() else folder / path


def _matrices(lesson: Lesson) -> list[tuple[str, str, Matrix, tuple[str, ...]]]:
    """Every matrix the explorer may edit: (its name in a change, its key in ``lesson.where``,
    its entries, its row labels)."""

    def numbered(m: Matrix) -> tuple[str, ...]:
        return tuple(str(i) for i in range(1, len(m) + 1))

    def own(key: str, m: Matrix, rows: tuple[str, ...]) -> tuple[str, str, Matrix, tuple[str, ...]]:
        return key, key, m, rows  # a matrix named in a change by its own key

    x_key = "E" if lesson.positions in ("given", "sinusoidal") else "X"
    out = [own(x_key, lesson.X, lesson.labels)]
    if lesson.P is not None and lesson.positions == "given":
        out.append(own("P", lesson.P, lesson.labels))
    if lesson.X_src is not None:
        out.append(own("X_src", lesson.X_src, lesson.source_labels))
    for n, head in enumerate(lesson.heads, 1):
        prefix = f"head{n}." if lesson.multi_head else ""
        for name in WEIGHT_KEYS:
            m = getattr(head, name)
            if lesson.kv_groups is not None and kinds.BY_NAME[name].grouped:
                group = lesson.group_of(n)
                if lesson.group_heads(group)[0] != n:
                    continue  # the group's matrix, listed once (at its first head)
                where = f"kv_heads.{group}.{name}"
            else:
                where = f"heads.{n}.{name}" if lesson.multi_head else name
            out.append((prefix + name, where, m, numbered(m)))
    if lesson.W_O is not None:
        out.append(own("W_O", lesson.W_O, numbered(lesson.W_O)))
    if lesson.next is not None and not lesson.next_after:
        out.append(("x_new", "next.x", (lesson.next.x,), (lesson.next.token,)))
    for k, t in enumerate(lesson.decoding if lesson.next_after else (), 1):  # next: as a list
        out.append(("x_new", f"next.{k}.x", (t.x,), (t.token,)))
    return out


def _changed(original: Lesson, lesson: Lesson):  # type: ignore[no-untyped-def]
    """(name, where key, row label, i, j, old, new) of every entry that differs."""
    for (key, where, old, rows), (_, _, new, _) in zip(
        _matrices(original), _matrices(lesson), strict=True
    ):
        for i, (a_row, b_row) in enumerate(zip(old, new, strict=True)):
            for j, (a, b) in enumerate(zip(a_row, b_row, strict=True)):
                if a != b:
                    yield key, where, rows[i], i, j, a, b


def changes(original: Lesson, lesson: Lesson) -> list[str]:
    """Every entry that differs: ``X[cats, 1]: 1 → 2``."""
    out = [
        f"{key}[{row}, {j + 1}]: {typed_text(a)} → {typed_text(b)}"
        for key, _, row, _, j, a, b in _changed(original, lesson)
    ]
    if original.mask != lesson.mask:
        out.append(f"mask: {original.mask} → {lesson.mask}")
    return out


def _header(original: Lesson, lesson: Lesson, path: Path, source: str) -> tuple[str, str]:
    changed = changes(original, lesson)
    listed = ", ".join(changed[:MAX_LISTED]) or "no entry changed"
    if len(changed) > MAX_LISTED:
        listed += f", and {len(changed) - MAX_LISTED} more"
    return (
        f"# {path.stem}: a lesson for attn-tutor (format version 1).",
        f"# Derived with attn-tutor explore from {source} ({original.title}); changed: {listed}.",
    )


def _edited(model: Explorer, path: Path) -> Lesson:
    return dataclasses.replace(
        model.lesson, name=path.stem, mask="causal" if model.settings.mask else "none"
    )


# one YAML scalar where an entry starts: quoted, or up to a comma, bracket, space or comment
_SCALAR = re.compile(r"""'(?:[^']|'')*'|"(?:[^"\\]|\\.)*"|[^\s,\[\]{}#]+""")


def patched_text(original: Lesson, lesson: Lesson, text: str) -> str | None:
    """The lesson's own ``text`` with the entries that differ in ``lesson`` (and its mask)
    changed in place; None when a position is not where the loader said (then the lesson is
    written afresh)."""
    lines = text.split("\n")
    edits: list[tuple[int, int, int, str]] = []  # line, start, end (0-based), new text
    for _, where, _, i, j, _, b in _changed(original, lesson):
        at = original.where.get(f"{where}.{i + 1}.{j + 1}")
        if at is None or not 1 <= at[0] <= len(lines):
            return None
        line, col = at[0] - 1, at[1] - 1
        m = _SCALAR.match(lines[line], col)
        if m is None:
            return None
        new = typed_text(b)
        edits.append((line, col, m.end(), f'"{new}"' if "/" in new else new))
    if original.mask != lesson.mask:
        at = original.where.get("mask")
        if at is not None:
            line, col = at[0] - 1, at[1] - 1
            m = _SCALAR.match(lines[line], col)
            if m is None:
                return None
            edits.append((line, col, m.end(), lesson.mask))
    for line, start, end, new in sorted(edits, reverse=True):  # right to left: columns hold
        lines[line] = lines[line][:start] + new + lines[line][end:]
    out = "\n".join(lines)
    if original.mask != lesson.mask and "mask" not in original.where:
        out += ("" if out.endswith("\n") else "\n") + f"mask: {lesson.mask}\n"
    return out


def lesson_text(model: Explorer, path: Path, source: str) -> str:
    """The edited lesson as a commented lesson file: the lesson's own text changed in place
    when it has one, else written afresh."""
    original = model.original
    lesson = _edited(model, path)
    header = _header(original, lesson, path, source)
    text = None
    if original.path:
        try:
            own = read_text(Path(original.path), "lesson", ".yaml")
        except (TutorError, OSError):
            own = None
        if own is not None:
            text = patched_text(original, lesson, own)
    if text is not None:
        return "\n".join(header) + "\n" + text
    text = lesson_yaml(lesson, f"attn-tutor explore {source}", path.name, header)
    if original.quiz.steps or original.quiz.count != 8:
        text += "quiz:\n"
        if original.quiz.steps:
            text += f"  steps: [{', '.join(original.quiz.steps)}]\n"
        text += f"  count: {original.quiz.count}\n"
    return text


def save_lesson(model: Explorer, path: Path, source: str, replace: bool = False) -> None:
    """Write the edited lesson to ``path``; raise ``TutorError`` (nothing written) when it
    exists and ``replace`` is not set, when it cannot be written (a folder that may not be
    entered, a name too long), or when the loader would refuse the file."""
    from tutor.core.files import write_file

    try:
        if path.is_dir():
            raise TutorError(f"{path} is a folder; give a file name such as {path}/x.yaml")
        if (path.exists() or path.is_symlink()) and not replace:
            raise TutorError(f"{path} already exists")
        text = lesson_text(model, path, source)
        written, problems = check_text(text, str(path), path.stem)
        errors = [p for p in problems if p.severity == "error"]
        if errors or written is None:
            raise TutorError(f"the lesson would not load: {(errors or problems)[0]}")
        edited = _edited(model, path)
        if _matrices(written) != _matrices(edited) or written.mask != edited.mask:
            raise TutorError("the file would not hold the explorer's numbers; nothing written")
        write_file(path, text, new=not replace)
    except FileExistsError:
        raise TutorError(f"{path} already exists") from None
    except OSError as err:  # the folder, or the temporary file beside the lesson, refused
        raise TutorError(f"cannot write in {path.parent}: {err.strerror or err}") from None
