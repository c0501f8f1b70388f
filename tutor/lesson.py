"""Lesson files: read YAML, validate once, build frozen data; find lessons by name.

Numbers are read from the YAML *source text* of each scalar (via the composed node tree), never
from what YAML 1.1 resolves them to, so ``0.1`` is exactly 1/10, ``010`` is ten and ``yes`` is an
error instead of ``True``. Every problem is reported as ``file:line:col: message``.
"""

from __future__ import annotations

import difflib
import math
import os
import re
import stat
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType

import yaml
import yaml.composer
import yaml.cyaml
import yaml.resolver

from tutor.errors import AnswerError, LessonError, Problem, UsageError
from tutor.numbers import parse_entry
from tutor.spec import (
    CONTROL_CHARS,
    HEAD_KEYS,
    MASKS,
    MAX_DENOMINATOR_DIGITS,
    MAX_DEPTH,
    MAX_DIM,
    MAX_ERRORS,
    MAX_FILE_BYTES,
    MAX_HEADS,
    MAX_TOKEN_CHARS,
    MAX_TOKENS,
    MAX_VALUES,
    QUIZ_KEYS,
    STEP_NAMES,
    TOP_KEYS,
)

Entry = tuple[int, int]  # exact value as (numerator, denominator), denominator > 0
Matrix = tuple[tuple[Entry, ...], ...]


@dataclass(frozen=True)
class Head:
    """One attention head's learned matrices."""

    name: str | None
    W_Q: Matrix
    W_K: Matrix
    W_V: Matrix


@dataclass(frozen=True)
class QuizDefaults:
    """The lesson's ``quiz:`` settings; the command line's ``--steps`` and ``--count`` win."""

    steps: tuple[str, ...] = ()  # empty: every step of the lesson that a quiz can ask about
    count: int = 8  # how many cells to ask


@dataclass(frozen=True)
class Lesson:
    """A validated lesson: exact inputs and the instructor's words."""

    name: str
    path: str
    title: str
    description: str
    tokens: tuple[str, ...]
    X: Matrix
    heads: tuple[Head, ...]
    multi_head: bool = False
    W_O: Matrix | None = None
    mask: str = "none"
    precision: int = 2
    # notes and where are read-only views (the loader builds them), so a frozen lesson stays so
    notes: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    quiz: QuizDefaults = QuizDefaults()
    # (line, col) of each top-level key's value, and of rows and entries: "X.2" is row 2 of X,
    # "X.2.3" its third entry, "heads.1.W_Q.2.3" the same in head 1, "tokens.2" a token
    where: Mapping[str, tuple[int, int]] = field(default_factory=lambda: MappingProxyType({}))

    @property
    def labels(self) -> tuple[str, ...]:
        """Row labels that tell repeated tokens apart: ``the#1``, ``dog``, ``the#2``."""
        return unique_labels(self.tokens)

    @property
    def n(self) -> int:
        return len(self.tokens)

    @property
    def d_model(self) -> int:
        return len(self.X[0])

    @property
    def d_k(self) -> int:
        return len(self.heads[0].W_K[0])

    @property
    def d_v(self) -> int:
        return len(self.heads[0].W_V[0])


def unique_labels(tokens: tuple[str, ...] | list[str]) -> tuple[str, ...]:
    """Number the repeats of a token (``the#1`` … ``the#2``); leave unique tokens alone."""
    counts: dict[str, int] = {}
    for t in tokens:
        counts[t] = counts.get(t, 0) + 1
    seen: dict[str, int] = {}
    labels = []
    for t in tokens:
        if counts[t] > 1:
            seen[t] = seen.get(t, 0) + 1
            labels.append(f"{t}#{seen[t]}")
        else:
            labels.append(t)
    return tuple(labels)


# ---------------------------------------------------------------------------------------------
# reading files


