"""Safe YAML with positions: read a file's text, compose its node tree (no anchors, aliases or
odd tags), and a small toolkit (``Checker``) that checks nodes and records every problem as
``file:line:col: message``. Shared by lesson files and answer sheets.

Numbers are read from the YAML *source text* of each scalar (via the composed node tree), never
from what YAML 1.1 resolves them to, so ``0.1`` is exactly 1/10, ``010`` is ten and ``yes`` is an
error instead of ``True``.
"""

from __future__ import annotations

import difflib
import math
import re
import stat
from collections import Counter
from pathlib import Path

import yaml
import yaml.composer
import yaml.cyaml
import yaml.resolver

from tutor.core.decimal_comma import comma_note, decimal_comma
from tutor.core.errors import AnswerError, LessonError, Problem
from tutor.core.lesson import Entry, Matrix
from tutor.core.numbers import parse_entry
from tutor.core.spec import (
    CONTROL_CHARS,
    MAX_DENOMINATOR_DIGITS,
    MAX_DEPTH,
    MAX_DIM,
    MAX_FILE_BYTES,
)

# ---------------------------------------------------------------------------------------------
# reading files


def read_text(path: str | Path, what: str = "lesson", suffix: str = ".yaml") -> str:
    """Read a small UTF-8 text file, or raise a one-line error naming the path (``suffix``: the
    kind of file expected, ``.yaml`` or ``.csv``, as the messages say it)."""
    a_what = ("an " if what[0] in "aeiou" else "a ") + what  # "a lesson", "an answer sheet"
    p = Path(path)
    shown = str(path)
    try:
        info = p.stat()
    except (FileNotFoundError, NotADirectoryError):
        raise LessonError.at(shown, 1, 1, f"no such {what} file") from None
    except OSError as err:  # a name too long, a loop of links, a folder we may not enter
        raise LessonError.at(shown, 1, 1, f"cannot read the file: {err.strerror}") from None
    except ValueError:  # a NUL in the name (only the library can be handed one)
        raise LessonError.at(
            shown, 1, 1, "no such file: a file name has no NUL character"
        ) from None
    if stat.S_ISDIR(info.st_mode):
        raise LessonError.at(shown, 1, 1, f"is a folder; expected {a_what} file ({suffix})")
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
        raise LessonError.at(
            shown, 1, 1, f"looks like a binary file; expected a {suffix[1:].upper()} {what}"
        )
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
        tab = _tab_indent(text, line)
        if tab is not None:  # PyYAML's own words ("cannot start any token") do not say why
            raise LessonError.at(
                path,
                *tab,
                f"line {tab[0]} is indented with a tab; YAML needs spaces",
            ) from None
        what = err.problem or "malformed YAML"
        if "nesting depth" in what:  # libyaml's own limit (newer builds), same rule as ours
            raise LessonError.at(
                path, line, col, f"nested more than {MAX_DEPTH} levels deep"
            ) from None
        if err.context and err.context_mark and err.context_mark is not mark:
            cm = err.context_mark
            what += f" ({err.context} at line {cm.line + 1}, column {cm.column + 1})"
        raise LessonError.at(path, line, col, f"not valid YAML: {what}") from None
    except yaml.reader.ReaderError as err:  # a character YAML refuses: no mark, a position
        line, col = _line_col(text, err.position)
        code = err.character if isinstance(err.character, int) else ord(err.character)
        raise LessonError.at(
            path,
            line,
            col,
            f"not valid YAML: the character U+{code:04X} is not allowed in a YAML file; "
            f'inside double quotes, write it as the escape "\\u{code:04x}"',
        ) from None
    except yaml.YAMLError as err:
        raise LessonError.at(path, 1, 1, f"not valid YAML: {err}") from None
    except RecursionError:
        raise LessonError.at(path, 1, 1, f"nested more than {MAX_DEPTH} levels deep") from None
    finally:
        if hasattr(loader, "dispose"):
            loader.dispose()


_BREAK = re.compile("\r\n|[\r\n\x85\u2028\u2029]")  # YAML's line breaks, as its marks count them
_INDENT = re.compile(r"[ \t]*")


def _tab_indent(text: str, up_to: int) -> tuple[int, int] | None:
    """(line, column) of the first tab in the indentation of a line up to line ``up_to``, the
    line YAML stopped at: what made it stop, when there is one."""
    for number, line in enumerate(_BREAK.split(text)[:up_to], 1):
        indent = _INDENT.match(line)
        if indent and "\t" in indent[0] and line.strip():
            return number, indent[0].index("\t") + 1
    return None


def _line_col(text: str, position: int) -> tuple[int, int]:
    """The 1-based line and column of ``text[position]``, as YAML marks count them."""
    line, start = 1, 0
    for m in _BREAK.finditer(text, 0, position):
        line, start = line + 1, m.end()
    return line, position - start + 1


# ---------------------------------------------------------------------------------------------
# validation: a small toolkit over nodes that records every problem it meets


_CONTROL = re.compile(f"[{CONTROL_CHARS}]")


def pos(node: yaml.Node) -> tuple[int, int]:
    return node.start_mark.line + 1, node.start_mark.column + 1


def whole_number(text: str, low: int, high: int) -> int | None:
    """``text`` as a whole number from ``low`` to ``high``, or None. Its length is bounded
    before ``int`` sees it (Python refuses, with a ValueError, to read over 4,300 digits), and
    leading zeros do not count: ``0…01`` with 5,000 digits is 1."""
    digits = text.lstrip("0") or "0"
    if not text.isdecimal() or len(digits) > len(str(high)):
        return None
    n = int(digits)
    return n if low <= n <= high else None


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
        self.widths: dict[str, int] = {}  # "X" -> the row length most rows agree on

    def error(self, node: yaml.Node | None, message: str) -> None:
        line, col = pos(node) if node is not None else (1, 1)
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
                line, _ = pos(out[key][0])
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
        width = _width(node.value)
        if key is not None and width is not None:
            self.widths[key] = width
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
            if len(row.value) != width:
                first = node.value[0]  # "row 1 has 4" when it does, else "the other rows"
                first_ok = isinstance(first, yaml.SequenceNode) and len(first.value) == width
                self.error(
                    row,
                    f"row {i} of {name} has {len(row.value)} "
                    f"{'entry' if len(row.value) == 1 else 'entries'}, but "
                    f"{'row 1 has' if first_ok else 'the other rows have'} "
                    f"{width}; every row needs {width}{comma_note(row, width)}",
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
                self.where[f"{key}.{i}"] = pos(row)
                for j, x in enumerate(row.value, 1):
                    self.where[f"{key}.{i}.{j}"] = pos(x)
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


def _width(rows: list[yaml.Node]) -> int | None:
    """The row length a matrix means: the one most rows have or would have without a decimal
    comma (``[0,5, 1]`` counts for 2), ties going to row 1's; None without a usable row."""
    lists = [r for r in rows if isinstance(r, yaml.SequenceNode) and r.value]
    if not lists:
        return None
    lengths = Counter(len(r.value) for r in lists)
    # row 1's and the few commonest lengths: a hostile file's thousand lengths cost no more
    candidates = dict.fromkeys([len(lists[0].value), *(w for w, _ in lengths.most_common(4))])

    def votes(width: int) -> int:
        return sum(len(r.value) == width or decimal_comma(r, width) is not None for r in lists)

    return max(candidates, key=votes)  # max keeps the first of equals: row 1's
