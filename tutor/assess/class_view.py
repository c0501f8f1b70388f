"""A class's grades and summary, drawn: Rich renderables for the terminal (returned, never
printed), and the summary as Markdown or as an HTML page for a course site.

Every share is written as a percentage as well as coloured, so the tables read the same under
``NO_COLOR``. The HTML page is light; its text colours reach a WCAG contrast of at least 4.5
on every background used (``CONTRAST_PAIRS``, checked by a test).
"""

from __future__ import annotations

import html

from rich.columns import Columns
from rich.console import RenderableType
from rich.style import Style
from rich.table import Table
from rich.text import Text

from tutor.assess import grade as gr
from tutor.assess.classgrade import ClassGrades
from tutor.assess.classreport import CellShare, ClassSummary, StepShare
from tutor.assess.items import index_text, percent_text
from tutor.assess.marked import Marked
from tutor.text import theme
from tutor.text.words import visible

# a share's band: (lowest share, background, its name); text on them is INK
BANDS = (
    (0.9, "#c8ecc9", "most got it"),
    (0.7, "#e6f2b6", "many"),
    (0.5, "#fbe9a7", "about half"),
    (0.0, "#f7c6c1", "few"),
)
INK = "#1b1b1b"
PAGE, MUTED, RULE = "#ffffff", "#4a4a4a", "#d0d0d0"
# (text, background) pairs the page uses, for the contrast test
CONTRAST_PAIRS = ((INK, PAGE), (MUTED, PAGE), *((INK, bg) for _, bg, _ in BANDS))


def _flag_word(r: Marked) -> str:
    return ", ".join(FLAG_WORDS.get(f.kind, f.kind) for f in r.flags)


FLAG_WORDS = {
    "not-their-variant": "not their variant",
    "identical": "identical",
    "other-variant": "other numbers",
    "not-their-sheet": "not their sheet",
}


def band(share: float) -> tuple[str, str]:
    """The background colour and the words for a share."""
    return next((bg, words) for low, bg, words in BANDS if share >= low)


def pct(share: float) -> str:
    return f"{round(100 * share)}%"


GIVEN = "—"  # a cell the mask fills in: asked of no one, in no share


def cell_pct(c: CellShare) -> str:
    return pct(c.share) if c.asked else GIVEN


# ---------------------------------------------------------------------------------------------
# terminal


def class_table(grades: ClassGrades) -> list[RenderableType]:
    """One row per graded sheet (points, out of, percent), then the sheets set aside."""
    out: list[RenderableType] = []
    table = Table(title="Class", title_justify="left", show_edge=False)
    for col, just in (("Student", "left"), ("ID", "left"), ("Sheet", "left"), ("Points", "right"),
                      ("Out of", "right"), ("%", "right"), ("Flags", "left")):  # fmt: skip
        table.add_column(col, justify=just)  # type: ignore[arg-type]
    for r in grades.graded:
        h = r.sheet.header
        handed = grades.handed.get(r.sheet.path)  # its name in the platform's download
        table.add_row(
            Text(visible(r.sheet.student or "—")),
            Text(visible(h.student_id if h else "")),
            Text(visible(handed.member if handed else r.sheet.path)),
            gr.points_text(r.points),
            str(r.out_of),
            f"{gr.percent(r):g}",
            Text(visible(_flag_word(r)), style=f"bold {theme.BAD}"),
        )
    out.append(table)
    flagged = [r for r in grades.graded if r.flags]
    if flagged:
        out.append(Text(f"\nFlagged sheets ({len(flagged)}): scores unchanged, for you to look at",
                        style="bold"))  # fmt: skip
        for r in flagged:
            for f in r.flags:
                out.append(Text(visible(f"{r.sheet.path}: {f.message}")))
    if grades.bad:
        out.append(Text(f"\nSheets not graded ({len(grades.bad)})", style=f"bold {theme.BAD}"))
        for b in grades.bad:
            out.append(Text(visible(b.reason, keep="\n")))
    return out


def _heat(step: StepShare) -> Table:
    table = Table(
        title=f"{step.step}: {pct(step.share)} of cells right",
        title_justify="left",
        show_edge=False,
    )
    table.add_column("")
    for col in step.cols:
        table.add_column(Text(visible(col)), justify="right")
    for row, cells in zip(step.rows, step.cells, strict=True):
        table.add_row(
            Text(visible(row), style="bold"),
            *(
                Text(f" {pct(c.share)} ", style=Style(color=INK, bgcolor=band(c.share)[0]))
                if c.asked
                else Text(f" {GIVEN} ", style="dim")
                for c in cells
            ),
        )
    return table