def read_text(path: str | Path, what: str = "lesson") -> str:
    """Read a small UTF-8 text file, or raise a one-line error naming the path."""
    a_what = ("an " if what[0] in "aeiou" else "a ") + what  # "a lesson", "an answer sheet"
    p = Path(path)
    shown = str(path)
    try:
        info = p.stat()
    except (FileNotFoundError, NotADirectoryError):
        raise LessonError.at(shown, 1, 1, f"no such {what} file") from None
    except OSError as err:  # a name too long, a loop of links, a folder we may not enter
        raise LessonError.at(shown, 1, 1, f"cannot read the file: {err.strerror}") from None
    if stat.S_ISDIR(info.st_mode):
        raise LessonError.at(shown, 1, 1, f"is a folder; expected {a_what} file (.yaml)")
    if not stat.S_ISREG(info.st_mode):  # a pipe would wait for a writer, /dev/zero never ends
        raise LessonError.at(
            shown, 1, 1, f"not a regular file (a pipe or a device); expected {a_what} file"
        )
    if info.st_size > MAX_FILE_BYTES:
        raise LessonError.at(
            shown, 1, 1, f"file is {info.st_size} bytes; {a_what} file may be at most 1 MiB"
        )
    try:
        with p.open("rb") as f:
            data = f.read(MAX_FILE_BYTES + 1)  # bounded: some files report a size of 0
    except OSError as err:
        raise LessonError.at(shown, 1, 1, f"cannot read the file: {err.strerror}") from None
    if len(data) > MAX_FILE_BYTES:
        raise LessonError.at(shown, 1, 1, f"file is over 1 MiB; {a_what} file may be at most 1 MiB")
    if b"\x00" in data:
        raise LessonError.at(shown, 1, 1, f"looks like a binary file; expected a YAML {what}")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        line = data[: err.start].count(b"\n") + 1
        col = err.start - (data.rfind(b"\n", 0, err.start) + 1) + 1
        raise LessonError.at(shown, line, col, "is not UTF-8 text; save it as UTF-8") from None


if yaml.__with_libyaml__:  # libyaml's C parser makes events ~6× faster than pure Python
    _PARSING: tuple[type, ...] = (yaml.cyaml.CParser,)
else:  # pragma: no cover - PyYAML built without libyaml
    _PARSING = (yaml.reader.Reader, yaml.scanner.Scanner, yaml.parser.Parser)


_PLAIN_TAGS = {"!"} | {
    f"tag:yaml.org,2002:{t}" for t in ("str", "int", "float", "bool", "null", "seq", "map")
}


class _Loader(yaml.composer.Composer, *_PARSING, yaml.resolver.Resolver):  # type: ignore[misc]
    """Composes the node tree only; refuses aliases, anchors, odd tags and deep nesting.

    The parser makes events; Python's Composer (first in the MRO, so ``compose_node`` below is
    used) builds nodes with positions. No constructor runs: no YAML tag can build an object.
    """

    def __init__(self, stream: str, path: str, max_values: int | None = None) -> None:
        if yaml.__with_libyaml__:
            yaml.cyaml.CParser.__init__(self, stream)
        else:  # pragma: no cover
            yaml.reader.Reader.__init__(self, stream)
            yaml.scanner.Scanner.__init__(self)
            yaml.parser.Parser.__init__(self)
        yaml.composer.Composer.__init__(self)
        yaml.resolver.Resolver.__init__(self)
        self._path = path
        self._depth = 0
        self._values = 0
        self._max_values = max_values

    def _refuse(self, mark: yaml.Mark, message: str) -> LessonError:
        return LessonError.at(self._path, mark.line + 1, mark.column + 1, message)

    def compose_node(self, parent, index):  # type: ignore[no-untyped-def]
        event = self.peek_event()
        if isinstance(event, yaml.AliasEvent):
            raise self._refuse(event.start_mark, "YAML aliases (*name) are not allowed here")
        if getattr(event, "anchor", None):
            raise self._refuse(event.start_mark, "YAML anchors (&name) are not allowed here")
        tag = getattr(event, "tag", None)
        if tag and tag not in _PLAIN_TAGS:
            shown = tag.replace("tag:yaml.org,2002:", "!!")
            raise self._refuse(event.start_mark, f"YAML tag {shown} is not allowed here")
        self._values += 1
        if self._max_values is not None and self._values > self._max_values:
            raise self._refuse(
                event.start_mark,
                f"the file holds more than {self._max_values:,} values (numbers, words, lists); "
                "the largest lesson allowed has far fewer",
            )
        self._depth += 1
        if self._depth > MAX_DEPTH:
            raise self._refuse(event.start_mark, f"nested more than {MAX_DEPTH} levels deep")
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


