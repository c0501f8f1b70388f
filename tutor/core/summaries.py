"""What ``list`` shows of each lesson file (and of the course), remembered per file.

Reading and validating every lesson and the course on each ``list`` cost more than the rest of
the command. A summary is kept in one JSON file in the user's cache folder (platformdirs), keyed
by the file's path, size and modification time, and by the tutor's own version and core modules
(another release, or an edit of validation, does not use it; two installations can share the
file without forgetting each other's summaries). A cache that cannot be read, is damaged, or
cannot be written is the same as no cache: the files are read, and nothing is said.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path

from tutor.core.catalog import bundled_course_path
from tutor.core.errors import LessonError

APP_NAME = "attn-tutor"
CACHE_NAME = "list-cache.json"
MAX_ENTRIES = 1000  # beyond this, only the files of this run are kept
_CORE = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Summary:
    """A lesson file as the list shows it; ``title`` None when the lesson is invalid."""

    title: str | None
    sizes: tuple[int, int, int, int] = (0, 0, 0, 0)  # N, d_model, d_k, d_v
    difficulty: str = ""


class Cache:
    """The remembered summaries: ask for each file with ``remembered``, then ``save``."""

    def __init__(self) -> None:
        self.path = _cache_path()
        self.code = _code_key()
        self.entries: dict[str, list] = {}  # "code path" -> [size, mtime_ns, value]
        self.seen: set[str] = set()
        self.changed = False
        with contextlib.suppress(OSError, ValueError, TypeError, AttributeError, RecursionError):
            data = json.loads(self.path.read_text(encoding="utf-8")) if self.path else None
            if isinstance(data, dict) and isinstance(data.get("files"), dict):
                self.entries = data["files"]

    def remembered(self, path: Path, make):  # type: ignore[no-untyped-def]
        """The value remembered for ``path`` at its current size and mtime, else ``make(path)``
        (remembered for next time). ``make`` returns JSON-able data."""
        key = self._key(path)
        self.seen.add(key)
        try:
            st = os.stat(path)
        except OSError:
            return make(path)
        stamp = [st.st_size, st.st_mtime_ns]
        entry = self.entries.get(key)
        if isinstance(entry, list) and len(entry) == 3 and entry[:2] == stamp:
            return entry[2]
        value = make(path)
        self.entries[key] = [*stamp, value]
        self.changed = True
        return value

    def forget(self, path: Path) -> None:
        """Drop what is remembered of ``path`` (it was damaged)."""
        self.entries.pop(self._key(path), None)
        self.changed = True

    def _key(self, path: Path) -> str:
        return f"{self.code} {os.path.abspath(path)}"

    def save(self) -> None:
        """Write the cache if anything was added; quietly not, where it cannot be written."""
        if not self.changed or self.path is None:
            return
        if len(self.entries) > MAX_ENTRIES:
            self.entries = {k: v for k, v in self.entries.items() if k in self.seen}
        from tutor.core.files import replace_file

        # ASCII: a file name that is not UTF-8 (kept by Python as surrogates) is written escaped
        text = json.dumps({"files": self.entries})
        with contextlib.suppress(OSError, ValueError):
            self.path.parent.mkdir(parents=True, exist_ok=True)
            replace_file(self.path, text)


def lesson_summary(cache: Cache, path: Path, name: str) -> Summary:
    """The list's view of one lesson file, from the cache when the file is unchanged."""

    def make(p: Path) -> list:
        from tutor.core.course import difficulty
        from tutor.core.lessonfile import check_lesson

        lesson, _ = check_lesson(p, name)
        if lesson is None:
            return [None]
        d_model = 0 if lesson.qkv else lesson.d_model  # Q, K, V given: no X, no d_model
        sizes = [lesson.n, d_model, lesson.d_k, lesson.d_v]
        return [lesson.title, sizes, difficulty(lesson)]

    value = cache.remembered(path, make)
    with contextlib.suppress(TypeError, ValueError):
        title, *rest = value
        if title is None:
            return Summary(None)
        sizes, level = rest
        n, d_model, d_k, d_v = (int(s) for s in sizes)
        return Summary(str(title), (n, d_model, d_k, d_v), str(level))
    cache.forget(path)  # damaged: read the file itself
    return lesson_summary(cache, path, name)


def course_order(cache: Cache) -> dict[str, list[int]]:
    """The bundled course's lessons with their stage numbers, in order ({} if it is broken)."""
    course = bundled_course_path()

    def make(p: Path) -> dict[str, list[int]]:
        from tutor.core.course import load_course

        try:
            return load_course(p).lesson_order()
        except LessonError:  # a broken install: the list itself still works
            return {}

    order = cache.remembered(course, make)
    if isinstance(order, dict) and all(
        isinstance(v, list) and all(isinstance(i, int) for i in v) for v in order.values()
    ):
        return order
    return make(course)


def _cache_path() -> Path | None:
    """The cache file in the user's cache folder, platformdirs' ``user_cache_path``. On Linux and
    the BSDs that is the XDG rule, worked here: importing platformdirs took 10 ms, a sixth of what
    ``list`` adds to its start-up (a test checks that both give the same folder)."""
    try:
        if os.name == "posix" and sys.platform != "darwin" and "ANDROID_ROOT" not in os.environ:
            base = os.environ.get("XDG_CACHE_HOME", "").strip() or os.path.expanduser("~/.cache")
            return Path(base) / APP_NAME / CACHE_NAME
        import platformdirs

        return platformdirs.user_cache_path(APP_NAME, appauthor=False) / CACHE_NAME
    except Exception:  # no home at all: no cache
        return None


def _code_key() -> str:
    """A checksum of the tutor's version and its core modules' sizes and times: what decides a
    summary."""
    import zlib

    from tutor import __version__

    parts = [__version__]
    with contextlib.suppress(OSError):
        for entry in sorted(os.scandir(_CORE), key=lambda e: e.name):
            if entry.name.endswith(".py"):
                st = entry.stat()
                parts.append(f"{entry.name}:{st.st_size}:{st.st_mtime_ns}")
    return f"{zlib.crc32('|'.join(parts).encode()):08x}"
