"""`attn-tutor explore`, driven as a student drives it: keys pressed through Textual's Pilot,
the widgets' state read back, and the numbers checked against numpy."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("textual")

from tests import reference
from tests.conftest import LESSONS
from tutor.core.lessonfile import load_lesson
from tutor.explore.app import HELP, ExploreApp
from tutor.explore.widgets import MatrixView

SIZE = (100, 30)


def drive(
    lesson: str,
    script: Callable[[ExploreApp, object], Awaitable[None]],
    folder: Path | None = None,
    size: tuple[int, int] = SIZE,
) -> ExploreApp:
    """Run the app headless (at 100 × 30 unless told) and play ``script(app, pilot)`` on it."""
    app = ExploreApp(load_lesson(LESSONS / f"{lesson}.yaml", lesson), lesson, folder)

    async def main() -> None:
        async with app.run_test(size=size) as pilot:
            await pilot.pause()
            await script(app, pilot)

    asyncio.run(main())
    return app


def view(app: ExploreApp, page: str, name: str) -> MatrixView:
    return app.query_one(f"#{page}-{name}", MatrixView)


def texts(v: MatrixView) -> list[list[str]]:
    assert v.step is not None
    n, m = v.step.shape
    return [[v.text_at(i, j) for j in range(m)] for i in range(n)]


def numpy_weights(X: np.ndarray, lesson) -> np.ndarray:  # type: ignore[no-untyped-def]
    """The textbook formula in float64, from the lesson's matrices and our own X."""
    head = lesson.heads[0]
    Q, K = X @ reference.as_array(head.W_Q), X @ reference.as_array(head.W_K)
    s = Q @ K.T / np.sqrt(K.shape[1])
    e = np.exp(s - s.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


async def to_x(app: ExploreApp, pilot) -> None:  # type: ignore[no-untyped-def]
    """From the start (weights · Z) to X[cats, 1]: the Q page, then follow Q[cats, 1]."""
    await pilot.press("n")  # the pages wrap around: weights · Z → Q
    await pilot.pause()
    assert app.focused is view(app, "q", "Q")
    await pilot.press("enter")  # Q[cats, 1] comes from row cats of X and column 1 of W_Q
    await pilot.pause()
    assert app.focused is view(app, "q", "X")


def test_it_opens_on_the_weights_and_z_together() -> None:
    async def script(app: ExploreApp, pilot) -> None:  # type: ignore[no-untyped-def]
        w, z = view(app, "weights", "weights"), view(app, "weights", "Z")
        assert app.focused is w
        assert w.display and z.display
        for v in (w, z):  # the whole of both tables is on the 100 × 30 screen
            assert v.region.right <= SIZE[0] and v.region.bottom <= SIZE[1]
        assert texts(w)[0] == ["0.16", "0.67", "0.16"]  # seed 000's weights
        panel = str(app.query_one("#panel").render())
        assert "weights[cats, cats] = softmax of the cats row of scaled" in panel
        assert "1/(2 + e^√2) ≈ 0.16" in panel
        assert view(app, "weights", "V").step is not None

    drive("cats-chase-mice", script)


def test_an_edit_changes_the_weights_exactly_and_undo_redo_walk_back() -> None:
    lesson = load_lesson(LESSONS / "cats-chase-mice.yaml")

    async def script(app: ExploreApp, pilot) -> None:  # type: ignore[no-untyped-def]
        before = texts(view(app, "weights", "weights"))
        await to_x(app, pilot)
        await pilot.press("3", "enter")  # X[cats, 1] = 3
        await pilot.pause()
        assert app.model.lesson.X[0][0] == (3, 1)
        X = reference.as_array(lesson.X)
        X[0, 0] = 3
        want = numpy_weights(X, lesson)
        w = view(app, "weights", "weights")
        got = np.array([[c.value for c in row] for row in w.step.cells])  # type: ignore[union-attr]
        np.testing.assert_allclose(got, want, rtol=1e-12)
        shown = [[t.rstrip("▲▼ ") for t in row] for row in texts(w)]
        assert shown == [[f"{x:.2f}" for x in row] for row in want]
        assert any(t.endswith(("▲", "▼")) for row in texts(w) for t in row)
        assert view(app, "q", "X").text_at(0, 0) == "3▲"
        await pilot.press("u")
        await pilot.pause()
        assert app.model.lesson == lesson
        assert [[t.rstrip("▲▼ ") for t in row] for row in texts(w)] == [
            [t.rstrip() for t in row] for row in before
        ]
        await pilot.press("ctrl+r")
        await pilot.pause()
        assert app.model.lesson.X[0][0] == (3, 1)
        assert "X[cats, 1] = 3" not in str(app.query_one("#status").render())  # says "redone"

    drive("cats-chase-mice", script)


@pytest.mark.parametrize(
    ("typed", "reason"),
    [
        ("abc", "expected a number"),
        ("1/0", "division by zero"),
        ("__import__('os')", "expected a number"),
        ("2e99", "exponent 99"),
    ],
)
def test_a_bad_entry_is_refused_in_place(typed: str, reason: str) -> None:
    async def script(app: ExploreApp, pilot) -> None:  # type: ignore[no-untyped-def]
        await to_x(app, pilot)
        await pilot.press("e")  # edit, starting from the value
        await pilot.pause()
        await pilot.press(*["backspace"] * 3, *typed, "enter")
        await pilot.pause()
        refusal = str(app.query_one("#refusal").render())
        assert refusal.startswith("refused:") and reason in refusal
        assert app.entry_for == "edit" and not app.model.edited
        await pilot.press("escape")
        await pilot.pause()
        assert app.entry_for is None and app.focused is view(app, "q", "X")

    drive("cats-chase-mice", script)


def test_enter_follows_a_cell_to_its_sources_and_backspace_comes_back() -> None:
    async def script(app: ExploreApp, pilot) -> None:  # type: ignore[no-untyped-def]
        await pilot.press("right")  # weights[cats, chase]
        await pilot.pause()
        scaled = view(app, "weights", "weights")
        assert (scaled.row, scaled.col) == (0, 1)
        await pilot.press("enter")  # → scaled[cats, chase], on the scaled page
        await pilot.pause()
        here = view(app, "scaled", "scaled")
        assert app.focused is here and (here.row, here.col) == (0, 1)
        assert view(app, "scaled", "scores").lit == {(0, 1)}  # it comes from scores[cats, chase]
        await pilot.press("enter")  # → scores[cats, chase]
        await pilot.pause()
        scores = view(app, "scaled", "scores")
        assert app.focused is scores
        await pilot.press("enter")  # → Q row cats (on the scores page, with K)
        await pilot.pause()
        assert app.focused is view(app, "scores", "Q")
        assert "from row cats of X and column 1 of W_Q" in str(app.query_one("#panel").render())
        for back in (scores, here, view(app, "weights", "weights")):
            await pilot.press("backspace")
            await pilot.pause()
            assert app.focused is back
        assert "nothing to go back to" not in str(app.query_one("#status").render())
        await pilot.press("backspace")
        await pilot.pause()
        assert "nothing to go back to" in str(app.query_one("#status").render())

    drive("cats-chase-mice", script)


def test_a_click_puts_the_cursor_on_a_cell() -> None:
    async def script(app: ExploreApp, pilot) -> None:  # type: ignore[no-untyped-def]
        z = view(app, "weights", "Z")
        label = max(len(r) for r in z.step.rows)  # type: ignore[union-attr]
        await pilot.click("#weights-Z", offset=(label + 2, 3))  # the chase row, column 1
        await pilot.pause()
        assert app.focused is z and (z.row, z.col) == (1, 0)
        assert "Z[chase, 1]" in str(app.query_one("#panel").render())

    drive("cats-chase-mice", script)


def test_mask_divisor_and_factor_keys() -> None:
    async def script(app: ExploreApp, pilot) -> None:  # type: ignore[no-untyped-def]
        w = view(app, "weights", "weights")
        await pilot.press("m")
        await pilot.pause()
        assert texts(w)[0][0].rstrip("▲▼ ") == "1.00"  # cats sees only itself
        status = str(app.query_one("#status").render())
        assert "strongest key moved: weights[cats]: chase → cats" in status
        assert w.called == {0}  # the row is called out in the table too
        assert view(app, "scaled", "masked").display
        await pilot.press("m", "d")  # mask off; scores ÷ 1
        await pilot.pause()
        assert "scores ÷ 1" in str(app.query_one("#top").render())
        await pilot.press("right_square_bracket")  # × 2
        await pilot.pause()
        assert app.model.settings.factor == (2, 1) and view(app, "scaled", "tempered").display
        for _ in range(5):
            await pilot.press("left_square_bracket")
        await pilot.pause()
        assert app.model.settings.factor == (0, 1)
        assert {t.rstrip("▲▼ ") for row in texts(w) for t in row} == {"0.33"}
        await pilot.press("left_square_bracket")
        await pilot.pause()
        assert "the factor goes from 0 to 10" in str(app.query_one("#status").render())

    drive("cats-chase-mice", script)


def test_save_writes_a_lesson_that_loads_and_never_overwrites_unasked(tmp_path, run) -> None:  # type: ignore[no-untyped-def]
    async def script(app: ExploreApp, pilot) -> None:  # type: ignore[no-untyped-def]
        await to_x(app, pilot)
        await pilot.press("2", "enter", "m", "s")
        await pilot.pause()
        assert app.entry_for == "save"
        await pilot.press("enter")  # the suggested name
        await pilot.pause()
        assert app.entry_for is None
        await pilot.press("s")
        await pilot.pause()
        await pilot.press("ctrl+u", *"cats-chase-mice-explored.yaml", "enter")
        await pilot.pause()
        assert "exists: enter again to replace it" in str(app.query_one("#refusal").render())
        await pilot.press("escape")  # not replaced

    drive("cats-chase-mice", script, tmp_path)
    saved = tmp_path / "cats-chase-mice-explored.yaml"
    text = saved.read_text()
    assert "Derived with attn-tutor explore from cats-chase-mice" in text
    assert "X[cats, 1]: 1 → 2" in text and "mask: none → causal" in text
    lesson = load_lesson(saved)
    assert lesson.X[0][0] == (2, 1) and lesson.mask == "causal"
    assert run("check", str(saved)).exit_code == 0
    assert [p.name for p in tmp_path.iterdir()] == [saved.name]  # no temporary file left


def test_help_lists_every_key_and_q_quits() -> None:
    spoken = {"question_mark": "?", "right_square_bracket": "]", "left_square_bracket": "["}
    for binding in ExploreApp.BINDINGS:
        key = spoken.get(binding.key, binding.key)  # type: ignore[union-attr]
        assert f"  {key} " in HELP or f"/ {key} " in HELP or f" {key}\n" in HELP, key

    async def script(app: ExploreApp, pilot) -> None:  # type: ignore[no-untyped-def]
        await pilot.press("question_mark")
        await pilot.pause()
        assert "every key" in str(app.screen.query_one("#help-text").render())
        await pilot.press("escape", "escape")  # closes it (once: keys typed fast are no trouble)
        await pilot.pause()
        assert len(app.screen.query("#help-text")) == 0
        await pilot.press("n", "enter", "5", "enter", "q")  # an unsaved edit: q asks first
        await pilot.pause()
        assert app.is_running and "q again quits" in str(app.query_one("#status").render())
        await pilot.press("q")
        await pilot.pause()
        assert not app.is_running

    drive("cats-chase-mice", script)


def test_heads_switch_with_h() -> None:
    async def script(app: ExploreApp, pilot) -> None:  # type: ignore[no-untyped-def]
        w = view(app, "weights", "weights")
        assert w.step.key == "head1.weights"  # type: ignore[union-attr]
        await pilot.press("h")
        await pilot.pause()
        assert w.step.key == "head2.weights"  # type: ignore[union-attr]
        assert "head 2 of 2" in str(app.query_one("#top").render())
        assert view(app, "output", "output").step is not None

    drive("the-cake-two-heads", script)


def test_explore_without_textual_says_how_to_install_it(run, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import importlib.util

    from tutor.core.install import install_command

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "textual" else real(name, *a)
    )
    result = run("explore", "cats-chase-mice")
    assert result.exit_code == 1
    assert f"install it with: {install_command()}" in result.stderr


@pytest.mark.parametrize(
    "args", [["--help"], ["list"], ["walk", "cats-chase-mice"], ["walk", "--json"]]
)
def test_only_explore_imports_textual(args: list[str]) -> None:
    """Textual is a dependency, but its import costs more than the rest of the tutor's."""
    code = (
        "import sys; from tutor.cli import app; from typer.testing import CliRunner; "
        f"r = CliRunner().invoke(app, {args!r}); assert r.exit_code == 0, r.output; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'textual'))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_a_save_that_cannot_be_written_is_refused_in_place(tmp_path) -> None:  # type: ignore[no-untyped-def]
    async def script(app: ExploreApp, pilot) -> None:  # type: ignore[no-untyped-def]
        await pilot.press("s", "ctrl+u", *"no/such/folder/x.yaml", "enter")
        await pilot.pause()
        refusal = str(app.query_one("#refusal").render())
        assert refusal.startswith("refused: cannot write in") and app.entry_for == "save"
        await pilot.press("ctrl+u", "enter")
        await pilot.pause()
        assert "type a file name" in str(app.query_one("#refusal").render())
        await pilot.press("q")  # typed on the line, not a quit
        await pilot.pause()
        assert app.is_running and app.buffer == "q"

    drive("cats-chase-mice", script, tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_a_bug_in_a_handler_is_kept_for_the_command_line_not_drawn(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The app closes and keeps the error; ``launch.explore`` raises it again, so the command
    line says "internal error" (exit 70) as for every command, with no screen of traceback."""
    from tutor.explore import views

    def broken(*a, **k):  # type: ignore[no-untyped-def]
        raise RuntimeError("a deliberate bug")

    seen = {}

    async def script(app: ExploreApp, pilot) -> None:  # type: ignore[no-untyped-def]
        monkeypatch.setattr(views, "working_text", broken)
        await pilot.press("right")
        await pilot.pause()
        seen["failure"] = app.failure
        seen["output"] = list(app._exit_renderables)

    with pytest.raises(RuntimeError, match="a deliberate bug"):
        drive("cats-chase-mice", script)
    assert isinstance(seen["failure"], RuntimeError) and seen["output"] == []


def test_e_starts_from_the_exact_entry_not_the_rounded_one() -> None:
    async def script(app: ExploreApp, pilot) -> None:  # type: ignore[no-untyped-def]
        await to_x(app, pilot)
        await pilot.press(*"1/3", "enter")
        await pilot.pause()
        assert view(app, "q", "X").text_at(0, 0) == "0.33▼"
        assert "X[cats, 1] = 1/3" in str(app.query_one("#status").render())
        await pilot.press("e")
        await pilot.pause()
        assert app.buffer == "1/3"
        await pilot.press("enter")  # kept as it was: exactly a third, no change
        await pilot.pause()
        assert app.model.lesson.X[0][0] == (1, 3) and len(app.model.done) == 1

    drive("cats-chase-mice", script)