def compose(text: str, path: str, max_values: int | None = None) -> yaml.Node | None:
    """Parse YAML text into a node tree (positions kept), or raise ``LessonError``; past
    ``max_values`` nodes, stop reading and refuse the file."""
    loader = _Loader(text, path, max_values)
    try:
        return loader.get_single_node()
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        what = err.problem or "malformed YAML"
        if "nesting depth" in what:  # libyaml's own limit (newer builds), same rule as ours
            raise LessonError.at(
                path, line, col, f"nested more than {MAX_DEPTH} levels deep"
            ) from None
        if err.context and err.context_mark and err.context_mark is not mark:
            cm = err.context_mark
            what += f" ({err.context} at line {cm.line + 1}, column {cm.column + 1})"
        raise LessonError.at(path, line, col, f"not valid YAML: {what}") from None
    except yaml.YAMLError as err:
        raise LessonError.at(path, 1, 1, f"not valid YAML: {err}") from None
    except RecursionError:
        raise LessonError.at(path, 1, 1, f"nested more than {MAX_DEPTH} levels deep") from None
    finally:
        if hasattr(loader, "dispose"):
            loader.dispose()


# ---------------------------------------------------------------------------------------------
# validation: a small toolkit over nodes that records every problem it meets


_CONTROL = re.compile(f"[{CONTROL_CHARS}]")


def _pos(node: yaml.Node) -> tuple[int, int]:
    return node.start_mark.line + 1, node.start_mark.column + 1


def describe(node: yaml.Node) -> str:
    """How a node looks to a person, for 'found ...' messages."""
    if isinstance(node, yaml.ScalarNode):
        if node.value == "" and not node.style:
            return "nothing (an empty value)"
        text = node.value if len(node.value) <= 40 else node.value[:37] + "..."
        return repr(text) if node.style else text
    if isinstance(node, yaml.SequenceNode):
        return f"a list of {len(node.value)}"
    return "a mapping"


def suggest(word: str, options: tuple[str, ...] | list[str]) -> str:
    """`` (did you mean W_Q?)`` for near misses, else an empty string."""
    for option in options:
        if option.lower() == word.lower():
            return f" (did you mean {option}?)"
    close = difflib.get_close_matches(word, options, n=1, cutoff=0.6)
    return f" (did you mean {close[0]}?)" if close else ""


class Enough(Exception):
    """A ``Checker`` has as many errors as it reports (``max_errors``): stop looking."""


