"""Words for grouped heads (``kv_groups``): which key/value head a query head reads, and what
sharing saves in parameters and in the KV cache. Plain text, shared by the walk and exports."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tutor.core.lesson import Lesson


def _listed(heads: tuple[int, ...]) -> str:
    return ", ".join(str(h) for h in heads)


def reads(lesson: Lesson, head: int) -> str | None:
    """What query head ``head`` reads: ``reads K and V of group 1 (made in head 1, shared by heads
    1, 2)``; None when the lesson has no groups."""
    if lesson.kv_groups is None:
        return None
    g = lesson.group_of(head)
    members = lesson.group_heads(g)
    owner = members[0]
    kind = "multi-query: every head" if lesson.kv_groups == 1 else f"heads {_listed(members)}"
    if head == owner:
        return (
            f"Group {g} of {lesson.kv_groups}: this head makes the group's K and V "
            f"(head{owner}.K, head{owner}.V); {kind} read them."
        )
    return (
        f"Group {g} of {lesson.kv_groups}: this head makes only its own Q and reads the group's "
        f"K and V from head {owner} (head{owner}.K, head{owner}.V); {kind} share them."
    )


def counts(lesson: Lesson) -> tuple[int, int]:
    """Parameters of every W_Q, W_K and W_V: (grouped, full multi-head with one W_K, W_V per
    head)."""
    h, g = len(lesson.heads), lesson.kv_groups or len(lesson.heads)
    d, d_k, d_v = lesson.d_model, lesson.d_k, lesson.d_v
    return h * d * d_k + g * d * (d_k + d_v), h * d * (2 * d_k + d_v)


def parameters(lesson: Lesson) -> str | None:
    """The parameter count against full multi-head attention, and the KV cache per token."""
    if lesson.kv_groups is None:
        return None
    h, g = len(lesson.heads), lesson.kv_groups
    d, d_k, d_v = lesson.d_model, lesson.d_k, lesson.d_v
    grouped, full = counts(lesson)
    return (
        f"parameters: {h} × W_Q ({d}×{d_k}) + {g} × (W_K ({d}×{d_k}) + W_V ({d}×{d_v})) = "
        f"{grouped}, against {h} × ({d}×{d_k} + {d}×{d_k} + {d}×{d_v}) = {full} with a W_K and "
        f"W_V per head; a KV cache keeps {g} × ({d_k} + {d_v}) = {g * (d_k + d_v)} numbers per "
        f"token instead of {h * (d_k + d_v)}"
    )
