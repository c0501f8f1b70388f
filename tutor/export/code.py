"""A lesson as a short NumPy program: every step of the derivation as one line of code.

The program is written from the derivation's own steps (each step's rule gives its NumPy
line), so it has exactly the steps the lesson has: the mask, heads and W_O, positions (E + P,
RoPE), a source sentence, the KV cache. Given numbers are printed exactly as the lesson writes
them (``0.5``, ``1/3``); the sin/cos table of sinusoidal positions, which has no finite decimal,
to 17 digits. Pure: a derivation in, text out.
"""

from __future__ import annotations

from tutor.core.engine import Derivation, Step
from tutor.text import format as fmt


def var(step: Step) -> str:
    """The step's name in the program: ``Q``, or ``Q_1`` for head 1."""
    return step.name if step.head is None else f"{step.name}_{step.head}"


def _number(cell) -> str:  # type: ignore[no-untyped-def]
    if cell.q is None:  # a sin/cos table entry: no finite decimal
        return repr(float(cell.approx))
    q = cell.q
    p, d = int(q.numerator), int(q.denominator)
    if d == 1:
        return str(p)
    if fmt.decimal_places(d) is not None and fmt.decimal_places(d) <= 12:
        # (the text's minus is Unicode's, for people; Python needs the ASCII one)
        return fmt.decimal_text(fmt.round_half_up(cell, fmt.decimal_places(d))).replace(
            fmt.MINUS, "-"
        )
    return f"{p}/{d}"


def _matrix(step: Step) -> str:
    rows = ["[" + ", ".join(_number(c) for c in row) + "]" for row in step.cells]
    if len(rows) == 1:
        return f"np.array([{rows[0]}])"
    inner = ",\n    ".join(rows)
    return f"np.array([\n    {inner},\n])"


def _line(step: Step) -> str:
    """One step as code: the matrix a lesson gives, or its rule's NumPy line."""
    if step.given:
        return f"{var(step)} = {_matrix(step)}"
    return f"{var(step)} = {step.numpy([var(s) for s in step.inputs])}"


def _shape(step: Step) -> str:
    return f"  # ({len(step.rows)}, {len(step.cols)})"


def program(d: Derivation) -> str:
    """The lesson as a runnable NumPy program, one line per step, printing Z (or the output)."""
    lesson = d.lesson
    helpers = dict.fromkeys(s.helper for s in d.steps if s.helper)  # each once, in order
    out = [
        f'"""{lesson.title}: attention with NumPy, step by step (from attn-tutor code).',
        "",
        "Each line is one step of `attn-tutor walk " + lesson.name + "`; shapes in the comments.",
        '"""',
        "",
        "import numpy as np",
        "",
    ]
    for helper in helpers:
        out += [helper, ""]
    if lesson.layout == "columns":
        out += ["# (the lesson shows every matrix turned; the arithmetic is the same)", ""]
    out.append(f"tokens = {list(lesson.tokens)!r}")
    if lesson.source is not None:
        out.append(f"source = {list(lesson.source)!r}")
    head = None
    for step in d.steps:
        if step.head != head and step.head is not None:
            out += ["", f"# head {step.head}"]
        head = step.head
        out.append(f"{_line(step)}{_shape(step)}")
    last = d.steps[-1]
    out += ["", "np.set_printoptions(precision=4, suppress=True)", f"print({var(last)})"]
    return "\n".join(out) + "\n"


def variables(d: Derivation) -> dict[str, Step]:
    """The program's variable for each step (for a test that runs it)."""
    return {var(s): s for s in d.steps}
