"""Derivation → worksheets and answer keys as typst source, and as PDF through typst.

typst (the ``typst`` package on PyPI, the optional extra ``pdf``; ``core.install`` words the
command that installs it) is a compiler in a wheel with its fonts bundled, so a PDF needs no TeX.
The source is built here as text: every string from a lesson (title, tokens, head names, a
student's name) reaches typst as a string literal (``lit``), never as markup, so ``#import``,
``$`` or ``]`` in a token prints as typed. Numbers become text only through
``tutor.text.format``, and a cell's working only through ``tutor.text.working``; this module adds
typst spelling and the page layout.

A worksheet has a name/ID line, the lesson's fingerprint, points per step and answer boxes
sized for handwriting; an answer key has each step's table, every cell's worked line (long sums
elided as in the other keys) and, for a softmax, each row's e^x values and total, so a student
can find where their own working went astray.
"""

from __future__ import annotations

import functools
import itertools
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from tutor.core.engine import Concat, Derivation, Given, Softmax, Step
from tutor.core.errors import TutorError, UsageError
from tutor.core.exact_size import too_long
from tutor.core.install import install_command
from tutor.core.lesson import Lesson
from tutor.export.worksheet import (
    KEY_TERMS,
    MASK_NOTE,
    fill_steps,
    given_cells,
    input_steps,
    mask_note,
    shape_text,
)
from tutor.text import format as fmt
from tutor.text import words
from tutor.text import working as wk

PAPERS = {"a4": "a4", "letter": "us-letter"}  # --paper → typst's name
BOX_WIDTH_CM = 2.0  # an answer box: room for "−0.123" written by hand
BOX_HEIGHT_CM = 1.0
BOXES_CM = 15.0  # at most this much of the line for boxes; more columns share it (1fr each)


@dataclass(frozen=True)
class Sheet:
    """One student's (or the class's) document: a derived lesson and who it is for."""

    d: Derivation
    student: str | None = None  # printed on the name line; blank when None
    variant: str | None = None  # ``variant-07``, for a class's sheets


def check_paper(paper: str) -> str:
    """``a4`` or ``letter`` (any case) → typst's paper name; a ``UsageError`` otherwise."""
    key = paper.strip().lower()
    if key not in PAPERS:
        raise UsageError(f"--paper {paper!r}: expected a4 or letter")
    return PAPERS[key]


# ---------------------------------------------------------------------------------------------
# spelling for typst


