"""The answer-sheet format, written and read: one YAML matrix per step a student fills.

The sheet holds one key per step to fill (``Q``, ``K``, ``V``, ``scores``, ``scaled``,
``weights``, ``Z``; under ``heads:`` for several heads, then ``concat`` and ``output``): the
steps the worksheet asks for. The causal mask is not a step to fill: it writes −∞ above the
diagonal of ``scaled`` (the walk's ``masked`` table), so a sheet may hold either the scaled score
or −∞ there, and the weights it makes (0 above the diagonal) are on the sheet.

Reading is like a lesson's (the YAML node tree with positions, no anchors, aliases or odd tags);
every entry is read by ``numbers.read_answer``, a small parser of our own, never eval or sympify.
An entry that cannot be read is kept as text and reported (file:line:col) as a warning.
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

import yaml

from tutor.core.decimal_comma import comma_note
from tutor.core.engine import Derivation, Step
from tutor.core.errors import AnswerError, LessonError, Problem
from tutor.core.numbers import Answer, read_answer
from tutor.core.yamlsrc import Checker, compose, describe, read_text
from tutor.export.worksheet import FILL, FILL_FIRST, FILL_TOP, fill_steps, shape_text
from tutor.text import words
from tutor.text.cells import cell_name

__all__ = ["FILL", "FILL_TOP", "Entry", "Sheet", "answer_sheet", "fill_steps", "read_sheet"]

NULLS = ("", "~", "null", "Null", "NULL")


@dataclass(frozen=True)
class Entry:
    """One cell as the student wrote it."""

    text: str | None  # as written; None when left blank
    answer: Answer | None = None  # None when blank or unreadable

    @property
    def blank(self) -> bool:
        return self.text is None


BLANK = Entry(None)


@dataclass(frozen=True)
class Sheet:
    """A read answer sheet: the student's entries per step key (``Q``, ``head2.Z``...)."""

    path: str
    student: str
    entries: dict[str, tuple[tuple[Entry, ...], ...]]
    problems: tuple[Problem, ...]  # unreadable cells: reported, graded wrong

    def entry(self, step: Step, i: int, j: int) -> Entry:
        rows = self.entries.get(step.key)
        return rows[i][j] if rows is not None else BLANK


# ---------------------------------------------------------------------------------------------
# reading the filled sheet


def read_sheet(path: str | Path, d: Derivation) -> Sheet:
    """Read and check an answer sheet against the lesson; raise ``LessonError`` for a sheet
    that is not one (bad YAML, unknown steps, wrong shapes), listing every problem."""
    shown = str(path)
    root = compose(read_text(path, "answer sheet"), shown)
    c = Checker(shown)
    if root is None:
        raise LessonError.at(shown, 1, 1, "the sheet is empty; make one with attn-tutor export")
    lesson = d.lesson
    steps = fill_steps(d)
    top = ("lesson", "student")
    if lesson.multi_head:
        top += ("heads", *(s.name for s in steps if s.head is None))
    else:
        top += tuple(s.name for s in steps)
    keys = c.mapping(root, top, "the answer sheet") or {}
    student = ""
    if "lesson" in keys:
        node = keys["lesson"][1]
        name = c.scalar(node, "lesson")
        if name is not None and name != lesson.name:
            c.error(
                node, f"this sheet is for lesson {name!r}, but it is graded against {lesson.name!r}"
            )
    if "student" in keys:
        node = keys["student"][1]
        student = "" if _is_null(node) else (c.scalar(node, "student") or "")
    found: dict[str, tuple[yaml.Node, yaml.Node]] = {
        k: v for k, v in keys.items() if k not in ("lesson", "student", "heads")
    }
    scopes: list[tuple[int | None, dict[str, tuple[yaml.Node, yaml.Node]]]] = [(None, found)]
    if "heads" in keys:
        scopes += _heads(c, keys["heads"][1], d)
    entries: dict[str, tuple[tuple[Entry, ...], ...]] = {}
    unreadable: list[Problem] = []
    for head, mapping in scopes:
        for name, (_, node) in mapping.items():
            step = d.step(name, head)
            rows = _matrix(c, node, step, shown, unreadable)
            if rows is not None:
                entries[step.key] = rows
    if c.problems:
        raise LessonError(c.problems)
    return Sheet(shown, student, entries, tuple(unreadable))


def _is_null(node: yaml.Node) -> bool:
    return isinstance(node, yaml.ScalarNode) and not node.style and node.value in NULLS


def _heads(
    c: Checker, node: yaml.Node, d: Derivation
) -> list[tuple[int | None, dict[str, tuple[yaml.Node, yaml.Node]]]]:
    count = d.head_count
    if not isinstance(node, yaml.SequenceNode) or len(node.value) != count:
        c.error(
            node,
            f"heads should be a list of {count} heads (one mapping of {', '.join(FILL)} per "
            f"head), but found {describe(node)}",
        )
        return []
    out: list[tuple[int | None, dict[str, tuple[yaml.Node, yaml.Node]]]] = []
    for h, item in enumerate(node.value, 1):
        if _is_null(item):  # a head left out entirely: every cell blank
            continue
        here = tuple(s.name for s in fill_steps(d) if s.head == h)  # Q_rot only with RoPE
        keys = c.mapping(item, here, f"head {h} of the answer sheet")
        if keys is not None:
            out.append((h, keys))
    return out


