"""Hostile answers read in a fresh process, whose timeout is the guard against a hang.

A clock around an in-process call is a timed assertion (it fails on a busy machine, and cannot
stop a call that never returns); a child process with a timeout is neither. One process reads
a whole list, so the guard costs one interpreter start, not one per answer.
"""

from __future__ import annotations

import json
import subprocess
import sys

from tests.conftest import ROOT

READ_ALL = """
import json, sys
from tutor.core.errors import AnswerError
from tutor.core.numbers import parse_answer
out = []
for text in json.load(sys.stdin):
    try:
        value = parse_answer(text)
    except AnswerError as err:
        out.append({"refused": str(err)})
    else:
        out.append({"value": str(value)})
print(json.dumps(out))
"""


def read_answers(texts: list[str], timeout: float = 120) -> list[dict[str, str]]:
    """Each text's outcome, in order: ``{"refused": message}`` or ``{"value": sympy's str}``."""
    done = subprocess.run(
        [sys.executable, "-c", READ_ALL],
        input=json.dumps(texts),
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=timeout,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)