_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def lit(text: str) -> str:
    """``text`` as a typst string literal: printed as typed, never read as markup or code."""
    out = []
    for ch in unicodedata.normalize("NFC", text):
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif unicodedata.category(ch) in ("Cc", "Cs"):
            out.append(f"\\u{{{ord(ch):x}}}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def txt(text: str) -> str:
    """``text`` placed in markup: an embedded string, ended by ``;`` so nothing after it joins."""
    return f"#{lit(text)};"


_PLAIN_NUMBER = re.compile(r"-?\d+(\.\d+)?")


def num(text: str) -> str:
    """A number as ``format`` shows it, in typst math."""
    t = text.replace(fmt.MINUS, "-")
    if _PLAIN_NUMBER.fullmatch(t):
        return t
    if t in ("∞", "-∞"):
        return t.replace("∞", "infinity")
    return lit(text)  # a decimal comma or anything else: as text


_EXACT = re.compile(r"[0-9 +\-−/()√e^·.]+")


def exact_math(text: str) -> str:
    """A short exact form from ``format`` (``3√2/2``, ``-3√15/7``, ``1/(2 + e^√2)``) in typst
    math; as text when it holds anything else (a √ in a string would lose its bar)."""
    if not _EXACT.fullmatch(text):
        return lit(text)
    t = re.sub(r"√(\d+)", r"sqrt(\1)", text.replace("−", "-").replace("·", " dot "))
    return t.replace("/", " \\/ ")


def _factor(text: str) -> str:
    t = num(text)
    return f"({t})" if t.startswith("-") else t


def step_math(step: Step) -> str:
    """A step's name in math: ``Q``, ``W_Q``, ``"scores"``, with ``^((2))`` for head 2."""
    if step.name.startswith("W_"):
        name = f"W_{step.name[2:]}"
    elif len(step.name) == 1:
        name = step.name
    else:
        name = f'"{step.name}"'
    return name + (f"^(({step.head}))" if step.head else "")


def _label(label: str) -> str:
    return label if label.isascii() and label.isdigit() else lit(label)


def cell_math(step: Step, i: int, j: int) -> str:
    return f"{step_math(step)}_({_label(step.rows[i])}, {_label(step.cols[j])})"


def math(node: wk.Node) -> str:
    """A piece of working in typst math (the same pieces ``working.plain`` writes)."""
    match node:
        case wk.Prod(a, b):
            return f"{_factor(a.text)} dot {_factor(b.text)}"
        case wk.Num(text):
            return num(text)
        case wk.Sum(terms):
            return " + ".join(math(t) for t in terms)
        case wk.Exp(x):
            return f"e^({num(x.text)})"
        case wk.Gap(more):
            return lit(f"({fmt.plural(more, 'more term')})")
        case wk.Name(step, i, j):
            return cell_math(step, i, j)
        case wk.Etc():
            return "..."
        case wk.Root(n):
            return f"sqrt({n})"
        case wk.Div(top, bottom):
            return f"{math(top)} \\/ {math(bottom)}"
        case wk.Frac(top, bottom):
            return f"({math(top)}) / ({math(bottom)})"
    raise TypeError(node)


def _short_exact(w: wk.Working) -> str | None:
    """The exact form a key shows before ``≈`` (a score over √d_k), when it is short."""
    if w.rel == "≈" and w.exact_is_short and too_long(w.step, w.i, w.j) is None:
        return w.exact()
    return None


def working_text(step: Step, i: int, j: int, places: int) -> tuple[str, int]:
    """One cell's worked line as plain text (``scores[t0, t1] = 3.06·5.89 + … ≈ −172.03``),
    the cell named as ``explain`` reads it, and its length in characters. A long key sets its
    working so: typst lays out a line of math about five times slower than a line of text."""
    w = wk.working(step, i, j, places, terms=KEY_TERMS)
    exact = _short_exact(w)
    if exact is not None:  # format writes its exact forms with "-"; the line's numbers "−"
        result = f"= {exact.replace('-', fmt.MINUS)} ≈ {w.shown}"
    else:
        result = f"{w.rel} {w.shown}"
    line = f"{w.name} " + (f"= {w.numbers} " if w.work else "") + result
    if w.aside and not w.work:
        line += f" ({w.aside})"
    if w.hand_text is not None:
        line += f" (the rounded inputs give {w.hand_text})"
    return txt(line), len(line)


def working_line(step: Step, i: int, j: int, places: int) -> tuple[str, int]:
    """One cell's worked line as markup, and its length in plain characters (for the layout)."""
    w = wk.working(step, i, j, places, terms=KEY_TERMS)
    stages = [math(s) for s in w.work]
    rel = "=" if w.rel == "=" else "approx"
    result = f"{rel} {num(w.shown)}"
    exact = _short_exact(w)
    if exact is not None:
        result = f"= {exact_math(exact)} approx {num(w.shown)}"
    line = f"${cell_math(step, i, j)} " + "".join(f"= {s} " for s in stages) + result + "$"
    if w.aside and not stages:
        line += " " + txt(f"({w.aside})")
    if w.hand_text is not None:
        line += " #text(size: 0.85em)[" + txt(f"(the rounded inputs give {w.hand_text})") + "]"
    # the width it takes, in characters of body text: the cell's labels are set small
    name = len(step.name) + 0.6 * (len(step.rows[i]) + len(step.cols[j]) + 2)
    length = round(name + len(w.numbers) + len(w.shown) + len(exact or "") + 5)
    length += 26 if w.hand_text is not None else 0
    return line, length


# ---------------------------------------------------------------------------------------------
# pieces of the page


def _box_width(columns: int, width_cm: float) -> float:
    """A column's width: ``width_cm``, or less when the columns would not fit across."""
    return min(width_cm, BOXES_CM / columns)


CHAR_CM = 0.18  # a character of a table's numbers at 10 pt (Libertinus' digits, 0.5 em)
WRITE_CM = 1.25  # the narrowest box a number can be written in by hand


def _per_band(texts: list[str], columns: int, blank: bool) -> int:
    """How many columns share the line: all of them, unless squeezing them across would make a
    column narrower than its longest number (33 scores of −1402.66 in 0.45 cm ran into each
    other) or a box too narrow to write in; then as many as fit at that width."""
    need = WRITE_CM if blank else CHAR_CM * max(map(len, texts), default=1) + 0.4
    return columns if BOXES_CM / columns >= need else max(1, int(BOXES_CM // need))


def table(
    step: Step,
    places: int,
    blank: bool = False,
    width_cm: float = BOX_WIDTH_CM,
    given: list[list[str | None]] | None = None,
) -> str:
    """A step as a table with its row and column labels on it; blank boxes on a worksheet,
    but for the cells ``given`` fills in (grey: given, not asked). A table wider than the line
    allows (``_per_band``) is set as several, a band of its columns each, one under another."""
    if blank:
        written: list[str] = []
        cells = [
            [f"text(fill: luma(130), {lit(g)})" if g else "[]" for g in given[i]]
            if given else ["[]"] * len(row)
            for i, row in enumerate(step.cells)
        ]  # fmt: skip
    else:
        shown = [[fmt.shown(c, step, places) for c in row] for row in step.cells]
        written = [t for row in shown for t in row]
        cells = [[lit(t) for t in row] for row in shown]
    n = len(step.cols)
    per = _per_band(written, n, blank)
    bands = -(-n // per)  # as even as they can be: 32 columns in 12s are 11, 11 and 10
    cuts = [round(k * n / bands) for k in range(bands + 1)]
    return "\n".join(
        _table(step, cells, range(lo, hi), width_cm, blank) for lo, hi in itertools.pairwise(cuts)
    )


def _table(step: Step, cells: list[list[str]], band: range, width_cm: float, blank: bool) -> str:
    width = _box_width(len(band), width_cm)
    size = "1em" if width >= 1.25 else "0.75em"  # narrow: labels fit
    header = ", ".join(
        ["[]", *(f'text(weight: "bold", size: {size}, {lit(step.cols[j])})' for j in band)]
    )
    rows = [
        ", ".join([f'text(weight: "bold", {lit(step.rows[i])})', *(row[j] for j in band)])
        for i, row in enumerate(cells)
    ]
    height = f"{BOX_HEIGHT_CM}cm" if blank else "auto"
    track = f"{width:.2f}cm"
    return (
        f"#table(columns: (auto, {', '.join([track] * len(band))}), rows: (auto, {height}), "
        "align: (x, y) => if x == 0 { left + horizon } else { right + horizon }, "
        "stroke: 0.5pt + luma(90), inset: (x: 5pt, y: 4pt),\n"
        f"  table.header({header}),\n  " + ",\n  ".join(rows) + ",\n)"
    )


INPUT_BOX_CM = 1.3
LINE_CM = 17.5


def _inputs(steps: list[Step], places: int, lesson: Lesson) -> list[str]:
    """The given matrices, side by side as many as fit across the page."""
    out: list[str] = []
    row: list[str] = []
    used = 0.0
    for step in steps:
        width = 2.2 + INPUT_BOX_CM * len(step.cols) + max(len(r) for r in step.rows) * 0.15
        if row and used + width > LINE_CM:
            out.append(_side_by_side(row))
            row, used = [], 0.0
        shown = table(step, places, width_cm=INPUT_BOX_CM)
        row.append(f"block(breakable: false)[{_heading(step, 3, lesson)}\n{shown}]")
        used += width + 0.6
    if row:
        out.append(_side_by_side(row))
    return out


def _side_by_side(blocks: list[str]) -> str:
    return f"#grid(columns: {len(blocks)}, column-gutter: 0.6cm, " + ", ".join(blocks) + ")"


def _step_title(step: Step, lesson: Lesson) -> str:
    title = words.step_title(step, lesson)
    if step.head is not None and step.given:
        title = f"{title} (head {step.head})"
    return f"{title} ({step.shape[0]} × {step.shape[1]})"


def _heading(step: Step, level: int, lesson: Lesson, points: int | None = None) -> str:
    head = f"heading(level: {level}, {lit(_step_title(step, lesson))})"
    if points is None:
        return "#" + head
    n = points
    return (
        f"#grid(columns: (1fr, auto), align: (left, right + bottom), {head}, "
        f"text(size: 0.9em, {lit(fmt.plural(n, 'point'))}))"
    )


BAND_KEYS = 7  # a softmax of more keys than fit across is set in bands of 7 (1.6 cm each)


def _softmax_rows(step: Step, places: int) -> tuple[list[str], list[str]]:
    """Each row of a softmax as x, e^x and share per key, with the row's total, and the notes
    that explain what rounded numbers do not (from ``working.softmax_row``). A row of more
    keys than fit across (at 1.6 cm a column: 33 keys had 0.4 cm and their numbers ran into
    each other) is set in bands of ``BAND_KEYS``, each under its keys' names."""
    (scores,) = step.args
    n_keys = len(step.cols)
    banded = n_keys > 10  # up to 10 share the line (1fr, 1.2 cm or more)
    keys = BAND_KEYS if banded else n_keys
    track = "1.6cm" if keys * 1.6 <= BOXES_CM - 3 else "1fr"
    names = [f'text(weight: "bold", {lit(c)})' for c in step.cols]
    out = [
        f"#table(columns: (auto, auto, {', '.join([track] * keys)}, auto), "
        "align: (x, y) => if x < 2 { left } else { right }, stroke: 0.4pt + luma(140), "
        "inset: (x: 4pt, y: 2.5pt),",
    ]
    if not banded:
        out.append("  table.header(" + ", ".join(["[]", "[]", *names, "[*total*]"]) + "),")
    bands = [range(k, min(k + keys, n_keys)) for k in range(0, n_keys, keys)]
    notes: list[str] = []
    for i in range(len(step.rows)):
        row = wk.softmax_row(step, i, places)
        seen = [k for k, c in enumerate(scores.cells[i]) if not c.masked]
        by_key: dict[int, tuple[str, str]] = {
            k: (line[1], line[2]) for k, line in zip(seen, row.rows, strict=True)
        }
        xs, es, shares = [], [], []
        for k in range(n_keys):
            if k in by_key:
                xs.append(lit(by_key[k][0]))
                es.append(lit(by_key[k][1]))
            else:
                xs.append(lit(fmt.NEG_INF_TEXT))
                es.append('"0"')
            shares.append(lit(fmt.shown(step.cells[i][k], step, places)))
        power = "$e^x$" if row.power == "x" else "$e^(x - m)$"
        span = 4 * len(bands) if banded else 3
        label = (
            f"table.cell(rowspan: {span}, align: horizon, "
            f'text(weight: "bold", {lit(step.rows[i])}))'
        )
        for b, band in enumerate(bands):
            pad = ["[]"] * (keys - len(band))
            last = b == len(bands) - 1
            first = f"  {label}, " if b == 0 else "  "
            if banded:
                total = "[*total*]" if last else "[]"
                out.append(first + ", ".join(["[]", *(names[k] for k in band), *pad, total]) + ",")
                first = "  "
            out.append(first + ", ".join(["[$x$]", *(xs[k] for k in band), *pad, "[]"]) + ",")
            total = lit(row.total) if last else "[]"
            out.append("  " + ", ".join([f"[{power}]", *(es[k] for k in band), *pad, total]) + ",")
            out.append("  " + ", ".join(["[share]", *(shares[k] for k in band), *pad, "[]"]) + ",")
        # the first note (the shares add up to 1) and the masked keys' are in the table itself
        notes += [
            f"{step.rows[i]}: {note}"
            for note in row.notes[1:]
            if not note.startswith("Masked keys")
        ]
    out.append(")")
    if not notes:
        return out, []
    return out, ["#text(size: 0.85em)[", *(f"- {txt(note)}" for note in notes), "]"]


def _working(step: Step, places: int, plain: bool) -> list[str]:
    """Every cell's worked line, in as many columns as the longest line allows: in math, or
    as plain text (``plain``, a long key) in the math's own font."""
    line_of = working_text if plain else working_line
    lines = [line_of(step, i, j, places) for i in range(len(step.rows))
             for j in range(len(step.cols))]  # fmt: skip
    longest = max(length for _, length in lines)
    n = 4 if longest <= 24 else 3 if longest <= 34 else 2 if longest <= 54 else 1
    cells = ", ".join(f"[{line}]" for line, _ in lines)
    font = ', font: "New Computer Modern"' if plain else ""
    return [
        f"#text(size: 0.9em{font}, grid(columns: {n}, column-gutter: 1.2em, row-gutter: 0.75em, "
        f"{cells}))"
    ]


def _table_part(d: Derivation, step: Step, places: int, blank: bool) -> list[str]:
    """The step's table (the cells the mask fills in given), closing its block."""
    return [table(step, places, blank=blank, given=given_cells(d, step, turned=False)), "]"]


@functools.singledispatch
def key_part(step: Step, d: Derivation, places: int, plain: bool) -> list[str]:
    """A step's part of an answer key under its heading, by its rule: its table (closing the
    step's block), then every cell's worked line; a softmax's rows instead (e^x, total, share);
    a concatenation's sentence; a given matrix's table alone."""
    return [*_table_part(d, step, places, blank=False), *_working(step, places, plain)]


@key_part.register
def _(step: Given, d: Derivation, places: int, plain: bool) -> list[str]:
    return _table_part(d, step, places, blank=False)


@key_part.register
def _(step: Softmax, d: Derivation, places: int, plain: bool) -> list[str]:
    shares, notes = _softmax_rows(step, places)  # its rows show every share: no second table
    return [*shares, "]", *notes]


@key_part.register
def _(step: Concat, d: Derivation, places: int, plain: bool) -> list[str]:
    heads = " | ".join(Z.key for Z in step.args)
    said = txt(f"Each row is the heads' Z rows side by side: {heads}.")
    return [*_table_part(d, step, places, blank=False), said]


# A key of more worked lines than this sets them as plain text (``working_text``): the
# worst legal lesson's key has 16,000 and took 28 of its 32 s in typst's math layout
PLAIN_WORKING_FROM = 2000


@functools.singledispatch
def worked_cells(step: Step) -> int:
    """How many of the step's cells its ``key_part`` works line by line, by its rule: every
    cell, but for a rule whose key part shows something else."""
    return len(step.rows) * len(step.cols)


@worked_cells.register(Given)  # its table alone
@worked_cells.register(Softmax)  # its rows instead
@worked_cells.register(Concat)  # a sentence
def _(step: Step) -> int:
    return 0


def worked_lines(d: Derivation) -> int:
    """How many cells a key works line by line (a softmax shows its rows instead)."""
    return sum(worked_cells(s) for s in fill_steps(d))


# ---------------------------------------------------------------------------------------------
# the document


def _preamble(first: Sheet, answers: bool, paper: str) -> list[str]:
    """The document's settings, titled after its first sheet's lesson."""
    title = f"{first.d.lesson.title}: {'answer key' if answers else 'worksheet'}"
    paper = check_paper(paper)
    return [
        '#let foot = state("foot", "")  // the footer of the current sheet pages',
        f"#set document(title: {lit(title)})",
        f'#set page(paper: "{paper}", margin: (x: 1.6cm, y: 1.5cm), '
        "footer: context text(size: 8pt, fill: luma(90))[#foot.get() #h(1fr) "
        "page #counter(page).display()])",
        '#set text(font: ("Libertinus Serif", "New Computer Modern"), size: 10pt)',
        "#set par(justify: false)",
        "#set heading(numbering: none)",
        "#show heading: set block(above: 1.1em, below: 0.6em)",
        "#show heading.where(level: 1): set text(size: 15pt)",
        "#show heading.where(level: 2): set text(size: 12pt)",
        "#show heading.where(level: 3): set text(size: 11pt)",
        "",
    ]


FORMULA = '$Z = "softmax"((Q K^top) / sqrt(d_k)) V$'
# a lesson's own scale: (issue 41): the formula's divisor, in typst's math
OWN_DIVISOR = {"": '$Z = "softmax"(Q K^top) V$', " / √d_model": 'sqrt(d_"model")', " / s": "s"}


def _formula(lesson) -> str:  # type: ignore[no-untyped-def]
    """The attention formula with the lesson's own divisor."""
    by = words.scaled_by(lesson)
    if by == " / √d_k":
        return FORMULA
    return OWN_DIVISOR[by] if not by else FORMULA.replace("sqrt(d_k)", OWN_DIVISOR[by])


@dataclass(frozen=True)
class _SheetText:
    """One sheet's typst lines: ``foot`` sets its footer; ``chunks`` are its head (name line,
    facts, inputs) and then a block a step, the places where it may be cut into parts."""

    foot: str
    chunks: list[list[str]]

    @property
    def lines(self) -> list[str]:
        return [line for chunk in self.chunks for line in chunk]


def _sheet(sheet: Sheet, answers: bool, places: int | None) -> _SheetText:
    d = sheet.d
    lesson = d.lesson
    places = lesson.precision if places is None else places
    kind = "answer key" if answers else "worksheet"
    steps = fill_steps(d)
    total = sum(d.step_points(s) for s in steps)
    who = sheet.student or ""
    # a variant's own student id (its ``variant:`` key), on the ID line
    student_id = lesson.variant.student_id if lesson.variant is not None else ""
    foot = f"{lesson.title} · {kind} · lesson {words.visible(lesson.name)} · {lesson.fingerprint}"
    foot += "".join(f" · {x}" for x in (sheet.variant, who) if x)
    foot_line = f"#foot.update({lit(foot)})"
    out = [
        foot_line,
        "#counter(page).update(1)",
        f"#heading(level: 1, {lit(f'{lesson.title}: {kind}')})",
        "#block(width: 100%, inset: (y: 6pt), stroke: (y: 0.6pt))["
        f"Name: #box(width: 1fr, stroke: (bottom: 0.5pt), inset: (bottom: 2pt))[{txt(who)}]"
        " #h(1.5em) ID: #box(width: 4.5cm, stroke: (bottom: 0.5pt), inset: (bottom: 2pt))"
        f"[{txt(student_id) if student_id else ''}]"
        f" #h(1.5em) Points: #box(width: 1.4cm, stroke: (bottom: 0.5pt))[] / {total}]",
        "",
        txt(sheet.variant or f"Lesson {words.visible(lesson.name)}")
        + txt(" · fingerprint ")
        + f"#raw({lit(lesson.fingerprint)});"
        + txt(" · " + ", ".join(words.lesson_facts(lesson)) + "."),
        "",
    ]
    if lesson.description:
        out += [txt(lesson.description), ""]
    out += [
        *(txt(line[:1].upper() + line[1:] + ".") + "\n" for line in words.extra_formulas(lesson)),
        f"{_formula(lesson)} #h(1em) "
        + txt(f"Decimals are rounded to {places} places, half away from zero (0.125 → 0.13)."),
    ]
    if not answers:
        out.append(txt(" Fill in every box. Carry one more decimal than you write down."))
    cells = worked_lines(d) if answers else 0
    plain = cells > PLAIN_WORKING_FROM
    if plain:
        out += ["", txt(
            f"This key works {cells:,} cells: each one's working is a plain line, the cell named "
            "as attn-tutor explain reads it."
        )]  # fmt: skip
    out += ["", "== Inputs", ""]
    out += _inputs(input_steps(d), places, lesson)
    out += ["", "== Steps", ""]
    chunks = [out]
    shown_head = None
    level = 3
    for step in steps:
        out = []
        chunks.append(out)
        if step.head is not None and step.head != shown_head:
            shown_head = step.head
            out.append(f"#heading(level: 3, {lit(words.head_label(lesson, step.head))})")
        level = 4 if lesson.multi_head and step.head is not None else 3
        small = len(step.rows) <= 12
        out.append(f"#block(breakable: {'false' if small else 'true'})[")
        out.append(_heading(step, level, lesson, d.step_points(step)))
        out.append(txt(f"Shape: {shape_text(step)}."))
        if mask_note(lesson, step):
            out.append(" " + txt(MASK_NOTE))
        out.append("")
        if answers:
            out += key_part(step, d, places, plain)
        else:
            out += _table_part(d, step, places, blank=True)
        out.append("")
    return _SheetText(foot_line, chunks)


def source(
    sheets: Sequence[Sheet], answers: bool, paper: str = "a4", places: int | None = None
) -> str:
    """The typst source of one document: a worksheet or key per sheet, each from a new page."""
    out = _preamble(sheets[0], answers, paper)
    for n, sheet in enumerate(sheets):
        if n:
            out.append("#pagebreak()")
        out += _sheet(sheet, answers, places).lines
    return "\n".join(out) + "\n"


# typst source in one compile: its memory grows with the document (2.9 GB for the worst
# legal key in one piece), so a longer sheet is compiled in parts cut between steps
PART_CHARS = 400_000


def _parts(text: _SheetText) -> list[list[str]]:
    """The sheet's chunks gathered into parts of at most ``PART_CHARS`` (a longer chunk is a
    part of its own); every part after the first starts on a new page."""
    parts: list[list[str]] = [[]]
    size = 0
    for chunk in text.chunks:
        weight = sum(len(line) + 1 for line in chunk)
        if parts[-1] and size + weight > PART_CHARS:
            parts.append([])
            size = 0
        parts[-1] += chunk
        size += weight
    return parts


# ---------------------------------------------------------------------------------------------
# fonts and compiling

# families that cover CJK: what a user may have installed (Noto first: the README names it)
_CJK_FAMILY = re.compile(
    r"cjk|source han|droid sans fallback|wenquanyi|wqy|hei|song|ming|mincho|gothic|nanum|"
    r"unifont|pingfang|hiragino|yu gothic|malgun|simsun|simhei|microsoft yahei",
    re.IGNORECASE,
)


def wide_characters(sheets: Sequence[Sheet]) -> list[str]:
    """Characters in the lessons' words that typst's bundled fonts do not have: CJK and other
    wide (East Asian) script."""
    seen: dict[str, None] = {}
    for sheet in sheets:
        lesson = sheet.d.lesson
        texts = [lesson.title, lesson.description or "", *lesson.labels, sheet.student or ""]
        texts += [h.name or "" for h in lesson.heads]
        for ch in "".join(texts):
            if unicodedata.east_asian_width(ch) in ("W", "F"):
                seen[ch] = None
    return list(seen)


def font_note(sheets: Sequence[Sheet], font_paths: Sequence[Path]) -> str | None:
    """A note when the words need a CJK font and none is installed or in ``--font-path``."""
    return _font_note(wide_characters(sheets), font_paths)


def _font_note(wide: list[str], font_paths: Sequence[Path]) -> str | None:
    if not wide:
        return None
    import typst

    families = typst.Fonts(
        include_system_fonts=True, font_paths=[str(p) for p in font_paths]
    ).families()
    if any(_CJK_FAMILY.search(f) for f in families):
        return None
    shown = "".join(wide[:8]) + ("…" if len(wide) > 8 else "")
    return (
        f"the lesson's words use {shown}, which typst's bundled fonts lack: install Noto Sans "
        "CJK (Debian/Ubuntu: apt install fonts-noto-cjk) or pass --font-path DIR with a CJK "
        "font; until then they print as empty boxes"
    )


# typst compiles in a child process of its own: in-process, the compiler holds the interpreter
# until it is done, so Ctrl-C and SIGTERM waited for it (20 s on the largest key), and out of
# memory it aborts (SIGABRT), which took attn-tutor down with exit 134. A child can be killed at
# once, and its end is read as what it is.
_COMPILER = """
import signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
import typst
try:
    pdf = typst.compile(sys.stdin.buffer.read(), font_paths=sys.argv[1:])
except typst.TypstError as err:
    sys.stderr.write(str(err))
    sys.exit(3)
sys.stdout.buffer.write(pdf)
"""


def compile_pdf(text: str, font_paths: Sequence[Path] = ()) -> bytes:
    """The PDF of a typst source (raises ``TutorError`` when typst is missing or fails). A
    KeyboardInterrupt (or any exception) while typst works ends its process at once."""
    import subprocess
    import sys

    try:
        import typst  # noqa: F401  (the child's; here only to say when it is missing)
    except ImportError:
        raise TutorError(
            f"--format pdf needs typst, an optional extra: {install_command('pdf')}"
        ) from None
    for p in font_paths:
        if not Path(p).is_dir():
            raise UsageError(f"--font-path {p}: no such folder")
    done = subprocess.run(  # on any exception (Ctrl-C, SIGTERM), run() kills the child
        [sys.executable, "-c", _COMPILER, *(str(p) for p in font_paths)],
        input=text.encode("utf-8"),
        capture_output=True,
    )
    said = done.stderr.decode("utf-8", "replace").strip()
    if done.returncode == 0 and done.stdout.startswith(b"%PDF"):
        return done.stdout
    if done.returncode == 3:  # a bug of ours, not the user's: say what typst said
        raise TutorError(f"typst could not compile the document: {said}")
    if done.returncode < 0:
        import signal

        name = signal.Signals(-done.returncode).name
        raise TutorError(
            f"typst stopped ({name}) while compiling the document, most likely out of memory"
            + (f": {said.splitlines()[-1]}" if said else "")
            + "; export fewer students at a time, or the worksheet (--no-answers)"
        )
    raise TutorError(f"typst could not compile the document (exit {done.returncode}): {said}")


def pdf(
    sheets: Iterable[Sheet], answers: bool, paper: str, font_paths: Sequence[Path] = ()
) -> tuple[bytes, str | None]:
    """The PDF of one lesson or of a folder of variants (each student's sheet from a new
    page), and the font note for all of them. Each sheet is compiled on its own, a long one in
    parts cut between steps with its page numbers carried from part to part, and each PDF is
    written into the joined one as it comes (``pdfjoin``): the memory is one part's and the
    joined file's bytes, whatever the size of the lesson or of the class (typst holds every
    page of a document). A sheet of one part alone is its own compile, byte for byte."""
    import io

    from tutor.export.pdfjoin import Joiner, reader

    # the first PDF, as compiled and (when it is a part, its pages counted) as read, and its
    # bookmark; joined only when a second one comes
    first: tuple[bytes, object, str] | None = None
    out = io.BytesIO()
    joiner: Joiner | None = None
    wide: dict[str, None] = {}
    preamble: list[str] = []
    for sheet in sheets:
        preamble = preamble or _preamble(sheet, answers, paper)
        label = " · ".join(x for x in (sheet.variant, sheet.student) if x) or sheet.d.lesson.title
        text = _sheet(sheet, answers, None)
        parts = _parts(text)
        page = 0
        for k, part in enumerate(parts):
            carried = [text.foot, f"#counter(page).update({page + 1})"] if k else []
            data = compile_pdf("\n".join(preamble + carried + part) + "\n", font_paths)
            read = reader(data) if len(parts) > 1 or first is not None else None
            name = label
            if len(parts) > 1:
                pages = len(read.pages)  # type: ignore[union-attr]
                name = f"{label}, pages {page + 1}–{page + pages}"
                page += pages
            if first is None:
                first = data, read, name
                continue
            if joiner is None:
                joiner = Joiner(out)
                joiner.add(first[1] or reader(first[0]), first[2])
            joiner.add(read, name)
        wide.update(dict.fromkeys(wide_characters([sheet])))
    note = _font_note(list(wide), font_paths)
    assert first is not None  # a sheet at least: the callers' folders are never empty
    if joiner is None:
        return first[0], note
    joiner.close()
    return out.getvalue(), note
