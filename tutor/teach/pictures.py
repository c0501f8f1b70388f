"""The walk as pictures: the whole walk, or one slide per step, as SVG or HTML.

Rich records what the terminal would show and exports it. Two things the terminal resolves by
itself need settling on a page: ``dim`` and ``reverse`` without colours (a terminal dims or
swaps its own foreground and background; an export would blend them into a faint grey, or in
HTML drop the highlight altogether). ``OnPage`` gives those cells fixed colours that read on a
light and on a dark page (``tutor.text.theme``). The page itself is light; the HTML turns dark
when the reader's system prefers it, which every colour used allows.
"""

from __future__ import annotations

import html
import io
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from rich.color import Color
from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.segment import Segment
from rich.style import Style
from rich.terminal_theme import TerminalTheme

from tutor.core.engine import Derivation, Step
from tutor.teach.walk import WalkOptions, step_section, walk
from tutor.text import theme, words

KINDS = ("svg", "html")

# the sixteen terminal colours are never used (theme.py); should one slip in, it still reads
_NORMAL = [
    (0x1F, 0x23, 0x28), (0xB3, 0x1D, 0x28), (0x11, 0x63, 0x29), (0x7D, 0x4E, 0x00),
    (0x09, 0x59, 0xD0), (0x82, 0x50, 0xDF), (0x1B, 0x7C, 0x83), (0x4D, 0x55, 0x61),
]  # fmt: skip
LIGHT_PAGE = TerminalTheme(
    theme.rgb(theme.PAGE_LIGHT[0]), theme.rgb(theme.PAGE_LIGHT[1]), _NORMAL, _NORMAL
)
DARK_CSS = (
    "@media (prefers-color-scheme: dark) {{ body {{ color: {fg}; background-color: {bg}; }} }}"
)


class OnPage:
    """A renderable drawn as on the terminal, with ``dim`` and colourless ``reverse`` given
    fixed colours that read on either page."""

    def __init__(self, renderable: RenderableType, trim: bool = False) -> None:
        self.renderable = renderable
        self.trim = trim  # drop blank lines at the end: a slide ends where its content does

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        lines = console.render_lines(self.renderable, options, pad=False)
        while self.trim and lines and not "".join(s.text for s in lines[-1]).strip():
            lines.pop()
        for line in lines:
            for segment in line:
                yield Segment(segment.text, page_style(segment.style), segment.control)
            yield Segment.line()


def page_style(style: Style | None) -> Style | None:
    """``style`` with what the terminal would decide made explicit for a page: ``dim`` becomes
    a grey, a colourless ``reverse`` a fixed dark band, and the terminal's default colour is
    left to the page (which may be light or dark)."""
    if style is None:
        return None
    colour, background = style.color, style.bgcolor
    if not (style.dim or style.reverse or _default(colour) or _default(background)):
        return style
    colour = None if _default(colour) else colour
    background = None if _default(background) else background
    if style.reverse:
        text, back = theme.HIGHLIGHT_EXPORT
        colour, background = (background or Color.parse(text)), (colour or Color.parse(back))
    if style.dim and colour is None:
        colour = Color.parse(theme.PLAIN)
    return Style(
        color=colour,
        bgcolor=background,
        bold=style.bold,
        italic=style.italic,
        underline=style.underline,
        strike=style.strike,
        link=style.link,
    )


def _default(colour: Color | None) -> bool:
    return colour is not None and colour.is_default


@dataclass(frozen=True)
class Picture:
    """One exported picture: the file name it would have, and its text."""

    name: str
    text: str


def walk_document(d: Derivation, kind: str, width: int = 100) -> str:
    """The whole walk as the terminal shows it, colours included, as one SVG or HTML page."""
    title = f"attn-tutor walk {words.visible(d.lesson.name)}"  # a file name: no control characters
    return document(walk(d, WalkOptions(width=width)), kind, title, d.lesson.title, width)


def slides(
    d: Derivation, kind: str, names: Sequence[str] | None = None, width: int = 100
) -> list[Picture]:
    """One picture per step (each head's step its own), in the walk's order, each as tall as
    its step: ``NN-name.svg``, ``NN-name-head2.svg``. ``names``: only these steps."""
    out = []
    for n, step in enumerate(d.steps, start=1):  # numbered in the walk's order, whatever is chosen
        if names is not None and step.name not in names:
            continue
        label = slide_label(d, step)
        title = f"attn-tutor walk {words.visible(d.lesson.name)} {label}"
        section = step_section(d, step, WalkOptions(width=width))
        text = document([section], kind, title, d.lesson.title, width, trim=True)
        out.append(Picture(f"{n:02d}-{label}.{kind}", text))
    return out


def slide_label(d: Derivation, step: Step) -> str:
    """A step's name, with its head in a lesson of several heads."""
    return f"{step.name}-head{step.head}" if d.lesson.multi_head and step.head else step.name


def document(
    parts: Iterable[RenderableType],
    kind: str,
    title: str,
    lesson_title: str,
    width: int,
    trim: bool = False,
) -> str:
    console = Console(
        record=True,
        width=width,
        file=io.StringIO(),  # recorded, not shown
        force_jupyter=False,  # in a kernel Rich would display each print (issue 40)
        force_terminal=True,
        color_system="truecolor",
        highlight=False,
        emoji=False,
        soft_wrap=False,
    )
    for part in parts:
        console.print(OnPage(part, trim=trim))
    if kind == "svg":
        return console.export_svg(title=title, theme=LIGHT_PAGE)
    page = console.export_html(inline_styles=True, theme=LIGHT_PAGE)
    bg, fg = theme.PAGE_DARK
    extra = "\n".join(
        [
            f"<title>{html.escape(f'{lesson_title}: {title}')}</title>",
            '<meta name="color-scheme" content="light dark">',
        ]
    )
    # rich's page has no <title>; the lesson's title names the browser tab
    charset = '<meta charset="UTF-8">'
    page = page.replace(charset, f"{charset}\n{extra}", 1)
    return page.replace("</style>", DARK_CSS.format(fg=fg, bg=bg) + "\n</style>", 1)
