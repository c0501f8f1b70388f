from __future__ import annotations

import os
import signal
import time
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


# What the tests depend on, whatever the runner's shell exports (issue 25): a terminal of 80 × 25
# that Rich and Textual may colour, UTF-8 text, UTC, and a home of the session's own. Rich reads
# COLUMNS, LINES, NO_COLOR, FORCE_COLOR, TERM and the TTY_* switches whenever a Console is made;
# typer forces a terminal for FORCE_COLOR, PY_COLORS and GITHUB_ACTIONS; Textual honours NO_COLOR.
PINNED = {
    "COLUMNS": "80",
    "LINES": "25",
    "TERM": "xterm-256color",
    "LANG": "C.UTF-8",
    "TZ": "UTC",
}
UNSET = (
    "NO_COLOR",
    "FORCE_COLOR",
    "CLICOLOR",
    "CLICOLOR_FORCE",
    "PY_COLORS",
    "GITHUB_ACTIONS",
    "COLORTERM",
    "TTY_COMPATIBLE",
    "TTY_INTERACTIVE",
    "JUPYTER_COLUMNS",
    "JUPYTER_LINES",
    "TERMINAL_WIDTH",
    "LC_ALL",
    "LC_CTYPE",
    "LC_NUMERIC",
    "PYTHONIOENCODING",
    "ATTN_TUTOR_LESSONS",
    "ATTN_TUTOR_HOME",
    "ATTN_TUTOR_DEBUG",
    "ATTN_TUTOR_PLAIN",
)
SNAPSHOT_PLUGIN = ("TEXTUAL_SNAPSHOT_TEMPDIR",)  # pytest-textual-snapshot's own, set at start
HOME_DIRS = {  # platformdirs' folders (history, the list's cache) inside the session's home
    "XDG_CONFIG_HOME": "config",
    "XDG_CACHE_HOME": "cache",
    "XDG_DATA_HOME": "data",
    "XDG_STATE_HOME": "state",
}


@pytest.fixture(scope="session")
def session_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A writable home for the whole run (the runner's may be unwritable, or someone's own)."""
    home = tmp_path_factory.mktemp("home")
    for sub in HOME_DIRS.values():
        (home / sub).mkdir()
    # a runner started with SIGINT ignored (``cmd &`` in a script, nohup) passes SIG_IGN on to
    # every child, and Python then never raises KeyboardInterrupt: the Ctrl-C tests need it
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    return home


@pytest.fixture(autouse=True)
def hermetic_env(monkeypatch: pytest.MonkeyPatch, session_home: Path) -> None:
    """Every test sees the same environment, and so do the processes it starts."""
    textual = [n for n in os.environ if n.startswith("TEXTUAL_") and n not in SNAPSHOT_PLUGIN]
    for name in (*UNSET, *textual):
        monkeypatch.delenv(name, raising=False)
    for name, value in PINNED.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("HOME", str(session_home))
    for name, sub in HOME_DIRS.items():
        monkeypatch.setenv(name, str(session_home / sub))
    time.tzset()  # TZ is read once; local times (file names, reports) follow UTC now


@pytest.fixture
def run():
    """Run the CLI in-process: run("walk", "--json") -> click Result (exit_code, stdout, stderr)."""
    runner = CliRunner()

    def invoke(*args: str, input: str | None = None, env: dict | None = None):  # type: ignore[no-untyped-def]
        return runner.invoke(app, list(args), input=input, env={**PLAIN_ENV, **(env or {})})

    return invoke


def bundled_lessons() -> list[Path]:
    return sorted(LESSONS.glob("*.yaml"))
