"""Feedback a student can read: one graded sheet as Markdown or a light HTML page (their score
per step, every cell they lost with the working from their own inputs, the cells marked right by
follow-through, each named slip in one sentence), and as one short line for a gradebook.

Pure: a ``Report`` in, text out (``tutor.cli`` writes the files). Integrity flags are for the
instructor and are left out; a flagged sheet's feedback only says that the instructor reviews it
before its grade counts (``REVIEW``), and never "Every cell right".
"""

from __future__ import annotations

import html
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path

from tutor.assess import grade as gr
from tutor.assess.classreport import said_of
from tutor.assess.marked import Marked
from tutor.assess.report import lost_working
from tutor.assess.slips import REMINDERS
from tutor.text.words import visible

LOST = ("wrong", "blank")
LINE_CELLS = 4  # cells named in the one-line feedback; the rest are counted
REVIEW = "Your instructor will review this sheet before its grade counts."
NOTHING = "Nothing was handed in: every cell of this sheet is blank."


@dataclass(frozen=True)
class LostCell:
    """A cell that earned nothing: what was written, the true value, the working shown."""

    name: str
    written: str  # "" when left blank
    expected: str
    own: str  # what the student's own earlier answers give, "" when they are not used
    working: str  # from the student's own inputs where they carry, else from the true ones
    slip: str  # what the slip(s) that explain it say, "" when none


@dataclass(frozen=True)
class Feedback:
    """One student's feedback, as data the two formats draw."""

    student: str
    student_id: str
    lesson: str
    sheet: str
    points: str
    out_of: int
    percent: float
    steps: tuple[tuple[str, int, int, int, str, int], ...]  # step, right, of, carried, pts, worth
    lost: tuple[LostCell, ...]
    followed: tuple[str, ...]  # cells right by follow-through
    slips: tuple[tuple[str, str], ...]  # (slip id, one sentence)
    review: str = ""  # REVIEW for a flagged sheet: its score is not yet the student's
    nothing: str = ""  # NOTHING for a blank sheet, whose lost cells (the key) are left out


def slip_sentence(slip: str) -> str:
    """``You did not divide by √d_k; divide each score by √d_k.``"""
    what = said_of(slip)
    right = REMINDERS.get(slip, ("", ""))[1]
    return f"You {what}" + (f"; {right}." if right else ".")


def blank_sheet(r: gr.Report | Marked) -> bool:
    """Every cell of the sheet left blank: nothing was handed in."""
    return bool(r.cells) and all(g.verdict == "blank" for g in r.cells)


def feedback(r: gr.Report, key: bool = False) -> Feedback:
    """The sheet's feedback as data. A blank sheet's says that nothing was handed in, and
    gives the true values and their working (the answer key) only when ``key`` asks."""
    places = r.d.lesson.precision
    nothing = blank_sheet(r)
    h = r.sheet.header
    steps = tuple(
        (step.key, sum(g.points for g in cells), len(cells),
         sum(g.verdict == "follow-through" for g in cells), gr.points_text(earned), worth)
        for (step, cells), (_, earned, worth) in zip(r.steps(), r.points_by_step(), strict=True)
    )  # fmt: skip
    lost = []
    working = lost_working(r, places)
    for g in r.cells:
        if g.verdict not in LOST or (nothing and not key):
            continue
        shown, work = working(g)
        lost.append(
            LostCell(
                g.name,
                visible(g.entry.text or "") if g.verdict == "wrong" else "",
                gr.expected_text(g, places),
                shown or "",
                work,
                g.entry.note or "; or ".join(s.message for s in g.slips),
            )
        )
    named = sorted({g.slip.name for g in r.cells if g.slip is not None})
    return Feedback(
        r.sheet.student,
        h.student_id if h else "",
        r.d.lesson.title or r.d.lesson.name,
        Path(r.sheet.path).name,
        gr.points_text(r.points),
        r.out_of,
        gr.percent(r),
        steps,
        tuple(lost),
        tuple(g.name for g in r.cells if g.verdict == "follow-through"),
        tuple((s, slip_sentence(s)) for s in named),
        REVIEW if r.flags else "",
        NOTHING if nothing else "",
    )


def feedback_line(r: Marked) -> str:
    """One short line for a gradebook's feedback column: the cells lost, the slips named."""
    lost = [g.name for g in r.cells if g.verdict in LOST]
    if r.flags:  # a sheet that may not be the student's own: no praise, no cells
        return REVIEW
    if blank_sheet(r):
        return NOTHING
    if not lost:
        return "Every cell right."
    shown = ", ".join(lost[:LINE_CELLS]) + (
        f" and {len(lost) - LINE_CELLS} more" if len(lost) > LINE_CELLS else ""
    )
    line = f"Lost {len(lost)} of {len(r.cells)} cells: {shown}."
    named = sorted({g.slip.name for g in r.cells if g.slip is not None})
    if named:
        line += " Slips: " + "; ".join(said_of(s) for s in named) + "."
    return visible(line)


def file_stems(reports: list[Marked]) -> list[str]:
    """A file name (without suffix) per sheet, after its student: ``ann-lee``, ``zoe-muller``
    (transliterated to ASCII letters and digits), else the id, else the sheet's name; two
    students of one name get their ids (or a number) added."""
    stems = [_slug(r.sheet.student) or _slug(_sid(r)) or _slug(Path(r.sheet.path).stem) or "sheet"
             for r in reports]  # fmt: skip
    out: list[str] = []
    for k, (stem, r) in enumerate(zip(stems, reports, strict=True)):
        if stems.count(stem) > 1:
            stem = f"{stem}-{_slug(_sid(r)) or k + 1}"
        while stem in out:
            stem += f"-{k + 1}"
        out.append(stem)
    return out


