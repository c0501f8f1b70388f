"""Every error a user can meet. The CLI (and only the CLI) turns these into messages and exit
codes: the library raises, the edge decides."""

from __future__ import annotations

from dataclasses import dataclass


class TutorError(Exception):
    """A problem caused by the user's input; its text is shown as it is."""


class UsageError(TutorError):
    """The command line itself is wrong (the CLI exits 2 for it, as for a bad option)."""


class ArgumentError(UsageError):
    """A library function was given an argument of the wrong type, or out of its range."""


class NoSuchStep(TutorError, KeyError):
    """``d[key]`` names no step of the derivation (a ``KeyError`` too, as a mapping's is)."""

    def __str__(self) -> str:  # the message as written, not KeyError's repr of it
        return str(self.args[0]) if self.args else ""


class AnswerError(TutorError):
    """A typed answer or sheet entry could not be read as a number."""


@dataclass(frozen=True)
class Problem:
    """One finding in a file: where it is and what is wrong."""

    path: str
    line: int
    col: int
    message: str
    severity: str = "error"  # "error" or "warning"

    @property
    def where(self) -> str:
        """``path:line:col``, or the path alone when there is no place (line 0)."""
        return f"{self.path}:{self.line}:{self.col}" if self.line else self.path

    def __str__(self) -> str:
        tag = "warning: " if self.severity == "warning" else ""
        return f"{self.where}: {tag}{self.message}"


class LessonError(TutorError):
    """A lesson (or answer sheet) file is invalid; carries every problem found."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems))

    @classmethod
    def at(cls, path: str, line: int, col: int, message: str) -> LessonError:
        """One problem at one place."""
        return cls([Problem(path, line, col, message)])
