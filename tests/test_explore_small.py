"""`attn-tutor explore` on the smallest screen it promises, 80 × 24 (issue 40, item 5): a mark
only where a value changed, "you set this" for an edited entry, the cursor's sources scrolled
into sight, every table reachable, and a help that fits, scrolls and closes only when asked."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import numpy as np
import pytest

pytest.importorskip("textual")

from textual.containers import VerticalScroll
from textual.geometry import Region

from tests import reference, test_explore_app
from tests.conftest import LESSONS
from tests.test_explore_app import view
from tutor.core.lessonfile import load_lesson
from tutor.explore.app import HELP, ExploreApp
from tutor.explore.model import DOWN, UP
from tutor.explore.widgets import MatrixView

SIZE = (80, 24)


def drive(lesson: str, script: Callable[[ExploreApp, object], Awaitable[None]]) -> ExploreApp:
    """Run the app headless at 80 × 24 and play ``script(app, pilot)`` on it."""
    return test_explore_app.drive(lesson, script, size=SIZE)


def panel(app: ExploreApp) -> str:
    return str(app.query_one("#panel").render())


def status(app: ExploreApp) -> str:
    return str(app.query_one("#status").render())


def window(v: MatrixView) -> Region:
    """The part of the screen where v's page shows its tables (the scroll bars left out)."""
    (box,) = [w for w in v.ancestors if isinstance(w, VerticalScroll)]
    return box.scrollable_content_region


def on_screen(v: MatrixView, i: int, j: int) -> bool:
    """Cell (i, j) of v is wholly in sight."""
    cell = v.cell_region(i, j).translate(v.region.offset)
    return window(v).contains_region(cell)


async def to_x(app: ExploreApp, pilot, cell: tuple[int, int]) -> None:  # type: ignore[no-untyped-def]
    """From the start (weights · Z) to X[cell] on the Q page."""
    await pilot.press("n", "enter")  # Q[cats, 1] → row cats of X
    await pilot.pause()
    x = view(app, "q", "X")
    assert app.focused is x
    x.move_to(*cell)
    await pilot.pause()


def test_only_the_values_that_changed_are_marked() -> None:
    """X[cats, 2] = 1/3 turns X's, Q's and K's integers into decimals ("1" → "1.00"): no value of
    those changed, so none is marked; every value that did change is, the way it went (numpy
    says which, from the lesson before and after)."""
    lesson = load_lesson(LESSONS / "cats-chase-mice.yaml")

    async def script(app: ExploreApp, pilot) -> None:  # type: ignore[no-untyped-def]
        await to_x(app, pilot, (0, 1))
        await pilot.press("1", "/", "3", "enter")
        await pilot.pause()
        before, after = reference.attention(lesson), reference.attention(app.model.lesson)
        changed = 0
        for page, name in [("q", "X"), ("q", "Q"), ("k", "K"), ("v", "V"), ("scaled", "scores")]:
            changed += check_marks(view(app, page, name), before[(name, None)], after[(name, None)])
        for name in ("weights", "Z"):
            changed += check_marks(
                view(app, "weights", name), before[(name, None)], after[(name, None)]
            )
        scaled = after[("scaled", None)] != before[("scaled", None)]
        changed += int(scaled.sum())
        assert view(app, "q", "X").text_at(0, 0) == "1.00"  # shown as decimals, not marked
        assert view(app, "q", "X").text_at(0, 1) == "0.33▲"
        assert f"X[cats, 2] = 1/3: {changed} values changed" in status(app)

    drive("cats-chase-mice", script)


def check_marks(v: MatrixView, old: np.ndarray, new: np.ndarray) -> int:
    """Every cell of v is marked ▲ or ▼ exactly when numpy's value went up or down."""
    assert v.step is not None
    n, m = v.step.shape
    for i in range(n):
        for j in range(m):
            mark = v.marks.get((i, j), "")
            want = (
                UP
                if new[i, j] > old[i, j] + 1e-12
                else DOWN
                if new[i, j] < old[i, j] - 1e-12
                else ""
            )
            assert mark == want, (v.step.key, i, j, old[i, j], new[i, j])
    return int((abs(new - old) > 1e-12).sum())


