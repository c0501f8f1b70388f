"""One theme for light and dark backgrounds, and a heatmap that shows the point (issue 14.2, 14.6).

Every colour that draws text — in the terminal (resolved to RGB the way Rich resolves it) and in
the exported pages — must have a WCAG contrast ratio of at least 4.5 against white *and* against
black, or against the background it is drawn on. The sixteen standard terminal colours are
refused outright: their RGB is whatever the user's terminal theme says (xterm's yellow is
faint on white), so no palette can vouch for them.

Regenerate the golden with:  UPDATE_GOLDEN=1 python -m pytest tests/test_theme.py
"""

from __future__ import annotations

import ast
import io
import re
from pathlib import Path

import pytest
from rich.color import Color, ColorType
from rich.console import Console
from rich.style import Style

from tests.conftest import ROOT, bundled_lessons
from tests.test_walk import check_golden
from tutor.assess import class_view
from tutor.core.engine import derive
from tutor.core.lessonfile import load_lesson
from tutor.teach.walk import WalkOptions, walk
from tutor.text import theme

WHITE, BLACK = (255, 255, 255), (0, 0, 0)
TEXT = 4.5  # WCAG AA for normal text


def rgb_of(colour: Color) -> tuple[int, int, int]:
    """A Rich colour as RGB; a standard (0–15) colour is refused, see the module docstring."""
    assert colour.type is not ColorType.STANDARD and not (
        colour.type is ColorType.EIGHT_BIT and colour.number is not None and colour.number < 16
    ), f"{colour.name}: a standard terminal colour, its RGB depends on the terminal's theme"
    return tuple(colour.get_truecolor())  # type: ignore[return-value]


def readable_everywhere(colour: tuple[int, int, int]) -> tuple[float, float]:
    return theme.contrast(colour, WHITE), theme.contrast(colour, BLACK)


@pytest.mark.parametrize("colour", sorted(set(theme.TEXT_COLOURS)))
def test_every_text_colour_reads_on_white_and_on_black(colour: str) -> None:
    on_white, on_black = readable_everywhere(theme.rgb(colour))
    assert on_white >= TEXT and on_black >= TEXT, (colour, on_white, on_black)


def test_every_heat_shade_has_readable_text() -> None:
    for shade in theme.HEAT:
        text = theme.text_on(shade)
        assert theme.contrast(theme.rgb(text), theme.rgb(shade)) >= TEXT, shade


def test_the_pages_and_the_export_highlight_read() -> None:
    for background, text in (theme.PAGE_LIGHT, theme.PAGE_DARK):
        assert theme.contrast(theme.rgb(background), theme.rgb(text)) >= 7
        for colour in theme.TEXT_COLOURS:  # the HTML page may be either
            assert theme.contrast(theme.rgb(colour), theme.rgb(background)) >= TEXT
    text, back = theme.HIGHLIGHT_EXPORT
    assert theme.contrast(theme.rgb(text), theme.rgb(back)) >= TEXT


def _style_strings() -> list[tuple[str, int, str]]:
    """Every string constant in the package that Rich reads as a style naming a colour."""
    found = []
    for path in sorted((ROOT / "tutor").rglob("*.py")):
        if "explore" in path.parts:  # a Textual app paints its own background: its colours are
            continue  # pairs against the app's theme, seen in tests/test_explore_snapshots.py
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                text = node.value.strip()
                if not text or len(text) > 40:
                    continue
                try:
                    style = Style.parse(text)
                except Exception:  # prose, not a style
                    continue
                if style.color is not None or style.bgcolor is not None:
                    found.append((str(path.relative_to(ROOT)), node.lineno, text))
    return found


# colours drawn as a pair (a background and the text on it), checked as pairs above
PAIRED = {*theme.HEAT, theme.BLACK, theme.WHITE, *theme.PAGE_LIGHT, *theme.PAGE_DARK}
PAIRED |= set(theme.HIGHLIGHT_EXPORT)
# the class report's page and heatmap: always drawn as (text, background) pairs on its own light
# page, and those pairs are checked by tests/test_classroom.py (CONTRAST_PAIRS)
PAIRED |= {c for pair in class_view.CONTRAST_PAIRS for c in pair} | {class_view.RULE}


def test_no_style_in_the_code_names_a_colour_that_fades() -> None:
    strings = _style_strings()
    assert any(text == theme.PALETTE["tokens"] for _, _, text in strings)  # the scan sees it
    for where, line, text in strings:
        if text in PAIRED:
            continue
        style = Style.parse(text)
        for colour in (style.color, style.bgcolor):
            if colour is None or colour.is_default:
                continue
            on_white, on_black = readable_everywhere(rgb_of(colour))
            assert min(on_white, on_black) >= TEXT, f"{where}:{line}: {text!r}"


