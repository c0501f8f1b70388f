"""attn-tutor: learn the arithmetic of self-attention by working it by hand.

The Python API (``tutor.lesson``, ``tutor.judge``, ``tutor.grade``, ``tutor.check_function``;
see ``tutor.api``) is loaded on first use, so the command line starts without it.
"""

from __future__ import annotations

import sys

__version__ = "0.1.0"

NEEDS_PYTHON = (3, 11)  # as pyproject's requires-python says; this file parses on older ones


def python_too_old(version: tuple[int, ...]) -> str | None:
    """What to do on a Python older than attn-tutor needs, in words; None when it is new enough."""
    if tuple(version[:2]) >= NEEDS_PYTHON:
        return None
    have = ".".join(str(v) for v in version[:2])
    return (
        f"attn-tutor needs Python 3.11 or newer; this is Python {have}. Install Python 3.11+ "
        "(python.org, or your system's package manager), then in this folder: "
        "python3.11 -m venv .venv && .venv/bin/pip install -e ."
    )


if python_too_old(tuple(sys.version_info)):  # a clone run as python -m tutor: say so, once
    raise SystemExit(python_too_old(tuple(sys.version_info)))

_API = (
    "AnswerError", "ArgumentError", "Cell", "Derivation", "GradeReport", "Lesson", "LessonError",
    "NoSuchStep", "StepValues", "TutorError", "UsageError", "Verdict", "Walk", "check_function",
    "grade", "judge", "lesson", "lesson_from_arrays", "lesson_from_torch",
)  # fmt: skip
__all__ = ["__version__", *_API]


def __getattr__(name: str) -> object:
    if name in _API:
        from tutor import api

        return getattr(api, name)
    raise AttributeError(f"module 'tutor' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
