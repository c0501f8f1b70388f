"""Derivation → worksheets and answer keys: Markdown, LaTeX and the blank YAML answer sheet.

All three are built from the same pieces: the lesson's inputs, then each step to fill with its
shape arithmetic and a table, and (in an answer key) the worked line of every cell. Numbers
become text only through ``tutor.format``; this module adds Markdown and LaTeX spelling.

The answer sheet holds one key per step to fill: ``Q``, ``K``, ``V``, ``scores``, ``scaled``,
``weights``, ``Z`` (under ``heads:`` for several heads, then ``concat`` and ``output``). The
causal mask is not a step to fill: it only writes −∞ above the diagonal of ``scaled``, and the
weights it makes (0 above the diagonal) are on the sheet.
"""

from __future__ import annotations

import functools
import shlex
from collections.abc import Callable, Iterator, Sequence
from typing import TypeVar

from tutor import format as fmt
from tutor import words
from tutor.engine import Cell, Derivation, Step
from tutor.exact_size import too_long

T = TypeVar("T")

FILL = ("Q", "K", "V", "scores", "scaled", "weights", "Z")  # per head
FILL_TOP = ("concat", "output")  # after the heads, in multi-head lessons

TEX_TITLES = {
    "X": r"$X$, the tokens",
    "W_Q": r"$W_Q$, learned query weights",
    "W_K": r"$W_K$, learned key weights",
    "W_V": r"$W_V$, learned value weights",
    "W_O": r"$W_O$, the output projection",
    "Q": r"$Q = X W_Q$, the queries",
    "K": r"$K = X W_K$, the keys",
    "V": r"$V = X W_V$, the values",
    "scores": r"$\mathrm{scores} = Q K^\top$",
    "scaled": r"$\mathrm{scaled} = \mathrm{scores} / \sqrt{d_k}$",
    "weights": r"$\mathrm{weights} = \mathrm{softmax}$ of each row",
    "Z": r"$Z = \mathrm{weights} \cdot V$",
    "concat": "concat: the heads side by side",
    "output": r"$\mathrm{output} = \mathrm{concat} \cdot W_O$",
}
MASK_NOTE = (
    "Causal mask: before the softmax, every entry of scaled above the diagonal becomes −∞ "
    "(a token may not look at the tokens after it), so its weight is exactly 0."
)
FORMULA = r"Z = \mathrm{softmax}\left(\frac{Q K^\top}{\sqrt{d_k}}\right) V"


def fill_steps(d: Derivation) -> list[Step]:
    """The steps a student fills in, in the order they are computed."""
    return [s for s in d.steps if s.name in FILL + FILL_TOP]


def input_steps(d: Derivation) -> list[Step]:
    """The matrices the lesson gives."""
    return [s for s in d.steps if s.op == "input"]


def _places(d: Derivation, precision: int | None) -> int:
    return d.lesson.precision if precision is None else precision


def shape_text(step: Step) -> str:
    """The shape arithmetic in plain text: ``(3 × 4) · (4 × 2) = 3 × 2``."""
    n, m = step.shape
    if step.op == "matmul":
        return words.matmul_shape(step)
    if step.op == "concat":
        parts = " + ".join(str(s.shape[1]) for s in step.args)
        return f"{parts} = {m} columns, {n} × {m}"
    return f"{n} × {m}"


# ---------------------------------------------------------------------------------------------
# working, as LaTeX math (shared by Markdown and LaTeX)


def tex_text(text: str) -> str:
    """Plain text made safe for LaTeX (text mode): specials escaped, math symbols spelled."""
    out = []
    for ch in text:
        if ch in "&%$#_{}":
            out.append("\\" + ch)
        elif ch in _TEX_CHARS:
            out.append(_TEX_CHARS[ch])
        elif ord(ch) < 128 or (ch.isalpha() and ord(ch) < 0x250):
            out.append(ch)
        else:
            out.append("?")  # pdflatex knows no glyph for it
    return "".join(out)


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
    return text.replace(fmt.MINUS, "-").replace("∞", r"\infty")


def tex_label(label: str) -> str:
    return label if label.isdigit() else r"\text{" + tex_text(label) + "}"


def step_tex(step: Step) -> str:
    """A step's name in math: ``Q``, ``W_{Q}``, ``\\mathrm{scores}``, with ``^{(2)}`` for head 2."""
    if step.name.startswith("W_"):
        name = f"W_{{{step.name[2:]}}}"
    elif len(step.name) == 1:
        name = step.name
    else:
        name = rf"\mathrm{{{step.name}}}"
    return name + (f"^{{({step.head})}}" if step.head else "")


