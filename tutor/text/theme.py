"""The one set of colours, chosen to read on a light and on a dark background alike.

A terminal may have a white or a black background, and an exported page may be shown either
way (the HTML follows the reader's ``prefers-color-scheme``). So every colour used for text
here has a WCAG contrast ratio of at least 4.5 against white *and* against black: its relative
luminance sits in the narrow band 0.175–0.183. That rules out yellow, bright white and bright
black as text, and the sixteen standard terminal colours altogether (their RGB is whatever the
terminal's theme says), so every colour is given as RGB.

The heatmap of weights draws a background instead; its text is black or white, whichever
contrasts more with that shade (always at least 4.58, as √21 is).

Pure data and arithmetic: no Rich objects, so any layer may import it.
"""

from __future__ import annotations

from collections.abc import Sequence

# one colour per family of matrix: Q, K and V keep their colour wherever they appear, and so do
# the W that makes each and the rows the decoding step adds; which step is of which family is
# said once, in tutor.text.steps (``COLOURS`` there)
PALETTE = {
    "tokens": "#827700",  # X, E, P, X_src: olive, the yellow family, dark enough for a white page
    "query": "#5f5fff",
    "key": "#00875f",
    "value": "#875fd7",
    "scores": "#00828e",  # scores, scaled, masked
    "weights": "#bd5800",
    "blend": "#d700af",  # Z and concat
    "output": "#af5f5f",  # W_O and output
}
PLAIN = "#767676"  # a step without a colour of its own; also the grey of notes in exports

# what a message means, wherever it is said (quiz, report, check, errors)
GOOD = "#00875f"
BAD = "#e61a2b"
WARN = "#bd5800"  # hints, slips, warnings: where yellow used to be
ACCENT = "#00828e"  # a question's cell name, a follow-through mark

# the heatmap: nine shades from light to dark orange (ColorBrewer "Oranges"), evenly spaced in
# lightness so that neighbours stay distinguishable; in a 256-colour terminal they become nine
# different colours too
HEAT = (
    "#fff5eb",
    "#fee6ce",
    "#fdd0a2",
    "#fdae6b",
    "#fd8d3c",
    "#f16913",
    "#d94801",
    "#a63603",
    "#7f2704",
)
BLACK, WHITE = "#000000", "#ffffff"

# the exported page: light by default, dark when the reader's system prefers it
PAGE_LIGHT = ("#ffffff", "#1f2328")  # background, text
PAGE_DARK = ("#000000", "#e6edf3")  # black: the colours have no margin to spare
HIGHLIGHT_EXPORT = ("#ffffff", "#4d5561")  # text, background of a reversed cell on either page

TEXT_COLOURS = (*PALETTE.values(), PLAIN, GOOD, BAD, WARN, ACCENT)


def rgb(hex_colour: str) -> tuple[int, int, int]:
    """``#rrggbb`` → (r, g, b)."""
    h = hex_colour.lstrip("#")
    return int(h[0:2], 16), int(h[2:4], 16), int(h[4:6], 16)


def luminance(colour: tuple[int, int, int]) -> float:
    """WCAG 2 relative luminance of an sRGB colour."""

    def channel(c: int) -> float:
        s = c / 255
        return s / 12.92 if s <= 0.04045 else ((s + 0.055) / 1.055) ** 2.4

    r, g, b = (channel(c) for c in colour)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a: tuple[int, int, int], b: tuple[int, int, int]) -> float:
    """WCAG 2 contrast ratio, 1 (none) to 21 (black on white)."""
    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def text_on(background: str) -> str:
    """Black or white, whichever reads better on ``background``."""
    bg = rgb(background)
    return BLACK if contrast(bg, rgb(BLACK)) >= contrast(bg, rgb(WHITE)) else WHITE


def heat_shade(value: float, low: float, high: float) -> str:
    """The shade of ``value`` on a table whose weights run from ``low`` to ``high``: the range
    is spread over all nine shades, so a table of weights between 0.1 and 0.4 uses them all."""
    if high <= low:
        return HEAT[len(HEAT) // 2]
    t = (value - low) / (high - low)
    return HEAT[max(0, min(len(HEAT) - 1, round(t * (len(HEAT) - 1))))]


def heat_pair(value: float, low: float, high: float) -> tuple[str, str]:
    """A weight's (background, text) on the heatmap: its shade (``heat_shade``) and the text
    that reads on it. The walk, the exports and the explorer all draw weights this way."""
    shade = heat_shade(value, low, high)
    return shade, text_on(shade)


def row_maxima(values: Sequence[float | None]) -> set[int]:
    """The columns holding a row's largest value (None: masked), or none when the row is flat:
    a uniform row has nothing to point at."""
    shown = [v for v in values if v is not None]
    if not shown or max(shown) - min(shown) <= 1e-12:
        return set()
    top = max(shown)
    return {j for j, v in enumerate(values) if v is not None and top - v <= 1e-12}
