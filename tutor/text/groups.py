"""Words for grouped heads (``kv_groups``): which key/value head a query head reads, and what
sharing saves in parameters and in the KV cache. Plain text, shared by the walk and exports."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tutor.core.records import record

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


@record
class KVCount:
    """One way of sharing keys and values at a lesson's width: multi-head (a K/V head per
    query head), grouped (G groups) or multi-query (one K/V head)."""

    name: str  # MHA, GQA, MQA
    kv_heads: int
    weights: int  # entries of every W_K and W_V of one layer
    cache: int  # numbers the KV cache keeps per token in one layer
    this: bool  # the lesson's own way


def kv_counts(lesson: Lesson) -> tuple[KVCount, ...]:
    """K/V weights and KV cache per token, per layer, for MHA, each GQA grouping the number of
    heads allows (1 < G < h, G dividing h) and MQA, at the lesson's width; empty for fewer than
    two heads. W_Q is the same in each (``query_weights``), so it is not counted here."""
    h = len(lesson.heads)
    if not lesson.multi_head or h < 2:
        return ()
    d, d_k, d_v = lesson.d_model, lesson.d_k, lesson.d_v
    mine = lesson.kv_groups or h
    ways = [h, *(g for g in range(h - 1, 1, -1) if h % g == 0), 1]
    names = {h: "MHA", 1: "MQA"}
    return tuple(
        KVCount(names.get(g, "GQA"), g, g * d * (d_k + d_v), g * (d_k + d_v), g == mine)
        for g in ways
    )


def query_weights(lesson: Lesson) -> int:
    """Entries of every W_Q: one per query head, whatever the keys and values share."""
    return len(lesson.heads) * lesson.d_model * lesson.d_k


def kv_lines(lesson: Lesson) -> list[str]:
    """The lines under the header's K/V table: how a row is counted, and W_Q apart."""
    h, d, d_k, d_v = len(lesson.heads), lesson.d_model, lesson.d_k, lesson.d_v
    per = (
        f"one layer, then all {lesson.layers}"
        if lesson.layers is not None
        else "one layer (layers: N multiplies them)"
    )
    lines = [
        f"▸ this lesson's way; numbers for {per}",
        f"per K/V head: W_K ({d}×{d_k}) + W_V ({d}×{d_v}) = {d * (d_k + d_v)} weights; the cache "
        f"keeps its k and v, {d_k} + {d_v} = {d_k + d_v} numbers per token",
        f"W_Q is the same in every row: {h} × ({d}×{d_k}) = {query_weights(lesson)} weights, one "
        "per query head",
    ]
    return lines
