"""``list`` remembers each lesson's summary by the file's size and modification time (issue 25):
an unchanged file is not read again, a changed one is, and a cache that is damaged or cannot be
written changes nothing a person sees."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.test_folders import lesson
from tutor.core import lessonfile, summaries
from tutor.core.summaries import CACHE_NAME


@pytest.fixture
def cache_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "cache"


def cache_file(cache_home: Path) -> Path:
    (found,) = cache_home.rglob(CACHE_NAME)  # platformdirs' folder for attn-tutor within it
    return found


def listed(run, folder: Path) -> str:  # type: ignore[no-untyped-def]
    result = run("list", "--lessons-dir", str(folder), env={"COLUMNS": "200"})
    assert result.exit_code == 0 and result.stderr == ""
    return result.stdout


def test_a_second_list_reads_no_lesson(cache_home: Path) -> None:
    """With every summary remembered, list does not even import the YAML reader."""
    code = (
        "import sys; from tutor.cli import app; from typer.testing import CliRunner; "
        "r = CliRunner().invoke(app, ['list']); assert r.exit_code == 0, r.output; "
        "print(sorted(m for m in ('yaml', 'tutor.core.lessonfile') if m in sys.modules))"
    )

    def modules() -> str:
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
        )
        return out.stdout.strip()

    assert modules() == "['tutor.core.lessonfile', 'yaml']"  # the first list reads them all
    assert modules() == "[]"


def test_a_changed_lesson_is_read_again(run, cache_home: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = lesson(tmp_path / "mine", "mine", "First title")
    assert "First title" in listed(run, tmp_path / "mine")
    lesson(tmp_path / "mine", "mine", "Second title")  # the same size: only the time differs
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    assert "Second title" in listed(run, tmp_path / "mine")
    path.write_text("title: [broken\n")
    assert "(invalid: run attn-tutor check)" in listed(run, tmp_path / "mine")
    lesson(tmp_path / "mine", "mine", "Mended")
    assert "Mended" in listed(run, tmp_path / "mine")


@pytest.mark.parametrize(
    "damage",
    [
        "not json {",
        "[" * 100_000,
        '{"files": []}',
        '{"files": {"x": 1}}',
        "null",
        "CODE",  # the right code, entries of every wrong shape
    ],
)
def test_a_damaged_cache_is_the_same_as_none(run, cache_home: Path, tmp_path: Path, damage) -> None:  # type: ignore[no-untyped-def]
    lesson(tmp_path / "mine", "mine", "My title")
    clean = listed(run, tmp_path / "mine")
    path = cache_file(cache_home)
    if damage == "CODE":
        data = json.loads(path.read_text())
        wrong = [None, 3, "x", [], [1], [1, 2, 3, 4], [0, 0, "x"], [0, 0, [1, [1, 2], "easy"]]]
        for i, key in enumerate(data["files"]):  # each file's current stamp, a damaged value
            st = os.stat(key.split(" ", 1)[1])
            data["files"][key] = [st.st_size, st.st_mtime_ns, wrong[i % len(wrong)]]
        damage = json.dumps(data)
    path.write_text(damage)
    assert listed(run, tmp_path / "mine") == clean
    assert listed(run, tmp_path / "mine") == clean  # and the cache is whole again


def test_a_cache_folder_that_cannot_be_written_is_no_cache(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    lesson(tmp_path / "mine", "mine", "My title")
    for nowhere in ("/dev/null/cache", str(tmp_path / "mine" / "mine.yaml")):
        result = run("list", env={"XDG_CACHE_HOME": nowhere, "COLUMNS": "200"})
        assert result.exit_code == 0 and result.stderr == ""
        assert "cats-chase-mice" in result.stdout and "stages 1-6" in result.stdout


def test_two_installations_keep_their_own_summaries(cache_home, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A checkout and a pip install (other code, so other summaries) share one cache file."""
    path = lesson(tmp_path / "mine", "mine", "My title")
    reads = []

    def make(p: Path) -> list:
        reads.append(p)
        return ["My title", [2, 2, 1, 1], "easy"]

    for code in ("one", "other", "one", "other"):
        monkeypatch.setattr(summaries, "_code_key", lambda code=code: code)
        cache = summaries.Cache()
        assert cache.remembered(path, make) == ["My title", [2, 2, 1, 1], "easy"]
        cache.save()
    assert reads == [path, path]  # once for each installation


@pytest.mark.skipif(sys.platform != "linux", reason="file names of any bytes")
def test_a_file_name_that_is_not_utf8_is_remembered(cache_home, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    folder = tmp_path / "mine"
    odd = Path(os.fsdecode(bytes(folder) + b"/odd\xff.yaml"))
    lesson(folder, "plain", "My title").rename(odd)
    for _ in range(2):
        cache = summaries.Cache()
        assert summaries.lesson_summary(cache, odd, odd.stem).title == "My title"
        cache.save()
        monkeypatch.setattr(lessonfile, "check_lesson", None)  # a second read would fail
    assert "\\udcff" in cache_file(cache_home).read_text()


@pytest.mark.parametrize("xdg", ["set", "empty", "unset"])
def test_the_cache_is_in_platformdirs_cache_folder(monkeypatch, tmp_path, xdg: str) -> None:  # type: ignore[no-untyped-def]
    import platformdirs

    if xdg == "unset":
        monkeypatch.delenv("XDG_CACHE_HOME")
    else:
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path) if xdg == "set" else " ")
    expected = platformdirs.user_cache_path("attn-tutor", appauthor=False) / CACHE_NAME
    assert summaries.Cache().path == expected