class Checker:
    """Collects problems for one file; helpers return None when a node is unusable.

    With ``max_errors``, the error that reaches it raises ``Enough`` (its last problem says the
    check stopped there), so a file of a thousand bad entries costs no more than one of fifty.
    """

    def __init__(self, path: str, max_errors: int | None = None) -> None:
        self.path = path
        self.problems: list[Problem] = []
        self.where: dict[str, tuple[int, int]] = {}  # "X.2.3" (row 2, column 3) -> (line, col)
        self.max_errors = max_errors

    def error(self, node: yaml.Node | None, message: str) -> None:
        line, col = _pos(node) if node is not None else (1, 1)
        self.problems.append(Problem(self.path, line, col, message))
        if self.max_errors is not None and len(self.problems) >= self.max_errors:
            stop = f"stopped after {self.max_errors} errors; fix these and check again"
            self.problems.append(Problem(self.path, line, col, stop))
            raise Enough

    def mapping(
        self, node: yaml.Node, allowed: tuple[str, ...], what: str
    ) -> dict[str, tuple[yaml.Node, yaml.Node]] | None:
        """Keys of a mapping node; reports non-mappings, duplicates and unknown keys."""
        if not isinstance(node, yaml.MappingNode):
            self.error(node, f"{what} should be a mapping of keys, but found {describe(node)}")
            return None
        out: dict[str, tuple[yaml.Node, yaml.Node]] = {}
        for key_node, value_node in node.value:
            key = key_node.value if isinstance(key_node, yaml.ScalarNode) else None
            if key is None:
                self.error(key_node, f"found {describe(key_node)} as a key; expected a name")
                continue
            if key in out:
                line, _ = _pos(out[key][0])
                self.error(key_node, f"duplicate key {key!r} (first given on line {line})")
                continue
            if key not in allowed:
                hint = suggest(key, allowed)
                self.error(
                    key_node, f"unknown key {key!r} in {what}{hint}; allowed: {', '.join(allowed)}"
                )
                continue
            out[key] = (key_node, value_node)
        return out

    def scalar(self, node: yaml.Node, what: str) -> str | None:
        if not isinstance(node, yaml.ScalarNode):
            self.error(node, f"{what} should be text, but found {describe(node)}")
            return None
        return node.value

    def text(self, node: yaml.Node, what: str, one_line: bool = False) -> str | None:
        """Words for a person to read (title, description, a note, a head's name): any text
        without control characters; a line break or a tab is fine. A ``one_line`` text (a title,
        a head's name) is written where a second line would escape: a comment in the answer
        sheet, a Markdown heading. It is kept without the blanks around it."""
        value = self.scalar(node, what)
        bad = _CONTROL.search(value) if value is not None else None
        if bad is not None:
            self.error(
                node,
                f"{what} contains {bad[0]!r}; a lesson's words may not contain control "
                "characters (a line break or a tab is fine)",
            )
            return None
        if value is not None and one_line:
            value = value.strip()
            if len(value.splitlines()) > 1:  # also U+2028 and U+2029, line breaks to YAML
                self.error(node, f"{what} is on more than one line; write it on one line")
                return None
        return value

    def number(self, node: yaml.Node, what: str) -> Entry | None:
        if not isinstance(node, yaml.ScalarNode):
            self.error(node, f"{what} should be a number, but found {describe(node)}")
            return None
        if not node.style and node.value in ("", "~", "null", "Null", "NULL"):
            self.error(node, f"{what} is empty (null); expected a number")
            return None
        try:
            return parse_entry(node.value)
        except AnswerError as err:
            self.error(node, f"{what}: {err}")
            return None

    def matrix(
        self, node: yaml.Node, name: str, max_rows: int = MAX_DIM, key: str | None = None
    ) -> Matrix | None:
        """A non-empty rectangular list of lists of numbers; ``key`` records entry positions."""
        if not isinstance(node, yaml.SequenceNode) or not node.value:
            shape = "an empty list" if isinstance(node, yaml.SequenceNode) else describe(node)
            self.error(node, f"{name} should be a matrix (a list of rows), but found {shape}")
            return None
        if len(node.value) > max_rows:
            self.error(node, f"{name} has {len(node.value)} rows; at most {max_rows} are allowed")
            return None
        rows: list[tuple[Entry, ...]] = []
        width: int | None = None
        ok = True
        for i, row in enumerate(node.value, 1):
            if not isinstance(row, yaml.SequenceNode):
                self.error(
                    row, f"row {i} of {name} should be a list of numbers, but found {describe(row)}"
                )
                ok = False
                continue
            if not row.value:
                self.error(row, f"row {i} of {name} is empty; expected a list of numbers")
                ok = False
                continue
            if len(row.value) > MAX_DIM:
                self.error(
                    row,
                    f"row {i} of {name} has {len(row.value)} entries; at most "
                    f"{MAX_DIM} are allowed",
                )
                ok = False
                continue
            if width is None:
                width = len(row.value)
            elif len(row.value) != width:
                self.error(
                    row,
                    f"row {i} of {name} has {len(row.value)} "
                    f"{'entry' if len(row.value) == 1 else 'entries'}, but row 1 has "
                    f"{width}; every row needs {width}",
                )
                ok = False
                continue
            cells = [
                self.number(x, f"{name} row {i}, column {j}") for j, x in enumerate(row.value, 1)
            ]
            if any(c is None for c in cells):
                ok = False
                continue
            if key is not None:
                self.where[f"{key}.{i}"] = _pos(row)
                for j, x in enumerate(row.value, 1):
                    self.where[f"{key}.{i}.{j}"] = _pos(x)
            rows.append(tuple(cells))  # type: ignore[arg-type]
        if ok and not self._common_denominator(node, name, rows):
            return None
        return tuple(rows) if ok else None

    def _common_denominator(self, node: yaml.SequenceNode, name: str, rows: list) -> bool:
        """Whether the entries' common denominator is short enough for exact work to stay
        fast (every product of the lesson is taken over it); reports the entry that passes."""
        den = 1
        for i, row in enumerate(rows, 1):
            for j, (_, q) in enumerate(row, 1):
                den = math.lcm(den, q)
                if den >= 10**MAX_DENOMINATOR_DIGITS:
                    self.error(
                        node.value[i - 1].value[j - 1],
                        f"{name} row {i}, column {j}: with this entry the entries of {name} have "
                        f"a common denominator of more than {MAX_DENOMINATOR_DIGITS} digits; "
                        "use a few denominators (halves, thirds, tenths, …)",
                    )
                    return False
        return True


