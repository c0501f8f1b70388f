"""Derivation → the answer form: one self-contained HTML page a student fills in a browser.

The page lays the worksheet out as the PDF does (the given matrices, then each step to fill as a
table with its row and column labels, a causal lesson's masked cells given, each head named on
its tables), with one ``<input>`` per cell asked, named as ``walk --cell`` names it. Its script
(``form.js``, inline) checks each entry as typed by the rules ``numbers.read_answer`` reads it
with, keeps the entries in the browser's storage and saves them as a sheet that ``grade`` reads
(``sheet.read_sheet``: JSON is YAML). Nothing is fetched: CSS and script are inline, and no
answer is in the page, only what the worksheet prints.
"""

from __future__ import annotations

import html
import json
from importlib import resources

from tutor.core.engine import Derivation, Step
from tutor.core.kinds import fill_steps
from tutor.text import format as fmt
from tutor.text import words
from tutor.text.cells import cell_name

ROUNDING = "Decimals are rounded to {places} places, half away from zero (0.125 → 0.13)."
HOW_TO_WRITE = (
    "Write a number (0.25), a fraction (3/4) or an expression such as 5/sqrt(3), 2√3 or "
    "e^0.5/(e^0.5 + e^1.5); a decimal point, not a comma. Carry one more decimal than you "
    "write down. Your entries are kept in this browser as you type."
)


def _scaled_by(lesson) -> str:  # type: ignore[no-untyped-def]
    """The formula's division, as HTML: √d_k as usual, or the lesson's own ``scale:``."""
    by = words.scaled_by(lesson)
    return " / √d<sub>k</sub>" if by == " / √d_k" else _esc(by)


def _esc(text: str) -> str:
    """Text for HTML content or a quoted attribute: ``<``, ``&`` and both quotes escaped."""
    return html.escape(words.visible(text), quote=True)


def _script_json(data: object) -> str:
    """JSON safe inside a ``<script>`` element: no ``</script>``, ``<!--`` or stray ``&``."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _asset(name: str) -> str:
    return resources.files("tutor.export").joinpath(name).read_text(encoding="utf-8")


def stem(d: Derivation) -> str:
    """What the downloaded sheet is named after: the variant's id, else the lesson's name."""
    v = d.lesson.variant
    return v.id if v is not None else d.lesson.name


def _table(d: Derivation, step: Step, places: int, ask: bool, index: int) -> list[str]:
    """A step's heading and table: labels on its rows and columns; a given matrix's numbers, or
    an input per cell asked and the mask's cells given."""
    kind = "ask" if ask else "given"
    out = [f'<section class="block"><h4 id="{kind}-{index}">{_esc(_title(d, step))}</h4>']
    if ask:
        points = fmt.plural(d.step_points(step), "point")
        out.append(f'<p class="shape">Shape: {_esc(words.shape_text(step))} · {_esc(points)}</p>')
    out += [
        '<div class="scroll">',
        f'<table class="{kind}" aria-labelledby="{kind}-{index}">',
        '<thead><tr><th scope="col"></th>',
        *(f'<th scope="col">{_esc(c)}</th>' for c in step.cols),
        "</tr></thead><tbody>",
    ]
    for i, row in enumerate(step.rows):
        cells = [f'<tr><th scope="row">{_esc(row)}</th>']
        for j, col in enumerate(step.cols):
            if not ask:
                cells.append(f"<td>{_esc(fmt.shown(step.cells[i][j], step, places))}</td>")
                continue
            filled = d.fill(step, i, j)
            if filled is not None:  # the mask's −∞ or 0: given, not asked
                shown = fmt.number(filled, places, whole=True)
                cells.append(f'<td class="mask">{_esc(shown)}</td>')
                continue
            label = f"{step.key if step.head is None else _head_word(d, step)}, row {row}, "
            label += f"column {col}"
            cells.append(
                f'<td><input data-cell="{_esc(cell_name(step, i, j))}" data-i="{i}" '
                f'data-j="{j}" aria-label="{_esc(label)}" autocomplete="off" '
                'autocapitalize="off" spellcheck="false" enterkeyhint="next"></td>'
            )
        out.append("".join(cells) + "</tr>")
    out += ["</tbody></table>", "</div>", "</section>"]
    return out


