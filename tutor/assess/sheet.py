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

import functools
import json
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

import yaml

from tutor.core import kinds
from tutor.core.decimal_comma import comma_advice, decimal_comma, tight_pair
from tutor.core.engine import Derivation, Step
from tutor.core.errors import AnswerError, LessonError, Problem
from tutor.core.kinds import fill_steps
from tutor.core.lesson import Lesson
from tutor.core.numbers import Answer, read_answer
from tutor.core.spec import LAYOUTS
from tutor.core.yamlsrc import Checker, compose, describe, read_text
from tutor.text import format as fmt
from tutor.text import words
from tutor.text.cells import cell_name
from tutor.text.words import shape_text

__all__ = [
    "Entry",
    "Header",
    "Sheet",
    "answer_sheet",
    "fill_steps",
    "identity",
    "read_header",
    "read_sheet",
]

NULLS = ("", "~", "null", "Null", "NULL")
HEADER_KEYS = ("lesson", "fingerprint", "variant", "student", "student_id")


@dataclass(frozen=True, slots=True)
class Entry:
    """One cell as the student wrote it."""

    text: str | None  # as written; None when left blank
    answer: Answer | None = None  # None when blank or unreadable
    note: str | None = None  # why it could not be read or placed: the cell's verdict says so

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
    header: Header | None = None  # what the sheet says it is for
    notes: tuple[str, ...] = ()  # how it was matched to its lesson, when worth saying

    def entry(self, step: Step, i: int, j: int) -> Entry:
        rows = self.entries.get(step.key)
        return rows[i][j] if rows is not None else BLANK


@dataclass(frozen=True)
class Header:
    """What a sheet says it is for: its lesson's name and fingerprint, the variant and the
    student (each None or empty when the sheet does not say; old sheets have no fingerprint)."""

    path: str
    lesson: str | None = None
    fingerprint: str | None = None
    variant: str | None = None
    student: str = ""
    student_id: str = ""
    where: tuple[tuple[str, int, int], ...] = ()  # (key, line, column) of each value

    def at(self, key: str) -> tuple[int, int]:
        return next(((ln, col) for k, ln, col in self.where if k == key), (1, 1))


@dataclass(frozen=True)
class Identity:
    """Whether a sheet may be graded against a lesson, and what to say about it."""

    ok: bool
    key: str | None = None  # the header key a refusal points at
    message: str | None = None  # why not (ok False), or a note (ok True)


def identity(header: Header, lesson: Lesson) -> Identity:
    """Does the sheet belong to ``lesson``? A matching fingerprint wins over a mistyped name;
    a fingerprint that differs means the lesson's numbers changed since the sheet was made."""
    fp, name = header.fingerprint, header.lesson
    now = lesson.fingerprint
    if fp is not None and fp == now:
        if name is not None and name != lesson.name:
            return Identity(
                True,
                "lesson",
                f"the sheet names lesson {name!r}, but its fingerprint {fp} is {lesson.name}'s: "
                f"graded against {lesson.name}",
            )
        return Identity(True)
    if fp is not None:
        if name is None or name == lesson.name:
            return Identity(
                False,
                "fingerprint",
                f"the numbers of lesson {lesson.name} changed since this sheet was made "
                f"(fingerprint {fp} on the sheet, {now} now): right answers may be marked wrong; "
                "hand out new sheets, or grade against the changed lesson with --force",
            )
        return Identity(
            False,
            "lesson",
            f"this sheet is for lesson {name!r} (fingerprint {fp}), but it is graded against "
            f"{lesson.name!r} (fingerprint {now}); use --force to grade it anyway",
        )
    if name is not None and name != lesson.name:
        return Identity(
            False,
            "lesson",
            f"this sheet is for lesson {name!r}, but it is graded against {lesson.name!r}; "
            "use --force to grade it anyway",
        )
    return Identity(
        True,
        None,
        "the sheet has no fingerprint (made by an older attn-tutor): "
        "it cannot tell whether the lesson's numbers changed since",
    )


# ---------------------------------------------------------------------------------------------
# reading the filled sheet


def read_header(path: str | Path, text: str | None = None) -> tuple[Header, yaml.Node]:
    """What a sheet says about itself, read before its lesson is known (to pick a variant),
    and its node tree (for ``read_sheet``); raise ``LessonError`` for a file that is no sheet
    (bad YAML, not a mapping). ``text``: the file's text, when already read (``sheet_text``)."""
    root = _root(str(path), text)
    return _header(root, str(path)), root


def sheet_text(path: str | Path) -> str:
    """A sheet file's text (``read_text``'s checks: a regular file of at most 1 MiB, UTF-8)."""
    return read_text(str(path), "answer sheet")


