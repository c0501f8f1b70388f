"""``attn-tutor explore``: the whole computation on one screen, every cell explaining itself,
and the given numbers editable, with undo. The Textual edge over ``tutor.explore.model``."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual import events
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Container, Horizontal, Vertical, VerticalScroll
from textual.geometry import Region
from textual.screen import ModalScreen
from textual.widgets import Footer, Static, TabbedContent, TabPane

from tutor.core.engine import Product, Step
from tutor.core.errors import AnswerError, TutorError
from tutor.core.lesson import Lesson
from tutor.explore import views
from tutor.explore.model import (
    FACTORS,
    Explorer,
    divisor_text,
    divisors,
    factor_text,
    given_matrix,
    typed_text,
)
from tutor.explore.save import default_path, save_lesson, save_path
from tutor.explore.widgets import Board, MatrixView
from tutor.text.cells import cell_name

EDIT_KEYS = set("0123456789-./")
COLUMN_GAP = 2  # columns between two tables side by side
MAX_TYPED = 400  # characters on the typing line (a file path can be long; numbers are capped)

HELP = """\
attn-tutor explore: every key

Moving
  ← ↑ → ↓          move in a table (or click a cell); a table wider or
                   longer than the screen scrolls with the cursor
  home / end       first / last column of the table
  tab / shift+tab  next / previous table (the page scrolls to it)
  pgup / pgdn      scroll the page up / down (or the mouse wheel)
  n / p            next / previous page (or click a tab)
  h                next head (lessons with heads)

Explaining
  (cursor)         the side panel shows the cell's working; the cells it
                   comes from are highlighted (and scrolled into sight)
  enter            follow the cell to the cells it is made from
  backspace        come back

