"""Words for one decoding step with the KV cache (``next:``): which rows the cache gives, and
the multiplications it saves. Plain text, shared by the walk and the exports."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tutor.core.engine import Step
    from tutor.core.lesson import Lesson


def header_line(lesson: Lesson) -> str:
    assert lesson.next is not None
    return (
        f"then one decoding step: {lesson.next.token} arrives; only its q, k, v are new, and its "
        "one row of scores reads the cached K and V"
    )


def reuse_line(step: Step) -> str:
    """``reused from the cache: rows I, ate, the (3 × 2 numbers, no multiplications); new:
    cake (k_new)``."""
    cache, new = step.args
    n, width = len(cache.rows), len(step.cols)
    rows = ", ".join(cache.rows)
    return (
        f"reused from the cache: {'row' if n == 1 else 'rows'} {rows} ({n} × {width} numbers "
        f"of {cache.key}, no multiplications); new: {step.rows[-1]} ({new.key})"
    )


def saving_line(lesson: Lesson) -> str:
    """The multiplications of this step, with the cache and without it."""
    from tutor.core.decode import saving

    s = saving(lesson)
    n = lesson.n + 1
    percent = round(100 * s.saved / s.full) if s.full else 0
    causal = " (only the visible scores, under the causal mask)" if lesson.mask == "causal" else ""
    line = (
        f"multiplications for this token: {s.cached} with the cache, against {s.full} to work "
        f"all {n} tokens again{causal}: {s.saved} saved ({percent}%)"
    )
    if lesson.mask != "causal":
        line += (
            "; without a causal mask the earlier tokens would attend to the new one too, so "
            "their rows of Z change and a real decoder uses mask: causal"
        )
    return line
