"""Lessons that start at the scores (issue 28): Q, K and V given instead of X and the W's.

``Q:``, ``K:``, ``V:`` at the top level (one head), or ``Q``, ``K``, ``V`` in every entry of
``heads``. The lesson is held like any other, so every consumer reads it as it reads any
lesson: each head's W_Q, W_K, W_V hold the given Q, K, V, X is the N × N identity (so that
X·W_Q is Q, exactly), and ``Lesson.qkv`` tells the engine to give Q, K and V as inputs rather
than work them, and the words not to speak of X, the W's or d_model.
"""

from __future__ import annotations

import yaml

from tutor.core.lesson import Head, Matrix
from tutor.core.spec import GIVEN_HEAD_KEYS, GIVEN_KEYS, MAX_HEADS, MAX_TOKENS, NOT_WITH_GIVEN
from tutor.core.yamlsrc import Checker, describe

GIVEN = GIVEN_KEYS  # (the lesson keys' table, tutor.core.spec)


def gives_qkv(keys: dict, root: yaml.Node) -> bool:
    """Whether the lesson gives Q, K or V (at the top level or in a head) instead of X."""
    if any(k in keys for k in GIVEN):
        return True
    node = keys.get("heads", (None, None))[1]
    if not isinstance(node, yaml.SequenceNode):
        return False
    return any(
        isinstance(h, yaml.MappingNode) and any(k.value in GIVEN for k, _ in h.value)
        for h in node.value
    )


def identity(n: int) -> Matrix:
    """The N × N identity, X of a lesson that gives Q, K and V (X·W_Q = W_Q = Q)."""
    return tuple(tuple((1 if i == j else 0, 1) for j in range(n)) for i in range(n))


def given_heads(c: Checker, keys: dict, root: yaml.Node, n: int | None) -> list[Head]:
    """Each head's given Q, K, V, checked against the tokens and each other."""
    for key in NOT_WITH_GIVEN:
        if key in keys:
            c.error(
                keys[key][0],
                f"Q, K and V are given, so the lesson starts at the scores and {key} has no "
                f"use; remove {key}, or give X and W_Q, W_K, W_V instead of Q, K, V",
            )
    top = [k for k in GIVEN if k in keys]
    if "heads" in keys and top:
        c.error(
            keys[top[0]][0],
            f"{top[0]} given at the top level and also 'heads'; give Q, K, V at the top level "
            "(one head) or in every head (several), not both",
        )
        return []
    if "heads" not in keys:
        head = _qkv(c, lambda k: keys[k][1] if k in keys else None, root, n, "", "")
        return [head] if head else []
    node = keys["heads"][1]
    if not isinstance(node, yaml.SequenceNode) or not node.value:
        c.error(node, f"heads should be a non-empty list of heads, but found {describe(node)}")
        return []
    if len(node.value) > MAX_HEADS:
        c.error(node, f"heads has {len(node.value)} heads; at most {MAX_HEADS} are allowed")
        return []
    heads = []
    for i, h in enumerate(node.value, 1):
        hk = c.mapping(h, GIVEN_HEAD_KEYS, f"head {i}")
        if hk is None:
            continue
        label = (
            c.text(hk["name"][1], f"the name of head {i}", one_line=True) if "name" in hk else None
        )
        head = _qkv(
            c, lambda k, hk=hk: hk[k][1] if k in hk else None, h, n, f" of head {i}", f"heads.{i}."
        )
        if head is not None:
            heads.append(Head(label, head.W_Q, head.W_K, head.W_V))
    return heads if len(heads) == len(node.value) else []


def _qkv(
    c: Checker, node_of, where: yaml.Node, n: int | None, prefix: str, path: str
) -> Head | None:  # type: ignore[no-untyped-def]
    """One head's Q, K, V: one row per token each, Q and K of one width d_k."""
    mats = {}
    for key in GIVEN:
        node = node_of(key)
        if node is None:
            c.error(
                where,
                f"missing key {key!r}{prefix}; a lesson that gives Q, K or V gives all three "
                "(N × d_k, N × d_k, N × d_v)",
            )
            continue
        m = c.matrix(node, f"{key}{prefix}", MAX_TOKENS, key=f"{path}{key}")
        if m is None:
            continue
        if n is not None and len(m) != n:
            c.error(
                node,
                f"{key}{prefix} has {len(m)} {'row' if len(m) == 1 else 'rows'}, but tokens "
                f"lists {n}; expected one row per token",
            )
            continue
        mats[key] = (m, node)
    if "Q" in mats and "K" in mats and len(mats["Q"][0][0]) != len(mats["K"][0][0]):
        c.error(
            mats["K"][1],
            f"K{prefix} has {len(mats['K'][0][0])} columns, but Q has {len(mats['Q'][0][0])}; "
            "queries and keys need the same length d_k",
        )
        return None
    if len(mats) < 3:
        return None
    return Head(None, mats["Q"][0], mats["K"][0], mats["V"][0])
