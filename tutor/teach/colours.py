"""One colour per kind of matrix, shared by every view that names a step (walk, explain):
Q, K and V keep their colour wherever they appear, and so does the W that makes each.
The colours themselves, and why they read on light and dark backgrounds, are in
``tutor.text.theme``."""

from tutor.text.steps import COLOURS
from tutor.text.theme import PLAIN

__all__ = ["COLOURS", "PLAIN"]
