"""Lecture mode (``walk --pause``): one step per screen, paged, with a way back.

Each step is drawn once into lines (with the console's colours), then shown a screen at a
time: the screen is cleared (on a terminal), a step taller than the terminal is split into
screens that each start with the step's heading, and a status line at the bottom says where
the reader is. Enter (or ``n``) goes on, ``b`` goes back a screen (from a step's first screen,
to the previous step's first), ``q`` stops. Steps are drawn as they are first reached, so a long
walk starts at once. The console and the line reader are given (``read(prompt)`` returns a
line, raising ``EOFError`` at the end of input), so the loop runs without a terminal in tests.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TextIO

from rich.text import Text

from tutor.text.words import visible

if TYPE_CHECKING:
    from rich.console import Console, RenderableType

    from tutor.core.engine import Step

Pages = Iterator[tuple["Step | None", list["RenderableType"]]]
# before a step is first shown (predict mode): the step, its heading line; returns what to show
# under the heading (a verdict), or None
Before = Callable[["Step", str], "Sequence[RenderableType] | None"]

MAX_LINE = 1000  # characters of a typed line that are read at once

NEXT, BACK, STOP = ("", "n", "next", " "), ("b", "back"), ("q", "quit", "exit")


def line_reader(console: Console, stream: TextIO | None) -> Callable[[str], str]:
    """``read(prompt)``: from the terminal (``stream`` None, with line editing), or a line of
    ``stream`` echoed as typed; ``EOFError`` at the end of input."""

    def read(prompt: str) -> str:
        if stream is None:  # Text: a cell's name in a prompt is not markup ("Q[cats, 1]")
            return console.input(Text(prompt, style="bold"))
        console.print(Text(prompt, style="bold"), end="")
        line = stream.readline(MAX_LINE)
        if not line:
            console.print()
            raise EOFError
        console.print(Text(visible(line.rstrip("\r\n"))))
        return line

    return read


def key_reader(stream: TextIO) -> Callable[[], str] | None:
    """``key()``: one key from a terminal as soon as it is pressed (no Enter), Enter as "";
    ``EOFError`` for Ctrl-D; Ctrl-C stays an interrupt. None where keys cannot be read one by
    one (not a terminal, or no termios): the pager reads lines then."""
    try:
        import termios
        import tty

        fd = stream.fileno()
        if not stream.isatty():
            return None
        termios.tcgetattr(fd)
    except (ImportError, OSError, ValueError, AttributeError):
        return None

    def key() -> str:
        saved = termios.tcgetattr(fd)
        try:
            tty.setcbreak(fd)  # keys at once, no echo; Ctrl-C still sends SIGINT
            got = os.read(fd, 1)
        finally:
            termios.tcsetattr(fd, termios.TCSADRAIN, saved)
        if got in (b"", b"\x04"):
            raise EOFError
        return "" if got in (b"\r", b"\n") else got.decode("latin-1")

    return key


@dataclass
class Drawn:
    """One step as lines: ``heading`` is the index of its heading line (None: no step)."""

    step: Step | None
    lines: list[str]
    heading: int | None
    offsets: list[int] = field(default_factory=list)  # the first line of each screen
    printed: int = 0  # lines already printed above the prediction, without clearing
    pending: bool = False  # a prediction to ask before the step is first shown


def draw(console: Console, parts: Sequence[RenderableType]) -> list[str]:
    """Renderables as the console would print them, one string per line."""
    with console.capture() as capture:
        for part in parts:
            console.print(part)
    return capture.get().splitlines()


def screens(lines: Sequence[str], heading: int | None, height: int) -> list[int]:
    """Where each screen of a step starts: the first shows ``height - 1`` lines, the rest
    ``height - 2`` after the repeated heading (the last line is the status line). A cut that
    would fall inside a table moves up to the table's title, so the table starts the next
    screen whole, when it fits there; a table taller than a screen is cut between two of its
    rows, never so that a border line starts a screen."""
    first = max(1, height - 1)
    rest = max(1, height - 2 if heading is not None else height - 1)
    offsets = [0]
    while (cut := offsets[-1] + (first if len(offsets) == 1 else rest)) < len(lines):
        cut = _clean_cut(lines, offsets[-1], cut, rest)
        if not any(_STYLE.sub("", line).strip() for line in lines[cut:]):
            break  # only the blank line a step ends with is left: no screen for it
        offsets.append(cut)
    return offsets


_BOX = frozenset("─━│┃╭╮╰╯┌┐└┘├┤┬┴┼┏┓┗┛┡┩┣┫┳┻╇╋")
_BORDER = frozenset("─━╭╮╰╯┌┐└┘├┤┬┴┼┏┓┗┛┡┩┣┫┳┻╇╋ ")


_STYLE = re.compile(r"\x1b\[[0-9;]*m")  # the console's colours, drawn into the lines


def _boxed(line: str) -> bool:
    """A line of a drawn table (its borders or a row between them)."""
    return any(c in _BOX for c in line)


def _clean_cut(lines: Sequence[str], start: int, cut: int, room: int) -> int:
    """The line where the next screen starts, at or before ``cut`` (and after ``start``)."""
    text = [_STYLE.sub("", line).strip() for line in lines]
    if not _boxed(text[cut]) or not (_boxed(text[cut - 1]) or text[cut - 1]):
        return cut  # between two blocks: a clean place already (not a table and its title)
    top = cut
    while top > start and _boxed(text[top - 1]):
        top -= 1
    if top > start + 1 and text[top - 1]:
        top -= 1  # the table's title goes with it, and the operator that leads into it
        if top > start + 1 and text[top - 1].endswith(("=", "·", "→")):
            top -= 1
    bottom = cut
    while bottom < len(lines) and _boxed(text[bottom]):
        bottom += 1
    if top > start and bottom - top <= room:
        return top
    while cut > start + 1 and set(text[cut]) <= _BORDER:  # a border would start the screen
        cut -= 1
    return cut


def view(drawn: Drawn, k: int, height: int) -> list[str]:
    """Screen ``k`` of a step: its lines up to the next screen's first, with the heading on
    top of every screen after the first (when the heading has scrolled away)."""
    start = drawn.offsets[k]
    end = drawn.offsets[k + 1] if k + 1 < len(drawn.offsets) else len(drawn.lines)
    if k == 0:
        return drawn.lines[: min(end, max(1, height - 1))]
    top = (
        [drawn.lines[drawn.heading]] if drawn.heading is not None and drawn.heading < start else []
    )
    return top + drawn.lines[start : min(end, start + max(1, height - 1 - len(top)))]


class Lecture:
    """The pager over the walk's pages; ``run`` returns when the reader stops or it ends."""

    def __init__(
        self,
        console: Console,
        pages: Pages,
        read: Callable[[str], str],
        clear: bool,
        before: Before | None = None,
        wait: bool = True,
        key: Callable[[], str] | None = None,
    ) -> None:
        self.console, self.pages, self.read, self.key = console, pages, read, key
        self.clear, self.before, self.wait = clear, before, wait
        self.drawn: list[Drawn] = []
        self.ended = False  # every page has been drawn

    @property
    def height(self) -> int:
        return max(6, self.console.size.height) if self.clear else 10**9

    def _more(self) -> bool:
        """Draw the next step; False when there is none."""
        if self.ended:
            return False
        got = next(self.pages, None)
        if got is None:
            self.ended = True
            return False
        step, parts = got
        before = draw(self.console, parts[:-1]) if step is not None else []
        lines = before + draw(self.console, parts[-1:])
        heading = len(before) if step is not None else None
        # a blank line some renderables end with would start a screen: the heading is the rule
        drawn = Drawn(step, lines, heading, pending=step is not None and self.before is not None)
        drawn.offsets = screens(drawn.lines, drawn.heading, self.height)
        self.drawn.append(drawn)
        return True

    def _ask(self, drawn: Drawn) -> None:
        """The prediction before a step: its heading, the question; the verdict joins the step."""
        assert self.before is not None and drawn.step is not None
        drawn.pending = False
        top = (drawn.heading or 0) + 1
        if self.clear:
            self.console.clear()
        self.console.file.write("\n".join(drawn.lines[:top]) + "\n")
        drawn.printed = 0 if self.clear else top
        extra = self.before(drawn.step, drawn.lines[top - 1])
        if extra:
            drawn.lines[top:top] = draw(self.console, extra)
            drawn.offsets = screens(drawn.lines, drawn.heading, self.height)

    def run(self) -> None:
        """Show screens until the reader stops, the input ends or the walk ends."""
        if not self._more():
            return
        s, k = 0, 0  # step, screen
        while True:
            drawn = self.drawn[s]
            if drawn.pending:
                self._ask(drawn)
            if self.clear:
                self.console.clear()
            shown = view(drawn, k, self.height)
            if drawn.printed:  # printed once already, above the prediction; the rest follows
                shown, drawn.printed = shown[drawn.printed :], 0
            self.console.file.write("\n".join(shown) + "\n")
            last_screen = k == len(drawn.offsets) - 1
            if self.wait:
                at_end = last_screen and s == len(self.drawn) - 1 and not self._peek()
                self.console.print(self._status(s, k, drawn, at_end), end="")
                self.console.file.flush()
                answer = (self.key() if self.key else self.read("")).strip().lower()
                if not self.clear or self.key:  # a key is not echoed: end its line
                    self.console.print()
            else:  # nobody to wait for (input from a pipe): straight on
                answer = ""
            if answer in STOP:
                return
            if answer in BACK:
                if k > 0:
                    k -= 1
                elif s > 0:
                    s, k = s - 1, 0
                continue
            if answer not in NEXT:
                continue  # anything else: the same screen again, with its keys
            if not last_screen:
                k += 1
            elif s + 1 < len(self.drawn) or self._more():
                s, k = s + 1, 0
            else:
                return

    def _peek(self) -> bool:
        """Is there a step after the ones drawn? (Draws it: the walk is lazy.)"""
        return not self.ended and self._more()

    def _status(self, s: int, k: int, drawn: Drawn, at_end: bool) -> Text:
        name = drawn.step.key if drawn.step is not None else "the lesson"
        part = f" ({k + 1}/{len(drawn.offsets)})" if len(drawn.offsets) > 1 else ""
        go = "Enter: end" if at_end else "Enter: next"
        back = " · b: back" if s or k else ""
        return Text(f"── {name}{part} · {go}{back} · q: stop ──", style="dim")
