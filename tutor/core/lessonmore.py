"""The lesson keys for decoding-era attention: grouped heads (``kv_groups``, ``kv_heads``), one
decoding step (``next``) and the column layout (``layout``). Read by ``lessonfile``; every
problem is reported with its file, line and column, like the rest of a lesson.
"""

from __future__ import annotations

import yaml

from tutor.core.errors import AnswerError
from tutor.core.lesson import Entry, Head, NextToken
from tutor.core.numbers import parse_entry
from tutor.core.spec import (
    HEAD_KEYS,
    KV_HEAD_KEYS,
    LAYOUTS,
    MAX_HEADS,
    MAX_TOKENS,
    NEXT_KEYS,
    QUERY_HEAD_KEYS,
    SCALES,
    WEIGHT_KEYS,
)
from tutor.core.yamlsrc import Checker, describe, suggest, whole_number


def _rows(n: int, what: str = "row") -> str:
    plural = what[:-1] + "ies" if what.endswith("y") else what + "s"
    return f"{n} {what if n == 1 else plural}"


def _weight(c: Checker, node: yaml.Node, name: str, key: str, d_model: int | None) -> tuple | None:  # type: ignore[type-arg]
    m = c.matrix(node, name, key=key)
    if m is None:
        return None
    if d_model is not None and len(m) != d_model:
        short = name.split(" ")[0]
        c.error(
            node,
            f"{name} has {_rows(len(m))}, but X has {_rows(d_model, 'column')}, so {short} "
            f"needs {_rows(d_model)}",
        )
        return None
    return m


