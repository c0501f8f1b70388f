"""The catalogue of lessons: the folders searched for lessons by name, in order, and the
lessons found there (bundled, ``--lessons-dir``, ``ATTN_TUTOR_LESSONS``, ``./lessons``).
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tutor.core.errors import LessonError, UsageError

# ---------------------------------------------------------------------------------------------
# finding lessons


def bundled_dir(folder: str = "lessons") -> Path:
    """The bundled lessons (or ``courses``): inside the installed package, else the checkout's."""
    here = Path(__file__).resolve().parents[1]  # the tutor package
    inside = here / folder
    return inside if inside.is_dir() else here.parent / folder


def bundled_course_path() -> Path:
    """The bundled course: inside the installed package, else the checkout's ``courses/``."""
    return bundled_dir("courses") / "attention.yaml"


LESSONS_ENV = "ATTN_TUTOR_LESSONS"


def lesson_dirs(extra: list[Path] | None = None) -> list[tuple[str, Path]]:
    """Where lessons are looked up by name, nearest first, first match wins: (origin, folder).

    The order: ``--lessons-dir`` (origin ``--lessons-dir``, numbered when there are several),
    each folder in ``ATTN_TUTOR_LESSONS`` (separated by ``os.pathsep``; origin ``env``, or
    ``env 1``, ``env 2`` …), ``./lessons/`` of the current folder, then the bundled lessons: your
    lessons win over a bundled one of the same name. A folder that appears twice is kept only
    the first time, and the bundled folder is always called ``bundled`` (in a checkout,
    ``./lessons/`` *is* the bundled folder). Missing folders from the environment are skipped; a
    missing ``--lessons-dir`` is an error.
    """
    for d in extra or []:
        if not Path(d).is_dir():
            raise UsageError(f"--lessons-dir {d}: no such folder")
    env = [d for d in os.environ.get(LESSONS_ENV, "").split(os.pathsep) if d.strip()]
    dirs = _numbered("--lessons-dir", [Path(d) for d in extra or []])
    dirs += _numbered("env", [Path(d) for d in env])
    dirs += [("./lessons", Path("lessons")), ("bundled", bundled_dir())]
    bundled = bundled_dir().resolve()
    unique: list[tuple[str, Path]] = []
    seen: set[Path] = set()
    for origin, folder in dirs:
        here = folder.resolve()
        if here not in seen and (here != bundled or origin == "bundled"):
            seen.add(here)
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


@dataclass(frozen=True)
class Found:
    """A lesson found by name: its file, and the files of that name it shadows (with origins)."""

    path: Path
    origin: str  # "--lessons-dir", "env 1", "./lessons", "bundled", or "path" for a file given
    shadows: tuple[tuple[str, Path], ...] = ()

    @property
    def note(self) -> str | None:
        """``using ./lessons/the-cake.yaml (it shadows the bundled the-cake)``, or None."""
        if not self.shadows:
            return None
        name = self.path.stem
        hidden = [
            f"the bundled {name}" if origin == "bundled" else f"{_shown(p)} ({origin})"
            for origin, p in self.shadows
        ]
        return f"using {_shown(self.path)} (it shadows {' and '.join(hidden)})"


def _shown(path: Path) -> str:
    """A found file as a person would type it: ``./lessons/x.yaml`` rather than ``lessons/…``."""
    text = str(path)
    return text if path.is_absolute() or text.startswith(".") else f".{os.sep}{text}"


def find_lesson(name: str, extra: list[Path] | None = None) -> Path:
    """A lesson by name (in the lesson folders) or by path; raise ``LessonError`` if absent."""
    return resolve_lesson(name, extra).path


MAX_COMPARED = 1_000_000  # bytes: a lesson file larger than this is never "the same" one


def same_lesson(a: Path, b: Path) -> bool:
    """True when two files hold the same lesson: the same bytes (a copy of the bundled lesson
    in ./lessons, as in the checkout), or the same lesson once read (only comments, blank
    lines or spacing differ). A file that cannot be read, or is not a valid lesson, differs."""
    try:
        if a.resolve() == b.resolve():
            return True
        if a.stat().st_size > MAX_COMPARED or b.stat().st_size > MAX_COMPARED:
            return False
        if a.read_bytes() == b.read_bytes():
            return True
    except OSError:
        return False
    import dataclasses

    from tutor.core.errors import TutorError
    from tutor.core.lessonfile import load_lesson

    try:
        one, two = (load_lesson(p, name=p.stem) for p in (a, b))
    except (TutorError, OSError):
        return False
    plain = {"path": "", "where": {}}  # where the file is, and the lines its keys are on
    return dataclasses.replace(one, **plain) == dataclasses.replace(two, **plain)


def resolve_lesson(name: str, extra: list[Path] | None = None) -> Found:
    """A lesson by name (nearest folder first) or by path, with what it shadows; raise
    ``LessonError`` naming the folders searched if there is none."""
    looks_like_path = name.endswith((".yaml", ".yml")) or os.sep in name or "/" in name
    if looks_like_path or is_file(Path(name)):
        return Found(Path(name), "path")
    every = list(iter_lessons(extra))
    same = [(origin, p) for n, origin, p in every if n == name]
    if same:
        (origin, path), *shadows = same
        kept = tuple((o, p) for o, p in shadows if not same_lesson(path, p))
        return Found(path, origin, kept)
    found = sorted({n for n, _, _ in every})
    close = difflib.get_close_matches(name, found, n=3, cutoff=0.5)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    known = ", ".join(found[:10]) + (", … (see attn-tutor list)" if len(found) > 10 else "")
    searched = "; ".join(
        f"{origin} {folder}" if origin != "./lessons" else f"./lessons{os.sep}"
        for origin, folder in lesson_dirs(extra)
    )
    shown = name if len(name) <= 80 else name[:80] + "…"  # a 5,000-character name, not all of it
    raise LessonError.at(  # line 0: a name, not a place in a file
        shown,
        0,
        0,
        f"no lesson named {shown!r}{hint} (known lessons: {known or 'none'}); "
        f"searched, nearest first: {searched}",
    )
