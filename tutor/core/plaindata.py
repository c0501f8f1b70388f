"""Python data handed to the library (a lesson or an answer sheet as a dict), measured and copied
into plain YAML/JSON values before any work is done on it.

A dict is walked once, without recursion, and the walk stops at the first thing that cannot be
a lesson: more values than a lesson file may hold, a string or number too long, nesting too
deep, a dict that contains itself, a key that is not text, an object that is not data. So a dict
of 400,000 rows is refused after its first 20,000 values, before it is ever dumped to YAML."""

from __future__ import annotations

import numbers
from fractions import Fraction
from typing import Any

from tutor.core.errors import LessonError
from tutor.core.spec import MAX_DEPTH, MAX_FILE_BYTES, MAX_VALUES

MAX_INT_BITS = 4000  # about 1,200 digits: the loader then names what is too long, and where
HOLDS = f"a lesson or sheet holds at most {MAX_VALUES:,} values"
MAX_TEXT = 4096  # characters of one number given as an object (a Fraction, a numpy scalar)


def plain(data: dict[Any, Any], shown: str) -> dict[str, Any]:
    """A copy of ``data`` holding only dicts with text keys, lists, text, ints, floats, bools
    and None (tuples become lists; Fractions, Decimals, sympy and numpy numbers their text);
    raise ``LessonError`` naming the place (``<dict> X[2][0]``) of the first thing refused."""
    budget = _Budget(shown)
    holder: dict[str, Any] = {}
    # (the value, where it is, its depth, the container its copy goes in, the key there)
    todo: list[tuple[Any, str, int, Any, Any]] = [(data, "", 0, holder, "top")]
    open_ids: set[int] = set()  # containers on the way down: a dict that contains itself
    kept: list[Any] = []  # arrays' lists, alive while walked (an id is unique only while alive)
    while todo:
        value, where, depth, into, key = todo.pop()
        if value is _CLOSE:
            open_ids.discard(key)
            continue
        if depth:
            budget.count(where)
        listed = _array(value, where, budget)
        if listed is not value:
            kept.append(listed)
            value = listed
        if isinstance(value, dict | list | tuple):
            if depth >= MAX_DEPTH:
                budget.refuse(where, f"nested more than {MAX_DEPTH} deep")
            if id(value) in open_ids:
                budget.refuse(where, "contains itself (a dict or list inside itself)")
            if len(value) > MAX_VALUES - budget.values:  # before a copy is made of any of it
                alone = len(value) > MAX_VALUES  # too many by themselves, or with those before
                before = "" if alone else f", after {budget.values:,} values before them"
                budget.refuse(where, f"{len(value):,} entries{before}; {HOLDS}")
            copy: Any = {} if isinstance(value, dict) else [None] * len(value)
            into[key] = copy
            todo.append((_CLOSE, where, depth, None, id(value)))
            open_ids.add(id(value))
            if isinstance(value, dict):
                kids = [(v, _where(where, k, budget), k) for k, v in value.items()]
            else:
                kids = [(v, f"{where}[{i}]", i) for i, v in enumerate(value)]
            todo.extend((v, w, depth + 1, copy, k) for v, w, k in reversed(kids))
            continue
        into[key] = _scalar(value, where, budget)
    return holder["top"]


def _array(value: Any, where: str, budget: _Budget) -> Any:
    """A NumPy array as the nested list it holds (its size measured first); else ``value``."""
    try:
        tolist = None if isinstance(value, numbers.Number) else getattr(value, "tolist", None)
    except Exception:  # an object whose attributes raise is no array
        tolist = None
    if not callable(tolist):
        return value
    size = getattr(value, "size", None)
    if not isinstance(size, int) or size > MAX_VALUES:
        budget.refuse(where, f"{_kind(value)} of {size} values; {HOLDS}")
    try:
        got = tolist()
    except Exception as err:  # its own tolist failed: say so, never its traceback
        budget.refuse(where, f"{_kind(value)} whose values cannot be read ({type(err).__name__})")
        raise  # not reached
    return got


def _kind(value: Any) -> str:
    name = type(value).__name__
    return ("an " if name[:1] in tuple("aeiou") else "a ") + name


_CLOSE = object()  # marks the end of a container's values on the walk's stack


class _Budget:
    """What the walk has used of a lesson file's limits: values, and bytes as YAML."""

    def __init__(self, shown: str) -> None:
        self.shown, self.values, self.bytes = shown, 0, 0

    def count(self, where: str) -> None:
        """One more value (a key, a list, a number or a text), about 4 bytes as YAML."""
        self.values += 1
        if self.values > MAX_VALUES:
            self.refuse(where, f"more than {MAX_VALUES:,} values; {HOLDS}")
        self.grow(where, 4)

    def grow(self, where: str, size: int) -> None:
        self.bytes += size
        if self.bytes > MAX_FILE_BYTES:
            self.refuse(where, "more than 1 MiB as text; a file may be at most 1 MiB")

    def text(self, where: str, text: str) -> str:
        self.grow(where, len(text))
        return text

    def refuse(self, where: str, why: str) -> None:
        raise LessonError.at(self.shown, 0, 0, f"{where or 'the dict'}: {why}")


def _where(parent: str, key: Any, budget: _Budget) -> str:
    """The place of ``key`` under ``parent`` as a person reads it (``heads[1].W_Q``)."""
    if not isinstance(key, str):
        found = type(key).__name__
        budget.refuse(parent, f"a key of type {found}; the keys of a lesson or sheet are text")
    shown_key = key if len(key) <= 40 else key[:40] + "…"
    return f"{parent}.{shown_key}" if parent else shown_key


def _scalar(value: Any, where: str, budget: _Budget) -> Any:
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str):
        return budget.text(where, value)
    if isinstance(value, int):
        if abs(value).bit_length() > MAX_INT_BITS:
            digits = int(abs(value).bit_length() * 0.30103) + 1
            budget.refuse(
                where, f"a whole number of about {digits:,} digits; at most 30 are allowed"
            )
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, numbers.Number):  # Fraction, Decimal, sympy and numpy numbers
        return budget.text(where, _number_text(value, where, budget))
    budget.refuse(where, f"{_kind(value)}; expected text, a number, a list or a dict")
    return None  # not reached: refuse raises


def _number_text(value: Any, where: str, budget: _Budget) -> str:
    """The text of a number object (Fraction 1/3, Decimal, sympy Rational, numpy scalar)."""
    item = getattr(value, "item", None)  # a numpy scalar: its Python int or float
    try:
        if callable(item):
            got = item()
            if isinstance(got, int | float) and not isinstance(got, bool):
                return str(_scalar(got, where, budget))
        if isinstance(value, Fraction):
            n, d = value.numerator, value.denominator
            if max(abs(n).bit_length(), d.bit_length()) > MAX_INT_BITS:
                budget.refuse(where, "a fraction of more than 1,200 digits; at most 30 are allowed")
        text = str(value)
    except LessonError:
        raise
    except Exception as err:  # the object's own str() failed: say so, never its traceback
        budget.refuse(where, f"{_kind(value)} whose text cannot be read ({type(err).__name__})")
        raise  # not reached
    if not isinstance(text, str) or len(text) > MAX_TEXT:
        budget.refuse(where, f"{_kind(value)} whose text is too long to be a number")
    return text
