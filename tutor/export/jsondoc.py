"""Derivation → documents: the JSON contract of ``walk --json`` (and, later, worksheets)."""

from __future__ import annotations

import math
from collections.abc import Sequence

from tutor.core.engine import Derivation, Step
from tutor.core.exact_size import too_long
from tutor.core.positions import Rotate, angle
from tutor.core.spec import GIVEN_KEYS


def step_json(step: Step, exact: bool) -> dict[str, object]:
    """One step as plain JSON data. Masked cells (−∞) have value null and exact "-oo"; an exact
    form too long to build and read (see ``tutor.core.exact_size``) is null."""
    data: dict[str, object] = {
        "name": step.name,
        "head": step.head,
        "rows": list(step.rows),
        "cols": list(step.cols),
        "value": [[None if math.isinf(c.value) else c.value for c in row] for row in step.cells],
    }
    if exact:
        n, m = step.shape
        data["exact"] = [
            [None if too_long(step, i, j) else str(step.cells[i][j].exact) for j in range(m)]
            for i in range(n)
        ]
    return data


def derivation_json(
    d: Derivation, exact: bool = False, steps: Sequence[str] | None = None, head: int | None = None
) -> dict[str, object]:
    """The whole derivation (or the chosen steps) as one JSON object."""
    chosen = [
        s
        for s in d.steps
        if (steps is None or s.name in steps) and (head is None or s.head in (None, head))
    ]
    doc: dict[str, object] = {
        "lesson": d.lesson.name,
        "title": d.lesson.title,
        "tokens": list(d.lesson.tokens),
    }
    # issue 17's keys only where a lesson has them: the JSON of other lessons stays as it was
    if d.lesson.source is not None:
        doc["source"] = list(d.lesson.source)
    if d.lesson.positions != "none":
        doc["positions"] = d.lesson.positions
    if d.lesson.qkv:  # issue 28: the lesson starts at the scores
        doc["given"] = list(GIVEN_KEYS)
    if d.lesson.scale != "sqrt_d_k":  # issue 41: the lesson's own scale, to reproduce it
        doc["scale"] = scale_json(d)
    if d.lesson.biased:  # issue 41: which products add a bias (their rows are given steps)
        doc["biases"] = {s.key: s.bias.key for s in d.steps if getattr(s, "bias", None) is not None}
    doc["steps"] = [step_json(s, exact) for s in chosen]
    return doc | extras(d)


def scale_json(d: Derivation) -> dict[str, object]:
    """What the scores are divided by: the lesson's choice, and (unless none) the divisor,
    exact (``5/2``, ``sqrt(8)``) and as a double."""
    lesson = d.lesson
    out: dict[str, object] = {"choice": lesson.scale}
    divisor = lesson.divisor(lesson.d_k)
    if isinstance(divisor, tuple):
        p, q = divisor
        out |= {"divisor": f"{p}/{q}" if q != 1 else str(p), "value": p / q}
    elif divisor is not None:
        out |= {"divisor": f"sqrt({divisor})", "value": math.sqrt(divisor)}
    return out


def extras(d: Derivation) -> dict[str, object]:
    """Issue 17's facts, only for lessons that use them (so other lessons' JSON is unchanged):
    which key/value group each head reads, the decoding step's saving, the layout."""
    lesson = d.lesson
    out: dict[str, object] = {}
    if lesson.kv_groups is not None:
        heads = range(1, len(lesson.heads) + 1)
        out["kv_groups"] = lesson.kv_groups
        out["group_of_head"] = {str(h): lesson.group_of(h) for h in heads}
    if lesson.next is not None:
        from tutor.core.decode import saving

        s = saving(lesson)
        out["next"] = {
            "token": lesson.next.token,
            "reused_rows": s.reused_rows,
            "multiplications": {"cached": s.cached, "full": s.full, "saved": s.saved},
        }
        if lesson.next_after:  # next: as a list: each step, and the totals
            from tutor.core.decode import savings

            each = savings(lesson)
            cached, full = sum(e.cached for e in each), sum(e.full for e in each)
            out["next"] = {
                "tokens": [t.token for t in lesson.decoding],
                "steps": [
                    {
                        "token": t.token,
                        "reused_rows": e.reused_rows,
                        "multiplications": {"cached": e.cached, "full": e.full, "saved": e.saved},
                    }
                    for t, e in zip(lesson.decoding, each, strict=True)
                ],
                "reused_rows": sum(e.reused_rows for e in each),
                "multiplications": {"cached": cached, "full": full, "saved": full - cached},
            }
    if lesson.layout != "rows":
        out["layout"] = lesson.layout
    if counts := kv_json(lesson):
        out["kv"] = counts
    turned = next((s for s in d.steps if isinstance(s, Rotate)), None)
    if turned is not None:
        out["rope"] = rope_json(turned)
    return out


def kv_json(lesson) -> dict[str, object]:  # type: ignore[no-untyped-def]
    """A lesson with heads: the header's K/V table as data (per layer, and × layers when the
    lesson gives them), W_Q apart; empty for one head."""
    from tutor.text.groups import kv_counts, query_weights

    rows = kv_counts(lesson)
    if not rows:
        return {}
    layers = lesson.layers

    def row(r) -> dict[str, object]:  # type: ignore[no-untyped-def]
        out: dict[str, object] = {
            "attention": r.name,
            "kv_heads": r.kv_heads,
            "this_lesson": r.this,
            "kv_weights": r.weights,
            "kv_cache_per_token": r.cache,
        }
        if layers is not None:
            out["kv_weights_all_layers"] = r.weights * layers
            out["kv_cache_per_token_all_layers"] = r.cache * layers
        return out

    return {
        "layers": layers,
        "query_heads": len(lesson.heads),
        "W_Q_weights": query_weights(lesson),
        "compared": [row(r) for r in rows],
    }


def rope_json(step: Rotate) -> dict[str, object]:
    """RoPE's angles: θ per pair of columns, and each token's position × θ, exactly (radians,
    as sympy writes them) with their value, and in degrees when they are a rational number."""
    import sympy

    def one(a: sympy.Expr) -> dict[str, object]:
        deg = sympy.simplify(a * 180 / sympy.pi)  # rational for an angle given in degrees
        return {
            "radians": str(a),
            "value": float(a),
            "degrees": str(deg) if deg.is_Rational else None,
        }

    return {
        "theta": [one(t) for t in step.angles],
        "angles": {
            label: [one(angle(step, i, pair)) for pair in range(len(step.angles))]
            for i, label in enumerate(step.rows)
        },
    }