def _root(shown: str, text: str | None = None) -> yaml.Node:
    root = compose(sheet_text(shown) if text is None else text, shown)
    if root is None:
        raise LessonError.at(shown, 1, 1, "the sheet is empty; make one with attn-tutor export")
    if not isinstance(root, yaml.MappingNode):  # named, never quoted: it may be any file
        found = "a list" if isinstance(root, yaml.SequenceNode) else "text"
        raise LessonError.at(
            shown, 1, 1, f"not an answer sheet: a sheet is a mapping of keys, this file is {found}"
        )
    if not any(_sheet_key(k) for k, _ in root.value):
        raise LessonError.at(
            shown,
            1,
            1,
            "not an answer sheet: none of its keys is a sheet's (lesson, student, Q, …)",
        )
    return root


def _sheet_key(node: yaml.Node) -> bool:
    """A key a sheet may have, or a slip of one (``weigths``): its header, its layout, a step,
    a head's or the next token's."""
    from tutor.core.kinds import BY_NAME
    from tutor.core.yamlsrc import suggest

    key = node.value if isinstance(node, yaml.ScalarNode) else ""
    known = (*HEADER_KEYS, "layout", *BY_NAME)
    low = key.lower()
    hit = key in known or low in known or low.startswith(("head", "next"))
    return hit or bool(suggest(key[:40], known))


def _header(root: yaml.Node, shown: str) -> Header:
    got: dict[str, str | None] = {}
    where = []
    for k, v in root.value:
        key = k.value if isinstance(k, yaml.ScalarNode) else None
        if key not in HEADER_KEYS or key in got:
            continue  # read_sheet reports odd and duplicate keys
        if _is_null(v):
            got[key] = None
        elif isinstance(v, yaml.ScalarNode):
            got[key] = v.value.strip()
        else:
            raise LessonError.at(shown, *_pos(v), f"{key} should be text, but found {describe(v)}")
        where.append((key, *_pos(v)))
    return Header(
        shown,
        got.get("lesson") or None,
        got.get("fingerprint") or None,
        got.get("variant") or None,
        got.get("student") or "",
        got.get("student_id") or "",
        tuple(where),
    )


def _pos(node: yaml.Node) -> tuple[int, int]:
    return node.start_mark.line + 1, node.start_mark.column + 1


def read_sheet(
    path: str | Path, d: Derivation, force: bool = False, root: yaml.Node | None = None
) -> Sheet:
    """Read and check an answer sheet against the lesson; raise ``LessonError`` for a sheet
    that is not one (bad YAML, unknown steps, wrong shapes) or not for this lesson (another
    lesson, or its numbers changed since: ``force`` grades it anyway), listing every problem."""
    shown = str(path)
    root = _root(shown) if root is None else root  # read_header's, when it came first
    header = _header(root, shown)
    c = Checker(shown)
    lesson = d.lesson
    steps = fill_steps(d)
    top: tuple[str, ...] = (*HEADER_KEYS, "layout")
    if lesson.multi_head:
        top += ("heads", *(s.name for s in steps if s.head is None))
    else:
        top += tuple(s.name for s in steps)
    keys = c.mapping(root, top, "the answer sheet") or {}
    notes = []
    fit = identity(header, lesson)
    if not fit.ok and not force:
        c.error(keys[fit.key][1] if fit.key in keys else root, fit.message or "")
    elif fit.message:
        notes.append(fit.message if fit.ok else f"graded anyway (--force): {fit.message}")
    turned = False  # layout: columns, each matrix written on its side (tokens as columns)
    if "layout" in keys:
        node = keys["layout"][1]
        layout = c.scalar(node, "layout")
        if layout is not None and layout not in LAYOUTS:
            c.error(node, f"layout is {layout!r}; expected one of: {', '.join(LAYOUTS)}")
        turned = layout == "columns"
    found: dict[str, tuple[yaml.Node, yaml.Node]] = {
        k: v for k, v in keys.items() if k not in (*HEADER_KEYS, "heads", "layout")
    }
    scopes: list[tuple[int | None, dict[str, tuple[yaml.Node, yaml.Node]]]] = [(None, found)]
    if "heads" in keys:
        scopes += _heads(c, keys["heads"][1], d)
    entries: dict[str, tuple[tuple[Entry, ...], ...]] = {}
    unreadable: list[Problem] = []
    for head, mapping in scopes:
        for name, (knode, node) in mapping.items():
            if not d.has(name, head):  # grouped heads: a later head of a group has no K, V
                owner = lesson.group_heads(lesson.group_of(head or 1))[0]
                c.error(
                    knode,
                    f"head {head} has no {name} of its own in this lesson: it reads the {name} "
                    f"of head {owner} (key/value group {lesson.group_of(head or 1)}); "
                    f"write it there, once",
                )
                continue
            step = d.step(name, head)
            rows = _matrix(c, node, step, shown, unreadable, turned)
            if rows is not None:
                entries[step.key] = rows
    if c.problems:
        raise LessonError(c.problems)
    return Sheet(
        shown, header.student, entries, tuple(unreadable), header, tuple(n for n in notes if n)
    )