# ---------------------------------------------------------------------------------------------
# the lesson itself


def load_lesson(path: str | Path, name: str | None = None) -> Lesson:
    """Read and validate a lesson file; raise ``LessonError`` listing every problem."""
    lesson, problems = check_lesson(path, name)
    errors = [p for p in problems if p.severity == "error"]
    if errors or lesson is None:
        raise LessonError(errors)
    return lesson


def check_lesson(path: str | Path, name: str | None = None) -> tuple[Lesson | None, list[Problem]]:
    """Validate a lesson file; return the lesson (if valid) and every problem found."""
    shown = str(path)
    try:
        text = read_text(path)
        root = compose(text, shown, MAX_VALUES)
    except LessonError as err:
        return None, err.problems
    c = Checker(shown, MAX_ERRORS)
    if root is None:
        c.error(None, "the file is empty; expected a lesson (title, tokens, X, W_Q, W_K, W_V)")
        return None, c.problems
    try:
        keys = c.mapping(root, TOP_KEYS, "the lesson")
        if keys is None:
            return None, c.problems
        lesson = _build(c, root, keys, name or Path(path).stem, shown)
    except Enough:
        return None, c.problems
    return (lesson if not any(p.severity == "error" for p in c.problems) else None), c.problems


def _build(
    c: Checker, root: yaml.Node, keys: dict[str, tuple[yaml.Node, yaml.Node]], name: str, path: str
) -> Lesson | None:
    def value(key: str) -> yaml.Node | None:
        return keys[key][1] if key in keys else None

    for key in ("title", "tokens", "X"):
        if key not in keys:
            c.error(root, f"missing key {key!r}; a lesson needs title, tokens, X and W_Q, W_K, W_V")
    if "version" in keys:
        v = c.scalar(keys["version"][1], "version")
        if v is not None and v != "1":
            c.error(keys["version"][1], f"version is {v}; this attn-tutor reads version 1")
    title = c.text(value("title"), "title", one_line=True) if "title" in keys else None
    if title is not None and not title.strip():
        c.error(value("title"), "title is empty; expected a few words naming the lesson")
        title = None
    description = ""
    if "description" in keys:
        description = c.text(value("description"), "description") or ""

    tokens: list[str] | None = None
    if "tokens" in keys:
        tokens = _tokens(c, value("tokens"))
    X = c.matrix(value("X"), "X", MAX_TOKENS, key="X") if "X" in keys else None
    if tokens is not None and X is not None and len(tokens) != len(X):
        c.error(
            value("tokens"),
            f"tokens lists {len(tokens)} labels, but X has {len(X)} rows; "
            "expected one token per row of X",
        )
    d_model = len(X[0]) if X else None

    heads = _heads(c, keys, root, d_model)
    W_O = None
    if "W_O" in keys:
        W_O = c.matrix(value("W_O"), "W_O", key="W_O")
        if W_O is not None and "heads" not in keys:
            c.error(
                value("W_O"),
                "W_O projects the concatenation of several heads, but this lesson has no "
                "'heads'; list the heads under 'heads' (one head is fine) or remove W_O",
            )
        elif W_O is not None and heads:
            d_vs = {len(h.W_V[0]) for h in heads}
            if len(d_vs) > 1:
                c.error(
                    value("W_O"),
                    "W_O needs every head to have the same d_v, but the heads' "
                    f"W_V have {', '.join(str(len(h.W_V[0])) for h in heads)} columns",
                )
            else:
                need = len(heads) * d_vs.pop()
                if len(W_O) != need:
                    c.error(
                        value("W_O"),
                        f"W_O has {len(W_O)} {'row' if len(W_O) == 1 else 'rows'}, but the "
                        f"concatenation has {len(heads)} × {len(heads[0].W_V[0])} = {need} "
                        f"{'column' if need == 1 else 'columns'}, so W_O needs {need} "
                        f"{'row' if need == 1 else 'rows'}",
                    )

    mask = "none"
    if "mask" in keys:
        m = c.scalar(value("mask"), "mask")
        if m is not None and m not in MASKS:
            c.error(value("mask"), f"mask is {m!r}; expected one of: {', '.join(MASKS)}")
        elif m is not None:
            mask = m

    precision = 2
    if "precision" in keys:
        node = value("precision")
        p = c.scalar(node, "precision")
        if p is not None and not (p.isdecimal() and 0 <= int(p) <= 10):
            c.error(node, f"precision is {describe(node)}; expected a whole number from 0 to 10")
        elif p is not None:
            precision = int(p)

    notes = _notes(c, value("notes")) if "notes" in keys else {}
    quiz = _quiz(c, value("quiz")) if "quiz" in keys else QuizDefaults()
    where = {k: _pos(v) for k, (_, v) in keys.items()} | c.where
    if any(p.severity == "error" for p in c.problems):
        return None
    assert title is not None and tokens is not None and X is not None and heads
    return Lesson(
        name=name,
        path=path,
        title=title,
        description=description,
        tokens=tuple(tokens),
        X=X,
        heads=tuple(heads),
        multi_head="heads" in keys,
        W_O=W_O,
        mask=mask,
        precision=precision,
        notes=MappingProxyType(notes),
        quiz=quiz,
        where=MappingProxyType(where),
    )


