"""RoPE's point in words: a turned score depends only on how far apart the two tokens stand.
Plain text, for the walk's scores step (``tutor.core.positions.relative`` does the sums)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tutor.text import format as fmt
from tutor.text.cells import cell_name

if TYPE_CHECKING:
    from tutor.core.engine import Step

MAX_FORM = 40  # characters of an exact form worth writing in the note


def angle_text(a) -> str:  # type: ignore[no-untyped-def]
    """An angle as the walk writes one: ``60°`` for a rational number of degrees, else radians
    (``1 rad``, ``−2 rad``)."""
    import sympy

    deg = sympy.simplify(a * 180 / sympy.pi)
    if deg.is_Rational:
        return f"{fmt.degree_text(deg)}°"
    return f"{fmt.tidy_minus(fmt.exact_text(a))} rad"


def relative_note(scores: Step, i: int, j: int, places: int) -> str | None:
    """``RoPE's point: scores[b, c] = Q[b]·R((2 − 1)θ)·K[c]ᵀ …`` for the worked cell, or None
    when the scores are not of turned queries and keys."""
    from tutor.core.positions import relative

    got = relative(scores, i, j)
    if got is None:
        return None
    turns, value = got
    q_rot, k_rot = scores.args
    m, n = i + q_rot.shift, j + k_rot.shift
    q, k = q_rot.args[0], k_rot.args[0]
    row = ", ".join(fmt.operand(c, places) for c in q.cells[i])
    col = ", ".join(fmt.operand(c, places) for c in k.cells[j])
    turned = ", ".join(angle_text(a) for a in turns)
    pairs = (
        "" if len(turns) == 1 else f" ({', '.join(f'pair {p}' for p in range(1, len(turns) + 1))})"
    )
    form = fmt.tidy_minus(fmt.exact_text(value))
    shown = fmt.expr_rounded(value, places)
    result = shown if len(form) > MAX_FORM or form == shown else f"{form} ≈ {shown}"
    if value.is_Rational:
        result = form
    name = cell_name(scores, i, j)
    q_name, k_name = f"{q.key}[{q.rows[i]}]", f"{k.key}[{k.rows[j]}]"
    if m == n:
        return (
            f"RoPE's point: {name} = {q_name}·R(({n} − {m})θ)·{k_name}ᵀ = {q_name}·{k_name}ᵀ = "
            f"{result}. A token's query and key are turned by the same angle ({m}θ), so the "
            "turns cancel: only n − m, how far apart two tokens stand, reaches a score (here "
            "0), never where they stand."
        )
    return (
        f"RoPE's point: {name} = {q_name}·R(({n} − {m})θ)·{k_name}ᵀ. Turning the query by "
        f"{m}θ and the key by {n}θ is the same as turning the key alone by (n − m)θ = "
        f"{turned}{pairs}: [{row}] · ([{col}] turned by {turned}) = {result}, the score above. "
        f"It depends only on n − m = {fmt.tidy_minus(str(n - m))}, so any two tokens {abs(n - m)} "
        f"{'place' if abs(n - m) == 1 else 'places'} apart in this order meet with the same turn."
    )
