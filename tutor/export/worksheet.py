"""Derivation → worksheets and answer keys: Markdown and LaTeX.

Both are built from the same pieces: the lesson's inputs, then each step to fill with its
shape arithmetic and a table, and (in an answer key) the worked line of every cell. Numbers
become text only through ``tutor.text.format``; this module adds Markdown and LaTeX spelling.

The blank YAML answer sheet for the same steps is written (and read) by ``tutor.assess.sheet``.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Callable, Iterator
from typing import TypeVar

from tutor.core import kinds
from tutor.core.engine import Derivation, Given, Softmax, Step
from tutor.core.exact_size import too_long
from tutor.core.lesson import Lesson
from tutor.text import format as fmt
from tutor.text import steps, words
from tutor.text import working as wk

T = TypeVar("T")

MASK_NOTE = (
    "Causal mask: before the softmax, every entry of scaled above the diagonal becomes −∞ "
    "(a token may not look at the tokens after it), so its weight is exactly 0."
)


def mask_note(lesson: Lesson, step: Step) -> bool:
    """The note on the causal mask goes under the lesson's own weights (not the decoding row's)."""
    return (
        lesson.mask == "causal"
        and isinstance(step, Softmax)
        and not kinds.BY_NAME[step.name].decoding
    )


FORMULA = r"Z = \mathrm{softmax}\left(\frac{Q K^\top}{\sqrt{d_k}}\right) V"
# a lesson's own scale: (issue 41): the formula's divisor, as LaTeX
OWN_DIVISOR = {" / √d_model": r"\sqrt{d_{\mathrm{model}}}", " / s": "s"}


def formula(lesson) -> str:  # type: ignore[no-untyped-def]
    """The attention formula with the lesson's own divisor (none: softmax of Q Kᵀ)."""
    by = words.scaled_by(lesson)
    if by == " / √d_k":
        return FORMULA
    if not by:
        return r"Z = \mathrm{softmax}\left(Q K^\top\right) V"
    return FORMULA.replace(r"\sqrt{d_k}", OWN_DIVISOR[by])


fill_steps = kinds.fill_steps  # the steps a student fills in, in the order they are computed


COLUMNS_NOTE = (
    "Layout: columns. Every matrix is shown turned, tokens as columns, as on the AI by Hand "
    r"sheets: $Z = V\,\mathrm{softmax}(K^\top Q / \sqrt{d_k})$, softmax down each column. "
    r"Cells keep their names: $Q_{\text{cats}, 1}$ is row 1 of column cats."
)


def _turned_note(d: Derivation, step: Step) -> str:
    if d.lesson.layout != "columns":
        return ""
    n, m = step.shape
    return f"; turned here: {m} × {n}"


def _turn(d: Derivation, step: Step) -> Step:
    """The step as the lesson's layout shows it: on its side for layout: columns (tokens as
    columns); only its table is turned, its cells keep their names."""
    if d.lesson.layout != "columns":
        return step
    cells = tuple(zip(*step.cells, strict=True))
    return Given(step.name, step.head, step.cols, step.rows, cells)


def given_cells(d: Derivation, step: Step, turned: bool | None = None) -> list[list[str | None]]:
    """What a worksheet prints already filled in, as the lesson's layout shows the step (or
    ``turned`` says): the causal mask's cells (−∞ in scaled, 0 in weights;
    ``Derivation.fill``), else None."""
    places = d.lesson.precision
    fills = [[d.fill(step, i, j) for j in range(len(step.cols))] for i in range(len(step.rows))]
    grid: list[list[str | None]] = [
        [None if c is None else fmt.operand(c, places) for c in row] for row in fills
    ]
    if d.lesson.layout == "columns" if turned is None else turned:
        return [list(col) for col in zip(*grid, strict=True)]
    return grid


def input_steps(d: Derivation) -> list[Step]:
    """The matrices the lesson gives."""
    return [s for s in d.steps if s.given]


def _places(d: Derivation, precision: int | None) -> int:
    return d.lesson.precision if precision is None else precision


shape_text = words.shape_text  # the shape arithmetic in plain text