def _is_null(node: yaml.Node) -> bool:
    return isinstance(node, yaml.ScalarNode) and not node.style and node.value in NULLS


def _heads(
    c: Checker, node: yaml.Node, d: Derivation
) -> list[tuple[int | None, dict[str, tuple[yaml.Node, yaml.Node]]]]:
    count = d.head_count
    if not isinstance(node, yaml.SequenceNode) or len(node.value) != count:
        c.error(
            node,
            f"heads should be a list of {count} heads (one mapping of {', '.join(kinds.FILL)} per "
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
    c: Checker,
    node: yaml.Node,
    step: Step,
    path: str,
    unreadable: list[Problem],
    turned: bool = False,
) -> tuple[tuple[Entry, ...], ...] | None:
    """The student's matrix for one step, checked against the step's shape (``turned``: the
    sheet's layout is columns, so the matrix is written on its side and read back)."""
    labels_r, labels_c = (step.cols, step.rows) if turned else (step.rows, step.cols)
    n, m = len(labels_r), len(labels_c)
    side = " turned (layout: columns)" if turned else ""
    shape = (
        f"this lesson's {step.key}{side} is {n} × {m} (rows {', '.join(labels_r)}; "
        f"columns {', '.join(labels_c)})"
    )
    if _is_null(node):
        return None  # the whole step left out: every cell blank
    if not isinstance(node, yaml.SequenceNode) or len(node.value) != n:
        if isinstance(node, yaml.SequenceNode):
            why = f"{step.key} has {len(node.value)} rows; {shape}, so it needs {n} rows"
            note = f"{step.key} has {len(node.value)} rows, for {n} tokens"
        else:
            why = f"{step.key} should be a list of {n} rows, but found {describe(node)}; {shape}"
            note = f"{step.key} is {describe(node)}, not a list of {n} rows"
        unreadable.append(Problem(path, *_pos(node), f"{why}: {UNPLACED}", "warning"))
        return _unplaced(step, f"not placed: {note}")
    rows = []
    for i, row in enumerate(node.value):
        nodes = _placed(row, m)
        if nodes is None:
            found = (
                f"{len(row.value)} entries" if isinstance(row, yaml.SequenceNode) else describe(row)
            )
            why = (
                f"row {i + 1} of {step.key}{side} ({labels_r[i]}) should be a list of {m} "
                f"entries (columns {', '.join(labels_c)}), but found {found}"
            )
            unreadable.append(Problem(path, *_pos(row), f"{why}: {UNPLACED}", "warning"))
            note = f"not placed: row {i + 1} of {step.key} has {found}, for {m} columns"
            rows.append(tuple(Entry("", None, note) for _ in range(m)))
            continue
        rows.append(
            tuple(
                _entry(x, cell_name(step, *((j, i) if turned else (i, j))), path, unreadable)
                for j, x in enumerate(nodes)
            )
        )
    return tuple(zip(*rows, strict=True)) if turned else tuple(rows)


# what a matrix or row of the wrong size costs: only its own cells (the rest is graded)
UNPLACED = "which entry is which cell cannot be told, so these cells are graded wrong"


def _unplaced(step: Step, why: str) -> tuple[tuple[Entry, ...], ...]:
    """Every cell of a step whose rows cannot be placed: graded wrong, saying why."""
    return tuple(tuple(Entry("", None, why) for _ in step.cols) for _ in step.rows)


def _placed(row: yaml.Node, m: int) -> list[yaml.Node] | None:
    """The row's ``m`` entries, one per column; a decimal comma's two halves (``0,24``, two
    entries to YAML) joined back into the one entry the student meant; None when the entries
    cannot be matched to the columns."""
    if not isinstance(row, yaml.SequenceNode):
        return None
    if len(row.value) == m:
        return list(row.value)
    if decimal_comma(row, m) is None:
        return None
    out: list[yaml.Node] = []
    k = 0
    while k < len(row.value):
        a = row.value[k]
        if k + 1 < len(row.value) and tight_pair(a, row.value[k + 1]):
            b = row.value[k + 1]
            out.append(yaml.ScalarNode("tag:yaml.org,2002:str", f"{a.value},{b.value}",
                                       a.start_mark, b.end_mark))  # fmt: skip
            k += 2
        else:
            out.append(a)
            k += 1
    return out


