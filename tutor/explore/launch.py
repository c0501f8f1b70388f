"""Starting the explorer: Textual is an optional extra, so say how to get it when it is missing."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from tutor.core.errors import TutorError
from tutor.core.lesson import Lesson

INSTALL = "pip install 'attn-tutor[explore]'"


def need_textual() -> None:
    """Raise ``TutorError`` with the install command when Textual is not installed."""
    if importlib.util.find_spec("textual") is None:
        raise TutorError(f"explore needs Textual, an optional extra; install it with: {INSTALL}")


def explore(lesson: Lesson, source: str, folder: Path | None = None) -> None:
    """Run the explorer on ``lesson`` until the student quits."""
    need_textual()
    from tutor.explore.app import ExploreApp

    app = ExploreApp(lesson, source, folder)
    app.run()
    if app.failure is not None:
        raise app.failure