# ---------------------------------------------------------------------------------------------
# working, as LaTeX math (shared by Markdown and LaTeX)


def tex_text(text: str) -> str:
    """Plain text made safe for LaTeX (text mode), in ASCII only: specials escaped, math
    symbols spelled, every other character outside ASCII as ``tex_char`` writes it."""
    out = []
    for ch in unicodedata.normalize("NFC", text):  # é typed as e + U+0301 is one letter
        if ch in "&%$#_{}":
            out.append("\\" + ch)
        elif ch in _TEX_CHARS:
            out.append(_TEX_CHARS[ch])
        elif ch.isascii():
            out.append(ch)
        else:
            out.append(tex_char(ch))
    return "".join(out)


_ACCENTS = {  # combining mark -> the text-mode accent command plain LaTeX has for it
    "\u0300": "\\`",
    "\u0301": "\\'",
    "\u0302": "\\^",
    "\u0303": "\\~",
    "\u0304": "\\=",
    "\u0306": "\\u",
    "\u0307": "\\.",
    "\u0308": '\\"',
    "\u030a": "\\r",
    "\u030b": "\\H",
    "\u030c": "\\v",
    "\u0323": "\\d",
    "\u0327": "\\c",
    "\u0328": "\\k",
}
_TEX_LETTERS = {
    "ß": "\\ss{}",
    "æ": "\\ae{}",
    "Æ": "\\AE{}",
    "œ": "\\oe{}",
    "Œ": "\\OE{}",
    "ø": "\\o{}",
    "Ø": "\\O{}",
    "ł": "\\l{}",
    "Ł": "\\L{}",
    "ı": "\\i{}",
    "å": "\\aa{}",
    "Å": "\\AA{}",
    "¡": "!`",
    "¿": "?`",
    "°": "$^\\circ$",
    "±": "$\\pm$",
    "÷": "$\\div$",
    "€": "EUR",
    "⁄": "/",
    "£": "\\pounds{}",
    "§": "\\S{}",
    "¶": "\\P{}",
    "©": "\\copyright{}",
}
_CYRILLIC = dict(  # Russian letters, transliterated as in passports (ICAO 9303)
    zip(
        "абвгдеёжзийклмнопрстуфхцчшщъыьэюя",
        "a b v g d e e zh z i i k l m n o p r s t u f kh ts ch sh shch ie y - e iu ia".replace(
            "-", "'"
        ).split(),
        strict=True,
    )
)
# Greek letters that plain LaTeX has as math commands (capitals like Alpha are Latin A)
_GREEK_NAMES = (
    "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi pi rho sigma tau "
    "upsilon phi chi psi omega Gamma Delta Theta Lambda Xi Pi Sigma Upsilon Phi Psi Omega"
)
_GREEK = frozenset(_GREEK_NAMES.split())


@functools.lru_cache(maxsize=1024)
def tex_char(ch: str) -> str:
    """One character outside ASCII, for plain pdflatex in ASCII: a letter with accents as
    accent commands (é -> \\'{e}), a few letters and symbols by name (ß, ø, °), Greek as math
    (\\alpha), a compatibility form as what it stands for (² -> ^2, ① -> (1)); anything else
    as its code point, [U+4E2D], so nothing is lost or garbled."""
    if ch in _TEX_LETTERS:
        return _TEX_LETTERS[ch]
    base, *marks = unicodedata.normalize("NFD", ch)
    if marks and base.isascii() and base.isalpha() and all(m in _ACCENTS for m in marks):
        text = "\\" + base if base in "ij" else base  # accents sit on the dotless i and j
        for mark in marks:
            text = f"{_ACCENTS[mark]}{{{text}}}"
        return text
    name = unicodedata.name(ch, "")
    if name.startswith("GREEK ") and " LETTER " in name and len(name.split()) == 4:
        word = name.split()[-1].lower()
        word = word.capitalize() if " CAPITAL " in name else word
        word = {"Lamda": "Lambda", "lamda": "lambda"}.get(word, word)
        if word in _GREEK:
            return f"$\\{word}$"
    if ch.lower() in _CYRILLIC:
        latin = _CYRILLIC[ch.lower()]
        return latin.capitalize() if ch.isupper() else latin
    kind, _, _ = unicodedata.decomposition(ch).partition(" ")
    plain = unicodedata.normalize("NFKC", ch)
    if plain != ch and plain.isprintable():  # its parts are NFKC already: no deeper recursion
        inner = tex_text(plain)
        if kind == "<super>":
            return f"\\textsuperscript{{{inner}}}"
        if kind == "<sub>":
            return f"$_{{\\mbox{{{inner}}}}}$"
        return f"({inner})" if kind == "<circle>" else inner
    return f"[U+{ord(ch):04X}]"