def cell_tex(step: Step, i: int, j: int) -> str:
    """``Q_{\\text{cats}, \\text{1}}``: a cell's name in math."""
    return f"{step_tex(step)}_{{{tex_label(step.rows[i])}, {tex_label(step.cols[j])}}}"


@functools.lru_cache(maxsize=1 << 17)  # a cell is a term of many sums (see fmt.round_half_up)
def _operand(cell: Cell, places: int) -> str:
    t = tex_num(fmt.operand(cell, places))
    return f"({t})" if t.startswith("-") else t


def _result(cell: Cell, step: Step, places: int) -> str:
    rel = r"\approx" if fmt.is_rounded(cell, places) else "="
    return f"{rel} {tex_num(fmt.shown(cell, step, places))}"


def working(step: Step, i: int, j: int, places: int) -> str:
    """The worked line of one cell as LaTeX math, from the exact inputs shown rounded."""
    terms, result, hand = working_parts(step, i, j, places)
    line = " + ".join(terms) + (" " if terms else "") + result
    if hand is not None:
        line += rf" \quad (\text{{the rounded inputs shown give }} {hand})"
    return line


def working_parts(step: Step, i: int, j: int, places: int) -> tuple[list[str], str, str | None]:
    """A cell's working in pieces: the terms of a sum (empty when it is not one), the rest of the
    line up to the result, and what the rounded inputs shown give when that differs (else None).
    The pieces let the LaTeX key break a long line between terms."""
    cell = step.cells[i][j]
    if step.op == "matmul":
        pairs = step.terms(i, j)
        terms = _long_sum(
            pairs, lambda p: rf"{_operand(p[0], places)} \cdot {_operand(p[1], places)}"
        )
        hand = None
        if not fmt.step_is_whole(step):  # a table of whole numbers has no rounding to explain
            by_hand = fmt.rounded_dot(pairs, places)
            if by_hand != fmt.round_half_up(cell, places):
                # the trap of rounding early: say so, so a grader does not mark it as a slip
                hand = tex_num(fmt.decimal_text(by_hand))
        return terms, _result(cell, step, places), hand
    if step.op == "scale":
        score = step.args[0].cells[i][j]
        exact = ""
        if fmt.is_rounded(cell, places) and not too_long(step, i, j):
            import sympy

            exact = f" = {sympy.latex(cell.exact)}"
        line = (
            rf"{_operand(score, places)} / \sqrt{{{step.divisor}}}{exact} "
            f"{_result(cell, step, places)}"
        )
        return [], line, None
    if step.op == "softmax":
        scaled = step.args[0].cells[i]
        if step.hidden(i, j):
            return [], r"e^{-\infty} / \ldots = 0", None
        total = _exp_total(step.args[0], i, places)
        top = f"e^{{{tex_num(fmt.operand(scaled[j], places))}}}"
        return [], rf"\frac{{{top}}}{{{total}}} {_result(cell, step, places)}", None
    if step.op == "concat":
        part, jj = step.source_of_column(j)
        return [], f"{cell_tex(part, i, jj)} {_result(cell, step, places)}", None
    return [], tex_num(fmt.shown(cell, step, places)), None


@functools.lru_cache(maxsize=1024)  # the same for every cell of a row: built once per row
def _exp_total(scaled: Step, i: int, places: int) -> str:
    """``e^{1.41} + e^{2.83} + …``: the denominator of row i's softmax, unmasked keys only."""
    seen = [c for c in scaled.cells[i] if not c.masked]
    return " + ".join(_long_sum(seen, lambda c: f"e^{{{tex_num(fmt.operand(c, places))}}}"))


KEY_TERMS = 12  # a longer sum shows its first and last terms and how many are left out
KEY_HEAD, KEY_TAIL = 4, 2


def _long_sum(items: Sequence[T], term: Callable[[T], str]) -> list[str]:
    """Each item as a term of a sum. A sum of more than ``KEY_TERMS`` shows its first four and
    last two terms around ``(n more terms)``: an answer key then grows with its cells, not with
    d × its cells (128 tokens and d_model 512 would be 33 million terms)."""
    if len(items) <= KEY_TERMS:
        return [term(x) for x in items]
    more = len(items) - KEY_HEAD - KEY_TAIL
    head, tail = items[:KEY_HEAD], items[-KEY_TAIL:]
    return [*map(term, head), rf"(\text{{{more} more terms}})", *map(term, tail)]