def test_an_edited_entry_says_you_set_it_and_what_the_lesson_gave() -> None:
    async def script(app: ExploreApp, pilot) -> None:  # type: ignore[no-untyped-def]
        await to_x(app, pilot, (0, 1))
        assert "X[cats, 2] = given in the lesson" in panel(app)
        await pilot.press("1", "/", "3", "enter")
        await pilot.pause()
        text = panel(app)
        assert "X[cats, 2] = you set this" in text and "≈ 0.33" in text
        assert "you set this; the lesson gave 0" in text
        assert "given in the lesson" not in text
        x = view(app, "q", "X")  # its numbers are wider now ("1.00"): laid out again, uncut
        assert x.size == (x.get_content_width(None, None), 5)  # type: ignore[arg-type]
        await pilot.press("left")  # an entry not edited is still the lesson's
        await pilot.pause()
        assert "X[cats, 1] = given in the lesson" in panel(app)
        assert "you set this" not in panel(app)
        await pilot.press("right", "u")  # undone: the lesson's own again
        await pilot.pause()
        assert "X[cats, 2] = given in the lesson" in panel(app)

    drive("cats-chase-mice", script)


@pytest.mark.parametrize("lesson", ["cats-chase-mice", "the-cake"])
def test_the_cells_a_q_cell_comes_from_are_on_screen_wherever_the_cursor_goes(lesson) -> None:  # type: ignore[no-untyped-def]
    """Q[r, c] comes from row r of X and column c of W_Q: at 80 × 24 the cursor's cell, that row
    and that column are all in sight, for every cell of Q, reached with the arrow keys."""

    async def script(app: ExploreApp, pilot) -> None:  # type: ignore[no-untyped-def]
        await pilot.press("n")
        await pilot.pause()
        q, x, w = view(app, "q", "Q"), view(app, "q", "X"), view(app, "q", "W_Q")
        assert app.focused is q and q.step is not None
        n, m = q.step.shape
        seen = 0
        for i in range(n):
            for j in range(m) if i % 2 == 0 else reversed(range(m)):
                if (q.row, q.col) != (i, j):
                    key = "down" if q.row != i else ("right" if j > q.col else "left")
                    await pilot.press(key)
                    await pilot.pause()
                assert (q.row, q.col) == (i, j)
                assert on_screen(q, i, j), (i, j)
                assert x.lit == {(i, k) for k in range(x.step.shape[1])}  # type: ignore[union-attr]
                assert all(on_screen(x, a, b) for a, b in x.lit), ("X row", i, j)
                assert all(on_screen(w, a, b) for a, b in w.lit), ("W_Q column", i, j)
                seen += 1
        assert seen == n * m

    drive(lesson, script)


def test_every_table_and_every_column_of_the_cake_causal_can_be_reached() -> None:
    """The-cake-causal is wider and longer than 80 × 24: → and end bring its last column
    (delicious) into sight, ↓ its last row, and tab every table of the page, Z included."""

    async def script(app: ExploreApp, pilot) -> None:  # type: ignore[no-untyped-def]
        w = view(app, "weights", "weights")
        assert app.focused is w
        await pilot.press("end")
        await pilot.pause()
        assert (w.row, w.col) == (0, 7) and w.step.cols[7] == "delicious"  # type: ignore[union-attr]
        assert on_screen(w, 0, 7)
        await pilot.press(*["down"] * 7)
        await pilot.pause()
        assert on_screen(w, 7, 7)
        await pilot.press("home")
        await pilot.pause()
        assert on_screen(w, 7, 0)
        for name in ("V", "Z"):
            await pilot.press("tab")
            await pilot.pause()
            v = view(app, "weights", name)
            assert app.focused is v and on_screen(v, v.row, v.col), name
        z = view(app, "weights", "Z")
        await pilot.press(*["down"] * 7, "end")
        await pilot.pause()
        assert (z.row, z.col) == (7, 3) and on_screen(z, 7, 3)
        footer = {(k.key_display, k.description) for k in app.query("FooterKey")}  # type: ignore[attr-defined]
        assert ("tab", "next table") in footer  # said where a student looks

    drive("the-cake-causal", script)