_TEX_CHARS = {
    "\\": r"\textbackslash{}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    "|": r"\textbar{}",
    "−": "-",
    "–": "--",
    "—": "---",
    "·": r"$\cdot$",
    "×": r"$\times$",
    "√": r"$\surd$",
    "∞": r"$\infty$",
    "ᵀ": r"$^\top$",
    "’": "'",
    "“": "``",
    "”": "''",
    "…": r"\ldots{}",
}


def tex_num(text: str) -> str:
    """A number as ``format`` shows it, spelled for math mode."""
    text = text.replace(fmt.MINUS, "-").replace("∞", r"\infty")
    if "√" in text:  # an exact cos or sin of a turn (√3/2)
        text = re.sub(r"√(\d+)", r"\\sqrt{\1}", text)
    return text


def tex_label(label: str) -> str:
    return label if label.isascii() and label.isdigit() else r"\text{" + tex_text(label) + "}"


def step_tex(step: Step) -> str:
    """A step's name in math: ``Q``, ``W_{Q}``, ``\\mathrm{scores}``, ``{q_{\\mathrm{new}}}``,
    with ``^{(2)}`` for head 2."""
    base, _, sub = step.name.partition("_")
    if step.name.startswith("W_"):
        name = f"W_{{{step.name[2:]}}}"
    elif sub:  # braced, so a cell's own subscript follows it: {q_{new}}_{cake, 1}
        base = base if len(base) == 1 else rf"\mathrm{{{base}}}"
        name = rf"{{{base}_{{\mathrm{{{sub}}}}}}}"
    elif len(step.name) == 1:
        name = step.name
    else:
        name = rf"\mathrm{{{step.name}}}"
    return name + (f"^{{({step.head})}}" if step.head else "")


def cell_tex(step: Step, i: int, j: int) -> str:
    """``Q_{\\text{cats}, \\text{1}}``: a cell's name in math."""
    return f"{step_tex(step)}_{{{tex_label(step.rows[i])}, {tex_label(step.cols[j])}}}"


def tex(node: wk.Node) -> str:
    """A piece of working spelled in LaTeX math (the same pieces ``working.plain`` writes)."""
    match node:  # the commonest pieces first: an answer key prints hundreds of thousands
        case wk.Prod(a, b):
            return rf"{_factor(a.text)} \cdot {_factor(b.text)}"
        case wk.Num(text):
            return tex_num(text)
        case wk.Sum(terms):
            return " + ".join([tex(t) for t in terms])
        case wk.Exp(x):
            return f"e^{{{tex_num(x.text)}}}"
        case wk.Gap(more):
            return rf"(\text{{{fmt.plural(more, 'more term')}}})"
        case wk.Name(step, i, j):
            return cell_tex(step, i, j)
        case wk.Etc():
            return r"\ldots"
        case wk.Root(n):
            return rf"\sqrt{{{n}}}"
        case wk.Div(top, bottom):
            return f"{_factor(top.text) if isinstance(top, wk.Num) else tex(top)} / {tex(bottom)}"
        case wk.Frac(top, bottom):
            return rf"\frac{{{tex(top)}}}{{{tex(bottom)}}}"
    raise TypeError(node)


@functools.lru_cache(maxsize=1 << 12)  # a few hundred distinct numbers fill a whole key
def _factor(text: str) -> str:
    """A number inside a product or over a root, in brackets when negative."""
    t = tex_num(text)
    return f"({t})" if t.startswith("-") else t


