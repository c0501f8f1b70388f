"""The suite ignores the runner's environment (issue 25): a few representative tests, run again
in a child pytest under a hostile one, must pass there too.

tests/conftest.py's ``hermetic_env`` pins what the tests depend on; this keeps it complete. The
child's environment is what real shells and CI runners export: a width and colour settings of
their own, a dumb terminal (or none), the C locale, a far time zone, a home and XDG folders that
cannot be written, and SIGINT ignored (as for ``cmd &`` in a script).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys

import pytest

from tests.conftest import ROOT

NOWHERE = "/dev/null/nowhere"  # not even root can make a folder under a file
HOSTILE = {
    "COLUMNS": "120",
    "LINES": "7",
    "NO_COLOR": "1",
    "FORCE_COLOR": "1",
    "CLICOLOR_FORCE": "1",
    "COLORTERM": "truecolor",
    "LANG": "C",
    "LC_ALL": "C",
    "TZ": "Pacific/Kiritimati",
    "HOME": NOWHERE,
    "XDG_CONFIG_HOME": NOWHERE,
    "XDG_CACHE_HOME": NOWHERE,
    "XDG_DATA_HOME": NOWHERE,
    "XDG_STATE_HOME": NOWHERE,
    "ATTN_TUTOR_LESSONS": NOWHERE,
}
# goldens of Rich output, the explorer's snapshots, the CLI in-process and in a child process,
# the list (which keeps a cache in the user's cache folder), and a Ctrl-C in a terminal
SAMPLE = [
    "tests/test_theme.py::test_row_maximum_is_marked_without_colour_golden",
    "tests/test_explore_snapshots.py",
    "tests/test_walk.py::test_walk_golden_width_100_no_colour",
    "tests/test_walk.py::test_python_dash_m_works",
    "tests/test_walk.py::test_list_shows_bundled_lessons",
    "tests/test_hostile.py::test_list_skips_past_a_pipe_in_a_lesson_folder",
    "tests/test_learn_terminal.py::test_ctrl_c_saves_and_the_course_resumes_where_it_stopped",
]


def ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX locale, signals and /dev/null")
@pytest.mark.parametrize("term", ["dumb", "xterm-256color", None])
def test_a_sample_of_the_suite_passes_in_a_hostile_environment(term: str | None) -> None:
    env = {**os.environ, **HOSTILE}
    env.pop("TERM", None)
    if term is not None:
        env["TERM"] = term
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-o", "addopts=-q", "-p", "no:cacheprovider", *SAMPLE],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        preexec_fn=ignore_sigint,
    )
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]
    summary = done.stdout.strip().splitlines()[-1]  # "12 passed in 9.41s": none skipped
    assert re.fullmatch(r"\d+ passed in .*", summary), summary