def grouped_heads(
    c: Checker, keys: dict, root: yaml.Node, d_model: int | None
) -> tuple[list[Head], int | None]:
    """``heads`` (name and W_Q each) and ``kv_heads`` (W_K and W_V each), ``kv_groups`` of them:
    every query head gets its group's W_K and W_V. Returns the heads (empty on any problem) and
    the number of groups."""
    node = keys["kv_groups"][1]
    text = c.scalar(node, "kv_groups")
    groups = None if text is None else whole_number(text, 1, MAX_HEADS)
    if text is not None and groups is None:
        c.error(
            node, f"kv_groups is {describe(node)}; expected a whole number from 1 to {MAX_HEADS}"
        )
    # every problem is said, not only the first: each one found makes ``broken`` true, and
    # the heads are still read as far as they can be
    broken = False
    for key in WEIGHT_KEYS:
        if key in keys:
            c.error(
                keys[key][0],
                f"{key} given at the top level with kv_groups; grouped heads give W_Q under "
                "'heads' and W_K, W_V under 'kv_heads'",
            )
            broken = True
    lists = []
    for key, what in (("heads", "W_Q"), ("kv_heads", "W_K and W_V")):
        if key not in keys:
            c.error(
                node,
                f"kv_groups needs '{key}' too: a list of entries, each with {what}",
            )
            continue
        n = keys[key][1]
        if not isinstance(n, yaml.SequenceNode) or not n.value:
            c.error(n, f"{key} should be a non-empty list, but found {describe(n)}")
        elif len(n.value) > MAX_HEADS:
            c.error(n, f"{key} has {len(n.value)} entries; at most {MAX_HEADS} are allowed")
        else:
            lists.append(n)
    if len(lists) < 2:
        return [], groups
    qnode, kvnode = lists
    if groups is not None and len(kvnode.value) != groups:
        c.error(
            kvnode,
            f"kv_heads has {_rows(len(kvnode.value), 'entry')}, but kv_groups is {groups}; "
            "expected one W_K, W_V pair per group",
        )
        broken = True
    if groups is not None and len(qnode.value) % groups:
        c.error(
            qnode,
            f"heads has {len(qnode.value)} query heads, which do not split into {groups} "
            f"equal groups; expected a multiple of {groups} (kv_groups)",
        )
        broken = True
    kv: list[tuple | None] = []  # type: ignore[type-arg]
    for g, h in enumerate(kvnode.value, 1):
        hk = c.mapping(h, KV_HEAD_KEYS, f"kv head {g}")
        if hk is None:
            kv.append(None)
            continue
        mats = {}
        for key in WEIGHT_KEYS[1:]:  # W_K, W_V (b_K and b_V are read with the other biases)
            if key not in hk:
                c.error(h, f"missing key {key!r} of kv head {g}; expected a d_model × d matrix")
                continue
            mats[key] = _weight(
                c, hk[key][1], f"{key} of kv head {g}", f"kv_heads.{g}.{key}", d_model
            )
        kv.append((mats.get("W_K"), mats.get("W_V"), hk.get("W_K", (h, h))[1]))
    heads: list[Head] = []
    size = max(1, len(qnode.value) // groups) if groups else 1
    for i, h in enumerate(qnode.value, 1):
        hk = c.mapping(h, HEAD_KEYS, f"head {i}")
        if hk is None:
            continue
        moved = [k for k in hk if k not in QUERY_HEAD_KEYS]
        if moved:
            c.error(
                hk[moved[0]][0],
                f"head {i} gives {moved[0]}, but with kv_groups a query head gives only "
                f"{', '.join(QUERY_HEAD_KEYS[:-1])} and {QUERY_HEAD_KEYS[-1]}; put W_K and W_V "
                "under 'kv_heads'",
            )
            continue
        label = (
            c.text(hk["name"][1], f"the name of head {i}", one_line=True) if "name" in hk else None
        )
        if "W_Q" not in hk:
            c.error(h, f"missing key 'W_Q' of head {i}; expected a d_model × d_k matrix")
            continue
        W_Q = _weight(c, hk["W_Q"][1], f"W_Q of head {i}", f"heads.{i}.W_Q", d_model)
        if W_Q is None or groups is None:
            continue
        g = (i - 1) // size + 1
        entry = kv[g - 1] if g <= len(kv) else None
        if entry is None or entry[0] is None or entry[1] is None:
            continue
        W_K, W_V, _ = entry
        if len(W_Q[0]) != len(W_K[0]):
            c.error(
                hk["W_Q"][1],
                f"W_Q of head {i} has {len(W_Q[0])} columns, but head {i} reads kv head {g}, "
                f"whose W_K has {len(W_K[0])}; queries and keys need the same length d_k",
            )
            continue
        heads.append(Head(label, W_Q, W_K, W_V))
    return (heads if len(heads) == len(qnode.value) and not broken else []), groups


def next_entry(
    c: Checker, node: yaml.Node, d_model: int | None, n: int = 0
) -> tuple[NextToken, ...] | None:
    """``next:``: one mapping ``{token: …, x: […]}`` (one decoding step), or a list of them
    (several steps, worked one after another with the cache growing by a row each)."""
    if not isinstance(node, yaml.SequenceNode):
        one = _next_token(c, node, d_model, "next")
        return None if one is None else (one,)
    if not node.value:
        c.error(
            node,
            "next is an empty list; expected one entry per new token, like "
            "next: [{token: dog, x: [1, 0]}, {token: ran, x: [0, 1]}]",
        )
        return None
    if n + len(node.value) > MAX_TOKENS:
        c.error(
            node,
            f"next has {len(node.value)} tokens and tokens has {n}: {n + len(node.value)} in "
            f"all, but at most {MAX_TOKENS} tokens are allowed",
        )
        return None
    out = [_next_token(c, item, d_model, f"next.{k}") for k, item in enumerate(node.value, 1)]
    return None if any(t is None for t in out) else tuple(out)  # type: ignore[arg-type]


def _next_token(c: Checker, node: yaml.Node, d_model: int | None, key: str) -> NextToken | None:
    """One ``{token: …, x: […]}`` of ``next:`` (``key``: ``next``, or ``next.2`` in a list)."""
    from tutor.core.lessonfile import token_problem

    what = "next" if key == "next" else f"entry {key.split('.')[1]} of next"
    keys = c.mapping(node, NEXT_KEYS, what)
    if keys is None:
        return None
    for name in NEXT_KEYS:
        if name not in keys:
            c.error(
                node,
                f"missing key {name!r} in {what}; expected a token and its row x, like "
                "next: {token: dog, x: [1, 0, 2, 1]}",
            )
            return None
    word = c.scalar(keys["token"][1], "the next token")
    if word is not None:
        word = word.strip()
        problem = token_problem(word) if word else "is empty"
        if problem is not None:
            c.error(keys["token"][1], f"the next token {problem}")
            word = None
    xnode = keys["x"][1]
    x = None
    if (
        isinstance(xnode, yaml.SequenceNode)
        and xnode.value
        and all(isinstance(v, yaml.ScalarNode) for v in xnode.value)
    ):
        m = c.matrix(
            yaml.SequenceNode("tag:yaml.org,2002:seq", [xnode], xnode.start_mark, xnode.end_mark),
            "next x",
            key=f"{key}.x",
        )
        x = m[0] if m else None
    else:
        found = "a list of lists" if isinstance(xnode, yaml.SequenceNode) else describe(xnode)
        c.error(xnode, f"next x should be one row of numbers, like [1, 0, 2, 1], but found {found}")
    if x is not None and d_model is not None and len(x) != d_model:
        c.error(
            xnode,
            f"next x has {len(x)} {'entry' if len(x) == 1 else 'entries'}, but X has "
            f"{_rows(d_model, 'column')}; the new token's row needs {d_model}",
        )
        return None
    return NextToken(word, x) if word is not None and x is not None else None


def layout(c: Checker, node: yaml.Node) -> str:
    value = c.scalar(node, "layout")
    if value is not None and value not in LAYOUTS:
        c.error(
            node,
            f"layout is {value!r}{suggest(value, LAYOUTS)}; expected one of: {', '.join(LAYOUTS)}",
        )
        return "rows"
    return value or "rows"


def scale(c: Checker, node: yaml.Node, qkv: bool) -> tuple[str, Entry | None]:
    """``scale:``: one of ``SCALES``, or a positive number read exactly (``8``, ``2.5``,
    ``5/2``); returns the choice (``number`` for a number) and the number."""
    value = c.scalar(node, "scale")
    if value is None:
        return "sqrt_d_k", None
    if value in SCALES:
        if value == "sqrt_d_model" and qkv:
            c.error(
                node,
                "scale is sqrt_d_model, but Q, K and V are given, so the lesson has no X and no "
                "d_model; give the number to divide by (scale: 2.83) or use sqrt_d_k",
            )
            return "sqrt_d_k", None
        return value, None
    expected = f"one of: {', '.join(SCALES)}, or a positive number to divide the scores by"
    if not value.strip()[:1].isdigit() and not value.strip().startswith((".", "-", "\u2212")):
        c.error(node, f"scale is {value!r}{suggest(value, SCALES)}; expected {expected}")
        return "sqrt_d_k", None
    try:
        p, q = parse_entry(value, expected)
    except AnswerError as err:
        c.error(node, f"scale: {err}")
        return "sqrt_d_k", None
    if p <= 0:
        c.error(node, f"scale is {value}; expected a positive number to divide the scores by")
        return "sqrt_d_k", None
    return "number", (p, q)
