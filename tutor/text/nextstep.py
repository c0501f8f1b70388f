"""Words for one decoding step with the KV cache (``next:``): which rows the cache gives, and
the multiplications it saves. Plain text, shared by the walk and the exports."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tutor.core.engine import Step
    from tutor.core.lesson import Lesson


def header_line(lesson: Lesson) -> str:
    assert lesson.next is not None
    if lesson.next_after:
        tokens = [t.token for t in lesson.decoding]
        return (
            f"then {len(tokens)} decoding steps: {', '.join(tokens)} arrive one after another; "
            "only their q, k, v are new, and each one's row of scores reads the cached K and V "
            "and the new keys up to its own"
        )
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
        f"of {cache.key}, no multiplications); new: {', '.join(step.rows[n:])} ({new.key})"
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
    if lesson.next_after:
        line = "\n".join(steps_lines(lesson))
    if lesson.mask != "causal":
        line += (
            "; without a causal mask the earlier tokens would attend to the new one too, so "
            "their rows of Z change and a real decoder uses mask: causal"
        )
    return line


def steps_lines(lesson: Lesson) -> list[str]:
    """Several decoding steps (``next:`` as a list): per step the rows the cache gives and the
    multiplications with it and without it, then the totals and how each grows."""
    from tutor.core.decode import savings

    each = savings(lesson)
    out = []
    for k, (token, s) in enumerate(zip(lesson.decoding, each, strict=True), 1):
        out.append(
            f"step {k}, {token.token}: {s.reused_rows} rows of K and V reused; {s.cached} "
            f"multiplications with the cache, against {s.full} to work all {s.reused_rows + 1} "
            "tokens again"
        )
    cached, full = sum(s.cached for s in each), sum(s.full for s in each)
    reused = sum(s.reused_rows for s in each)
    percent = round(100 * (full - cached) / full) if full else 0
    causal = " (only the visible scores, under the causal mask)" if lesson.mask == "causal" else ""
    out.append(
        f"in all, {len(each)} steps: {reused} rows reused; {cached} multiplications with the "
        f"cache, against {full} to work everything again at each step{causal}: "
        f"{full - cached} saved ({percent}%)"
    )
    out.append(
        "with t tokens so far, a step with the cache works one row of scores against t keys, "
        "so its work grows like t; working every token again pairs every token with every "
        "token before it, which grows like t²"
    )
    return out
