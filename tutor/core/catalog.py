"""The catalogue of lessons: the folders searched for lessons by name, in order, and the
lessons found there (bundled, ``--lessons-dir``, ``ATTN_TUTOR_LESSONS``, ``./lessons``).
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Iterator
from pathlib import Path

from tutor.core.errors import LessonError, UsageError

# ---------------------------------------------------------------------------------------------
# finding lessons


def bundled_dir() -> Path:
    """The bundled lessons: inside the installed package, else the checkout's ``lessons/``."""
    here = Path(__file__).resolve().parents[1]  # the tutor package
    inside = here / "lessons"
    return inside if inside.is_dir() else here.parent / "lessons"


LESSONS_ENV = "ATTN_TUTOR_LESSONS"


def lesson_dirs(extra: list[Path] | None = None) -> list[tuple[str, Path]]:
    """Where lessons are looked up by name, first match wins: (origin, folder).

    The order: bundled, ``./lessons/`` of the current folder, each folder in
    ``ATTN_TUTOR_LESSONS`` (separated by ``os.pathsep``; origin ``env``, or ``env 1``,
    ``env 2`` … when there are several), then ``--lessons-dir``. A folder that
    appears twice (in a checkout, ``./lessons/`` *is* the bundled folder) is kept only the first
    time. Missing folders from the environment are skipped; a missing ``--lessons-dir`` is an
    error.
    """
    for d in extra or []:
        if not Path(d).is_dir():
            raise UsageError(f"--lessons-dir {d}: no such folder")
    env = [d for d in os.environ.get(LESSONS_ENV, "").split(os.pathsep) if d.strip()]
    dirs = [("bundled", bundled_dir()), ("./lessons", Path("lessons"))]
    dirs += _numbered("env", [Path(d) for d in env])
    dirs += _numbered("--lessons-dir", [Path(d) for d in extra or []])
    unique: list[tuple[str, Path]] = []
    seen: set[Path] = set()
    for origin, folder in dirs:
        if folder.resolve() not in seen:
            seen.add(folder.resolve())
            unique.append((origin, folder))
    return unique


def _numbered(origin: str, folders: list[Path]) -> list[tuple[str, Path]]:
    """``(origin, folder)``, numbered ``origin 1``, ``origin 2`` … when there are several."""
    if len(folders) == 1:
        return [(origin, folders[0])]
    return [(f"{origin} {i}", folder) for i, folder in enumerate(folders, 1)]


def iter_lessons(extra: list[Path] | None = None) -> Iterator[tuple[str, str, Path]]:
    """Every lesson file found: (name, origin, path), in lookup order (shadowed ones too)."""
    for origin, folder in lesson_dirs(extra):
        if folder.is_dir():
            for p in sorted(folder.glob("*.yaml"), key=lambda p: p.stem):
                yield p.stem, origin, p


def is_file(path: Path) -> bool:
    """``path.is_file()``, False where the file system cannot even look (a name too long)."""
    try:
        return path.is_file()
    except OSError:
        return False


def is_dir(path: Path) -> bool:
    """``path.is_dir()``, False where the file system cannot even look (a name too long)."""
    try:
        return path.is_dir()
    except OSError:
        return False


def find_lesson(name: str, extra: list[Path] | None = None) -> Path:
    """A lesson by name (in the lesson folders) or by path; raise ``LessonError`` if absent."""
    looks_like_path = name.endswith((".yaml", ".yml")) or os.sep in name or "/" in name
    if looks_like_path or is_file(Path(name)):
        return Path(name)
    found = {n: p for n, _, p in reversed(list(iter_lessons(extra)))}
    if name in found:
        return found[name]
    close = difflib.get_close_matches(name, list(found), n=3, cutoff=0.5)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    names = sorted(found)
    known = ", ".join(names[:10]) + (", … (see attn-tutor list)" if len(names) > 10 else "")
    raise LessonError.at(  # line 0: a name, not a place in a file
        name, 0, 0, f"no lesson named {name!r}{hint} (known lessons: {known or 'none'})"
    )
