"""attn-tutor: learn the arithmetic of self-attention by working it by hand.

The Python API (``tutor.lesson``, ``tutor.judge``, ``tutor.grade``, ``tutor.check_function``;
see ``tutor.api``) is loaded on first use, so the command line starts without it.
"""

__version__ = "0.1.0"

_API = (
    "Cell", "Derivation", "GradeReport", "Lesson", "LessonError", "StepValues", "TutorError",
    "Verdict", "Walk", "check_function", "grade", "judge", "lesson",
)  # fmt: skip
__all__ = ["__version__", *_API]


def __getattr__(name: str) -> object:
    if name in _API:
        from tutor import api

        return getattr(api, name)
    raise AttributeError(f"module 'tutor' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