def _sid(r: Marked) -> str:
    return r.sheet.header.student_id if r.sheet.header else ""


def _slug(text: str) -> str:
    """``Zoë Müller-O'Neil`` → ``zoe-muller-o-neil``; letters outside Latin drop out."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-")[:60]


# ---------------------------------------------------------------------------------------------
# Markdown and HTML


def _md(text: str) -> str:
    out = visible(text)
    for ch in "\\`*_[]|<>#":
        out = out.replace(ch, "\\" + ch)
    return out


def _title(f: Feedback) -> str:
    return f"{f.lesson}: feedback for {f.student or f.student_id or f.sheet}"


def markdown(f: Feedback) -> str:
    """The feedback as Markdown."""
    lines = [
        f"# {_md(_title(f))}",
        "",
        f"Sheet {_md(f.sheet)}" + (f", id {_md(f.student_id)}" if f.student_id else "") + ".",
        "",
        f"**Score: {f.points}/{f.out_of} ({f.percent:g}%)**",
        "",
        *([f.review, ""] if f.review else []),
        "## Score per step",
        "",
        "| Step | Cells right | Of which follow-through | Points |",
        "|---|---:|---:|---:|",
    ]
    lines += [f"| {_md(s)} | {right}/{of} | {carried or ''} | {pts}/{worth} |"
              for s, right, of, carried, pts, worth in f.steps]  # fmt: skip
    lines += ["", "## Cells to look at again", ""]
    if f.nothing:
        lines += [f.nothing, ""]
    elif not f.lost:
        lines.append("None: every cell earned its point.")
    for c in f.lost:
        said = f"you wrote {_md(c.written)}" if c.written else "left blank"
        lines += [f"### {_md(c.name)}", "", f"- {said}; the true value is {_md(c.expected)}"]
        if c.own:
            lines.append(f"- from your own earlier answers it would be {_md(c.own)}")
        if c.slip:
            lines.append(f"- {_md(c.slip)}")
        lines += ["", "```", visible(c.working, keep="\n"), "```", ""]
    lines += ["## Follow-through" if not lines[-1] else "\n## Follow-through", ""]
    if f.followed:
        lines.append(
            "These cells are wrong for the lesson's numbers but right from your own earlier "
            "answers, so they earned their point (↪): "
            + ", ".join(_md(c) for c in f.followed)
            + "."
        )
    else:
        lines.append("No cell needed follow-through.")
    if f.slips:
        lines += ["", "## Slips named", ""]
        lines += [f"- **{_md(s)}**: {_md(text)}" for s, text in f.slips]
    return "\n".join(lines).rstrip() + "\n"


def _h(text: str) -> str:
    return html.escape(visible(text))


def html_page(f: Feedback) -> str:
    """The feedback as one self-contained light HTML page."""
    from tutor.assess.class_view import MUTED, page_css

    css = (
        page_css("50rem")
        + f"""
th:first-child, td:first-child {{ text-align: left; }}
pre {{ background: #f4f4f4; padding: 0.5rem 0.8rem; overflow-x: auto; }}
.muted {{ color: {MUTED}; }}
"""
    )
    parts = [
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{_h(_title(f))}</title>",
        f"<style>{css}</style></head><body>",
        f"<h1>{_h(_title(f))}</h1>",
        f'<p class="muted">Sheet {_h(f.sheet)}'
        + (f", id {_h(f.student_id)}" if f.student_id else "")
        + "</p>",
        f"<p><strong>Score: {f.points}/{f.out_of} ({f.percent:g}%)</strong></p>",
        *([f"<p>{_h(f.review)}</p>"] if f.review else []),
        "<h2>Score per step</h2>",
        "<table><tr><th>Step</th><th>Cells right</th><th>Of which follow-through</th>"
        "<th>Points</th></tr>",
    ]
    parts += [
        f"<tr><td>{_h(s)}</td><td>{right}/{of}</td><td>{carried or ''}</td>"
        f"<td>{pts}/{worth}</td></tr>"
        for s, right, of, carried, pts, worth in f.steps
    ]
    parts += ["</table>", "<h2>Cells to look at again</h2>"]
    if f.nothing:
        parts.append(f"<p>{_h(f.nothing)}</p>")
    elif not f.lost:
        parts.append("<p>None: every cell earned its point.</p>")
    for c in f.lost:
        said = f"you wrote <strong>{_h(c.written)}</strong>" if c.written else "left blank"
        parts += [f"<h3>{_h(c.name)}</h3>", "<ul>",
                  f"<li>{said}; the true value is {_h(c.expected)}</li>"]  # fmt: skip
        if c.own:
            parts.append(f"<li>from your own earlier answers it would be {_h(c.own)}</li>")
        if c.slip:
            parts.append(f"<li>{_h(c.slip)}</li>")
        parts += ["</ul>", f"<pre>{html.escape(visible(c.working, keep=chr(10)))}</pre>"]
    parts.append("<h2>Follow-through</h2>")
    if f.followed:
        parts.append(
            "<p>These cells are wrong for the lesson's numbers but right from your own earlier "
            "answers, so they earned their point (↪): "
            + ", ".join(_h(c) for c in f.followed) + ".</p>"
        )  # fmt: skip
    else:
        parts.append("<p>No cell needed follow-through.</p>")
    if f.slips:
        parts.append("<h2>Slips named</h2><ul>")
        parts += [f"<li><strong>{_h(s)}</strong>: {_h(text)}</li>" for s, text in f.slips]
        parts.append("</ul>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"
