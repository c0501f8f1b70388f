"""A lesson as a short NumPy program: every step of the derivation as one line of code.

The program is written from the derivation's own steps (``Step.op`` and its arguments), so it has
exactly the steps the lesson has: the mask, heads and W_O, positions (E + P, RoPE), a source
sentence, the KV cache. Given numbers are printed exactly as the lesson writes them (``0.5``,
``1/3``); the sin/cos table of sinusoidal positions, which has no finite decimal, to 17 digits.
Pure: a derivation in, text out.
"""

from __future__ import annotations

from tutor.core.engine import Derivation, Step
from tutor.text import format as fmt

HELPERS = {
    "softmax": '''def softmax(x):
    """Each row through softmax: subtract the row's largest, e^x, divide by the row's total."""
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)
''',
    "rotate": '''def rotate(M, angles, shift=0):
    """RoPE: turn each pair of columns (2p, 2p+1) of row i by (i + shift) * angles[p]."""
    out = M.astype(float)
    for i in range(M.shape[0]):
        for p, theta in enumerate(angles):
            a, b = M[i, 2 * p], M[i, 2 * p + 1]
            c, s = np.cos((i + shift) * theta), np.sin((i + shift) * theta)
            out[i, 2 * p], out[i, 2 * p + 1] = a * c - b * s, a * s + b * c
    return out
''',
}


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
    """One step as code, from how the engine made it."""
    a = [var(s) for s in step.args]
    match step.op:
        case "matmul":
            right = f"{a[1]}.T" if step.transpose else a[1]
            return f"{var(step)} = {a[0]} @ {right}"
        case "scale":
            return f"{var(step)} = {a[0]} / np.sqrt({step.divisor})"
        case "mask":
            n, m = step.shape
            return (
                f"{var(step)} = np.where(np.triu(np.ones(({n}, {m}), dtype=bool), k=1), "
                f"-np.inf, {a[0]})"
            )
        case "softmax":
            return f"{var(step)} = softmax({a[0]})"
        case "concat":
            return f"{var(step)} = np.hstack([{', '.join(a)}])"
        case "add":
            return f"{var(step)} = {' + '.join(a)}"
        case "append":
            return f"{var(step)} = np.vstack([{', '.join(a)}])"
        case "rotate":
            angles = ", ".join(repr(float(x)) for x in step.angles)
            shift = f", shift={step.shift}" if step.shift else ""
            return f"{var(step)} = rotate({a[0]}, [{angles}]{shift})"
    raise ValueError(f"no code for a step made by {step.op!r}")


def _shape(step: Step) -> str:
    return f"  # ({len(step.rows)}, {len(step.cols)})"


def program(d: Derivation) -> str:
    """The lesson as a runnable NumPy program, one line per step, printing Z (or the output)."""
    lesson = d.lesson
    ops = {s.op for s in d.steps}
    out = [
        f'"""{lesson.title}: attention with NumPy, step by step (from attn-tutor code).',
        "",
        "Each line is one step of `attn-tutor walk " + lesson.name + "`; shapes in the comments.",
        '"""',
        "",
        "import numpy as np",
        "",
    ]
    if "softmax" in ops:
        out += [HELPERS["softmax"], ""]
    if "rotate" in ops:
        out += [HELPERS["rotate"], ""]
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
        if step.op == "input":
            out.append(f"{var(step)} = {_matrix(step)}{_shape(step)}")
        else:
            out.append(f"{_line(step)}{_shape(step)}")
    last = d.steps[-1]
    out += ["", "np.set_printoptions(precision=4, suppress=True)", f"print({var(last)})"]
    return "\n".join(out) + "\n"


def variables(d: Derivation) -> dict[str, Step]:
    """The program's variable for each step (for a test that runs it)."""
    return {var(s): s for s in d.steps}