TEX_TERMS_PER_LINE = 4  # a longer sum is broken after every 4 terms, so it fits the page


def tex_working_lines(step: Step, i: int, j: int, places: int) -> list[str]:
    """One cell's working as ``align*`` rows: the sum broken every few terms, and the remark on
    what the rounded inputs give in text on a row of its own (it would run off the page)."""
    terms, result, hand = working_parts(step, i, j, places)
    name = cell_tex(step, i, j)
    if len(terms) <= TEX_TERMS_PER_LINE + 1:
        rows = [" + ".join(terms) + (" " if terms else "") + result]
    else:
        chunks = [
            " + ".join(terms[k : k + TEX_TERMS_PER_LINE])
            for k in range(0, len(terms), TEX_TERMS_PER_LINE)
        ]
        rows = [chunk + " +" for chunk in chunks[:-1]] + [f"{chunks[-1]} {result}"]
        rows = [rows[0]] + [r"\phantom{=}\ " + row for row in rows[1:]]
    lines = [f"{name} &= {rows[0]}"] + [f"&{row}" for row in rows[1:]]
    if hand is not None:
        lines.append(rf"&\phantom{{=}}\ \text{{(the rounded inputs shown give ${hand}$)}}")
    return lines


# ---------------------------------------------------------------------------------------------
# Markdown


def _md_escape(text: str) -> str:
    return "".join("\\" + ch if ch in "\\|*_`$<>[]" else ch for ch in text)


def md_table(step: Step, places: int, answers: bool = True) -> list[str]:
    head = "| | " + " | ".join(_md_escape(c) for c in step.cols) + " |"
    rule = "|---|" + "---:|" * len(step.cols)
    rows = []
    for i, row in enumerate(step.cells):
        texts = [fmt.shown(c, step, places) if answers else " " for c in row]
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
        f"$${FORMULA}$$",
        "",
        f"Decimals are rounded to {places} places, half away from zero (0.125 → 0.13).",
    ]
    if not answers:
        out.append("Fill in every empty cell. Carry one more decimal than you write down.")
    out += ["", "## Inputs", ""]
    for step in input_steps(d):
        out += _md_step_heading(step, "###") + md_table(step, places) + [""]
    out += ["## Steps", ""]
    shown_head = None
    for step in fill_steps(d):
        if step.head is not None and step.head != shown_head:
            shown_head = step.head
            out += [f"### {_md_escape(words.head_label(d.lesson, step.head))}", ""]
        level = "####" if lesson.multi_head else "###"
        out += _md_step_heading(step, level)
        out += [f"Shape: {shape_text(step)}", ""]
        if step.name == "weights" and lesson.mask == "causal":
            out += [MASK_NOTE, ""]
        out += [*md_table(step, places, answers), ""]
        if answers and step.op != "input":
            out += [
                f"- ${cell_tex(step, i, j)} = {working(step, i, j, places)}$" for i, j in _ij(step)
            ]
            out.append("")
    return "\n".join(out).rstrip() + "\n"


def _facts(d: Derivation, text: Callable[[str], str], math: Callable[[str], str]) -> str:
    """``N = 3 tokens (cats, chase, mice), d_model = 4, ...``, spelled by ``text`` and ``math``."""
    return ", ".join(words.lesson_facts(d.lesson, text, math)) + "."


def _md_step_heading(step: Step, level: str) -> list[str]:
    title = words.TITLES[step.name]
    if step.head is not None and step.op == "input":
        title = f"{title} (head {step.head})"
    return [f"{level} {_md_escape(title)} ({step.shape[0]} × {step.shape[1]})", ""]


def _ij(step: Step) -> Iterator[tuple[int, int]]:
    for i in range(len(step.rows)):
        for j in range(len(step.cols)):
            yield i, j


# ---------------------------------------------------------------------------------------------
# LaTeX

BLANK_TEX = r"\underline{\hspace{1.3cm}}"


def tex_matrix(step: Step, places: int, answers: bool = True) -> str:
    rows = [
        " & ".join(tex_num(fmt.shown(c, step, places)) if answers else BLANK_TEX for c in row)
        for row in step.cells
    ]
    body = " \\\\\n  ".join(rows)
    return "\\begin{bmatrix}\n  " + body + "\n\\end{bmatrix}"


