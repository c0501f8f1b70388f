"""Plain-text words shared by the walk (``render``) and the worksheets (``worksheet``), and
``visible`` for showing someone else's text on a terminal.

Rich-free and import-light, so the worksheets can use them without loading rich.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tutor.core.engine import Step
    from tutor.core.lesson import Lesson

TITLES = {
    "X": "X, the tokens",
    "W_Q": "W_Q, learned query weights",
    "W_K": "W_K, learned key weights",
    "W_V": "W_V, learned value weights",
    "Q": "Q = X · W_Q, the queries",
    "K": "K = X · W_K, the keys",
    "V": "V = X · W_V, the values",
    "scores": "scores = Q · Kᵀ",
    "scaled": "scaled = scores / √d_k",
    "masked": "masked: the causal mask",
    "weights": "weights = softmax of each row",
    "Z": "Z = weights · V",
    "concat": "concat: the heads side by side",
    "W_O": "W_O, the output projection",
    "output": "output = concat · W_O",
    "x_new": "x_new, the next token",
    "q_new": "q_new = x_new · W_Q, its query",
    "k_new": "k_new = x_new · W_K, its key",
    "v_new": "v_new = x_new · W_V, its value",
    "K_cache": "K_cache: the cached keys, with k_new below",
    "V_cache": "V_cache: the cached values, with v_new below",
    "scores_new": "scores_new = q_new · K_cacheᵀ, one row",
    "scaled_new": "scaled_new = scores_new / √d_k",
    "weights_new": "weights_new = softmax of the one row",
    "z_new": "z_new = weights_new · V_cache",
    "concat_new": "concat_new: the heads' z_new side by side",
    "output_new": "output_new = concat_new · W_O",
    # issue 17: positions and cross-attention
    "E": "E, the token embeddings",
    "P": "P, the positions",
    "X_src": "X_src, the source sentence's tokens",
    "Q_rot": "Q_rot, the queries turned by position",
    "K_rot": "K_rot, the keys turned by position",
    # cross-attention: the keys and values are made from the source sentence (``title_key``)
    "K_src": "K = X_src · W_K, the source sentence's keys",
    "V_src": "V = X_src · W_V, the source sentence's values",
}
ADDED_X = "X = E + P, each token with its position"


def title_key(step: Step) -> str:
    """The ``TITLES`` entry of a step's heading: its name, or ``K_src``/``V_src`` for keys and
    values made from the source sentence (every exporter's own table uses the same keys)."""
    if step.name in ("K", "V") and step.op == "matmul" and step.args[0].name == "X_src":
        return f"{step.name}_src"
    return step.name


def step_title(step: Step) -> str:
    """A step's heading: ``TITLES``, but X worked as E + P has its own."""
    if step.op == "add":
        return ADDED_X
    if step.name == "scores" and step.args and step.args[0].name == "Q_rot":
        return "scores = Q_rot · K_rotᵀ"
    return TITLES[title_key(step)]


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
    target, source = "the target sentence", "the source sentence"
    match step.name:
        case "X":
            return f"X holds {target}: its tokens ask the questions (the queries come from here)"
        case "X_src":
            return f"X_src holds {source}: its tokens answer (the keys and values come from here)"
        case "Q":
            return f"from {target}: Q = X · W_Q, one row per target token"
        case "K" | "V":
            name = "W_K" if step.name == "K" else "W_V"
            return f"from {source}: {step.name} = X_src · {name}, one row per source token"
        case "scores" | "scaled" | "weights":
            return "rows: target tokens (queries); columns: source tokens (keys)"
        case "Z":
            return "one row per target token, blended from the source tokens' values"
    return None


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


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def visible(text: str, keep: str = "") -> str:
    """``text`` with its control characters spelled out (``\\x1b``, ``\\n``), but those in
    ``keep``. For text from a file name, a sheet, the history or the keyboard: Rich's ``Text``
    keeps it from being read as markup, but passes an escape sequence to the terminal raw."""
    return _CONTROL.sub(lambda m: m[0] if m[0] in keep else repr(m[0])[1:-1], text)


_DEL_C1 = re.compile(r"[\x7f-\x9f]")


def escape_c1(json_text: str) -> str:
    """JSON text (or a YAML double-quoted string) with DEL and the C1 controls as ``\\u``
    escapes. ``json.dumps(..., ensure_ascii=False)`` escapes only C0 and writes these raw, where a
    terminal may read U+009B as CSI and YAML refuses them."""
    return _DEL_C1.sub(lambda m: f"\\u{ord(m[0]):04x}", json_text)