def _head_word(d: Derivation, step: Step) -> str:
    """``head 1 scores``: a per-head step as a screen reader says it."""
    return f"head {step.head} {step.name}"


def _title(d: Derivation, step: Step) -> str:
    title = words.step_title(step, d.lesson)
    if step.head is not None:
        title = f"{title} · {words.head_label(d.lesson, step.head)}"
    return f"{title} ({step.shape[0]} × {step.shape[1]})"


def _sheet_layout(d: Derivation, steps: list[Step]) -> dict[str, object]:
    """What the script needs to write the sheet: each step's key in it and its shape, and the
    mask's given cells as the blank YAML sheet writes them."""
    layout = []
    for step in steps:
        given = {
            f"{i},{j}": "-inf" if cell.masked else fmt.number(cell, 0)
            for i in range(len(step.rows))
            for j in range(len(step.cols))
            if (cell := d.fill(step, i, j)) is not None
        }
        layout.append(
            {"name": step.name, "head": step.head, "shape": list(step.shape), "given": given}
        )
    lesson = d.lesson
    v = lesson.variant
    return {
        "lesson": lesson.name,
        "fingerprint": lesson.fingerprint,
        "variant": v.id if v is not None else None,
        "student": v.student if v is not None else "",
        "student_id": v.student_id if v is not None else "",
        "heads": d.head_count if lesson.multi_head else 0,
        "stem": stem(d),
        "steps": layout,
    }


def form_page(d: Derivation) -> str:
    """The whole page for one lesson (or one variant): HTML text, self-contained."""
    lesson = d.lesson
    places = lesson.precision
    steps = fill_steps(d)
    v = lesson.variant
    who = v.student if v is not None else ""
    facts = ", ".join(words.lesson_facts(lesson))
    ident = v.id if v is not None else f"lesson {lesson.name}"
    body = [
        "<header>",
        f"<h1>{_esc(lesson.title)}: answer form</h1>",
        f'<p class="facts">{_esc(ident)} · fingerprint <code>{_esc(lesson.fingerprint)}</code>'
        f" · {_esc(facts)}.</p>",
    ]
    if lesson.description:
        body.append(f"<p>{_esc(lesson.description)}</p>")
    extra = words.extra_formulas(lesson)
    body += [f"<p>{_esc(line[:1].upper() + line[1:])}.</p>" for line in extra]
    body += [
        f'<p class="formula">Z = softmax(Q·Kᵀ{_scaled_by(lesson)}) · V</p>',
        f"<p>{_esc(ROUNDING.format(places=places))} {_esc(HOW_TO_WRITE)}</p>",
        '<div class="who">',
        f'<label>Your name <input id="student" data-field="student" value="{_esc(who)}" '
        'autocomplete="name"></label>',
        '<button type="button" data-action="download">Save answer sheet</button>',
        '<span id="saved" role="status"></span>',
        "</div>",
        "</header>",
        "<main>",
        "<h2>Inputs</h2>",
        '<div class="inputs">',
    ]
    for index, step in enumerate(s for s in d.steps if s.given):
        body += _table(d, step, places, ask=False, index=index)
    body += ["</div>", "<h2>Steps</h2>"]
    shown_head = None
    for index, step in enumerate(steps):
        if step.head is not None and step.head != shown_head:
            shown_head = step.head
            body.append(f"<h3>{_esc(words.head_label(lesson, step.head))}</h3>")
        body += _table(d, step, places, ask=True, index=index)
    body += [
        "</main>",
        '<footer><button type="button" data-action="download">Save answer sheet</button> '
        "Hand in the saved file.</footer>",
    ]
    title = f"{lesson.title}: answer form"
    return "\n".join(
        [
            "<!DOCTYPE html>",
            '<html lang="en">',
            "<head>",
            '<meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            # nothing from the network, ever: inline style and script only
            '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
            "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">",
            f"<title>{_esc(title)}</title>",
            f"<style>{_asset('form.css')}</style>",
            "</head>",
            "<body>",
            *body,
            f'<script type="application/json" id="sheet-layout">'
            f"{_script_json(_sheet_layout(d, steps))}</script>",
            f"<script>{_asset('form.js')}</script>",
            "</body>",
            "</html>",
            "",
        ]
    )