def _tex_block(step: Step, places: int, answers: bool) -> list[str]:
    math = f"{step_tex(step)} = {tex_matrix(step, places, answers)}"
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
        rf"\[ {FORMULA} \]",
        f"Decimals are rounded to {places} places, half away from zero (0.125 becomes 0.13).",
    ]
    if not answers:
        out.append(" Fill in every blank. Carry one more decimal than you write down.")
    out += ["", r"\subsection*{Inputs}"]
    for step in input_steps(d):
        out += _tex_heading(step, r"\paragraph")
        out += _tex_block(step, places, True)
    out.append(r"\subsection*{Steps}")
    shown_head = None
    for step in fill_steps(d):
        if step.head is not None and step.head != shown_head:
            shown_head = step.head
            out.append(rf"\subsubsection*{{{tex_text(words.head_label(d.lesson, step.head))}}}")
        out += _tex_heading(step, r"\paragraph")
        out.append(f"Shape: {tex_text(shape_text(step))}.")
        if step.name == "weights" and lesson.mask == "causal":
            out.append(tex_text(MASK_NOTE))
        out += _tex_block(step, places, answers)
        if answers and step.op != "input":
            out.append(r"\begin{align*}")
            lines = [line for i, j in _ij(step) for line in tex_working_lines(step, i, j, places)]
            out.append(" \\\\\n".join(lines))
            out += [r"\end{align*}", ""]
    out.append(r"\end{document}")
    return "\n".join(out) + "\n"


def _tex_heading(step: Step, command: str) -> list[str]:
    title = TEX_TITLES[step.name]
    if step.head is not None and step.op == "input":
        title = f"{title} (head {step.head})"
    return [f"{command}{{{title} (${step.shape[0]} \\times {step.shape[1]}$)}}", ""]


# ---------------------------------------------------------------------------------------------
# the blank answer sheet (YAML)

SHEET_HELP = """\
# Fill in every null with your answer: a number (0.49), a fraction (1/3) or a simple
# expression (sqrt(2), 4/sqrt(2), e^1.41/(e^1.41 + e^2.83 + e^1.41)). Put quotes around an
# answer that contains a comma or a colon. Leave null what you did not work out.
# Rows are tokens (named in the comment at the end of each row); columns are named above.
# Grade it with: attn-tutor grade {lesson} THIS-FILE"""


def _yaml_str(text: str) -> str:
    """A YAML double-quoted string (JSON's escaping is valid YAML)."""
    import json

    return words.escape_c1(json.dumps(text, ensure_ascii=False))  # YAML refuses raw C1


def _sheet_matrix(step: Step, indent: str, d: Derivation) -> list[str]:
    n, m = step.shape
    cols = ", ".join(step.cols)
    what = shape_text(step)
    lines = [f"{indent}# {words.TITLES[step.name]}: {what}; columns: {cols}"]
    if step.name == "weights" and d.lesson.mask == "causal":
        lines.append(f"{indent}# causal mask: the weights above the diagonal are 0")
    lines.append(f"{indent}{step.name}:")
    row = "[" + ", ".join(["null"] * m) + "]"
    lines += [f"{indent}  - {row}  # {step.rows[i]}" for i in range(n)]
    return lines


def answer_sheet(d: Derivation) -> str:
    """A blank answer sheet in YAML: one matrix of nulls per step to fill."""
    lesson = d.lesson
    out = [
        f"# attn-tutor answer sheet: {lesson.title}",
        # a file name: quoted for a shell, and on one line, so it stays inside the comment
        SHEET_HELP.format(lesson=words.visible(shlex.quote(lesson.name))),
        f"lesson: {_yaml_str(lesson.name)}",
        'student: ""   # your name',
        "",
    ]
    per_head = [s for s in fill_steps(d) if s.name in FILL]
    if lesson.multi_head:
        out.append("heads:")
        for h in range(1, d.head_count + 1):
            out.append(f"  - # {words.head_label(d.lesson, h)}")
            for step in (s for s in per_head if s.head == h):
                out += _sheet_matrix(step, "    ", d)
            out.append("")
    else:
        for step in per_head:
            out += [*_sheet_matrix(step, "", d), ""]
    for step in fill_steps(d):
        if step.name in FILL_TOP:
            out += [*_sheet_matrix(step, "", d), ""]
    return "\n".join(out).rstrip() + "\n"