def _walk_segments(lesson: Path, width: int = 100):  # type: ignore[no-untyped-def]
    console = Console(
        width=width, file=io.StringIO(), force_terminal=True, color_system="truecolor"
    )
    d = derive(load_lesson(lesson))
    for part in walk(d, WalkOptions(width=width)):
        yield from console.render(part)


@pytest.mark.parametrize("lesson", bundled_lessons(), ids=lambda p: p.stem)
def test_every_colour_the_walk_draws_reads_on_both_backgrounds(lesson: Path) -> None:
    """All of it: headings, tables, borders, heatmap cells and their text."""
    seen = 0
    for segment in _walk_segments(lesson):
        style = segment.style
        if style is None or not segment.text.strip():
            continue
        fg, bg = style.color, style.bgcolor
        if bg is not None and not bg.is_default:
            assert fg is not None, f"{segment.text!r}: a background with the terminal's text"
            ratio = theme.contrast(rgb_of(fg), rgb_of(bg))
            assert ratio >= TEXT, (segment.text, fg, bg, ratio)
            seen += 1
        elif fg is not None and not fg.is_default:
            on_white, on_black = readable_everywhere(rgb_of(fg))
            assert min(on_white, on_black) >= TEXT, (segment.text, fg.name)
            seen += 1
    assert seen > 50


def _shades(lesson: str) -> dict[str, set[str]]:
    """The weights table's cell text → the shades it is drawn on."""
    shades: dict[str, set[str]] = {}
    for segment in _walk_segments(ROOT / "lessons" / f"{lesson}.yaml"):
        style = segment.style
        if style is not None and style.bgcolor is not None:
            shades.setdefault(segment.text.strip(), set()).add(style.bgcolor.get_truecolor().hex)
    return shades


@pytest.mark.parametrize(
    ("lesson", "values"),
    [("cats-chase-mice", ["0.16", "0.25", "0.33", "0.50", "0.67"]), ("the-cake", ["0.14", "0.23"])],
)
def test_the_heatmap_gives_these_weights_different_shades(lesson: str, values: list[str]) -> None:
    shades = _shades(lesson)
    for k, a in enumerate(values):
        assert len(shades[a]) == 1, (a, shades[a])
        for b in values[k + 1 :]:
            assert shades[a].isdisjoint(shades[b]), (a, b, shades[a])


def test_the_heat_shades_stay_apart_in_a_256_colour_terminal() -> None:
    from rich.color import ColorSystem

    numbers = [Color.parse(c).downgrade(ColorSystem.EIGHT_BIT).number for c in theme.HEAT]
    assert len(set(numbers)) == len(theme.HEAT)
    lightness = [theme.luminance(theme.rgb(c)) for c in theme.HEAT]
    assert lightness == sorted(lightness, reverse=True)  # light to dark, in order


def test_the_heatmap_spreads_over_the_tables_range() -> None:
    assert theme.heat_shade(0.1, 0.1, 0.4) == theme.HEAT[0]
    assert theme.heat_shade(0.4, 0.1, 0.4) == theme.HEAT[-1]
    steps = {theme.heat_shade(0.1 + 0.3 * k / 8, 0.1, 0.4) for k in range(9)}
    assert len(steps) == len(theme.HEAT) >= 8


def _no_colour_weights(lesson: str) -> str:
    """The weights step as a terminal under NO_COLOR shows it: attributes, no colours."""
    console = Console(
        width=100,
        file=io.StringIO(),
        force_terminal=True,
        color_system="standard",
        no_color=True,
        legacy_windows=False,
    )
    d = derive(load_lesson(ROOT / "lessons" / f"{lesson}.yaml"))
    for part in walk(d, WalkOptions(steps=["weights"], width=100)):
        console.print(part)
    return console.file.getvalue()  # type: ignore[attr-defined]


def test_row_maximum_is_marked_without_colour_golden() -> None:
    out = _no_colour_weights("cats-chase-mice")
    assert "\x1b[38" not in out and "\x1b[48" not in out  # no colours at all
    check_golden("walk-weights-no-colour.ansi", out)


def test_row_maximum_is_marked_in_every_row_that_has_one() -> None:
    out = _no_colour_weights("the-cake")
    marked = re.findall(r"\x1b\[1;(?:3;)?4m +([0-9.]+) \x1b\[0m", out)
    # it → cake (0.23) is its row's largest weight, and shows it
    assert "0.23" in marked
    # rows of the weights table (8 tokens), each with a single largest weight or a tie
    table = out[out.index("weights (8 × 8)") :].split("softmax of")[0]
    rows = [line for line in table.splitlines() if line.startswith("│")][1:]
    assert len(rows) == 8
    for line in rows:
        assert re.search(r"\x1b\[1;(3;)?4m", line), line