KEY_TERMS = wk.Elide(12, 4, 2)  # a longer sum shows its first four and last two terms


def _result(w: wk.Working) -> str:
    """``\\approx 0.49``, or with the exact form first when it is as short as the working."""
    shown = tex_num(w.shown)
    if w.rel == "≈" and w.exact_is_short and too_long(w.step, w.i, w.j) is None:
        import sympy

        return rf"= {sympy.latex(w.step.cells[w.i][w.j].exact)} \approx {shown}"
    rel = "=" if w.rel == "=" else r"\approx"
    return f"{rel} {shown}"


def _line(stages: list[str], w: wk.Working) -> str:
    """The stages, ``=`` between them, then the result."""
    return " = ".join(stages) + (" " if stages else "") + _result(w)


def working(step: Step, i: int, j: int, places: int) -> str:
    """The worked line of one cell as LaTeX math, from the exact inputs shown rounded."""
    w = wk.working(step, i, j, places, terms=KEY_TERMS)
    line = _line([tex(stage) for stage in w.work], w)
    if w.hand_text is not None:
        line += rf" \quad (\text{{the rounded inputs shown give }} {tex_num(w.hand_text)})"
    return line


TEX_TERMS_PER_LINE = 4  # a longer sum is broken after every 4 terms, so it fits the page


def tex_working_lines(step: Step, i: int, j: int, places: int) -> list[str]:
    """One cell's working as ``align*`` rows: a sum broken every few terms, and the remark on
    what the rounded inputs give in text on a row of its own (it would run off the page)."""
    w = wk.working(step, i, j, places, terms=KEY_TERMS)
    stages = [tex(stage) for stage in w.work]
    first = w.work[0] if w.work else None
    if isinstance(first, wk.Sum) and len(first.terms) > TEX_TERMS_PER_LINE + 1:
        terms = [tex(t) for t in first.terms]
        chunks = [
            " + ".join(terms[k : k + TEX_TERMS_PER_LINE])
            for k in range(0, len(terms), TEX_TERMS_PER_LINE)
        ]
        stages[0] = chunks[-1]
        rows = [chunk + " +" for chunk in chunks[:-1]]
    else:
        rows = []
    rows.append(_line(stages, w))
    rows = [rows[0]] + [r"\phantom{=}\ " + row for row in rows[1:]]
    lines = [f"{cell_tex(step, i, j)} &= {rows[0]}"] + [f"&{row}" for row in rows[1:]]
    if w.hand_text is not None:
        hand = tex_num(w.hand_text)
        lines.append(rf"&\phantom{{=}}\ \text{{(the rounded inputs shown give ${hand}$)}}")
    return lines


# ---------------------------------------------------------------------------------------------
# Markdown


def _md_escape(text: str) -> str:
    return "".join("\\" + ch if ch in "\\|*_`$<>[]" else ch for ch in text)


def md_table(
    step: Step, places: int, answers: bool = True, given: list[list[str | None]] | None = None
) -> list[str]:
    """A step as a Markdown table: its values, or blanks (``answers`` False) but for the cells
    ``given`` fills in (in italics: given, not asked)."""
    head = "| | " + " | ".join(_md_escape(c) for c in step.cols) + " |"
    rule = "|---|" + "---:|" * len(step.cols)
    rows = []
    for i, row in enumerate(step.cells):
        texts = [
            fmt.shown(c, step, places)
            if answers
            else (f"*{given[i][j]}*" if given and given[i][j] else " ")
            for j, c in enumerate(row)
        ]
        rows.append(f"| **{_md_escape(step.rows[i])}** | " + " | ".join(texts) + " |")
    return [head, rule, *rows]