def summary_view(s: ClassSummary) -> list[RenderableType]:
    """The class report for the terminal: steps, slips, hardest cells, a heatmap per step."""
    out: list[RenderableType] = [
        Text(
            f"Class report: {visible(s.lesson)}, {s.sheets} sheets, mean {s.mean_percent:g}%",
            style="bold",
        ),
    ]
    steps = Table(title="Steps", title_justify="left", show_edge=False)
    for col in ("Step", "Cells right", "Points"):
        steps.add_column(col, justify="left" if col == "Step" else "right")
    for st in s.steps:
        steps.add_row(
            st.step,
            f"{st.got}/{st.of} ({pct(st.share)})",
            f"{st.points:.4g}/{st.worth}",
        )
    out.append(steps)
    if s.held:
        out.append(Text(f"Grades held ({len(s.held)}), left blank in the gradebook", style="bold"))
        out += [Text(visible(f"{who}: {why}")) for who, why in s.held]
    out.append(_slips_table(s))
    if s.items:
        out += [_items_table(s), Text(ITEMS_NOTE, style="dim")]
    if s.hardest:
        hard = Table(title="Cells most often wrong", title_justify="left", show_edge=False)
        for col in ("Cell", "Right", "Wrong", "Blank"):
            hard.add_column(col, justify="left" if col == "Cell" else "right")
        for c in s.hardest:
            hard.add_row(
                Text(visible(c.name)), f"{c.got} of {c.of}", str(c.wrong),
                str(c.of - c.got - c.wrong),
            )  # fmt: skip
        out.append(hard)
    out.append(Text("Share who got each cell's point", style="bold"))
    out.append(Columns([_heat(st) for st in s.steps], padding=(1, 3)))
    spaced: list[RenderableType] = []
    for part in out:  # a blank line between the parts
        spaced += [part, Text("")]
    return spaced[:-1]


def _slips_table(s: ClassSummary) -> RenderableType:
    if not s.slips:
        return Text("No named slips.")
    t = Table(title="Named slips", title_justify="left", show_edge=False)
    for col in ("Students", "Slip", "Cells", "Perhaps", "Who"):
        t.add_column(col, justify="left" if col in ("Slip", "Who") else "right")
    for sl in s.slips:
        t.add_row(
            f"{sl.students} of {s.sheets}",
            f"{sl.description} ({sl.id})",
            str(sl.cells),
            str(sl.perhaps or ""),
            Text(visible("; ".join(sl.who))),
        )
    return t


def _items_table(s: ClassSummary) -> RenderableType:
    """Item analysis: each step and named slip, its share right and discrimination; the
    reading under it."""
    t = Table(title="Item analysis", title_justify="left", show_edge=False,
              caption=visible(s.reading), caption_justify="left")  # fmt: skip
    notes = any(i.discrimination is None for i in s.items)
    for col in ("Item", "Students", "Right", "Discrimination", *(("Why —",) if notes else ())):
        t.add_column(col, justify="left" if col in ("Item", "Why —") else "right")
    for i in s.items:
        name = i.name if i.kind == "step" else f"slip: {i.name}"
        t.add_row(Text(visible(name)), str(i.students), percent_text(i.right), index_text(i),
                  *((i.why,) if notes else ()))  # fmt: skip
    return t


ITEMS_NOTE = (
    "Right: a step's points earned of its points possible; a slip's share of sheets that avoided "
    "it. Discrimination: the point-biserial of the item's score against the rest of the total "
    "(the total less that step), from −1 to 1; 0.3 and above separates strong from weak sheets "
    "well, near 0 or below not at all. — : undefined, with why."
)


def perhaps_text(n: int) -> str:
    """The students whose answer another slip explains as well: counted apart."""
    if not n:
        return ""
    who = "1 more student" if n == 1 else f"{n} more students"
    return f"; perhaps {who}, whose answer another slip explains as well"


# ---------------------------------------------------------------------------------------------
# Markdown and HTML


def _md(text: str) -> str:
    out = visible(text)
    for ch in "\\`*_[]|<>#":
        out = out.replace(ch, "\\" + ch)
    return out