def _tokens(c: Checker, node: yaml.Node) -> list[str] | None:
    if not isinstance(node, yaml.SequenceNode) or not node.value:
        c.error(
            node, f"tokens should be a list of words, one per row of X, but found {describe(node)}"
        )
        return None
    if len(node.value) > MAX_TOKENS:
        c.error(node, f"tokens has {len(node.value)} entries; at most {MAX_TOKENS} are allowed")
        return None
    out = []
    for i, t in enumerate(node.value, 1):
        if not isinstance(t, yaml.ScalarNode) or not t.value.strip():
            c.error(t, f"token {i} should be a word, but found {describe(t)}")
            continue
        word = t.value.strip()
        problem = token_problem(word)
        if problem is not None:
            c.error(t, f"token {i} {problem}")
            continue
        c.where[f"tokens.{i}"] = _pos(t)
        out.append(word)
    return out if len(out) == len(node.value) else None


def token_problem(word: str) -> str | None:
    """Why a (stripped, non-empty) word cannot be a token, or None when it can."""
    bad = next((ch for ch in word if ch in "[],#" or not ch.isprintable()), None)
    if bad is not None:
        return f"({word!r}) contains {bad!r}; tokens may not contain [ ] , # or control characters"
    if len(word) > MAX_TOKEN_CHARS:
        return f"is {len(word)} characters long; at most {MAX_TOKEN_CHARS}"
    return None