def markdown(d: Derivation, answers: bool = True, precision: int | None = None) -> str:
    """The worksheet (``answers=False``) or answer key as Markdown."""
    lesson = d.lesson
    places = _places(d, precision)
    kind = "answer key" if answers else "worksheet"
    out = [f"# {_md_escape(lesson.title)}: {kind}", ""]
    if lesson.description:
        out += [_md_escape(lesson.description), ""]
    out += [
        f"Lesson `{words.visible(lesson.name)}`: "  # a file name: controls spelled out
        + _facts(d, _md_escape, words.plain_math),
        "",
        f"For grading: {_md_escape(identity_text(lesson))}",
        "",
        f"$${formula(lesson)}$$",
        "",
        # the walk's own lines for positions and cross-attention (K = X_src · W_K …)
        *(f"{_md_escape(line[:1].upper() + line[1:])}.\n" for line in words.extra_formulas(lesson)),
        f"Decimals are rounded to {places} places, half away from zero (0.125 → 0.13).",
    ]
    if lesson.layout == "columns":
        out += ["", COLUMNS_NOTE]
    if not answers:
        out.append("Fill in every empty cell. Carry one more decimal than you write down.")
    out += ["", "## Inputs", ""]
    for step in input_steps(d):
        out += _md_step_heading(d, step, "###") + md_table(_turn(d, step), places) + [""]
    out += ["## Steps", ""]
    shown_head = None
    for step in fill_steps(d):
        if step.head is not None and step.head != shown_head:
            shown_head = step.head
            out += [f"### {_md_escape(words.head_label(d.lesson, step.head))}", ""]
        level = "####" if lesson.multi_head else "###"
        out += _md_step_heading(d, step, level)
        out += [f"Shape: {shape_text(step)}{_turned_note(d, step)}", ""]
        if mask_note(lesson, step):
            out += [MASK_NOTE, ""]
        out += [*md_table(_turn(d, step), places, answers, given_cells(d, step)), ""]
        if answers and not step.given:
            out += [
                f"- ${cell_tex(step, i, j)} = {working(step, i, j, places)}$" for i, j in _ij(step)
            ]
            out.append("")
    return "\n".join(out).rstrip() + "\n"


def identity_text(lesson: Lesson) -> str:
    """What a printed sheet is for, so its answers can be graded against the right numbers:
    ``fingerprint 1a2b3c4d; variant-07 for Ann Lee (id s1007)``."""
    out = f"fingerprint {lesson.fingerprint}"
    v = lesson.variant
    if v is not None:
        who = " ".join(p for p in (v.student, f"(id {v.student_id})" if v.student_id else "") if p)
        out += f"; {v.id}" + (f" for {who}" if who else "")
    return words.visible(out)


def _facts(d: Derivation, text: Callable[[str], str], math: Callable[[str], str]) -> str:
    """``N = 3 tokens (cats, chase, mice), d_model = 4, ...``, spelled by ``text`` and ``math``."""
    return ", ".join(words.lesson_facts(d.lesson, text, math)) + "."


def _md_step_heading(d: Derivation, step: Step, level: str) -> list[str]:
    """The step's heading in its lesson's words, with the shape its table is shown in."""
    title = words.step_title(step, d.lesson, turned=d.lesson.layout == "columns")
    if step.head is not None and step.given:
        title = f"{title} (head {step.head})"
    n, m = _turn(d, step).shape
    return [f"{level} {_md_escape(title)} ({n} × {m})", ""]


def _ij(step: Step) -> Iterator[tuple[int, int]]:
    for i in range(len(step.rows)):
        for j in range(len(step.cols)):
            yield i, j


# ---------------------------------------------------------------------------------------------
# LaTeX

BLANK_TEX = r"\underline{\hspace{1.3cm}}"


def tex_matrix(
    step: Step, places: int, answers: bool = True, given: list[list[str | None]] | None = None
) -> str:
    def blank(i: int, j: int) -> str:
        text = given[i][j] if given else None
        return rf"{{\color{{gray}}{tex_num(text)}}}" if text else BLANK_TEX

    rows = [
        " & ".join(
            tex_num(fmt.shown(c, step, places)) if answers else blank(i, j)
            for j, c in enumerate(row)
        )
        for i, row in enumerate(step.cells)
    ]
    body = " \\\\\n  ".join(rows)
    return "\\begin{bmatrix}\n  " + body + "\n\\end{bmatrix}"


