"""The explorer's one widget: a matrix of one step, with a cell cursor, highlights, marks and
(for weights) a heatmap. Drawn as plain text lines so a click maps straight to a cell."""

from __future__ import annotations

import functools
from typing import ClassVar

from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.geometry import Region
from textual.message import Message
from textual.widget import Widget

from tutor.core.engine import Softmax, Step
from tutor.explore.model import strongest
from tutor.text import theme

GAP = 1  # spaces between columns
HIGHLIGHT = Style(bgcolor="dark_goldenrod", color=theme.BLACK, bold=True)
CURSOR = Style(reverse=True, bold=True)
CALLED = Style(bold=True, underline=True)  # the heat's own text colour: orange on orange hid it


@functools.lru_cache(maxsize=256)
def heat(value: float, low: float, high: float) -> Style:
    """A weight's shade, spread over the table's range as the walk's heatmap is (the colours
    are ``tutor.text.theme``'s; the number is always printed)."""
    shade, text = theme.heat_pair(value, low, high)
    return Style(bgcolor=shade, color=text)


class MatrixView(Widget, can_focus=True):
    """One step's table. The app binds it to a step (or to nothing: then it is hidden)."""

    # bindings, not key_ methods: a binding of the focused widget is the one that acts, where
    # a key_ method also lets the page's own ↑ ↓ ← → home end scroll it (the cursor's row and
    # the tables above it then slid off the screen)
    BINDINGS: ClassVar = [
        Binding("up", "move(-1, 0)", show=False),
        Binding("down", "move(1, 0)", show=False),
        Binding("left", "move(0, -1)", show=False),
        Binding("right", "move(0, 1)", show=False),
        Binding("home", "edge(False)", show=False),
        Binding("end", "edge(True)", show=False),
        Binding("tab", "app.focus_next", "next table"),
    ]

    DEFAULT_CSS = """
    MatrixView { width: auto; height: auto; margin: 0 2 1 0; }
    MatrixView:focus { background: $boost; }
    """

    class Moved(Message):
        """The cursor is on a new cell (or the view got focus)."""

        def __init__(self, view: MatrixView) -> None:
            self.view = view
            super().__init__()

    def __init__(self, name: str, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.step_name = name
        self.step: Step | None = None
        self.heading = name
        self.row = 0
        self.col = 0
        self.marks: dict[tuple[int, int], str] = {}
        self.lit: set[tuple[int, int]] = set()
        self.called: set[int] = set()  # rows of weights whose strongest key just moved
        self._texts: list[list[str]] = []
        self._widths: list[int] = []
        self._label = 0

    # -- data --------------------------------------------------------------------------------

    def bind(
        self,
        step: Step | None,
        heading: str,
        texts: list[list[str]] | None,
        marks: dict[tuple[int, int], str],
        called: set[int] | None = None,
    ) -> None:
        """Show ``step`` (None hides the view): its cells as shown (``texts``), their ▲/▼
        marks, and the rows of weights whose strongest key moved (``called``).
        Nothing is redrawn when nothing changed (a step an edit did not touch)."""
        called = called or set()
        self.display = step is not None  # (a view never bound to a step is hidden too)
        if (step, heading, marks, called) == (self.step, self.heading, self.marks, self.called):
            return
        self.step, self.heading, self.marks, self.called = step, heading, marks, called
        if step is None or texts is None:
            return
        self._texts = texts
        widths = [
            max(len(step.cols[j]), *(len(row[j]) + 1 for row in texts))
            for j in range(len(step.cols))
        ]
        label = max(len(r) for r in step.rows)
        resized = (widths, label) != (self._widths, self._label)
        self._widths, self._label = widths, label
        self.row = min(self.row, len(step.rows) - 1)
        self.col = min(self.col, len(step.cols) - 1)
        self.refresh(layout=resized)

    def light(self, cells: set[tuple[int, int]]) -> None:
        if cells != self.lit:
            self.lit = cells
            self.refresh()

    def text_at(self, i: int, j: int) -> str:
        """A cell as shown (with its mark)."""
        return self._texts[i][j] + self.marks.get((i, j), "")

    # -- drawing -----------------------------------------------------------------------------

    def get_content_width(self, container, viewport) -> int:  # type: ignore[no-untyped-def]
        if self.step is None:
            return 0
        table = self._label + sum(w + GAP for w in self._widths)
        return max(table, len(self.heading))

    def get_content_height(self, container, viewport, width) -> int:  # type: ignore[no-untyped-def]
        return 0 if self.step is None else len(self.step.rows) + 2

    def render(self) -> Text:
        out = Text(no_wrap=True, overflow="crop")
        if self.step is None:
            return out
        step = self.step
        out.append(self.heading + "\n", style="bold")
        out.append(" " * self._label)
        for j, w in enumerate(self._widths):
            label = step.cols[j]
            label = label.rjust(w - 1).ljust(w) if len(label) < w else label  # over the digits
            out.append(" " * GAP + label, style="dim")
        focused = self.has_focus
        is_weights = isinstance(step, Softmax)  # its cells shaded by their weight
        called = {i: strongest(step, i) for i in self.called} if is_weights else {}
        shown = [c.value for row in step.cells for c in row if not c.masked] if is_weights else []
        low, high = (min(shown), max(shown)) if shown else (0.0, 1.0)
        for i, label in enumerate(step.rows):
            out.append("\n")
            out.append(label.ljust(self._label), style="dim")
            for j, w in enumerate(self._widths):
                out.append(" " * GAP)
                text = self._texts[i][j] + self.marks.get((i, j), " ")
                style = Style()
                if is_weights and not step.cells[i][j].masked:
                    style = heat(step.cells[i][j].value, low, high)
                if called.get(i) == j:  # the row's new strongest key
                    style = style + CALLED
                if (i, j) in self.lit:
                    style = HIGHLIGHT
                if focused and (i, j) == (self.row, self.col):
                    style = style + CURSOR
                out.append(text.rjust(w), style=style)
        return out

    # -- moving ------------------------------------------------------------------------------

    def move_to(self, i: int, j: int) -> None:
        if self.step is None:
            return
        n, m = self.step.shape
        i, j = max(0, min(n - 1, i)), max(0, min(m - 1, j))
        if (i, j) != (self.row, self.col):
            self.row, self.col = i, j
            self.refresh()
        self.follow()
        self.post_message(self.Moved(self))

    def cell_region(self, i: int, j: int) -> Region:
        """Where cell (i, j) is drawn, in this widget's own coordinates (its row label too when
        it is the first column, so scrolling back shows which token it is)."""
        x = self._label + sum(w + GAP for w in self._widths[:j])
        w = self._widths[j] + GAP if self._widths else 1
        return Region(0 if j == 0 else x, 2 + i, w + (x if j == 0 else 0), 1)

    def page_box(self) -> Widget | None:
        """The scrolling page this table is on."""
        widget: Widget = self
        while isinstance(widget.parent, Widget):
            widget = widget.parent
            if {widget.styles.overflow_x, widget.styles.overflow_y} & {"auto", "scroll"}:
                return widget
        return None

    def placed(self, region: Region) -> Region:
        """A region of this table in its page's coordinates (scrolled or not)."""
        widget: Widget = self
        while isinstance(widget.parent, Widget) and widget is not self.page_box():
            region = region.translate(widget.virtual_region.offset)
            widget = widget.parent
        return region

    def follow(self) -> None:
        """Scroll the page so the cursor's cell is on screen (a table wider or taller than
        the screen: the-cake's last column at 80 columns); the app then brings in the cells
        it comes from (``ExploreApp.reveal``)."""
        box = self.page_box()
        if self.step is None or not self._widths or box is None:
            return
        box.scroll_to_region(
            self.placed(self.cell_region(self.row, self.col)), animate=False, immediate=True
        )

    def action_move(self, di: int, dj: int) -> None:
        self.move_to(self.row + di, self.col + dj)

    def action_edge(self, last: bool) -> None:
        self.move_to(self.row, 10**6 if last else 0)

    def check_consume_key(self, key: str, character: str | None) -> bool:
        """While the app's typing line is open, every key is for it (no key bindings)."""
        return getattr(self.app, "entry_for", None) is not None

    def on_key(self, event: events.Key) -> None:
        if getattr(self.app, "entry_for", None) is not None:
            event.stop()
            event.prevent_default()
            self.app.entry_key(event)  # type: ignore[attr-defined]

    def on_focus(self) -> None:
        self.refresh()
        self.post_message(self.Moved(self))

    def on_blur(self) -> None:
        self.refresh()

    def on_click(self, event: events.Click) -> None:
        """A click on a cell puts the cursor there."""
        if self.step is None:
            return
        i = event.y - 2
        x = event.x - self._label
        j = -1
        for k, w in enumerate(self._widths):
            if 0 <= x < w + GAP:
                j = k
                break
            x -= w + GAP
        if 0 <= i < len(self.step.rows) and j >= 0:
            self.focus()
            self.move_to(i, j)


class Board(Widget):
    """Text in an area of fixed size: changing it redraws the area, never the layout (a
    ``Static`` lays the whole screen out again on every update)."""

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self._text = Text()

    def update(self, text: Text | str) -> None:
        self._text = text if isinstance(text, Text) else Text(text)
        self.refresh()

    def render(self) -> Text:
        return self._text
