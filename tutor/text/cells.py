"""Cell names: ``Z[cats, 1]``, ``scores[it, cake]``, ``head2.Q[the#1, 3]`` → (step, row, column).

A pure reader shared by ``explain`` (and by anything else that lets a person point at one
number). Nothing is evaluated: the name is matched with a regular expression and looked up in
the derivation's own labels.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from tutor.core.errors import UsageError
from tutor.core.yamlsrc import suggest

if TYPE_CHECKING:
    from tutor.core.engine import Derivation, Step

MAX_NAME_CHARS = 200
MAX_LISTED = 12  # labels listed in an error message before "…"

# (patterns as text, compiled by re on first use: a walk without --cell compiles neither)
_CELL = r"""^\s*(?:head\s*(?P<head>\d{1,3})\s*\.\s*)?   # head2.
    (?P<step>[A-Za-z_]\w*)\s*                         # Z
    \[\s*(?P<row>[^\[\],]+?)\s*,\s*(?P<col>[^\[\],]+?)\s*\]\s*$  # [cats, 1]
    """
# a row, as the walk prints a worked one: ``Z[cats] = …``
_ROW = (
    r"^\s*(?:head\s*(?P<head>\d{1,3})\s*\.\s*)?"  # head2.
    r"(?P<step>[A-Za-z_]\w*)\s*\[\s*(?P<row>[^\[\],\s]+)\s*\]\s*$"  # Z[cats]
)


def step_keys(d: Derivation) -> list[str]:
    """Every step as it is named in a cell: ``X``, ``head1.Q``, …, ``output``."""
    return [s.key for s in d.steps]


def _listing(labels: tuple[str, ...] | list[str]) -> str:
    shown = ", ".join(labels[:MAX_LISTED])
    more = len(labels) - MAX_LISTED
    return shown + (f", … ({more} more)" if more > 0 else "")


def cell_name(step: Step, i: int, j: int) -> str:
    """The canonical name of a cell, which ``parse_cell`` reads back."""
    return f"{step.key}[{step.rows[i]}, {step.cols[j]}]"


# tokens a sentence would read as its own words ("softmax of the the row", "row it of X"):
# prose sets them apart in quotes. Cell names (Z[the, 1]) and tables keep them bare.
# fmt: off
SENTENCE_WORDS = frozenset([
    "a", "an", "the", "this", "that", "these", "those", "and", "or", "but", "nor", "if", "so",
    "as", "than", "then", "of", "to", "in", "on", "at", "by", "for", "from", "with", "into",
    "onto", "over", "under", "up", "down", "out", "off", "about", "after", "before", "i", "me",
    "my", "you", "your", "he", "him", "his", "she", "her", "it", "its", "we", "us", "our", "they",
    "them", "their", "who", "whom", "what", "which", "is", "are", "was", "were", "be", "been",
    "am", "do", "does", "did", "has", "have", "had", "will", "would", "can", "could", "shall",
    "should", "may", "might", "must", "not", "no", "yes", "all", "any", "some", "each", "every",
])
# fmt: on


def said(token: str) -> str:
    """A row or column label as prose names it: ``"the"`` (a token that reads as a word of
    the sentence, repeats such as ``the#2`` too) in quotes, anything else as it is."""
    return f'"{token}"' if token.split("#")[0].lower() in SENTENCE_WORDS else token


def the_row(token: str, what: str = "row") -> str:
    """``the cats row``, or ``the row "the"`` when the token would read as part of the
    sentence."""
    quoted = said(token)
    return f"the {what} {quoted}" if quoted != token else f"the {token} {what}"


def dot_phrase(step: Step, i: int, j: int, turned: bool = False) -> str:
    """Which row meets which column in a matmul cell: ``query of cats · key of chase``. In the
    column layout (``turned``) every table is on its side, so the product reads the other way
    round: ``row 1 of W_Q · column cats of X``."""
    left, right = step.args
    if step.transpose:
        return f"query of {said(left.rows[i])} · key of {said(right.rows[j])}"
    bias = "" if getattr(step, "bias", None) is None else f" + {step.bias.key}"  # type: ignore[attr-defined]
    if turned:
        return (
            f"row {right.cols[j]} of {right.key} · column {said(left.rows[i])} of {left.key}{bias}"
        )
    return f"row {said(left.rows[i])} of {left.key} · column {right.cols[j]} of {right.key}{bias}"


def parse_cell(d: Derivation, text: str) -> tuple[Step, int, int]:
    """Find the cell a name points at; raise ``UsageError`` listing what is valid.

    ROW is a row label (a token, with repeats as ``the#1``; for W matrices a number). COL is a
    column label or a 1-based column number, so ``scores[cats, chase]`` and ``scores[cats, 2]``
    are the same cell. In a lesson with heads, per-head steps need ``headN.``.
    """
    step, i, j = parse_place(d, text)
    if j is None:
        raise UsageError(
            f"{step.key}[{step.rows[i]}] is a row; name one of its cells, like "
            f"{cell_name(step, i, 0)}"
        )
    return step, i, j


def parse_place(d: Derivation, text: str) -> tuple[Step, int, int | None]:
    """A cell (``Z[cats, 1]``) or a whole row as the walk prints one (``Z[cats]``: the column
    is None); raise ``UsageError`` listing what is valid."""
    example = cell_name(d.steps[-1], 0, 0)
    if len(text) > MAX_NAME_CHARS:
        raise UsageError(f"a cell name is at most {MAX_NAME_CHARS} characters, like {example}")
    m = re.match(_CELL, text, re.VERBOSE) or re.match(_ROW, text)
    if not m:
        raise UsageError(
            f"cannot read {text.strip()!r} as a cell; write STEP[ROW, COL], like {example}; "
            f"steps: {', '.join(step_keys(d))}"
        )
    step = _find_step(d, m["step"], int(m["head"]) if m["head"] else None)
    i = _index(step.rows, m["row"], step, "row")
    if "col" not in m.groupdict():
        return step, i, None
    return step, i, _index(step.cols, m["col"], step, "column")


def _find_step(d: Derivation, name: str, head: int | None) -> Step:
    keys = step_keys(d)
    names = list(dict.fromkeys(s.name for s in d.steps))
    if name not in names:
        raise UsageError(
            f"this lesson has no step {name!r}{suggest(name, names)}; steps: {', '.join(keys)}"
        )
    per_head = [s for s in d.steps if s.name == name and s.head is not None]
    if head is None and per_head:
        choices = ", ".join(s.key for s in per_head)
        raise UsageError(
            f"{name} belongs to a head in this lesson of {d.head_count} heads; name one: {choices}"
        )
    if head is not None and not per_head:
        where = (
            "this lesson has a single head"
            if not d.lesson.multi_head
            else f"{name} is shared by all heads"
        )
        raise UsageError(f"{where}, so write {name}[…] without head{head}.")
    for s in d.steps:
        if s.name == name and s.head == head:
            return s
    lesson = d.lesson
    if lesson.kv_groups is not None and 1 <= head <= d.head_count:  # a head reading its group's
        owner = lesson.group_heads(lesson.group_of(head))[0]
        raise UsageError(
            f"head {head} has no {name} of its own: it shares key/value group "
            f"{lesson.group_of(head)}, made in head {owner}; write head{owner}.{name}[…]"
        )
    raise UsageError(f"this lesson has {d.head_count} heads, so head{head} does not exist")


def _index(labels: tuple[str, ...], text: str, step: Step, what: str) -> int:
    """Position of a label; a 1-based number also works for columns that are not numbered."""
    if text in labels:
        return labels.index(text)
    numbered = [k for k, lab in enumerate(labels) if lab.split("#")[0] == text]
    if len(numbered) > 1:
        raise UsageError(
            f"{text!r} appears {len(numbered)} times in {step.key}; say which: "
            f"{', '.join(labels[k] for k in numbered)}"
        )
    if what == "column" and text.isdecimal() and 1 <= int(text) <= len(labels):
        return int(text) - 1
    raise UsageError(
        f"{step.key} has no {what} {text!r}{suggest(text, list(labels))}; "
        f"{what}s: {_listing(labels)} ({step.key} is {step.shape[0]} × {step.shape[1]})"
    )
