"""Three screens of `attn-tutor explore` at 100 × 30, as SVG snapshots (tests/__snapshots__/).

After a deliberate change of the screens, look at the new ones and update them with
``.venv/bin/python -m pytest tests/test_explore_snapshots.py --snapshot-update``.
"""

from __future__ import annotations

import pytest

pytest.importorskip("pytest_textual_snapshot")

from tests.conftest import LESSONS
from tutor.core.lessonfile import load_lesson
from tutor.explore.app import ExploreApp

SIZE = (100, 30)


def app(name: str) -> ExploreApp:
    return ExploreApp(load_lesson(LESSONS / f"{name}.yaml", name), name)


def test_the_first_screen_weights_and_z(snap_compare) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(app("cats-chase-mice"), terminal_size=SIZE, press=["right"])


def test_after_an_edit_the_changed_cells_are_marked(snap_compare) -> None:  # type: ignore[no-untyped-def]
    # on the Q page, follow Q[it, 1] to X[it, 1] and type 3: "it" gains food, as "cake" has
    keys = ["n", *["down"] * 5, "enter", "3", "enter", "p"]
    assert snap_compare(app("the-cake"), terminal_size=SIZE, press=keys)


def test_the_help_overlay(snap_compare) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(app("cats-chase-mice"), terminal_size=SIZE, press=["question_mark"])
