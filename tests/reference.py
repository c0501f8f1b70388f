"""An independent float64 implementation of attention, written with numpy only.

It shares nothing with the engine but the lesson loader's parsed entries, so when the two agree
the exact engine is right (and when they do not, one of them is wrong).
"""

from __future__ import annotations

import numpy as np

from tutor.core.lesson import Lesson


def as_array(m) -> np.ndarray:  # type: ignore[no-untyped-def]
    return np.array([[p / q for p, q in row] for row in m], dtype=np.float64)


def attention(lesson: Lesson) -> dict[tuple[str, int | None], np.ndarray]:
    """Every step, keyed by (name, head); head is None for single-head lessons."""
    X = as_array(lesson.X)
    out: dict[tuple[str, int | None], np.ndarray] = {("X", None): X}
    Zs = []
    for n, head in enumerate(lesson.heads, 1):
        h = n if lesson.multi_head else None
        Q, K, V = X @ as_array(head.W_Q), X @ as_array(head.W_K), X @ as_array(head.W_V)
        scores = Q @ K.T
        scaled = scores / np.sqrt(K.shape[1])
        logits = scaled
        if lesson.mask == "causal":
            logits = np.where(np.triu(np.ones_like(scaled, dtype=bool), k=1), -np.inf, scaled)
            out[("masked", h)] = logits
        shifted = np.exp(logits - logits.max(axis=1, keepdims=True))
        weights = shifted / shifted.sum(axis=1, keepdims=True)
        Z = weights @ V
        out.update(
            {
                ("Q", h): Q,
                ("K", h): K,
                ("V", h): V,
                ("scores", h): scores,
                ("scaled", h): scaled,
                ("weights", h): weights,
                ("Z", h): Z,
            }
        )
        Zs.append(Z)
    if lesson.multi_head:
        concat = np.concatenate(Zs, axis=1)
        out[("concat", None)] = concat
        if lesson.W_O is not None:
            out[("output", None)] = concat @ as_array(lesson.W_O)
    return out
