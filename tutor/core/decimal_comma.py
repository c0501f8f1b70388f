"""Naming a decimal comma: ``[0, 1,41, 0]`` is four entries to YAML, but a person meant three.

In a YAML flow list a comma separates entries, so ``1,41`` (1.41 written the European way)
becomes two entries, 1 and 41, and the row is one entry too long. A row with more entries than
expected is explained when the extra entries are exactly the pairs written with no space around
their comma (``1,41`` among ``0, …, 0``), each pair an integer and plain digits. Pure: it reads
the YAML node and its positions, nothing else.
"""

from __future__ import annotations

import re

import yaml

_INTEGER = re.compile(r"[+-]?\d+")
_DIGITS = re.compile(r"\d+")
_COMMA = re.compile(r"[+-]?\d+,\d+")


def decimal_comma(row: yaml.Node, expected: int) -> str | None:
    """``looks like a decimal comma: write 1.41`` when the row would have ``expected`` entries if
    the tight pairs ``1,41`` were decimals; None when that does not explain its length."""
    if not isinstance(row, yaml.SequenceNode):
        return None
    extra = len(row.value) - expected
    if extra < 1:
        return None
    pairs = []
    k = 0
    while k + 1 < len(row.value):
        a, b = row.value[k], row.value[k + 1]
        if tight_pair(a, b):
            pairs.append(f"{a.value}.{b.value}")
            k += 2  # a pair is one number: 1,41,5 is not two decimals
        else:
            k += 1
    if len(pairs) != extra:
        return None
    if extra == 1:
        return f"looks like a decimal comma: write {pairs[0]}"
    return f"looks like decimal commas: write {', '.join(pairs[:-1])} and {pairs[-1]}"


def comma_advice(text: str) -> str | None:
    """``write 0.24`` for one entry written with a decimal comma (``0,24``), else None."""
    if _COMMA.fullmatch(text.strip()) is None:
        return None
    return f"write {text.strip().replace(',', '.')}"


def comma_note(row: yaml.Node, expected: int) -> str:
    """``; looks like a decimal comma: write 1.41``, or nothing: to end a message about a row."""
    hint = decimal_comma(row, expected)
    return f"; {hint}" if hint else ""


def tight_pair(a: yaml.Node, b: yaml.Node) -> bool:
    """An integer, a comma and digits, with nothing between: ``1,41``."""
    plain = isinstance(a, yaml.ScalarNode) and isinstance(b, yaml.ScalarNode)
    return (
        plain
        and not a.style
        and not b.style
        and _INTEGER.fullmatch(a.value) is not None
        and _DIGITS.fullmatch(b.value) is not None
        and b.start_mark.index == a.end_mark.index + 1  # the comma alone sits between them
    )
