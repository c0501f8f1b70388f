"""The lesson keys for biases (issue 41): ``b_Q``, ``b_K``, ``b_V`` (one row each, added to every
row of X·W_Q, X·W_K, X·W_V; at the top level for one head, inside each entry of ``heads:``, and
``b_K``, ``b_V`` inside ``kv_heads:`` for grouped heads) and ``b_O`` (added to every row of
concat·W_O). Read by ``lessonfile``; every problem is said at its file, line and column.
"""

from __future__ import annotations

from dataclasses import replace

import yaml

from tutor.core.lesson import Entry, Head, Matrix
from tutor.core.spec import BIASES
from tutor.core.yamlsrc import Checker, describe

Keys = dict[str, tuple[yaml.Node, yaml.Node]]
OUTPUT_BIAS = "b_O"


def bias_key(keys: Keys) -> str | None:
    """The first bias a lesson gives at its top level (None: none there)."""
    return next((k for k in (*BIASES, OUTPUT_BIAS) if k in keys), None)


def _entries(n: int) -> str:
    return f"{n} {'entry' if n == 1 else 'entries'}"


def bias_row(
    c: Checker, node: yaml.Node, name: str, key: str, width: int | None, of: str
) -> tuple[Entry, ...] | None:
    """One row of numbers, as wide as the matrix ``of`` whose product it is added to."""
    if not (
        isinstance(node, yaml.SequenceNode)
        and node.value
        and all(isinstance(v, yaml.ScalarNode) for v in node.value)
    ):
        found = "a list of lists" if isinstance(node, yaml.SequenceNode) else describe(node)
        if isinstance(node, yaml.SequenceNode) and not node.value:
            found = "an empty list"
        c.error(
            node,
            f"{name} should be one row of numbers, added to every row of {of}'s product, like "
            f"[0.5, 0], but found {found}",
        )
        return None
    wrapped = yaml.SequenceNode("tag:yaml.org,2002:seq", [node], node.start_mark, node.end_mark)
    m = c.matrix(wrapped, name, key=key)
    if m is None:
        return None
    row = m[0]
    if width is not None and len(row) != width:
        c.error(
            node,
            f"{name} has {_entries(len(row))}, but {of} has {width} "
            f"{'column' if width == 1 else 'columns'}; {name} needs one entry per column "
            f"of {of} ({width})",
        )
        return None
    return row


def _mapping(node: yaml.Node) -> Keys:
    if not isinstance(node, yaml.MappingNode):
        return {}
    return {k.value: (k, v) for k, v in node.value if isinstance(k, yaml.ScalarNode)}


def _width(m: Matrix) -> int:
    return len(m[0])


def with_biases(c: Checker, keys: Keys, heads: list[Head], grouped: bool) -> list[Head]:
    """Each head with the biases the lesson gives it (the heads as they were when it gives
    none); a bias of the wrong shape is an error at its line."""
    top = [k for k in BIASES if k in keys]
    if "heads" in keys:
        for k in top:
            c.error(
                keys[k][0],
                f"{k} given at the top level and also 'heads'; give each head's {k} inside "
                "its entry under heads",
            )
        entries = keys["heads"][1].value if isinstance(keys["heads"][1], yaml.SequenceNode) else []
        own = [_mapping(h) for h in entries]
        paths = [f"heads.{i}." for i in range(1, len(own) + 1)]
        names = [f" of head {i}" for i in range(1, len(own) + 1)]
    else:
        own, paths, names = [keys], [""], [""]
    groups: list[Keys] = []
    if grouped and "kv_heads" in keys and isinstance(keys["kv_heads"][1], yaml.SequenceNode):
        groups = [_mapping(g) for g in keys["kv_heads"][1].value]
    if not heads or len(own) != len(heads):
        return heads
    size = max(1, len(heads) // len(groups)) if groups else 1
    out = []
    for i, (head, hk, path, said) in enumerate(zip(heads, own, paths, names, strict=True)):
        rows: dict[str, tuple[Entry, ...] | None] = {}
        for key, W in BIASES.items():
            source, where, name = hk, path, said
            if groups and key != "b_Q":  # a group's b_K and b_V, under kv_heads
                g = i // size
                source, where, name = groups[g], f"kv_heads.{g + 1}.", f" of kv head {g + 1}"
            if key not in source:
                continue
            width = _width(getattr(head, W))
            rows[key] = bias_row(c, source[key][1], f"{key}{name}", f"{where}{key}", width, W)
        out.append(replace(head, **rows) if rows else head)
    return out


def output_bias(c: Checker, keys: Keys, W_O: Matrix | None) -> tuple[Entry, ...] | None:
    """``b_O``: one row as wide as W_O, which it needs."""
    node = keys[OUTPUT_BIAS][1]
    if W_O is None and "W_O" not in keys:
        c.error(
            node,
            "b_O is added to the output projection concat · W_O, but this lesson has no W_O; "
            "give W_O (with heads) or remove b_O",
        )
        return None
    return bias_row(c, node, OUTPUT_BIAS, OUTPUT_BIAS, None if W_O is None else len(W_O[0]), "W_O")
