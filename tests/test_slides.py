"""Slides and pages (issue 14.2, 14.3): ``export --format svg|html --step NAME`` / ``--per-step``
write one picture per step, each as tall as its step, on a page that reads light or dark."""

from __future__ import annotations

import html as html_lib
import re
from pathlib import Path

import pytest

from tutor.text import theme

CATS_STEPS = ["X", "W_Q", "W_K", "W_V", "Q", "K", "V", "scores", "scaled", "weights", "Z"]
LINE = 24.4  # rich's SVG: 20 px characters at 1.22 line height


def _svg_height(svg: str) -> float:
    found = re.search(r'viewBox="0 0 ([0-9.]+) ([0-9.]+)"', svg)
    assert found, svg[:200]
    return float(found.group(2))


def _html_lines(page: str) -> int:
    code = re.search(r"<code[^>]*>(.*)</code>", page, re.S)
    assert code
    return len(code.group(1).rstrip("\n").split("\n"))


def _plain(page: str) -> str:
    return html_lib.unescape(re.sub(r"<[^>]+>", "", page))


def test_per_step_writes_one_svg_per_step_named_after_it(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "slides"
    result = run("export", "cats-chase-mice", "--format", "svg", "--per-step", "-o", str(out))
    assert result.exit_code == 0, result.stderr
    names = sorted(p.name for p in out.iterdir())
    assert names == [f"{n:02d}-{s}.svg" for n, s in enumerate(CATS_STEPS, start=1)]
    assert result.stdout.splitlines() == [str(out / name) for name in names]


def test_each_slide_is_as_tall_as_its_step(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """SVG height = a fixed frame + one line height per line of the step (counted in the HTML
    slide of the same step), and far below the whole walk's."""
    for fmt in ("svg", "html"):
        result = run("export", "the-cake", "-f", fmt, "--per-step", "-o", str(tmp_path / fmt))
        assert result.exit_code == 0, result.stderr
    whole = _svg_height(run("export", "the-cake", "-f", "svg").stdout)
    frames = set()
    heights = []
    for svg_path in sorted((tmp_path / "svg").iterdir()):
        svg = svg_path.read_text()
        lines = _html_lines(
            (tmp_path / "html" / svg_path.name.replace(".svg", ".html")).read_text()
        )
        height = _svg_height(svg)
        frames.add(round(height - LINE * lines, 3))
        heights.append(height)
    assert len(frames) == 1, frames  # the same frame around every slide: height follows lines
    assert max(heights) < whole / 3
    assert min(heights) < max(heights) / 2  # X is a small slide, weights a big one


def test_step_is_repeatable_and_each_head_gets_its_own_slide(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    args = ["export", "the-cake-two-heads", "-f", "html", "-o", str(tmp_path)]
    result = run(*args, "--step", "weights", "--step", "concat")
    assert result.exit_code == 0, result.stderr
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["10-weights-head1.html", "20-weights-head2.html", "22-concat.html"]
    page = (tmp_path / "20-weights-head2.html").read_text()
    text = _plain(page)
    assert "head 2: weights = softmax of each row" in text
    assert "head 1:" not in text and "Z = weights · V" not in text  # just its own step
    assert "<title>" in page and "weights-head2</title>" in page


def test_a_slide_holds_its_step_and_ends_where_it_does(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    result = run("export", "cats-chase-mice", "-f", "html", "-s", "Z", "-o", "-")
    assert result.exit_code == 0, result.stderr
    text = _plain(result.stdout)
    code = text[text.index("Z = weights · V") :]
    assert code.splitlines()[0].startswith("Z = weights · V ─")
    assert "[0.49, 1.67]" in code
    assert "Cats chase mice" not in code  # the lesson's header panel is the whole walk's
    assert not code.rstrip(" \n").endswith("\n")  # no blank line closes a slide


def test_unknown_step_is_a_usage_error_listing_the_steps(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    result = run("export", "cats-chase-mice", "-f", "svg", "--step", "wieghts", "-o", str(tmp_path))
    assert result.exit_code == 2
    assert "unknown step 'wieghts'" in result.stderr
    assert ", ".join(CATS_STEPS) in result.stderr
    result = run("export", "cats-chase-mice", "-f", "svg", "--step", "concat", "-o", str(tmp_path))
    assert result.exit_code == 2
    assert "no 'concat' step" in result.stderr and ", ".join(CATS_STEPS) in result.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("fmt", ["md", "tex", "sheet"])
def test_slides_are_svg_or_html(run, fmt: str) -> None:  # type: ignore[no-untyped-def]
    result = run("export", "cats-chase-mice", "-f", fmt, "--per-step")
    assert result.exit_code == 2
    assert f"svg or html, not {fmt}" in result.stderr


def test_slides_never_overwrite_without_force(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    args = ["export", "cats-chase-mice", "-f", "svg", "--step", "X,Q", "-o", str(tmp_path)]
    assert run(*args).exit_code == 0
    (tmp_path / "05-Q.svg").write_text("mine")
    (tmp_path / "01-X.svg").unlink()
    result = run(*args)
    assert result.exit_code == 1
    assert "05-Q.svg already exists; use --force" in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["05-Q.svg"]  # nothing written
    assert run(*args, "--force").exit_code == 0
    assert (tmp_path / "05-Q.svg").read_text().startswith("<svg")


def test_one_slide_to_stdout_but_not_many(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    one = run("export", "cats-chase-mice", "-f", "svg", "--step", "X", "-o", "-")
    assert one.exit_code == 0 and one.stdout.lstrip().startswith("<svg")
    many = run("export", "cats-chase-mice", "-f", "svg", "--per-step", "-o", "-")
    assert many.exit_code == 2
    assert "takes one picture, not 11" in many.stderr


def test_one_slide_to_a_file_named_like_it(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    target = tmp_path / "weights.svg"
    args = ["export", "cats-chase-mice", "-f", "svg", "--step", "weights", "-o", str(target)]
    assert run(*args).exit_code == 0
    assert target.read_text().lstrip().startswith("<svg") and "softmax" in target.read_text()
    assert run(*args).exit_code == 1  # there now: --force to replace it
    many = run("export", "cats-chase-mice", "-f", "svg", "--per-step", "-o", str(target))
    assert many.exit_code == 2 and "takes one picture, not 11" in many.stderr
    a_file = tmp_path / "notes.txt"
    a_file.write_text("x")
    result = run("export", "cats-chase-mice", "-f", "svg", "--per-step", "-o", str(a_file))
    assert result.exit_code == 1 and "is a file" in result.stderr


# ------------------------------------------------------------------------------------------
# the page


def _contrast(a: str, b: str) -> float:
    return theme.contrast(theme.rgb(a), theme.rgb(b))


@pytest.mark.parametrize("lesson", ["cats-chase-mice", "the-cake-causal", "the-cake-two-heads"])
def test_every_colour_on_the_html_page_reads_light_and_dark(run, lesson: str) -> None:  # type: ignore[no-untyped-def]
    page = run("export", lesson, "--format", "html").stdout
    light_bg, light_fg = theme.PAGE_LIGHT
    dark_bg, dark_fg = theme.PAGE_DARK
    assert f"color: {light_fg};\n    background-color: {light_bg};" in page
    assert "@media (prefers-color-scheme: dark)" in page
    assert f"color: {dark_fg}; background-color: {dark_bg};" in page
    spans = re.findall(r'<span style="([^"]*)"', page)
    assert len(spans) > 50
    checked = 0
    for css in spans:
        fg = re.search(r"(?:^|; )color: (#[0-9a-f]{6})", css)
        bg = re.search(r"background-color: (#[0-9a-f]{6})", css)
        if bg:  # its own background: text and background make the pair
            assert fg, css
            assert _contrast(fg.group(1), bg.group(1)) >= 4.5, css
        elif fg:  # on the page, which may be light or dark
            assert _contrast(fg.group(1), light_bg) >= 4.5, css
            assert _contrast(fg.group(1), dark_bg) >= 4.5, css
        checked += 1
    assert checked == len(spans)


def test_the_svg_is_a_light_page_with_readable_text(run) -> None:  # type: ignore[no-untyped-def]
    svg = run("export", "the-cake", "--format", "svg").stdout
    backgrounds = set(re.findall(r'<rect fill="(#[0-9a-f]{6})"', svg))
    assert theme.PAGE_LIGHT[0] in backgrounds  # the page
    heat = {shade for shade in theme.HEAT if shade in backgrounds}
    assert len(heat) >= 8  # the-cake's weights use (nearly) every shade
    on_shades = {theme.text_on(shade) for shade in heat}
    for fill in set(re.findall(r"fill: (#[0-9a-f]{6})", svg)):
        if fill in on_shades:  # black or white on a heat shade: checked in test_theme
            continue
        assert _contrast(fill, theme.PAGE_LIGHT[0]) >= 4.5, fill


def test_highlighted_cells_keep_their_highlight_on_the_page(run) -> None:  # type: ignore[no-untyped-def]
    """A terminal reverses its own colours; the page draws the worked row as a dark band."""
    page = run("export", "cats-chase-mice", "-f", "html", "--step", "Q", "-o", "-").stdout
    text, back = theme.HIGHLIGHT_EXPORT
    assert f"color: {text}" in page and f"background-color: {back}" in page
