"""The explorer's saves keep what a student made and what the lesson had (issue 31, item 4): a
save that fails leaves the app and its edits; a save writes through a symbolic link and keeps
the file's mode; the saved lesson is the lesson's own text with the edited entries changed, so
``focus``, ``points``, ``quiz:``, notes, comments and every kind's keys stay as they were."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

pytest.importorskip("textual")

from tests.conftest import bundled_lessons
from tutor.core.lessonfile import load_lesson
from tutor.explore.app import ExploreApp
from tutor.explore.model import Explorer
from tutor.explore.save import save_lesson

KEPT = """\
# my own comment, kept
title: Kept
tokens: [a, b, c]
X: [[1, 0], [0, 1], [1, 1]]   # the rows of a, b and c
W_Q: [[1, 0], [0, 1]]
W_K: [[1, 0], [0, 1]]
W_V: [[1, 2], [3, 4]]
focus: weights[b, c]
points: {Q: 3, Z: 5}
quiz: {steps: [Q, Z], count: 4}
notes:
  Q: "the queries, my note"
"""


def drive(
    path: Path,
    script: Callable[[ExploreApp, object], Awaitable[None]],
    folder: Path,
    size: tuple[int, int] = (100, 30),
) -> ExploreApp:
    app = ExploreApp(load_lesson(path, path.stem), str(path), folder)

    async def main() -> None:
        async with app.run_test(size=size) as pilot:
            await pilot.pause()
            await script(app, pilot)

    asyncio.run(main())
    return app


async def edit_x(app: ExploreApp, pilot, value: str = "5") -> None:  # type: ignore[no-untyped-def]
    """X[a, 1] becomes ``value``: the Q page, follow Q[a, 1] to X, type the number."""
    await pilot.press("n", "enter")
    await pilot.pause()
    await pilot.press("enter", "ctrl+u", *value, "enter")
    await pilot.pause()
    assert app.model.edited


async def save_as(app: ExploreApp, pilot, name: str) -> str:  # type: ignore[no-untyped-def]
    await pilot.press("s", "ctrl+u", *name, "enter")
    await pilot.pause()
    return str(app.query_one("#refusal").render())


async def refused_then_saved(app: ExploreApp, pilot, name: str) -> str:  # type: ignore[no-untyped-def]
    """Edit, save as ``name`` (refused: the app runs on, the edits and the entry kept), then
    save as good.yaml; the refusal."""
    await edit_x(app, pilot)
    refusal = await save_as(app, pilot, name)
    assert app.is_running and app.model.edited and app.entry_for == "save"
    await pilot.press("ctrl+u", *"good.yaml", "enter")
    await pilot.pause()
    assert app.entry_for is None and app.saved
    return refusal


@pytest.fixture
def kept(tmp_path: Path) -> Path:
    path = tmp_path / "kept.yaml"
    path.write_text(KEPT, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("name", "says"),
    [
        ("x" * 300 + ".yaml", "File name too long"),
        ("kept.yaml/inside.yaml", "Not a directory"),
    ],
    ids=["name-over-255-bytes", "folder-is-a-file"],
)
def test_a_save_that_fails_keeps_the_app_and_its_edits(
    tmp_path: Path, kept: Path, name: str, says: str
) -> None:
    async def script(app: ExploreApp, pilot) -> None:  # type: ignore[no-untyped-def]
        refusal = await refused_then_saved(app, pilot, name)
        assert refusal.startswith("refused: cannot write in") and says in refusal

    drive(kept, script, tmp_path)
    assert load_lesson(tmp_path / "good.yaml").X[0][0] == (5, 1)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["good.yaml", "kept.yaml"]


@pytest.mark.skipif(os.geteuid() == 0, reason="root may enter any folder")
def test_a_save_in_a_folder_that_may_not_be_entered_is_refused_in_place(
    tmp_path: Path, kept: Path
) -> None:
    shut = tmp_path / "shut"
    shut.mkdir()
    shut.chmod(0)
    try:

        async def script(app: ExploreApp, pilot) -> None:  # type: ignore[no-untyped-def]
            await edit_x(app, pilot)
            refusal = await save_as(app, pilot, "shut/x.yaml")
            assert refusal.startswith("refused: cannot write in") and "Permission" in refusal
            assert app.is_running and app.model.edited

        drive(kept, script, tmp_path)
    finally:
        shut.chmod(0o755)


def test_a_save_writes_through_a_symlink_and_keeps_the_mode(tmp_path: Path, kept: Path) -> None:
    real = tmp_path / "real.yaml"
    real.write_text(KEPT, encoding="utf-8")
    real.chmod(0o640)
    link = tmp_path / "link.yaml"
    link.symlink_to(real)

    async def script(app: ExploreApp, pilot) -> None:  # type: ignore[no-untyped-def]
        await edit_x(app, pilot, "7")
        assert "exists: enter again to replace it" in await save_as(app, pilot, "link.yaml")
        await pilot.press("enter")
        await pilot.pause()
        assert app.saved

    drive(kept, script, tmp_path)
    assert link.is_symlink() and link.resolve() == real
    assert load_lesson(real).X[0][0] == (7, 1)
    assert oct(real.stat().st_mode & 0o777) == oct(0o640)


def test_a_new_save_gets_the_usual_permissions(tmp_path: Path, kept: Path) -> None:
    mask = os.umask(0o022)
    os.umask(mask)

    async def script(app: ExploreApp, pilot) -> None:  # type: ignore[no-untyped-def]
        await edit_x(app, pilot)
        await save_as(app, pilot, "new.yaml")

    drive(kept, script, tmp_path)
    assert oct((tmp_path / "new.yaml").stat().st_mode & 0o777) == oct(0o666 & ~mask)


def test_focus_points_quiz_notes_and_comments_are_kept(tmp_path: Path, kept: Path) -> None:
    async def script(app: ExploreApp, pilot) -> None:  # type: ignore[no-untyped-def]
        await edit_x(app, pilot, "3/4")
        await pilot.press("m")  # the mask on
        await pilot.pause()
        await save_as(app, pilot, "saved.yaml")

    drive(kept, script, tmp_path)
    saved = tmp_path / "saved.yaml"
    text = saved.read_text(encoding="utf-8")
    assert "X[a, 1]: 1 → 0.75" in text and "mask: none → causal" in text
    assert "# my own comment, kept" in text and "# the rows of a, b and c" in text
    original, lesson = load_lesson(kept), load_lesson(saved)
    assert lesson.X[0][0] == (3, 4) and lesson.X[1:] == original.X[1:]
    assert lesson.mask == "causal"
    assert lesson.focus == original.focus
    assert dict(lesson.points) == {"Q": 3, "Z": 5}
    assert lesson.quiz == original.quiz
    assert dict(lesson.notes) == dict(original.notes)


@pytest.mark.parametrize("path", bundled_lessons(), ids=lambda p: p.stem)
def test_every_kind_of_lesson_saves_every_edited_matrix(tmp_path: Path, path: Path) -> None:
    """Each given matrix the explorer may edit (X or E, P, X_src, W_Q/W_K/W_V of each head or
    group, W_O, x_new) edited at its last entry and saved: the saved lesson has that entry and
    every other key of the lesson as it was."""
    original = load_lesson(path, path.stem)
    model = Explorer(original)
    inputs = [s for s in model.derivation.steps if s.given and s.name != "P"]
    if original.positions == "given":
        inputs += [s for s in model.derivation.steps if s.given and s.name == "P"]
    edited = []
    for step in inputs:
        n, m = step.shape
        try:
            model.edit(step, n - 1, m - 1, "9/7")
        except Exception as err:  # a step the explorer does not edit (shown, worked) is refused
            assert "cannot be edited" in str(err) or "worked out" in str(err), err
            continue
        edited.append(step.key)
    assert edited
    out = tmp_path / f"{path.stem}-saved.yaml"
    save_lesson(model, out, path.stem)
    lesson = load_lesson(out)
    assert lesson.features == original.features
    for key in ("X", "P", "X_src", "W_O", "heads", "next", "mask", "theta", "source"):
        assert getattr(lesson, key) == getattr(model.lesson, key), key
    for key in ("focus", "points", "quiz", "notes", "precision", "layout", "kv_groups", "title"):
        assert getattr(lesson, key) == getattr(original, key), key


def test_the_save_line_fits_its_row_and_shows_what_is_typed(tmp_path: Path) -> None:
    """At 80 × 24 the save prompt offers a short name (relative to the folder) and, when the
    name grows wider than the row, keeps its end, where the typing is, in sight (issue 24)."""
    path = tmp_path / "kept.yaml"
    path.write_text(KEPT)
    seen: dict[str, str] = {}

    async def script(app: ExploreApp, pilot) -> None:  # type: ignore[no-untyped-def]
        await pilot.press("s")
        await pilot.pause()
        seen["offered"] = str(app.query_one("#prompt").render())
        await pilot.press(*"x" * 120)
        await pilot.pause()
        seen["long"] = str(app.query_one("#prompt").render())
        seen["width"] = str(app.query_one("#prompt").size.width)
        await pilot.press("ctrl+u", *"mine.yaml", "enter")
        await pilot.pause()

    drive(path, script, tmp_path, size=(80, 24))
    width = int(seen["width"])
    assert seen["offered"] == "save the lesson as: kept-explored.yaml▏"
    assert len(seen["long"]) <= width and seen["long"].endswith("xxx▏")
    assert "…" in seen["long"]
    assert load_lesson(tmp_path / "mine.yaml").title == "Kept"


@pytest.mark.parametrize("name", ["~nosuchuser/x.yaml", "~nosuchuser"])
def test_a_save_to_an_unknown_users_home_says_why_and_keeps_the_edits(
    tmp_path: Path, kept: Path, name: str
) -> None:
    """Issue 43: ``Path.expanduser`` raised RuntimeError, the explorer exited 70 and the edits
    were lost."""

    async def script(app: ExploreApp, pilot) -> None:  # type: ignore[no-untyped-def]
        refusal = " ".join((await refused_then_saved(app, pilot, name)).split())
        assert "refused: cannot save as ~nosuchuser" in refusal
        assert "no user 'nosuchuser'" in refusal

    drive(kept, script, tmp_path)
    assert load_lesson(tmp_path / "good.yaml").X[0][0] == (5, 1)


@pytest.mark.parametrize(("typed", "value"), [("1e30", (10**30, 1)), ("1e-30", (1, 10**30))])
def test_an_entry_the_explorer_accepts_can_be_saved(
    tmp_path: Path, kept: Path, typed: str, value: tuple[int, int]
) -> None:
    """Issue 43: 1e-30 and 1e30 were written out to 31 digits, which the loader refuses."""

    async def script(app: ExploreApp, pilot) -> None:  # type: ignore[no-untyped-def]
        await edit_x(app, pilot, typed)
        assert await save_as(app, pilot, "big.yaml") == ""
        assert app.saved

    drive(kept, script, tmp_path)
    assert load_lesson(tmp_path / "big.yaml").X[0][0] == value