@functools.lru_cache(maxsize=8192)
def _read(text: str) -> Answer:
    """``read_answer``, remembered: a class's sheets repeat most of their answers."""
    return read_answer(text)


def _entry(node: yaml.Node, name: str, path: str, unreadable: list[Problem]) -> Entry:
    line, col = node.start_mark.line + 1, node.start_mark.column + 1
    if _is_null(node) or (isinstance(node, yaml.ScalarNode) and not node.value.strip()):
        return BLANK
    if not isinstance(node, yaml.ScalarNode):
        why = f"{name}: found {describe(node)}, expected one number; graded wrong"
        unreadable.append(Problem(path, line, col, why, "warning"))
        return Entry(describe(node), None)
    text = node.value.strip()
    try:
        return Entry(text, _read(node.value))
    except AnswerError as err:
        unreadable.append(Problem(path, line, col, f"{name}: {err}; graded wrong", "warning"))
        return Entry(text, None, cannot_read(text, err))


def cannot_read(text: str, err: AnswerError) -> str:
    """A cell's verdict for an entry that is no number: ``cannot read `0,24`: write 0.24``."""
    advice = comma_advice(text)
    if advice is not None:
        return f"cannot read `{text}`: {advice}"
    why = str(err).removeprefix(f"could not read {text!r} as a number").lstrip("; ")
    return f"cannot read `{text}`: " + (why or "write one number, a fraction or an expression")


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
    turned = d.lesson.layout == "columns"  # written on its side: tokens as columns
    rows, cols = (step.cols, step.rows) if turned else (step.rows, step.cols)
    what = shape_text(step)
    if turned:
        what = f"turned, {len(rows)} × {len(cols)}"
    title = words.step_title(step, d.lesson, turned)
    lines = [f"{indent}# {title}: {what}; columns: {', '.join(cols)}"]
    where = "below" if turned else "above"

    def given(a: int, b: int) -> str:  # what the causal mask fills in, else a blank to fill
        i, j = (b, a) if turned else (a, b)
        fill = d.fill(step, i, j)
        if fill is None:
            return "null"
        return "-inf" if fill.masked else fmt.operand(fill, d.lesson.precision)  # YAML's −∞

    body = [[given(a, b) for b in range(len(cols))] for a in range(len(rows))]
    fill = next((x for line in body for x in line if x != "null"), None)
    if fill is not None:
        lines.append(
            f"{indent}# causal mask: the {fill} entries {where} the diagonal are given (not graded)"
        )
    lines.append(f"{indent}{step.name}:")
    lines += [
        f"{indent}  - [{', '.join(line)}]  # {label}"
        for line, label in zip(body, rows, strict=True)
    ]
    return lines


def answer_sheet(d: Derivation, given: str | None = None) -> str:
    """A blank answer sheet in YAML: one matrix of nulls per step to fill. ``given``: the
    lesson as the command named it (a path stays a path; for a variant, its folder), for the
    sheet's "Grade it with" line."""
    lesson = d.lesson
    named = given if given is not None else lesson.name
    if lesson.variant is not None and given is None:
        named = "VARIANTS-FOLDER"  # the folder attn-tutor variants wrote: grade finds it
    out = [
        f"# attn-tutor answer sheet: {_yaml_safe(words.visible(lesson.title))}",
        # a file name: quoted for a shell, and on one line, so it stays inside the comment
        SHEET_HELP.format(lesson=_yaml_safe(words.visible(shlex.quote(named)))),
        f"lesson: {_yaml_str(lesson.name)}",
        f"fingerprint: {_yaml_str(lesson.fingerprint)}   # the lesson's numbers: do not change",
    ]
    v = lesson.variant
    if v is not None:
        out.append(f"variant: {_yaml_str(v.id)}")
    if lesson.layout == "columns":  # the sheet says so: grade turns each matrix back
        out.append("layout: columns   # every matrix on its side: tokens are columns, Kᵀ·Q")
        out[1] = out[1].replace(
            "# Rows are tokens (named in the comment at the end of each row); columns are named "
            "above.",
            "# Columns are tokens (named above each matrix); each row is named in its comment.",
        )
    if v is not None and (v.student or v.student_id):
        out += [f"student: {_yaml_str(v.student)}", f"student_id: {_yaml_str(v.student_id)}", ""]
    else:
        out += ['student: ""   # your name', 'student_id: ""   # your student id', ""]
    per_head = [s for s in fill_steps(d) if s.name in kinds.FILL + kinds.NEXT_FILL]
    for step in fill_steps(d):
        if step.name in kinds.FILL_FIRST:  # X = E + P comes before every head
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
        if step.name in kinds.FILL_TOP + kinds.NEXT_FILL_TOP:
            out += [*_sheet_matrix(step, "", d), ""]
    return "\n".join(out).rstrip() + "\n"