def markdown(s: ClassSummary) -> str:
    """The class report as Markdown (GitHub tables; shares as percentages)."""
    lines = [
        f"# Class report: {_md(s.lesson)}",
        "",
        f"{s.sheets} sheets graded; mean score {s.mean_percent:g}%.",
        "",
        "## Steps",
        "",
        "| Step | Cells right | Points |",
        "|---|---:|---:|",
    ]
    lines += [
        f"| {_md(st.step)} | {st.got}/{st.of} ({pct(st.share)}) | {st.points:.4g}/{st.worth} |"
        for st in s.steps
    ]
    lines += ["", "## Students", "", "| Student | ID | Sheet | Points | % | Flags | Slips named |",
              "|---|---|---|---:|---:|---|---|"]  # fmt: skip
    lines += [
        f"| {_md(st.student or '—')} | {_md(st.student_id)} | {_md(st.sheet)} | "
        f"{st.points}/{st.out_of} | {st.percent:g} | {_md('; '.join(st.flags))} | "
        f"{_md(', '.join(st.slips))} |"
        for st in s.students
    ]
    if s.set_aside:
        lines += ["", f"## Sheets not graded ({len(s.set_aside)})", ""]
        lines += [f"- {_md(path)}: {_md(' '.join(reason.split()))}" for path, reason in s.set_aside]
    if s.held:
        lines += ["", f"## Grades held ({len(s.held)}), left blank in the gradebook", ""]
        lines += [f"- {_md(who)}: {_md(why)}" for who, why in s.held]
    lines += ["", "## Named slips", ""]
    if s.slips:
        lines += [
            f"- {sl.students} of {s.sheets} {_md(sl.description)} (`{sl.id}`, "
            f"{sl.cells} cells{perhaps_text(sl.perhaps)})"
            + (f": {_md('; '.join(sl.who))}" if sl.who else "")
            for sl in s.slips
        ]
    else:
        lines.append("No named slips.")
    if s.items:
        lines += ["", "## Item analysis", "", _md(s.reading), "",
                  "| Item | Students | Right | Discrimination | Why undefined |",
                  "|---|---:|---:|---:|---|"]  # fmt: skip
        lines += [
            f"| {_md(i.name if i.kind == 'step' else 'slip: ' + i.name)} | {i.students} | "
            f"{percent_text(i.right)} | {index_text(i)} | {_md(i.why)} |"
            for i in s.items
        ]
        lines += ["", _md(ITEMS_NOTE)]
    lines += ["", "## Cells most often wrong", ""]
    lines += [f"- {_md(c.name)}: {c.got} of {c.of} right, {c.wrong} wrong" for c in s.hardest]
    if not s.hardest:
        lines.append("Every cell was right on every sheet.")
    lines += ["", "## Share who got each cell's point", ""]
    for st in s.steps:
        lines += [f"### {_md(st.step)}", ""]
        lines.append("| | " + " | ".join(_md(c) for c in st.cols) + " |")
        lines.append("|---|" + "---:|" * len(st.cols))
        for row, cells in zip(st.rows, st.cells, strict=True):
            lines.append(f"| **{_md(row)}** | " + " | ".join(cell_pct(c) for c in cells) + " |")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def _h(text: str) -> str:
    return html.escape(visible(text))


def page_css(width: str) -> str:
    """The light page of the class report and a student's feedback: text, tables, rules."""
    return f"""
body {{ font-family: system-ui, sans-serif; color: {INK}; background: {PAGE};
       max-width: {width}; margin: 2rem auto; padding: 0 1rem; line-height: 1.45; }}
table {{ border-collapse: collapse; margin: 0.5rem 0 1.5rem; }}
th, td {{ border: 1px solid {RULE}; padding: 0.25rem 0.6rem; text-align: right; }}"""