def _weights(
    c: Checker,
    node_of: Callable[[str], yaml.Node | None],
    where: yaml.Node,
    d_model: int | None,
    prefix: str,
    path: str = "",
) -> Head | None:
    """W_Q, W_K, W_V of one head, checked against X and each other."""
    mats = {}
    for key in ("W_Q", "W_K", "W_V"):
        node = node_of(key)
        if node is None:
            c.error(where, f"missing key {key!r}{prefix}; expected a d_model × d matrix")
            continue
        m = c.matrix(node, f"{key}{prefix}", key=f"{path}{key}")
        if m is None:
            continue
        if d_model is not None and len(m) != d_model:
            c.error(
                node,
                f"{key}{prefix} has {len(m)} {'row' if len(m) == 1 else 'rows'}, but X has "
                f"{d_model} {'column' if d_model == 1 else 'columns'}, so {key} needs "
                f"{d_model} {'row' if d_model == 1 else 'rows'}",
            )
            continue
        mats[key] = (m, node)
    if "W_Q" in mats and "W_K" in mats and len(mats["W_Q"][0][0]) != len(mats["W_K"][0][0]):
        c.error(
            mats["W_K"][1],
            f"W_K{prefix} has {len(mats['W_K'][0][0])} columns, but W_Q has "
            f"{len(mats['W_Q'][0][0])}; queries and keys need the same length d_k",
        )
        return None
    if len(mats) < 3:
        return None
    return Head(None, mats["W_Q"][0], mats["W_K"][0], mats["W_V"][0])


def _heads(c: Checker, keys: dict, root: yaml.Node, d_model: int | None) -> list[Head]:
    single = [k for k in ("W_Q", "W_K", "W_V") if k in keys]
    if "heads" in keys and single:
        c.error(
            keys[single[0]][0],
            f"{single[0]} given at the top level and also 'heads'; use "
            "either W_Q, W_K, W_V (one head) or heads (several), not both",
        )
        return []
    if "heads" not in keys:
        head = _weights(c, lambda k: keys[k][1] if k in keys else None, root, d_model, "")
        return [head] if head else []
    node = keys["heads"][1]
    if not isinstance(node, yaml.SequenceNode) or not node.value:
        c.error(
            node,
            f"heads should be a non-empty list of heads (each with W_Q, W_K, W_V), "
            f"but found {describe(node)}",
        )
        return []
    if len(node.value) > MAX_HEADS:  # each head is a whole attention: N × N work and more
        c.error(node, f"heads has {len(node.value)} heads; at most {MAX_HEADS} are allowed")
        return []
    heads = []
    for i, h in enumerate(node.value, 1):
        hk = c.mapping(h, HEAD_KEYS, f"head {i}")
        if hk is None:
            continue
        label = None
        if "name" in hk:
            label = c.text(hk["name"][1], f"the name of head {i}", one_line=True)
        head = _weights(
            c,
            lambda k, hk=hk: hk[k][1] if k in hk else None,
            h,
            d_model,
            f" of head {i}",
            f"heads.{i}.",
        )
        if head is not None:
            heads.append(Head(label, head.W_Q, head.W_K, head.W_V))
    return heads if len(heads) == len(node.value) else []


def _notes(c: Checker, node: yaml.Node) -> dict[str, str]:
    keys = c.mapping(node, STEP_NAMES, "notes")
    out = {}
    for step, (_, v) in (keys or {}).items():
        text = c.text(v, f"the note for {step}")
        if text is not None:
            out[step] = text
    return out


def _quiz(c: Checker, node: yaml.Node) -> QuizDefaults:
    keys = c.mapping(node, QUIZ_KEYS, "quiz")
    out = QuizDefaults()
    if keys is None:
        return out
    if "count" in keys:
        v = keys["count"][1]
        text = c.scalar(v, "quiz count")
        if text is not None and not (text.isdecimal() and 1 <= int(text) <= 200):
            c.error(v, f"quiz count is {describe(v)}; expected a whole number from 1 to 200")
        elif text is not None:
            out = replace(out, count=int(text))
    if "steps" in keys:
        v = keys["steps"][1]
        if not isinstance(v, yaml.SequenceNode):
            c.error(v, f"quiz steps should be a list of step names, but found {describe(v)}")
        else:
            steps = []
            for s in v.value:
                name = c.scalar(s, "a quiz step")
                if name is not None and name not in STEP_NAMES:
                    c.error(s, f"unknown step {name!r}{suggest(name, STEP_NAMES)}")
                elif name is not None:
                    steps.append(name)
            out = replace(out, steps=tuple(steps))
    return out


