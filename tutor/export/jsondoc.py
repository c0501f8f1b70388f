"""Derivation → documents: the JSON contract of ``walk --json`` (and, later, worksheets)."""

from __future__ import annotations

import math
from collections.abc import Sequence

from tutor.core.engine import Derivation, Step


def step_json(step: Step, exact: bool) -> dict[str, object]:
    """One step as plain JSON data. Masked cells (−∞) have value null and exact "-oo"."""
    data: dict[str, object] = {
        "name": step.name,
        "head": step.head,
        "rows": list(step.rows),
        "cols": list(step.cols),
        "value": [[None if math.isinf(c.value) else c.value for c in row] for row in step.cells],
    }
    if exact:
        data["exact"] = [[str(c.exact) for c in row] for row in step.cells]
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
    return {
        "lesson": d.lesson.name,
        "title": d.lesson.title,
        "tokens": list(d.lesson.tokens),
        "steps": [step_json(s, exact) for s in chosen],
    }
