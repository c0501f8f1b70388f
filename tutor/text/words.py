"""Plain-text words shared by the walk (``render``) and the worksheets (``worksheet``), and
``visible`` (from ``text.visible``) for showing someone else's text on a terminal.

Rich-free and import-light, so the worksheets can use them without loading rich.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from tutor.text import steps
from tutor.text.visible import visible  # noqa: F401 (here too, where callers have found it)

if TYPE_CHECKING:
    from tutor.core.engine import Step
    from tutor.core.lesson import Lesson


def step_title(step: Step, lesson: Lesson | None = None, turned: bool = False) -> str:
    """A step's heading, from its words in ``tutor.text.steps`` (X worked as E + P, the turned
    scores and the column layout have their own)."""
    return steps.say(step, "title", lesson, turned)


def scaled_by(lesson: Lesson) -> str:
    """How the header's formula divides the scores (issue 41): `` / √d_k`` as usual, the
    lesson's own ``scale:``, or nothing for ``none``."""
    if lesson.scale_by is not None:
        return " / s"
    return {"none": "", "sqrt_d_model": " / √d_model"}.get(lesson.scale, " / √d_k")


def plus_bias(lesson: Lesson, key: str) -> str:
    """`` + b_Q`` when some head of the lesson adds that bias (issue 41), else nothing."""
    return f" + {key}" if any(getattr(h, key) is not None for h in lesson.heads) else ""


def extra_formulas(lesson: Lesson) -> list[str]:
    """The lines a walk's header adds for positions and cross-attention (none otherwise)."""
    out = []
    if lesson.positions == "given":
        out.append("first X = E + P: each token's embedding plus its position's row")
    elif lesson.positions == "sinusoidal":
        out.append(
            "first X = E + P, P the sinusoidal table: sin and cos of pos / 10000^(2i/d_model)"
        )
    elif lesson.positions == "rope":
        out.append(
            "before the scores, each pair of columns of Q and K turns by position × θ: "
            "scores = Q_rot · K_rotᵀ"
        )
    if lesson.source is not None:
        out.append(
            "cross-attention: the queries come from the target sentence (X), the keys and "
            "values from the source sentence (X_src)"
        )
    return out


def origin(lesson: Lesson, step: Step) -> str | None:
    """Which sentence a step's rows come from, in a cross-attention lesson (else None)."""
    if lesson.source is None:
        return None
    return steps.say(step, "origin", lesson) or None


def plain_math(formula: str) -> str:
    """A formula written for reading, not LaTeX: ``d_{model}`` as ``d_model``."""
    return formula.replace("_{model}", "_model")


def lesson_facts(
    lesson: Lesson, text: Callable[[str], str] = str, math: Callable[[str], str] = plain_math
) -> list[str]:
    """``N = 3 tokens (cats, chase, mice)``, ``d_model = 4``, … as parts for the caller to join.

    ``text`` escapes plain words (Markdown, LaTeX) and ``math`` spells a formula
    (``d_{model}`` is LaTeX's spelling; the default writes ``d_model``).
    """
    tokens = "token" if lesson.n == 1 else "tokens"
    parts = [
        f"{math(f'N = {lesson.n}')} {tokens} ({text(', '.join(lesson.labels))})",
        math(f"d_{{model}} = {lesson.d_model}"),
        math(f"d_k = {lesson.d_k}"),
        math(f"d_v = {lesson.d_v}"),
    ]
    if lesson.qkv:  # Q, K, V given: no X, so no d_model
        parts[1:2] = ["Q, K, V given"]
    if lesson.multi_head:
        parts.append(f"{len(lesson.heads)} heads")
    if lesson.kv_groups is not None:
        g = lesson.kv_groups
        parts.append(f"{g} key/value {'group' if g == 1 else 'groups'}")
    if lesson.mask == "causal":
        parts.append("causal mask")
    if lesson.source is not None:
        n = len(lesson.source)
        parts.append(
            f"{math(f'N_src = {n}')} source {'token' if n == 1 else 'tokens'} "
            f"({text(', '.join(lesson.source_labels))})"
        )
    if lesson.positions != "none":
        parts.append(f"positions: {lesson.positions}")
    return parts


def head_label(lesson: Lesson, head: int) -> str:
    """``Head 2`` or ``Head 2: syntax``, with the head's name when the lesson gives one."""
    name = lesson.heads[head - 1].name
    return f"Head {head}" + (f": {name}" if name else "")


def matmul_shape(step: Step) -> str:
    """The shape arithmetic of a matmul step: ``(3 × 4) · (4 × 2) = 3 × 2`` (with Kᵀ turned)."""
    n, m = step.shape
    (a, b), (c, e) = step.args[0].shape, step.args[1].shape
    if step.transpose:
        c, e = e, c
    return f"({a} × {b}) · ({c} × {e}) = {n} × {m}"


def shape_text(step: Step) -> str:
    """The shape arithmetic in plain text: ``(3 × 4) · (4 × 2) = 3 × 2`` (by the step's rule:
    ``working.rule_shape``)."""
    from tutor.text.working import rule_shape  # the rules' words (a step's engine is loaded)

    return rule_shape(step)


_DEL_C1 = re.compile(r"[\x7f-\x9f]")


def escape_c1(json_text: str) -> str:
    """JSON text (or a YAML double-quoted string) with DEL and the C1 controls as ``\\u``
    escapes. ``json.dumps(..., ensure_ascii=False)`` escapes only C0 and writes these raw, where a
    terminal may read U+009B as CSI and YAML refuses them."""
    return _DEL_C1.sub(lambda m: f"\\u{ord(m[0]):04x}", json_text)