Editing (on X, W_Q, W_K, W_V or W_O)
  0-9 - . /        type a number for the cell (enter: keep, esc: cancel,
                   backspace: delete, ctrl+u: clear the line)
  e                edit the cell, starting from its value
  u / ctrl+r       undo / redo
  m                causal mask on / off
  d                divide the scores by √d_k, 1 or d_k
  ] / [            multiply the scaled scores by more / less (0 … 10)
  ▲ ▼              values the last change raised or lowered

Keeping
  s                save the edited lesson as a new lesson file
  ?                this help
  q                quit (twice when there are unsaved edits)

esc or ? closes this help; ↑ ↓ pgup pgdn scroll it."""
CLOSE_HELP = ("escape", "question_mark")
SCROLL_HELP = ("up", "down", "pageup", "pagedown", "home", "end")


class Help(ModalScreen[None]):
    """The help overlay: every key. It scrolls (↑ ↓ pgup pgdn, the wheel) and closes with esc
    or ? only: a key meant for the tables, typed while it is open, does nothing."""

    DEFAULT_CSS = """
    Help { align: center middle; }
    Help > VerticalScroll { width: 100%; max-width: 80; height: auto; max-height: 100%;
                            border: round $accent; padding: 0 1; background: $panel;
                            border-subtitle-align: center; }
    Help Static { width: auto; }
    """

    def compose(self) -> ComposeResult:
        text = Text()
        for line in HELP.splitlines(keepends=True):  # headings in bold; no markup to trip on
            text.append(line, style="bold" if line[:1].isalpha() and ":" not in line else "")
        box = VerticalScroll(id="help-box")
        box.border_subtitle = "esc or ? closes · ↑ ↓ scroll"  # in sight however it is scrolled
        with box:
            yield Static(text, id="help-text")

    def on_mount(self) -> None:
        self.query_one("#help-box").focus()  # its ↑ ↓ pgup pgdn scroll it

    def on_key(self, event: events.Key) -> None:
        if event.key in CLOSE_HELP:
            event.stop()
            self.close()
        elif event.key not in SCROLL_HELP:  # not for the app's keys under the help either
            event.stop()
            event.prevent_default()

    def on_click(self, event: events.Click) -> None:
        if event.widget is self:  # outside the box
            self.close()

    def close(self) -> None:
        """Close once: keys typed fast arrive while it is already closing."""
        if self.is_current:
            self.dismiss()


class Row(Container):
    """A row of a page's tables, laid out in lines by ``ExploreApp.fit_rows``."""

    # the tables' ids line by line, and their widths: laid out again when either changes
    shape: tuple[tuple[tuple[str | None, ...], ...], tuple[int, ...]] = ((), ())


class ExploreApp(App[None]):
    """The explorer."""

    TITLE = "attn-tutor explore"
    ENABLE_COMMAND_PALETTE = False
    CSS = """
    #top { height: 1; background: $primary-background; }
    #body { height: 1fr; }
    #tabs { width: 1fr; }
    #pages { height: 1fr; }
    #panel { width: 36%; max-width: 40; min-width: 26; height: 100%; padding: 0 1;
             border-left: solid $primary; }
    .row { height: auto; width: auto; min-width: 100%; layout: grid; grid-rows: auto;
           grid-gutter: 1 2; margin-bottom: 1; }
    .row MatrixView { margin: 0; }
    TabPane { padding: 0 0; }
    TabPane > VerticalScroll { overflow-x: auto; }
    #prompt { height: 1; }
    #refusal { height: 1; color: $error; }
    #status { height: 2; color: $warning; }
    """
    BINDINGS: ClassVar = [
        Binding("q", "quit_app", "quit"),
        Binding("question_mark", "help", "help"),
        Binding("enter", "follow", "follow", show=False),
        Binding("backspace", "back", "back"),
        Binding("e", "edit", "edit", show=False),
        Binding("u", "undo", "undo"),
        Binding("ctrl+r", "redo", "redo"),
        Binding("m", "mask", "mask"),
        Binding("d", "divisor", "÷"),
        Binding("right_square_bracket", "factor(1)", "×t", show=False),
        Binding("left_square_bracket", "factor(-1)", "×t", show=False),
        Binding("n", "page(1)", "page", show=False),
        Binding("p", "page(-1)", "page", show=False),
        Binding("h", "head", "head", show=False),
        Binding("s", "save", "save"),
    ]

    def __init__(self, lesson: Lesson, source: str, folder: Path | None = None) -> None:
        super().__init__()
        self.model = Explorer(lesson)
        self.source = source  # how the lesson was named, for the saved file's comment
        self.folder = folder or Path.cwd()
        self.head = 1
        # cells followed (name, the view it was in, head, row, column), for backspace
        self.trail: list[tuple[str, str, int | None, int, int]] = []
        self.current: tuple[Step, int, int] | None = None
        self.entry_for: str | None = None  # "edit" or "save": the typing line is open
        self.prompt = ""
        self.buffer = ""  # what has been typed on the line
        self.editing: tuple[Step, int, int] | None = None
        self.confirm: Path | None = None  # a file that exists: the next save replaces it
        self.saved = True
        self.quitting = False
        self.pages = views.pages(self.model.derivation)
        self.views: list[MatrixView] = []
        self.landing: MatrixView | None = None  # the view to focus once its page is shown

    # -- layout -------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Board(id="top")
        with Horizontal(id="body"):
            with Vertical(id="tabs"):
                with TabbedContent(id="pages"):
                    for page in self.pages:
                        with TabPane(page.title, id=page.id), VerticalScroll():
                            for row in page.rows:
                                with Row(classes="row"):
                                    for name in row:
                                        view = MatrixView(name, id=f"{page.id}-{name}")
                                        self.views.append(view)
                                        yield view
                yield Board(id="prompt")
                yield Board(id="refusal")
                yield Board(id="status")
            yield Board(id="panel")
        yield Footer()

    def on_mount(self) -> None:
        self.redraw()
        self.go_page(next(p for p in self.pages if p.id == "weights"))  # where attention shows

    # -- drawing -----------------------------------------------------------------------------

    def view_of(self, page_id: str, name: str) -> MatrixView | None:
        for v in self.views:
            if v.id == f"{page_id}-{name}":
                return v
        return None

    def redraw(self) -> None:
        """Bind every view to the current derivation's steps (and marks)."""
        d = self.model.derivation
        marks: dict[str, dict[tuple[int, int], str]] = {}
        for (key, i, j), mark in self.model.marks.items():
            marks.setdefault(key, {})[(i, j)] = mark
        for v in self.views:
            step = views.find(d, v.step_name, self.head)
            if step is None:
                v.bind(None, v.step_name, None, {})
                continue
            mine = marks.get(step.key, {})
            called = {m.row for m in self.model.moved if m.key == step.key}
            texts = self.model.texts[step.key]
            v.bind(step, views.title(step, self.model.settings), texts, mine, called)
        self.draw_top()
        self.call_after_refresh(self.fit_rows)
        if self.current is not None:
            step, i, j = self.current
            fresh = views.find(d, step.name, self.head)
            if fresh is not None and fresh.shape == step.shape:
                self.show(fresh, i, j)

    def fit_rows(self) -> None:
        """Each row of tables in lines that fit the width (``views.packing``): side by side
        where they fit, else a table beside the one it shares its rows with, else one under
        another. Laid out as a grid whose columns are as wide as their tables."""
        room = self.query_one("#tabs").size.width - 2 + COLUMN_GAP  # the scroll bar
        moved = False
        for row in self.query(Row):
            views_ = [v for v in row.query(MatrixView) if v.step is not None]
            row.display = bool(views_)
            if not views_:
                continue
            widths = [v.get_content_width(None, None) + COLUMN_GAP for v in views_]  # type: ignore[arg-type]
            heights = [len(v.step.rows) + 2 for v in views_]  # type: ignore[union-attr]
            lines = views.packing(widths, heights, room)
            shape = (tuple(tuple(views_[k].id for k in line) for line in lines), tuple(widths))
            if row.shape == shape:  # the same tables, as wide as they were
                continue
            row.shape = shape
            moved = True
            k = max(len(line) for line in lines)
            columns = [0] * k
            for line in lines:
                for c, n in enumerate(line[:-1] if len(line) < k else line):
                    columns[c] = max(columns[c], widths[n] - COLUMN_GAP)
            order = [views_[n] for line in lines for n in line]
            for line in lines:  # a short line's last table spans the columns left
                last = views_[line[-1]]
                c = len(line) - 1
                last.styles.column_span = k - c
                need = (
                    widths[line[-1]] - COLUMN_GAP - sum(columns[c + 1 :]) - COLUMN_GAP * (k - c - 1)
                )
                columns[c] = max(columns[c], need)
            for a, b in itertools.pairwise(order):  # tab goes through them as shown
                row.move_child(b, after=a)
            row.styles.grid_size_columns = k
            row.styles.grid_columns = " ".join(str(w) for w in columns)
            row.styles.width = sum(columns) + COLUMN_GAP * (k - 1)  # wider than the page: scrolls
        if moved and self.current is not None:
            self.call_after_refresh(self.reveal)

    def on_resize(self) -> None:
        self.call_after_refresh(self.fit_rows)

    def draw_top(self) -> None:
        lesson, s = self.model.lesson, self.model.settings
        parts = [
            f"mask {'on' if s.mask else 'off'}",
            f"scores ÷ {divisor_text(s.divisor, lesson)}",
            f"× {factor_text(s)}",
        ]
        if lesson.multi_head:
            parts.append(f"head {self.head} of {len(lesson.heads)}")
        if self.model.edited:
            parts.append("edited" + ("" if self.saved else ", not saved"))
        parts += ["? help", lesson.title]  # the title last: a narrow screen cuts it, not these
        self.query_one("#top", Board).update(Text(" · ".join(parts)))

    def say(self, text: str) -> None:
        self.query_one("#status", Board).update(Text(text))

    def show(self, step: Step, i: int, j: int) -> None:
        """The side panel for cell (i, j) of ``step``, and its sources lit up."""
        self.current = (step, i, j)
        refs = views.sources(step, i, j)
        places, settings = self.model.places, self.model.settings
        was = self.model.set_from(step, i, j) if step.given else None
        if was is None:
            text = views.working_text(step, i, j, places, settings)
        else:
            text = views.set_text(step, i, j, places)
        lines = [text, "", views.from_text(step, refs, was)]
        if refs:
            lines.append("enter: go to them")
        if self.trail:
            lines.append("backspace: back to " + self.trail[-1][0])
        self.query_one("#panel", Board).update(Text("\n".join(lines)))
        lit: dict[str, set[tuple[int, int]]] = {}
        for r in refs:
            lit.setdefault(r.step.key, set()).add((r.i, r.j))
        for v in self.views:
            v.light(lit.get(v.step.key, set()) if v.step is not None else set())
        self.call_after_refresh(self.reveal)

    def reveal(self) -> None:
        """Scroll the page so the cursor's cell is on screen, and with it as many as fit of
        the cells it comes from (a row of X, a column of W_Q: each whole), then its table's
        heading; the least scrolling of those that show the most."""
        v = self.focused
        box = v.page_box() if isinstance(v, MatrixView) and v.step is not None else None
        if box is None:
            return
        assert isinstance(v, MatrixView)
        cursor = v.placed(v.cell_region(v.row, v.col))
        lit = [
            w.placed(Region.from_union([w.cell_region(i, j) for i, j in w.lit]))
            for w in box.query(MatrixView)
            if w.lit and w.step is not None and w.display
        ]
        heading = v.placed(Region(0, 0, v.size.width, 2))
        view = box.scrollable_content_region.size
        axes = [  # where it is, how much is in sight, how far it goes, a region's extent
            (box.scroll_x, view.width, box.max_scroll_x, "column_span"),
            (box.scroll_y, view.height, box.max_scroll_y, "line_span"),
        ]
        x, y = (
            views.window(
                at,
                size,
                limit,
                getattr(cursor, span),
                [getattr(r, span) for r in lit],
                getattr(heading, span),
            )
            for at, size, limit, span in axes
        )
        if (x, y) != (box.scroll_x, box.scroll_y):
            box.scroll_to(x, y, animate=False, immediate=True)

    def on_matrix_view_moved(self, message: MatrixView.Moved) -> None:
        v = message.view
        if v.step is not None:
            self.show(v.step, v.row, v.col)

    # -- pages, heads and following ------------------------------------------------------------

    @property
    def page(self) -> views.Page:
        active = self.query_one("#pages", TabbedContent).active
        return next(p for p in self.pages if p.id == active)

    def action_page(self, by: int) -> None:
        k = self.pages.index(self.page)
        self.go_page(self.pages[(k + by) % len(self.pages)])

    def go_page(
        self, page: views.Page, name: str | None = None, cell: tuple[int, int] | None = None
    ) -> None:
        """Show a page and put the focus on ``name`` (else the page's own step), once the page
        is on screen (a view on a hidden page cannot take the focus)."""
        self.set_focus(None)  # else the focus, hidden with its page, is moved on by Textual
        self.query_one("#pages", TabbedContent).active = page.id
        names = [n for row in page.rows for n in row]
        for n in ([name] if name else []) + [*page.home, *names]:
            v = self.view_of(page.id, n)
            if v is not None and v.step is not None:
                if cell is not None:
                    v.row, v.col = cell
                self.landing = v
                self.call_after_refresh(self.land)
                return

    def land(self, tries: int = 20) -> None:
        v = self.landing
        if v is None:
            return
        if not v.focusable and tries:  # its page is not on screen yet
            self.call_after_refresh(self.land, tries - 1)
            return
        self.landing = None
        v.focus()
        v.post_message(MatrixView.Moved(v))

    def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        if self.landing is not None:
            return
        focused = self.focused
        if isinstance(focused, MatrixView) and focused.id.startswith(f"{self.page.id}-"):
            return
        self.go_page(self.page)

    def action_head(self) -> None:
        if self.model.lesson.multi_head:
            self.head = self.head % len(self.model.lesson.heads) + 1
            self.redraw()
            if isinstance(self.focused, MatrixView):
                self.focused.post_message(MatrixView.Moved(self.focused))

    def go_cell(self, name: str, head: int | None, i: int, j: int) -> None:
        """Put the cursor on a cell: on this page if it shows the step, else on its home."""
        if head is not None:
            self.head = head
            self.redraw()
        here = self.view_of(self.page.id, name)
        if here is None or here.step is None:
            # a page that shows it beside the cell we come from, else the page about it
            came = self.current[0].name if self.current is not None else ""
            beside = [p for p in self.pages if {name, came} <= {n for r in p.rows for n in r}]
            page = (beside or [p for p in self.pages if name in p.home] or [self.page])[0]
            self.go_page(page, name, (i, j))
            return
        here.focus()
        here.move_to(i, j)

    def action_follow(self) -> None:
        if self.entry_for is not None or self.current is None:
            return
        step, i, j = self.current
        if step.given:
            self.action_edit()
            return
        refs = views.sources(step, i, j)
        if not refs:
            self.say(f"{cell_name(step, i, j)} comes from no other cell")
            return
        here = self.focused.id if isinstance(self.focused, MatrixView) else None
        self.trail.append((cell_name(step, i, j), here or step.name, step.head, i, j))
        # the source in the same place when there is one (a weight's own scaled score); a
        # product's sources share its place only by chance
        same = [] if isinstance(step, Product) else [r for r in refs if (r.i, r.j) == (i, j)]
        first = (same or refs)[0]
        self.go_cell(first.step.name, first.step.head, first.i, first.j)

    def action_back(self) -> None:
        if self.entry_for is not None:
            return
        if not self.trail:
            self.say("nothing to go back to: enter follows a cell to the cells it comes from")
            return
        _, where, head, i, j = self.trail.pop()
        if head is not None and head != self.head:
            self.head = head
            self.redraw()
        page_id, _, name = where.partition("-")
        page = next((p for p in self.pages if p.id == page_id), None)
        if page is None:  # followed from outside a table: find the step
            self.go_cell(page_id, head, i, j)
        elif page.id == self.page.id:
            self.go_cell(name, None, i, j)
        else:
            self.go_page(page, name, (i, j))

    # -- editing -----------------------------------------------------------------------------

    def open_entry(self, purpose: str, prompt: str, value: str, hint: str) -> None:
        """A line to type on, under the tables: the focus stays on the table (it passes every
        key here while the line is open), so opening it costs no restyling."""
        self.entry_for, self.prompt, self.buffer = purpose, prompt, value
        if not isinstance(self.focused, MatrixView) and self.current is not None:
            self.go_cell(self.current[0].name, self.current[0].head, *self.current[1:])
        self.draw_entry()
        self.query_one("#refusal", Board).update(Text(hint, style="grey70"))

    def draw_entry(self) -> None:
        """The typing line, on its one row: when the text is wider than the row, its end (where
        the cursor is) stays in sight and "…" stands for the start."""
        board = self.query_one("#prompt", Board)
        room = max(8, (board.size.width or 80) - len(self.prompt) - 2)  # the cursor, a space
        shown = self.buffer if len(self.buffer) <= room else "…" + self.buffer[-(room - 1) :]
        line = Text(self.prompt + " ", style="bold")
        line.append(shown)
        line.append("▏", style="blink")
        board.update(line)

    def entry_key(self, event: events.Key) -> None:
        """A key typed while the line is open: enter, escape, backspace or a character."""
        if event.key == "escape":
            self.close_entry()
        elif event.key == "enter":
            if self.entry_for == "edit":
                self.submit_edit(self.buffer)
            elif self.entry_for == "save":
                self.submit_save(self.buffer)
        elif event.key in ("backspace", "ctrl+h"):
            self.buffer = self.buffer[:-1]
            self.draw_entry()
        elif event.key == "ctrl+u":  # clear the line, as in a shell
            self.buffer = ""
            self.draw_entry()
        elif event.is_printable and event.character and len(self.buffer) < MAX_TYPED:
            self.buffer += event.character
            self.draw_entry()

    def close_entry(self) -> None:
        self.entry_for = None
        self.confirm = None
        self.editing = None
        self.query_one("#prompt", Board).update("")
        self.query_one("#refusal", Board).update("")

    def start_edit(self, text: str) -> None:
        if self.current is None:
            return
        step, i, j = self.current
        if not step.given:
            self.say(f"{step.key} is worked out from other steps; edit X, W_Q, W_K, W_V or W_O")
            return
        self.editing = (step, i, j)
        self.open_entry("edit", f"{cell_name(step, i, j)} =", text, "enter: keep it, esc: cancel")

    def action_edit(self) -> None:
        """Edit the cell, starting from its exact entry (``1/3``, not the ``0.33`` shown)."""
        if self.current is not None:
            step, i, j = self.current
            if not step.given:
                self.start_edit("")  # says why not
                return
            m = given_matrix(self.model.lesson, step.name, step.head)
            self.start_edit(typed_text(m[i][j]))

    def on_key(self, event: events.Key) -> None:
        if (
            self.entry_for is None
            and isinstance(self.focused, MatrixView)
            and event.character in EDIT_KEYS
        ):
            event.stop()
            self.start_edit(event.character or "")

    def submit_edit(self, text: str) -> None:
        assert self.editing is not None
        step, i, j = self.editing
        fresh = views.find(self.model.derivation, step.name, step.head or self.head) or step
        try:
            done = self.model.edit(fresh, i, j, text)
        except AnswerError as err:
            self.query_one("#refusal", Board).update(Text(f"refused: {err}"))
            return
        self.saved = False
        self.after_change(done)
        self.close_entry()

    def after_change(self, done: str) -> None:
        self.redraw()
        moved = self.model.moved
        changed = len(self.model.marks)
        text = f"{done}: {changed} values changed"
        if moved:
            text += "; strongest key moved: " + ", ".join(str(m) for m in moved)
        self.say(text)

    def action_undo(self) -> None:
        if self.model.undo():
            self.saved = False
            self.after_change("undone")
        else:
            self.say("nothing to undo")

    def action_redo(self) -> None:
        if self.model.redo():
            self.saved = False
            self.after_change("redone")
        else:
            self.say("nothing to redo")

    def action_mask(self) -> None:
        mask = not self.model.settings.mask
        self.model.configure(mask=mask)
        self.saved = False
        self.after_change(f"mask {'on' if mask else 'off'}")

    def action_divisor(self) -> None:
        cycle = divisors(self.model.lesson)
        divisor = cycle[(cycle.index(self.model.settings.divisor) + 1) % len(cycle)]
        self.model.configure(divisor=divisor)
        self.after_change(f"scores ÷ {divisor_text(divisor, self.model.lesson)}")

    def action_factor(self, by: int) -> None:
        k = FACTORS.index(self.model.settings.factor) + by
        if not 0 <= k < len(FACTORS):
            self.say("the factor goes from 0 to 10")
            return
        self.model.configure(factor=FACTORS[k])
        self.after_change(f"scaled scores × {factor_text(self.model.settings)}")

    # -- keeping -----------------------------------------------------------------------------

    def action_save(self) -> None:
        if self.entry_for is not None:
            return
        path = default_path(self.model.original, self.folder)
        if path.is_relative_to(self.folder):  # short enough to read and edit: a bare name is
            path = path.relative_to(self.folder)  # saved in the folder
        self.open_entry("save", "save the lesson as:", str(path), "enter: save, esc: cancel")

    def submit_save(self, text: str) -> None:
        if not text.strip():
            self.query_one("#refusal", Board).update("refused: type a file name")
            return
        try:
            path = save_path(text, self.folder)
        except TutorError as err:  # ~nosuchuser/x.yaml: said, and the edits kept
            self.query_one("#refusal", Board).update(Text(f"refused: {err}"))
            return
        try:
            exists = path.exists()
        except OSError:  # a folder that may not be entered, a name too long: save_lesson says
            exists = False
        if exists and self.confirm != path:
            self.confirm = path
            self.query_one("#refusal", Board).update(
                Text(f"{path} exists: enter again to replace it, esc to cancel")
            )
            return
        try:
            save_lesson(self.model, path, self.source, replace=self.confirm == path)
        except TutorError as err:
            self.query_one("#refusal", Board).update(Text(f"refused: {err}"))
            return
        self.saved = True
        self.close_entry()
        self.draw_top()
        note = (
            ""
            if self.model.settings.divisor == "lesson"
            and self.model.settings.factor
            == (
                1,
                1,
            )
            else " (the divisor and factor are the explorer's; the file keeps its scale)"
        )
        self.say(f"saved {path}{note}; check it with: attn-tutor check {path}")

    # -- the rest ------------------------------------------------------------------------------

    failure: Exception | None = None  # a bug, raised again after the app closes

    def _handle_exception(self, error: Exception) -> None:
        """A bug in a handler: keep it for ``tutor.explore.launch``, which raises it again
        after the terminal is restored, so the command line reports it as every command does
        (a short message, exit 70) and not as a screen of traceback."""
        self.failure = error
        super()._handle_exception(error)

    def _fatal_error(self) -> None:
        self._close_messages_no_wait()

    def action_help(self) -> None:
        self.push_screen(Help())

    def action_quit_app(self) -> None:
        if self.entry_for is not None:
            return
        if self.model.edited and not self.saved and not self.quitting:
            self.quitting = True
            self.say("the edits are not saved: s saves them, q again quits")
            return
        self.exit()