def _tex_block(
    step: Step, places: int, answers: bool, given: list[list[str | None]] | None = None
) -> list[str]:
    math = f"{step_tex(step)} = {tex_matrix(step, places, answers, given)}"
    shown = [r"\[", math, r"\]"]
    if len(step.cols) > 8:  # wide: shrink to the line rather than run off the page
        shown = [r"\begin{center}\resizebox{\linewidth}{!}{$\displaystyle", math, r"$}\end{center}"]
    labels = (
        f"\\noindent{{\\small rows: {tex_text(', '.join(step.rows))}; "
        f"columns: {tex_text(', '.join(step.cols))}}}"
    )
    return [*shown, labels, ""]


def latex(d: Derivation, answers: bool = True, precision: int | None = None) -> str:
    """The worksheet or answer key as a complete LaTeX document (pdflatex, amsmath)."""
    lesson = d.lesson
    places = _places(d, precision)
    kind = "answer key" if answers else "worksheet"
    widest = max(len(s.cols) for s in d.steps)
    out = [
        r"\documentclass[11pt]{article}",
        r"\usepackage[utf8]{inputenc}",
        r"\usepackage[T1]{fontenc}",
        r"\usepackage{amsmath,amssymb}",
        r"\usepackage{graphicx}",
        r"\usepackage{xcolor}",  # the mask's given cells, in grey
        r"\usepackage[margin=2cm]{geometry}",
        r"\allowdisplaybreaks",  # long align* blocks of working may break across pages
        rf"\setcounter{{MaxMatrixCols}}{{{max(10, widest)}}}",
        r"\setlength{\parindent}{0pt}",
        r"\begin{document}",
        rf"\section*{{{tex_text(lesson.title)}: {kind}}}",
    ]
    if lesson.description:
        out += [tex_text(lesson.description), ""]
    out += [
        f"Lesson \\texttt{{{tex_text(words.visible(lesson.name))}}}: "
        + _facts(d, tex_text, lambda m: f"${m}$"),
        "",
        f"For grading: {tex_text(identity_text(lesson))}",
        "",
        rf"\[ {formula(lesson)} \]",
        *(f"{tex_text(line[:1].upper() + line[1:])}.\n" for line in words.extra_formulas(lesson)),
        f"Decimals are rounded to {places} places, half away from zero (0.125 becomes 0.13).",
    ]
    if not answers:
        out.append(" Fill in every blank. Carry one more decimal than you write down.")
    out += ["", r"\subsection*{Inputs}"]
    for step in input_steps(d):
        out += _tex_heading(step, r"\paragraph", lesson)
        out += _tex_block(_turn(d, step), places, True)
    out.append(r"\subsection*{Steps}")
    shown_head = None
    for step in fill_steps(d):
        if step.head is not None and step.head != shown_head:
            shown_head = step.head
            out.append(rf"\subsubsection*{{{tex_text(words.head_label(d.lesson, step.head))}}}")
        out += _tex_heading(step, r"\paragraph", lesson)
        out.append(f"Shape: {tex_text(shape_text(step))}.")
        if mask_note(lesson, step):
            out.append(tex_text(MASK_NOTE))
        out += _tex_block(_turn(d, step), places, answers, given_cells(d, step))
        if answers and not step.given:
            out.append(r"\begin{align*}")
            lines = [line for i, j in _ij(step) for line in tex_working_lines(step, i, j, places)]
            out.append(" \\\\\n".join(lines))
            out += [r"\end{align*}", ""]
    out.append(r"\end{document}")
    return "\n".join(out) + "\n"


def _tex_heading(step: Step, command: str, lesson: Lesson) -> list[str]:
    """The step's heading in its lesson's words (turned ones for a lesson in columns, whose
    tables are shown turned here)."""
    title = steps.say(step, "tex", lesson, turned=lesson.layout == "columns")
    if step.head is not None and step.given:
        title = f"{title} (head {step.head})"
    return [f"{command}{{{title} (${step.shape[0]} \\times {step.shape[1]}$)}}", ""]