def test_the_help_fits_scrolls_and_closes_only_with_esc_or_question_mark() -> None:
    async def script(app: ExploreApp, pilot) -> None:  # type: ignore[no-untyped-def]
        page = app.page.id
        await pilot.press("question_mark")
        await pilot.pause()
        box = app.screen.query_one(VerticalScroll)
        assert Region(0, 0, *SIZE).contains_region(box.region)  # the box is on the screen
        widest = max(len(line) for line in HELP.splitlines())
        assert widest <= box.scrollable_content_region.width  # no line is cut or wrapped
        assert "esc or ? closes" in str(box.border_subtitle)  # in sight however it is scrolled
        assert "esc or ? closes" in HELP.splitlines()[-1]
        assert box.max_scroll_y > 0  # 24 rows do not hold it: it scrolls
        await pilot.press("pagedown", "down")
        await pilot.pause()
        assert box.scroll_y > 0
        await pilot.press("x", "n", "m", "q", "enter", "1", "space")  # none of these closes it
        await pilot.pause()
        assert app.screen.query("#help-text") and app.is_running
        assert app.page.id == page and not app.model.settings.mask and not app.model.edited
        await pilot.press("escape")
        await pilot.pause()
        assert not app.screen.query("#help-text")
        await pilot.press("question_mark")
        await pilot.pause()
        assert app.screen.query("#help-text")
        await pilot.press("question_mark")
        await pilot.pause()
        assert not app.screen.query("#help-text") and app.is_running

    drive("cats-chase-mice", script)


def test_the_scaled_heading_follows_the_divisor_for_a_new_token_too() -> None:
    async def script(app: ExploreApp, pilot) -> None:  # type: ignore[no-untyped-def]
        scaled, new = view(app, "scaled", "scaled"), view(app, "next", "scaled_new")
        assert scaled.heading.endswith("scores ÷ √d_k")
        assert new.heading.endswith("scores_new ÷ √d_k")
        for divisor in ("1", "d_k"):
            await pilot.press("d")
            await pilot.pause()
            assert scaled.heading.endswith(f"scores ÷ {divisor}")
            assert new.heading.endswith(f"scores_new ÷ {divisor}"), new.heading
            assert "√d_k" not in new.heading

    drive("the-cake-next-token", script)


def test_tab_reaches_every_table_of_every_page_and_only_those_shown() -> None:
    """On every page of the-cake-causal at 80 × 24, tab visits each table the page shows, each
    with its cursor's cell in sight, and no table the lesson has no step for (the tempered
    scores, with the factor at 1, were an empty, focusable view: tab "went" nowhere)."""

    async def script(app: ExploreApp, pilot) -> None:  # type: ignore[no-untyped-def]
        for page in app.pages:
            app.go_page(page)
            await pilot.pause()
            shown = {
                v.id for v in app.query(MatrixView) if v.id.startswith(f"{page.id}-") and v.display
            }
            assert all(view(app, *v.split("-", 1)).step is not None for v in shown), page.id
            reached = set()
            for _ in range(len(shown) + 2):  # the tab bar takes a tab too
                f = app.focused
                if isinstance(f, MatrixView):
                    assert f.step is not None and on_screen(f, f.row, f.col), f.id
                    reached.add(f.id)
                await pilot.press("tab")
                await pilot.pause()
            assert reached == shown, page.id

    drive("the-cake-causal", script)


def test_a_row_whose_strongest_key_moved_underlines_it_in_a_readable_colour() -> None:
    """The new strongest key is underlined in bold over its heat shade, in the shade's own text
    colour (an orange text on the dark orange of a large weight could not be read)."""
    from tutor.explore.widgets import heat

    async def script(app: ExploreApp, pilot) -> None:  # type: ignore[no-untyped-def]
        w = view(app, "weights", "weights")
        await pilot.press("m")  # cats now sees only itself: its strongest key moves to cats
        await pilot.pause()
        assert w.called == {0}
        assert w.step is not None
        values = [c.value for row in w.step.cells for c in row if not c.masked]
        shade = heat(w.step.cells[0][0].value, min(values), max(values))
        text = w.render()
        (called,) = [s for s in text.spans if "underline" in str(s.style)]
        assert text.plain[called.start : called.end].strip().startswith("1.00")
        assert called.style.color == shade.color and called.style.bgcolor == shade.bgcolor  # type: ignore[union-attr]

    drive("cats-chase-mice", script)