def _matrix(
    c: Checker, node: yaml.Node, step: Step, path: str, unreadable: list[Problem]
) -> tuple[tuple[Entry, ...], ...] | None:
    """The student's matrix for one step, checked against the step's shape."""
    n, m = step.shape
    shape = (
        f"this lesson's {step.key} is {n} × {m} (rows {', '.join(step.rows)}; "
        f"columns {', '.join(step.cols)})"
    )
    if _is_null(node):
        return None  # the whole step left out: every cell blank
    if not isinstance(node, yaml.SequenceNode):
        c.error(
            node, f"{step.key} should be a list of {n} rows, but found {describe(node)}; {shape}"
        )
        return None
    if len(node.value) != n:
        c.error(node, f"{step.key} has {len(node.value)} rows; {shape}, so it needs {n} rows")
        return None
    rows = []
    for i, row in enumerate(node.value):
        if not isinstance(row, yaml.SequenceNode) or len(row.value) != m:
            found = (
                f"{len(row.value)} entries" if isinstance(row, yaml.SequenceNode) else describe(row)
            )
            c.error(
                row,
                f"row {i + 1} of {step.key} ({step.rows[i]}) should be a list of {m} entries "
                f"(columns {', '.join(step.cols)}), but found {found}{comma_note(row, m)}",
            )
            return None
        rows.append(
            tuple(
                _entry(x, cell_name(step, i, j), path, unreadable) for j, x in enumerate(row.value)
            )
        )
    return tuple(rows)


def _entry(node: yaml.Node, name: str, path: str, unreadable: list[Problem]) -> Entry:
    line, col = node.start_mark.line + 1, node.start_mark.column + 1
    if _is_null(node) or (isinstance(node, yaml.ScalarNode) and not node.value.strip()):
        return BLANK
    if not isinstance(node, yaml.ScalarNode):
        why = f"{name}: found {describe(node)}, expected one number; graded wrong"
        unreadable.append(Problem(path, line, col, why, "warning"))
        return Entry(describe(node), None)
    try:
        return Entry(node.value.strip(), read_answer(node.value))
    except AnswerError as err:
        unreadable.append(Problem(path, line, col, f"{name}: {err}; graded wrong", "warning"))
        return Entry(node.value.strip(), None)


# ---------------------------------------------------------------------------------------------
# the blank answer sheet (YAML)

SHEET_HELP = """\
# Fill in every null with your answer: a number (0.49), a fraction (1/3) or a simple
# expression (sqrt(2), 4/sqrt(2), e^1.41/(e^1.41 + e^2.83 + e^1.41)). Put quotes around an
# answer that contains a comma or a colon. Leave null what you did not work out.
# Rows are tokens (named in the comment at the end of each row); columns are named above.
# Grade it with: attn-tutor grade {lesson} THIS-FILE"""


def _yaml_str(text: str) -> str:
    """A YAML double-quoted string (JSON's escaping is valid YAML)."""
    return _yaml_safe(words.escape_c1(json.dumps(text, ensure_ascii=False)))  # YAML refuses C1


# What YAML reads as a line break (U+2028, U+2029, NEL) or refuses outright (U+FFFE, lone
# surrogates from a file name's undecodable bytes, ...): a file name may hold any of them
_YAML_UNSAFE = re.compile(
    "[^\x09\x0a\x0d\x20-\x7e\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]|[\u2028\u2029\ufeff]"
)


def _yaml_safe(text: str) -> str:
    """Text for a sheet's comment or double-quoted string, with those characters as ``\\uXXXX``
    (an escape inside quotes, spelled out in a comment), so the sheet stays valid YAML."""
    return _YAML_UNSAFE.sub(lambda m: f"\\u{ord(m[0]):04x}", text)


def _sheet_matrix(step: Step, indent: str, d: Derivation) -> list[str]:
    n, m = step.shape
    cols = ", ".join(step.cols)
    what = shape_text(step)
    lines = [f"{indent}# {words.step_title(step)}: {what}; columns: {cols}"]
    if step.name == "weights" and d.lesson.mask == "causal":
        lines.append(f"{indent}# causal mask: the weights above the diagonal are 0")
    if step.name == "scaled" and d.lesson.mask == "causal":
        lines.append(f"{indent}# causal mask: above the diagonal, score / √d_k or -inf (hidden)")
    lines.append(f"{indent}{step.name}:")
    row = "[" + ", ".join(["null"] * m) + "]"
    lines += [f"{indent}  - {row}  # {step.rows[i]}" for i in range(n)]
    return lines


def answer_sheet(d: Derivation) -> str:
    """A blank answer sheet in YAML: one matrix of nulls per step to fill."""
    lesson = d.lesson
    out = [
        f"# attn-tutor answer sheet: {_yaml_safe(words.visible(lesson.title))}",
        # a file name: quoted for a shell, and on one line, so it stays inside the comment
        SHEET_HELP.format(lesson=_yaml_safe(words.visible(shlex.quote(lesson.name)))),
        f"lesson: {_yaml_str(lesson.name)}",
        'student: ""   # your name',
        "",
    ]
    per_head = [s for s in fill_steps(d) if s.name in FILL]
    for step in fill_steps(d):
        if step.name in FILL_FIRST:  # X = E + P comes before every head
            out += [*_sheet_matrix(step, "", d), ""]
    if lesson.multi_head:
        out.append("heads:")
        for h in range(1, d.head_count + 1):
            out.append(f"  - # {words.head_label(d.lesson, h)}")
            for step in (s for s in per_head if s.head == h):
                out += _sheet_matrix(step, "    ", d)
            out.append("")
    else:
        for step in per_head:
            out += [*_sheet_matrix(step, "", d), ""]
    for step in fill_steps(d):
        if step.name in FILL_TOP:
            out += [*_sheet_matrix(step, "", d), ""]
    return "\n".join(out).rstrip() + "\n"