# ---------------------------------------------------------------------------------------------
# finding lessons


def bundled_dir() -> Path:
    """The bundled lessons: inside the installed package, else the checkout's ``lessons/``."""
    here = Path(__file__).resolve().parent
    inside = here / "lessons"
    return inside if inside.is_dir() else here.parent / "lessons"


LESSONS_ENV = "ATTN_TUTOR_LESSONS"


def lesson_dirs(extra: list[Path] | None = None) -> list[tuple[str, Path]]:
    """Where lessons are looked up by name, first match wins: (origin, folder).

    The order: bundled, ``./lessons/`` of the current folder, each folder in
    ``ATTN_TUTOR_LESSONS`` (separated by ``os.pathsep``; origin ``env``, or ``env 1``,
    ``env 2`` … when there are several), then ``--lessons-dir``. A folder that
    appears twice (in a checkout, ``./lessons/`` *is* the bundled folder) is kept only the first
    time. Missing folders from the environment are skipped; a missing ``--lessons-dir`` is an
    error.
    """
    for d in extra or []:
        if not Path(d).is_dir():
            raise UsageError(f"--lessons-dir {d}: no such folder")
    env = [d for d in os.environ.get(LESSONS_ENV, "").split(os.pathsep) if d.strip()]
    dirs = [("bundled", bundled_dir()), ("./lessons", Path("lessons"))]
    dirs += _numbered("env", [Path(d) for d in env])
    dirs += _numbered("--lessons-dir", [Path(d) for d in extra or []])
    unique: list[tuple[str, Path]] = []
    seen: set[Path] = set()
    for origin, folder in dirs:
        if folder.resolve() not in seen:
            seen.add(folder.resolve())
            unique.append((origin, folder))
    return unique


def _numbered(origin: str, folders: list[Path]) -> list[tuple[str, Path]]:
    """``(origin, folder)``, numbered ``origin 1``, ``origin 2`` … when there are several."""
    if len(folders) == 1:
        return [(origin, folders[0])]
    return [(f"{origin} {i}", folder) for i, folder in enumerate(folders, 1)]


def iter_lessons(extra: list[Path] | None = None) -> Iterator[tuple[str, str, Path]]:
    """Every lesson file found: (name, origin, path), in lookup order (shadowed ones too)."""
    for origin, folder in lesson_dirs(extra):
        if folder.is_dir():
            for p in sorted(folder.glob("*.yaml"), key=lambda p: p.stem):
                yield p.stem, origin, p


def is_file(path: Path) -> bool:
    """``path.is_file()``, False where the file system cannot even look (a name too long)."""
    try:
        return path.is_file()
    except OSError:
        return False


def is_dir(path: Path) -> bool:
    """``path.is_dir()``, False where the file system cannot even look (a name too long)."""
    try:
        return path.is_dir()
    except OSError:
        return False


def find_lesson(name: str, extra: list[Path] | None = None) -> Path:
    """A lesson by name (in the lesson folders) or by path; raise ``LessonError`` if absent."""
    looks_like_path = name.endswith((".yaml", ".yml")) or os.sep in name or "/" in name
    if looks_like_path or is_file(Path(name)):
        return Path(name)
    found = {n: p for n, _, p in reversed(list(iter_lessons(extra)))}
    if name in found:
        return found[name]
    close = difflib.get_close_matches(name, list(found), n=3, cutoff=0.5)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    names = sorted(found)
    known = ", ".join(names[:10]) + (", … (see attn-tutor list)" if len(names) > 10 else "")
    raise LessonError.at(  # line 0: a name, not a place in a file
        name, 0, 0, f"no lesson named {name!r}{hint} (known lessons: {known or 'none'})"
    )
