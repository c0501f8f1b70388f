from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from tutor.cli import app

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
LESSONS = ROOT / "lessons"

# a pinned, colourless environment so output does not depend on the machine
PLAIN_ENV = {
    "NO_COLOR": "1",
    "COLUMNS": "100",
    "LINES": "50",
    "TERM": "dumb",
    "FORCE_COLOR": "",
    "PY_COLORS": "",
    "GITHUB_ACTIONS": "",
    "ATTN_TUTOR_LESSONS": "",
}


@pytest.fixture
def run():
    """Run the CLI in-process: run("walk", "--json") -> click Result (exit_code, stdout, stderr)."""
    runner = CliRunner()

    def invoke(*args: str, input: str | None = None, env: dict | None = None):  # type: ignore[no-untyped-def]
        return runner.invoke(app, list(args), input=input, env={**PLAIN_ENV, **(env or {})})

    return invoke


def bundled_lessons() -> list[Path]:
    return sorted(LESSONS.glob("*.yaml"))
