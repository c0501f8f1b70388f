"""Starting the explorer: Textual is imported only here, when the command runs (its import takes
longer than the rest of the tutor's); an installation without it is told how to mend itself."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from tutor.core.errors import TutorError
from tutor.core.install import install_command
from tutor.core.lesson import Lesson


def need_textual() -> None:
    """Raise ``TutorError`` with the install command when Textual is not installed."""
    if importlib.util.find_spec("textual") is None:
        raise TutorError(
            f"explore needs Textual, which this installation lacks; install it with: "
            f"{install_command()}"
        )


def explore(lesson: Lesson, source: str, folder: Path | None = None) -> None:
    """Run the explorer on ``lesson`` until the student quits."""
    need_textual()
    from tutor.explore.app import ExploreApp

    app = ExploreApp(lesson, source, folder)
    app.run()
    if app.failure is not None:
        raise app.failure
