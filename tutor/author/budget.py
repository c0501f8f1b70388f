"""A budget of CPU seconds for the searches ``new`` and ``variants`` make (issue 43: every legal
input bounded): a search that spends it gives up with a message naming the budget, and the
command writes nothing. CPU seconds, not wall seconds: the same on a loaded machine as on a
quiet one, so whether a search fits does not depend on what else the machine runs."""

from __future__ import annotations

import time

from tutor.core.errors import TutorError

SECONDS = 25.0  # a command's search, at the README's limits: under 30 s with what follows it


class Budget:
    """``spent()`` says whether ``seconds`` (default ``SECONDS``) of this process's CPU time
    have gone since it was made; ``check`` raises ``TutorError`` naming the budget, when they
    have."""

    def __init__(self, seconds: float | None = None) -> None:
        self.seconds = SECONDS if seconds is None else seconds
        self.start = time.process_time()

    def used(self) -> float:
        return time.process_time() - self.start

    def spent(self) -> bool:
        return self.used() > self.seconds

    def check(self, what: str, hint: str) -> None:
        """Raise, when spent: ``{what} gave up after N s of CPU time (its budget), writing
        nothing; {hint}``."""
        if self.spent():
            raise TutorError(
                f"{what} gave up after {self.seconds:g} s of CPU time (its budget), writing "
                f"nothing; {hint}"
            )
