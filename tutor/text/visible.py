"""``visible``: someone else's text (a file name, a sheet, the history, the keyboard) made safe to
show on a terminal. Its own module, importing nothing, so ``list`` can use it without the words
and steps of the walk."""

from __future__ import annotations

import re

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def visible(text: str, keep: str = "") -> str:
    """``text`` with its control characters spelled out (``\\x1b``, ``\\n``), but those in
    ``keep``. Rich's ``Text`` keeps such text from being read as markup, but passes an escape
    sequence to the terminal raw."""
    return _CONTROL.sub(lambda m: m[0] if m[0] in keep else repr(m[0])[1:-1], text)
