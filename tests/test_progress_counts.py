"""Issue 30, ``progress`` that helps: one wrong answer is one slip (a tie of two explanations is
"perhaps A or B"), and "practise next" weighs a miss over a skip."""

from __future__ import annotations

from tutor.assess import history
from tutor.assess.slips import reminder


def cell(step: str, outcome: str, slips=(), skipped: bool = False) -> dict:  # type: ignore[no-untyped-def, type-arg]
    return {"step": step, "head": None, "outcome": outcome, "slips": list(slips),
            "skipped": skipped}  # fmt: skip


def test_a_tie_of_two_slips_is_one_slip() -> None:
    rec = {"lesson": "l", "cells": [cell("weights", "missed", ["softmax-column|unnormalised"])]}
    (row,) = history.progress([rec])
    assert row.slips == {"softmax-column|unnormalised": 1}  # one answer, one slip
    said = reminder("softmax-column|unnormalised", 1)
    assert said.startswith("once: perhaps ") and " or " in said


def test_practise_next_weighs_a_miss_over_a_skip() -> None:
    rec = {
        "lesson": "l",
        "cells": [
            cell("V", "missed", skipped=True),  # its only miss: a skip
            *(cell("scaled", "missed") for _ in range(4)),
            cell("scaled", "first"),  # 1 of 5
        ],
    }
    weakest = history.practise_next(history.progress([rec]))
    assert weakest is not None and weakest.step == "scaled"