def html_page(s: ClassSummary) -> str:
    """The class report as one self-contained, light HTML page."""
    css = (
        page_css("60rem")
        + f"""
th:first-child, td.l, th.l {{ text-align: left; }}
.heat {{ display: flex; flex-wrap: wrap; gap: 0 2.5rem; }}
caption {{ text-align: left; font-weight: 600; padding-bottom: 0.3rem; }}
.muted {{ color: {MUTED}; }}
.legend span {{ display: inline-block; padding: 0.1rem 0.5rem; margin-right: 0.3rem; }}
.wide {{ overflow-x: auto; }}
"""
    )
    parts = [
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>Class report: {_h(s.lesson)}</title>",
        f"<style>{css}</style></head><body>",
        f"<h1>Class report: {_h(s.lesson)}</h1>",
        f'<p class="muted">{s.sheets} sheets graded; mean score {s.mean_percent:g}%.</p>',
        "<h2>Steps</h2>",
        "<table><tr><th>Step</th><th>Cells right</th><th>Points</th></tr>",
    ]
    for st in s.steps:
        bg = band(st.share)[0]
        parts.append(
            f'<tr><td class="l">{_h(st.step)}</td><td style="background:{bg}">'
            f"{st.got}/{st.of} ({pct(st.share)})</td><td>{st.points:.4g}/{st.worth}</td></tr>"
        )
    parts += [
        "</table>",
        "<h2>Students</h2>",
        '<div class="wide"><table><tr><th class=l>Student</th><th class=l>ID</th>'
        "<th class=l>Sheet</th><th>Points"
        "</th><th>%</th><th class=l>Flags</th><th class=l>Slips named</th></tr>",
    ]
    parts += [
        f'<tr><td class="l">{_h(st.student or "—")}</td><td class="l">{_h(st.student_id)}</td>'
        f'<td class="l">{_h(st.sheet)}</td><td>{st.points}/{st.out_of}</td>'
        f'<td>{st.percent:g}</td><td class="l">{_h("; ".join(st.flags))}</td>'
        f'<td class="l">{_h(", ".join(st.slips))}</td></tr>'
        for st in s.students
    ]
    parts.append("</table></div>")  # scrolls on its own on a phone
    if s.set_aside:
        parts.append(f"<h2>Sheets not graded ({len(s.set_aside)})</h2><ul>")
        parts += [f"<li>{_h(path)}: {_h(reason)}</li>" for path, reason in s.set_aside]
        parts.append("</ul>")
    if s.held:
        parts.append(f"<h2>Grades held ({len(s.held)}), left blank in the gradebook</h2><ul>")
        parts += [f"<li>{_h(who)}: {_h(why)}</li>" for who, why in s.held]
        parts.append("</ul>")
    parts.append("<h2>Named slips</h2>")
    if s.slips:
        parts.append(
            "<table><tr><th>Students</th><th class=l>Slip</th><th>Cells</th><th>Perhaps</th>"
            "<th class=l>Who</th></tr>"
        )
        parts += [
            f'<tr><td>{sl.students} of {s.sheets}</td><td class="l">{_h(sl.description)} '
            f"<code>{_h(sl.id)}</code></td><td>{sl.cells}</td><td>{sl.perhaps or ''}</td>"
            f'<td class="l">{_h("; ".join(sl.who))}</td></tr>'
            for sl in s.slips
        ]
        parts.append("</table>")
    else:
        parts.append("<p>No named slips.</p>")
    if s.items:
        why = any(i.discrimination is None for i in s.items)  # the column only when needed
        parts += [
            "<h2>Item analysis</h2>",
            f"<p><strong>{_h(s.reading)}</strong></p>",
            '<div class="wide"><table><tr><th class=l>Item</th><th>Students</th><th>Right</th>'
            "<th>Discrimination</th>" + ("<th class=l>Why —</th>" if why else "") + "</tr>",
        ]
        parts += [
            f'<tr><td class="l">{_h(i.name if i.kind == "step" else "slip: " + i.name)}</td>'
            f"<td>{i.students}</td><td>{percent_text(i.right)}</td><td>{index_text(i)}</td>"
            + (f'<td class="l muted">{_h(i.why)}</td>' if why else "")
            + "</tr>"
            for i in s.items
        ]
        parts += ["</table></div>", f'<p class="muted">{_h(ITEMS_NOTE)}</p>']
    parts.append("<h2>Cells most often wrong</h2>")
    if s.hardest:
        parts.append("<table><tr><th>Cell</th><th>Right</th><th>Wrong</th></tr>")
        parts += [
            f'<tr><td class="l">{_h(c.name)}</td><td>{c.got} of {c.of}</td><td>{c.wrong}</td></tr>'
            for c in s.hardest
        ]
        parts.append("</table>")
    else:
        parts.append("<p>Every cell was right on every sheet.</p>")
    parts.append("<h2>Share who got each cell's point</h2>")
    parts.append(
        '<p class="legend">'
        + "".join(
            f'<span style="background:{bg}">{_h(words)} '
            f"({f'≥ {round(low * 100)}%' if low else 'under 50%'})</span>"
            for low, bg, words in BANDS
        )
        + '</p><div class="heat">'
    )
    for st in s.steps:
        parts.append(f"<table><caption>{_h(st.step)}</caption><tr><th></th>")
        parts += [f"<th>{_h(c)}</th>" for c in st.cols]
        parts.append("</tr>")
        for row, cells in zip(st.rows, st.cells, strict=True):
            parts.append(f'<tr><th class="l">{_h(row)}</th>')
            parts += [
                f'<td style="background:{band(c.share)[0]}" title="{c.got} of {c.of}">'
                f"{pct(c.share)}</td>"
                if c.asked
                else f'<td class="muted" title="given by the mask">{GIVEN}</td>'
                for c in cells
            ]
            parts.append("</tr>")
        parts.append("</table>")
    parts.append("</div></body></html>")
    return "\n".join(parts) + "\n"
