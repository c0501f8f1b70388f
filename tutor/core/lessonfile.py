"""A lesson file → a validated ``Lesson``: every problem found at once, as
``file:line:col: message``; the frozen data only when there are none.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from types import MappingProxyType

import yaml

from tutor.core import kinds
from tutor.core import lessonmore as more
from tutor.core.errors import AnswerError, LessonError, Problem
from tutor.core.givenqkv import given_heads, gives_qkv, identity
from tutor.core.lesson import (
    Entry,
    Focus,
    Head,
    Lesson,
    Matrix,
    QuizDefaults,
    VariantOf,
    features,
    unique_labels,
)
from tutor.core.lessonbias import bias_key, output_bias, with_biases
from tutor.core.numbers import parse_entry
from tutor.core.spec import (
    FEATURES,
    FILLED_NEXT_STEPS,
    FILLED_STEPS,
    HEAD_KEYS,
    MASKS,
    MAX_DIM,
    MAX_ERRORS,
    MAX_HEADS,
    MAX_LAYERS,
    MAX_PRECISION,
    MAX_STEP_POINTS,
    MAX_TOKEN_CHARS,
    MAX_TOKENS,
    MAX_VALUES,
    POSITIONS,
    QUIZ_KEYS,
    STEP_NAMES,
    THETA_UNITS,
    TOP_KEYS,
    VARIANT_KEYS,
    refused,
)
from tutor.core.yamlsrc import (
    Checker,
    Enough,
    compose,
    describe,
    pos,
    read_text,
    suggest,
    whole_number,
)

# ---------------------------------------------------------------------------------------------
# the lesson itself


def load_lesson(path: str | Path, name: str | None = None) -> Lesson:
    """Read and validate a lesson file; raise ``LessonError`` listing every problem."""
    lesson, problems = check_lesson(path, name)
    errors = [p for p in problems if p.severity == "error"]
    if errors or lesson is None:
        raise LessonError(errors)
    return lesson


def load_lesson_text(text: str, shown: str, name: str) -> Lesson:
    """A lesson from its YAML text (``shown`` names it in messages); as ``load_lesson``."""
    lesson, problems = check_text(text, shown, name)
    errors = [p for p in problems if p.severity == "error"]
    if errors or lesson is None:
        raise LessonError(errors)
    return lesson


def check_lesson(path: str | Path, name: str | None = None) -> tuple[Lesson | None, list[Problem]]:
    """Validate a lesson file; return the lesson (if valid) and every problem found."""
    try:
        text = read_text(path)
    except LessonError as err:
        return None, err.problems
    return check_text(text, str(path), name or Path(path).stem)


def check_text(text: str, shown: str, name: str) -> tuple[Lesson | None, list[Problem]]:
    """Validate a lesson's YAML text; return the lesson (if valid) and every problem found."""
    try:
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
        lesson = _build(c, root, keys, name, shown)
    except Enough:
        return None, c.problems
    return (lesson if not any(p.severity == "error" for p in c.problems) else None), c.problems


Keys = dict[str, tuple[yaml.Node, yaml.Node]]  # a mapping's keys: name → (key node, value node)


def _value(keys: Keys, key: str) -> yaml.Node | None:
    return keys[key][1] if key in keys else None


@dataclass
class _Inputs:
    """What a lesson gives before attention: X (or E, or Q, K, V), positions, a source
    sentence, the heads' weights."""

    X: Matrix | None
    xkey: str  # X, or E when X = E + P
    d_model: int | None
    positions: str
    P: Matrix | None
    theta: tuple | None  # type: ignore[type-arg]
    theta_units: tuple | None  # type: ignore[type-arg]
    source: tuple[str, ...] | None
    X_src: Matrix | None
    kv_groups: int | None
    heads: list[Head]


def _build(c: Checker, root: yaml.Node, keys: Keys, name: str, path: str) -> Lesson | None:
    """The lesson a file's keys make, each key read by its own function (every problem is
    recorded on ``c``); None when there is an error."""
    qkv = gives_qkv(keys, root)  # Q, K, V given: the lesson starts at the scores (issue 28)
    title, description = _header(c, keys, root, qkv)
    tokens = _tokens(c, _value(keys, "tokens")) if "tokens" in keys else None
    given = _given_inputs(c, keys, root, tokens) if qkv else _inputs(c, keys, root, tokens)
    heads = given.heads
    W_O = _w_o(c, keys, heads)
    mask = _mask(c, keys)
    scale, scale_by = (
        more.scale(c, _value(keys, "scale"), qkv) if "scale" in keys else ("sqrt_d_k", None)
    )
    precision = _precision(c, keys)
    next_token = (
        more.next_entry(c, _value(keys, "next"), given.d_model, len(tokens or ()))
        if "next" in keys and not qkv
        else None
    )
    layout = more.layout(c, _value(keys, "layout")) if "layout" in keys else "rows"
    _combinations(
        c, keys, given.xkey, given.positions, given.source, mask, heads, W_O, next_token, layout,
        qkv,
    )  # fmt: skip
    if given.positions == "rope":
        _rope_pairs(c, keys, heads, given.theta)
    if not qkv:  # biases (issue 41): b_Q, b_K, b_V of each head, and b_O
        heads = with_biases(c, keys, heads, given.kv_groups is not None)
    b_O = output_bias(c, keys, W_O) if "b_O" in keys and not qkv else None
    notes = _notes(c, _value(keys, "notes")) if "notes" in keys else {}
    quiz = _quiz(c, _value(keys, "quiz")) if "quiz" in keys else QuizDefaults()
    focus = _focuses(c, keys, tokens, heads, mask, W_O, given.source)
    points = (
        _points(c, _value(keys, "points"), "heads" in keys, W_O is not None, "next" in keys)
        if "points" in keys
        else {}
    )
    variant = _variant(c, _value(keys, "variant")) if "variant" in keys else None
    layers = _layers(c, keys, len(heads) if heads else 0, qkv)
    where = {k: pos(v) for k, (_, v) in keys.items()} | c.where
    if any(p.severity == "error" for p in c.problems):
        return None
    assert title is not None and tokens is not None and given.X is not None and heads
    return Lesson(
        name=name,
        path=path,
        title=title,
        description=description,
        tokens=tuple(tokens),
        X=given.X,
        heads=tuple(heads),
        multi_head="heads" in keys,
        W_O=W_O,
        b_O=b_O,
        mask=mask,
        scale=scale,
        scale_by=scale_by,
        precision=precision,
        positions=given.positions,
        P=given.P,
        theta=given.theta,
        theta_units=given.theta_units,
        source=given.source,
        X_src=given.X_src,
        notes=MappingProxyType(notes),
        quiz=quiz,
        focus=focus,
        where=MappingProxyType(where),
        kv_groups=given.kv_groups,
        qkv=qkv,
        layers=layers,
        next=next_token[0] if next_token else None,
        next_after=next_token[1:] if next_token else (),
        layout=layout,
        points=MappingProxyType(points),
        variant=variant,
    )


def _header(c: Checker, keys: Keys, root: yaml.Node, qkv: bool) -> tuple[str | None, str]:
    """The keys every lesson needs, its version, title and description."""
    for key in ("title", "tokens", "X"):
        if key == "X" and ("E" in keys or qkv):
            continue  # E (token embeddings) stands for X: X = E + P
        if key not in keys:
            c.error(root, f"missing key {key!r}; a lesson needs title, tokens, X and W_Q, W_K, W_V")
    if "version" in keys:
        v = c.scalar(keys["version"][1], "version")
        if v is not None and v != "1":
            c.error(keys["version"][1], f"version is {v}; this attn-tutor reads version 1")
    title = c.text(_value(keys, "title"), "title", one_line=True) if "title" in keys else None
    if title is not None and not title.strip():
        c.error(_value(keys, "title"), "title is empty; expected a few words naming the lesson")
        title = None
    description = ""
    if "description" in keys:
        description = c.text(_value(keys, "description"), "description") or ""
    return title, description


def _given_inputs(c: Checker, keys: Keys, root: yaml.Node, tokens: list[str] | None) -> _Inputs:
    """Q, K and V given: X is the identity, so X·W = W, and each head's W's hold them."""
    X = identity(len(tokens)) if tokens is not None else None
    positions = c.scalar(_value(keys, "positions"), "positions") if "positions" in keys else None
    heads = given_heads(c, keys, root, len(tokens) if tokens is not None else None)
    return _Inputs(X, "X", None, positions or "none", None, None, None, None, None, None, heads)


def _inputs(c: Checker, keys: Keys, root: yaml.Node, tokens: list[str] | None) -> _Inputs:
    """X (or E and the positions), a source sentence, and the heads' W_Q, W_K, W_V."""
    xkey = "E" if "E" in keys and "X" not in keys else "X"  # E: token embeddings, X = E + P
    if "E" in keys and "X" in keys:
        c.error(
            keys["E"][0],
            "both X and E are given; give X (the tokens' vectors as they are) or E (token "
            "embeddings, to which the positions P are added), not both",
        )
    X = c.matrix(_value(keys, xkey), xkey, MAX_TOKENS, key=xkey) if xkey in keys else None
    x_node = _value(keys, xkey)  # its rows count even when one of them is bad
    x_rows = len(x_node.value) if isinstance(x_node, yaml.SequenceNode) and x_node.value else None
    if tokens is not None and x_rows is not None and x_rows <= MAX_TOKENS and len(tokens) != x_rows:
        c.error(
            _value(keys, "tokens"),
            f"tokens lists {len(tokens)} labels, but {xkey} has {x_rows} rows; "
            f"expected one token per row of {xkey}",
        )
    d_model = len(X[0]) if X else c.widths.get(xkey)  # a bad row of X hides no other error
    positions, P, theta, theta_units = _positions(c, keys, xkey, x_rows, d_model)
    source, X_src = _source(c, keys, d_model)
    kv_groups = None
    if "kv_groups" in keys:  # grouped heads: W_K, W_V per group (tutor.core.lessonmore)
        heads, kv_groups = more.grouped_heads(c, keys, root, d_model)
    else:
        if "kv_heads" in keys:
            c.error(keys["kv_heads"][0], "kv_heads given without kv_groups; add kv_groups: G")
        heads = _heads(c, keys, root, d_model)
    return _Inputs(
        X, xkey, d_model, positions, P, theta, theta_units, source, X_src, kv_groups, heads
    )


def _w_o(c: Checker, keys: Keys, heads: list[Head]) -> Matrix | None:
    """W_O, which needs heads, one d_v for all of them and a row per column of the concat."""
    if "W_O" not in keys:
        return None
    node = _value(keys, "W_O")
    W_O = c.matrix(node, "W_O", key="W_O")
    if W_O is not None and "heads" not in keys:
        c.error(
            node,
            "W_O projects the concatenation of several heads, but this lesson has no "
            "'heads'; list the heads under 'heads' (one head is fine) or remove W_O",
        )
    elif W_O is not None and heads:
        d_vs = {len(h.W_V[0]) for h in heads}
        if len(d_vs) > 1:
            c.error(
                node,
                "W_O needs every head to have the same d_v, but the heads' "
                f"W_V have {', '.join(str(len(h.W_V[0])) for h in heads)} columns",
            )
        else:
            need = len(heads) * d_vs.pop()
            if len(W_O) != need:
                c.error(
                    node,
                    f"W_O has {len(W_O)} {'row' if len(W_O) == 1 else 'rows'}, but the "
                    f"concatenation has {len(heads)} × {len(heads[0].W_V[0])} = {need} "
                    f"{'column' if need == 1 else 'columns'}, so W_O needs {need} "
                    f"{'row' if need == 1 else 'rows'}",
                )
    return W_O


def _mask(c: Checker, keys: Keys) -> str:
    if "mask" not in keys:
        return "none"
    m = c.scalar(_value(keys, "mask"), "mask")
    if m is not None and m not in MASKS:
        c.error(
            _value(keys, "mask"),
            f"mask is {m!r}{suggest(m, MASKS)}; expected one of: {', '.join(MASKS)}",
        )
        return "none"
    return m or "none"


def _precision(c: Checker, keys: Keys) -> int:
    if "precision" not in keys:
        return 2
    node = _value(keys, "precision")
    p = c.scalar(node, "precision")
    n = None if p is None else whole_number(p, 0, MAX_PRECISION)
    if p is not None and n is None:
        c.error(
            node,
            f"precision is {describe(node)}; expected a whole number from 0 to {MAX_PRECISION}",
        )
    return 2 if n is None else n


def _rope_pairs(c: Checker, keys: Keys, heads: list[Head], theta: tuple | None) -> None:  # type: ignore[type-arg]
    """RoPE turns Q and K in pairs of columns: an even d_k, and one angle per pair."""
    for k, h in enumerate(heads, 1):
        d_k = len(h.W_Q[0])
        where_k = f" of head {k}" if "heads" in keys else ""
        if d_k % 2:
            c.error(
                keys["positions"][1],
                f"positions: rope turns the columns of Q and K in pairs, but W_Q{where_k} "
                f"has {d_k} {'column' if d_k == 1 else 'columns'}; expected an even d_k",
            )
        elif theta is not None and len(theta) != d_k // 2:
            c.error(
                keys["theta"][1],
                f"theta lists {len(theta)} {'angle' if len(theta) == 1 else 'angles'}, but "
                f"d_k{where_k} = {d_k} makes {d_k // 2} "
                f"{'pair' if d_k == 2 else 'pairs'} of columns; expected one angle per "
                "pair",
            )


def _focuses(
    c: Checker,
    keys: Keys,
    tokens: list[str] | None,
    heads: list[Head],
    mask: str,
    W_O: Matrix | None,
    source: tuple[str, ...] | None,
) -> Focus | None:
    """The lesson's focus, and each head's own (set on ``heads`` in place)."""
    if tokens is None or not heads:
        return None
    focus = None
    if "focus" in keys:
        focus = _focus(c, _value(keys, "focus"), tokens, heads, None, mask, W_O, source)
    for h, node in enumerate(_value(keys, "heads").value if "heads" in keys else [], 1):
        given = {k.value: v for k, v in node.value if k.value == "focus"}
        if "focus" in given:  # a head's own worked cell: the rows it links
            f = _focus(c, given["focus"], tokens, heads, h, mask, W_O, source)
            c.where[f"heads.{h}.focus"] = pos(given["focus"])
            heads[h - 1] = replace(heads[h - 1], focus=f)
    return focus


def _combinations(
    c: Checker,
    keys: dict[str, tuple[yaml.Node, yaml.Node]],
    xkey: str,
    positions: str,
    source: object,
    mask: str,
    heads: list[Head],
    W_O: object,
    next_token: object,
    layout: str,
    qkv: bool = False,
) -> None:
    """Refuse the pairs of features ``spec.REFUSED_COMBINATIONS`` lists, at the later key."""
    found = features(
        positions=positions,
        source=source is not None or (qkv and "source" in keys),
        mask=mask,
        grouped="kv_groups" in keys,
        heads="heads" in keys,
        W_O=W_O is not None,
        next=next_token is not None or (qkv and "next" in keys),
        layout=layout,
        qkv=qkv,
        bias=bias_key(keys) is not None,
    )
    for _, later, why in refused(found):
        key = FEATURES[later]
        if later == "bias":  # at the first bias the lesson gives
            key = bias_key(keys)  # type: ignore[assignment]
        elif key not in keys:  # positions given by P alone: at E's (or X's) key
            key = "P" if "P" in keys else xkey
        c.error(keys[key][1], why)


def _tokens(c: Checker, node: yaml.Node, key: str = "tokens", of: str = "X") -> list[str] | None:
    if not isinstance(node, yaml.SequenceNode) or not node.value:
        c.error(
            node,
            f"{key} should be a list of words, one per row of {of}, but found {describe(node)}",
        )
        return None
    if len(node.value) > MAX_TOKENS:
        c.error(node, f"{key} has {len(node.value)} entries; at most {MAX_TOKENS} are allowed")
        return None
    out = []
    what = "token" if key == "tokens" else f"{key} token"
    for i, t in enumerate(node.value, 1):
        if not isinstance(t, yaml.ScalarNode) or not t.value.strip():
            c.error(t, f"{what} {i} should be a word, but found {describe(t)}")
            continue
        word = t.value.strip()
        problem = token_problem(word)
        if problem is not None:
            c.error(t, f"{what} {i} {problem}")
            continue
        c.where[f"{key}.{i}"] = pos(t)
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
    for key in kinds.WEIGHTS:
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
    single = [k for k in kinds.WEIGHTS if k in keys]
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
        count = None if text is None else whole_number(text, 1, 200)
        if text is not None and count is None:
            c.error(v, f"quiz count is {describe(v)}; expected a whole number from 1 to 200")
        elif count is not None:
            out = replace(out, count=count)
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


# (as text, compiled by re on first use: a lesson without focus: compiles none)
_FOCUS = r"""^\s*(?:(?P<step>[A-Za-z_]\w*)\s*\[\s*(?P<row>[^\[\],]+?)\s*,\s*(?P<col>[^\[\],]+?)\s*\]
    |(?P<token>[^\[\],]+?))\s*$"""
FOCUS_STEPS, N_BY_N = kinds.FOCUS_STEPS, kinds.SQUARE  # what focus: may name; a column per token
MAX_FOCUS_CHARS = 200


def _focus(
    c: Checker,
    node: yaml.Node,
    tokens: list[str],
    heads: list[Head],
    head: int | None,
    mask: str,
    W_O: object,
    source: list[str] | tuple[str, ...] | None = None,
) -> Focus | None:
    """``focus:`` (of the lesson, or of head ``head``): a token, or a cell like
    ``weights[it, cake]`` whose row is a token; checked against the tokens and the widths.
    In cross-attention the columns of the N × N_src steps are source tokens, as ``--cell``
    takes them."""
    where = f"focus of head {head}" if head else "focus"
    text = c.scalar(node, where)
    if text is None:
        return None
    labels = unique_labels(tokens)
    example = f"{labels[-1]} or weights[{labels[-1]}, {labels[0]}]"
    m = re.match(_FOCUS, text, re.VERBOSE) if len(text) <= MAX_FOCUS_CHARS else None
    if m is None:
        c.error(node, f"{where} is {describe(node)}; expected a token or a cell, like {example}")
        return None

    def label(word: str, what: str, labels: tuple[str, ...] = labels, kind: str = "") -> str | None:
        if word in labels:
            return word
        repeats = [lab for lab in labels if lab.split("#")[0] == word]
        if repeats:
            c.error(
                node,
                f"{where}: {word!r} appears {len(repeats)} times; say which: {', '.join(repeats)}",
            )
        else:
            c.error(
                node,
                f"{where}: {what} {word!r} is not a {kind}token; {kind}tokens: {', '.join(labels)}",
            )
        return None

    if m["token"] is not None:
        row = label(m["token"], "the row")
        return Focus(row) if row else None
    step = m["step"]
    steps = [s for s in FOCUS_STEPS if _has_step(s, mask, len(heads) > 1 or W_O is not None, head)]
    if step not in steps:
        c.error(
            node,
            f"{where}: {step!r} is not a step {'of a head' if head else 'of this lesson'} with a "
            f"row per token{suggest(step, steps)}; expected one of: {', '.join(steps)}",
        )
        return None
    row = label(m["row"], "the row")
    if step in N_BY_N and source is not None:  # cross-attention: a source token's column
        col = label(m["col"], "the column", unique_labels(source), "source ")
        return Focus(row, step, col) if row and col else None
    if step in N_BY_N:
        col = label(m["col"], "the column")
        return Focus(row, step, col) if row and col else None
    width = _width(step, heads if head is None else [heads[head - 1]], W_O)
    n = whole_number(m["col"], 1, width)
    if n is None:
        c.error(
            node,
            f"{where}: {step} has {width} {'column' if width == 1 else 'columns'}, so there is "
            f"no column {m['col']!r}; expected a column number from 1 to {width}",
        )
        return None
    return Focus(row, step, str(n)) if row else None


def _has_step(step: str, mask: str, shared: bool, head: int | None) -> bool:
    kind = kinds.BY_NAME[step]
    if kind.causal:
        return mask == "causal"
    if not kind.per_head:  # concat, output: after the heads, when they are joined
        return shared and head is None
    return True


def _width(step: str, heads: list[Head], W_O: object) -> int:
    """The narrowest width that step has over ``heads`` (a lesson's focus fits every head)."""
    kind = kinds.BY_NAME[step]
    if kind.columns in kinds.WEIGHTS:  # as wide as a head's W_Q, W_K or W_V
        widths = [len(getattr(h, kind.columns)[0]) for h in heads]
        return min(widths) if kind.per_head else sum(widths)  # concat: every head's side by side
    return len(W_O[0]) if W_O else 1  # type: ignore[index]


def _points(
    c: Checker, node: yaml.Node, multi_head: bool, w_o: bool, next_step: bool = False
) -> dict[str, int]:
    """``points:``: a whole number of points per step a student fills (with ``next:``, the
    decoding step's rows too: the sheet has them)."""
    filled: tuple[str, ...] = ()
    for steps in (FILLED_STEPS, FILLED_NEXT_STEPS) if next_step else (FILLED_STEPS,):
        filled += steps[:7] + ((steps[7],) if multi_head else ()) + ((steps[8],) if w_o else ())
    if not isinstance(node, yaml.MappingNode):
        c.error(
            node,
            "points should be a mapping of step name to points (weights: 6), "
            f"but found {describe(node)}",
        )
        return {}
    out: dict[str, int] = {}
    seen: dict[str, int] = {}
    for key_node, v in node.value:
        step = key_node.value if isinstance(key_node, yaml.ScalarNode) else None
        if step is None:
            c.error(key_node, f"found {describe(key_node)} as a key in points; expected a step")
            continue
        if step in seen:
            c.error(
                key_node, f"duplicate step {step!r} in points (first given on line {seen[step]})"
            )
            continue
        seen[step] = pos(key_node)[0]
        if step not in filled:
            if step in FILLED_NEXT_STEPS and not next_step:
                why = f"this lesson has no {step} step (no next:)"
            elif step in STEP_NAMES and step not in FILLED_STEPS + FILLED_NEXT_STEPS:
                why = f"{step} is given by the lesson, not worked by the student"
            elif step in FILLED_STEPS + FILLED_NEXT_STEPS:
                why = f"this lesson has no {step} step ({'no W_O' if multi_head else 'one head'})"
            else:
                why = f"unknown step {step!r}{suggest(step, filled)}"
            c.error(key_node, f"{why}; points go to the steps a student fills: {', '.join(filled)}")
            continue
        text = c.scalar(v, f"the points for {step}")
        n = None if text is None else whole_number(text, 0, MAX_STEP_POINTS)
        if text is not None and n is None:
            c.error(
                v,
                f"the points for {step} are {describe(v)}; expected a whole number "
                f"from 0 to {MAX_STEP_POINTS}",
            )
        elif n is not None:
            out[step] = n
    if out and set(out) == set(filled) and not any(out.values()):
        c.error(node, "points gives every step 0 points; a sheet needs something to earn")
    return out


def _variant(c: Checker, node: yaml.Node) -> VariantOf | None:
    """``variant:``: written by ``attn-tutor variants`` (its id, its lesson, its student)."""
    keys = c.mapping(node, VARIANT_KEYS, "variant")
    if keys is None:
        return None
    got = {}
    for key, (_, v) in keys.items():
        text = c.text(v, f"variant {key}", one_line=True)
        got[key] = (text or "").strip()
    if not got.get("id"):
        c.error(node, "variant needs an id (variant-07); attn-tutor variants writes it")
        return None
    return VariantOf(
        got["id"], got.get("of", ""), got.get("student", ""), got.get("student_id", "")
    )


# ---------------------------------------------------------------------------------------------
# positions and a source sentence (issue 17)


def _positions(
    c: Checker, keys: dict, xkey: str, rows: int | None, d_model: int | None
) -> tuple[str, Matrix | None, tuple[Entry, ...] | None, tuple[str, ...] | None]:
    """``positions``, ``P`` and ``theta`` (with each angle's unit), checked against each other
    and the shape of E."""
    kind = None
    if "positions" in keys:
        node = keys["positions"][1]
        kind = c.scalar(node, "positions")
        if kind is not None and kind not in POSITIONS:
            c.error(
                node,
                f"positions is {kind!r}{suggest(kind, POSITIONS)}; expected one of: "
                f"{', '.join(POSITIONS)}",
            )
            kind = None
        elif kind == "none" and xkey == "E":
            c.error(node, "positions: none, but the lesson gives E; give X instead of E")
            kind = None
    P = None
    if "P" in keys:
        node = keys["P"][1]
        if xkey != "E":
            c.error(
                keys["P"][0],
                "P (positions) is added to the token embeddings E, but this lesson gives X; "
                "name the token matrix E so that X = E + P",
            )
        elif kind not in (None, "given"):
            c.error(
                keys["P"][0],
                f"P is given and also positions: {kind}; give either P (your own positions) "
                "or positions: sinusoidal, not both",
            )
        else:
            P = c.matrix(node, "P", MAX_TOKENS, key="P")
            if P is not None and rows is not None and len(P) != rows:
                c.error(
                    node,
                    f"P has {len(P)} {'row' if len(P) == 1 else 'rows'}, but E has {rows}; "
                    "expected one position row per token",
                )
                P = None
            elif P is not None and d_model is not None and len(P[0]) != d_model:
                c.error(
                    node,
                    f"P has {len(P[0])} {'column' if len(P[0]) == 1 else 'columns'}, but E has "
                    f"{d_model}; P is added to E, so it needs the same shape",
                )
                P = None
            kind = "given"
    if xkey == "E" and "P" not in keys and kind is None and "positions" not in keys:
        c.error(
            keys["E"][0],
            "E (token embeddings) needs positions to add: give P (a matrix the shape of E) or "
            "positions: sinusoidal",
        )
    if kind == "given" and "P" not in keys:
        c.error(keys["positions"][1], "positions: given, but there is no P; give P, the shape of E")
    if kind in ("given", "sinusoidal") and xkey != "E":
        c.error(
            keys["positions"][1],
            f"positions: {kind} adds positions to the token embeddings E, but this lesson gives "
            "X; name the token matrix E so that X = E + P",
        )
    if kind == "rope" and xkey == "E":
        c.error(
            keys["positions"][1],
            "positions: rope rotates Q and K instead of adding positions to X; give X, not E",
        )
    theta, units = _theta(c, keys, kind)
    return kind or "none", P, theta, units


def _layers(c: Checker, keys: dict, heads: int, qkv: bool) -> int | None:
    """``layers``: a whole number of layers, for a lesson with several heads (it multiplies the
    K/V counts the header compares for MHA, GQA and MQA)."""
    if "layers" not in keys:
        return None
    node = keys["layers"][1]
    text = c.scalar(node, "layers")
    n = None if text is None else whole_number(text, 1, MAX_LAYERS)
    if n is None:
        c.error(node, f"layers is {describe(node)}; expected a whole number from 1 to {MAX_LAYERS}")
        return None
    if qkv:
        c.error(
            keys["layers"][0],
            "layers multiplies the K/V weights the header compares, but this lesson gives Q, "
            "K and V, not the weights that make them; remove layers",
        )
        return None
    if "heads" not in keys or heads < 2:
        c.error(
            keys["layers"][0],
            "layers multiplies the K/V weights and KV cache that the header compares for "
            "multi-head, grouped and multi-query attention, but this lesson has "
            f"{'one head' if heads == 1 else 'no heads'}; give two or more heads, or remove layers",
        )
        return None
    return n


# an angle of theta as a course writes it: a number, then a unit or none (theta_unit's, degrees)
_ANGLE = r"^(?P<number>.*?)(?:(?<=[\d\s.])(?P<unit>rad|radians?|deg|degrees?|°))?$"  # (as _FOCUS)


def _theta(
    c: Checker, keys: dict, kind: str | None
) -> tuple[tuple[Entry, ...] | None, tuple[str, ...] | None]:
    """``theta`` and ``theta_unit``: each angle exact, with its unit ("deg" or "rad"); the units
    are None when every angle is in degrees (as before radians could be written)."""
    unit = "deg"
    if "theta_unit" in keys:
        node = keys["theta_unit"][1]
        text = c.scalar(node, "theta_unit")
        if "theta" not in keys:
            c.error(
                keys["theta_unit"][0],
                "theta_unit says how to read theta, but this lesson has no theta; add theta "
                "or remove theta_unit",
            )
        elif text is not None and text not in THETA_UNITS:
            c.error(node, f"theta_unit is {text!r}; expected one of: {', '.join(THETA_UNITS)}")
        elif text == "radians":
            unit = "rad"
    if "theta" not in keys:
        return None, None
    node = keys["theta"][1]
    if kind != "rope":
        c.error(
            keys["theta"][0],
            "theta sets the angles of positions: rope, but this lesson has no "
            "'positions: rope'; add it or remove theta",
        )
        return None, None
    if not isinstance(node, yaml.SequenceNode) or not node.value:
        c.error(
            node,
            "theta should be a list of angles in degrees, one per pair of columns of Q (e.g. "
            f"[90, 60], or [1 rad] in radians), but found {describe(node)}",
        )
        return None, None
    if len(node.value) > MAX_DIM:
        c.error(node, f"theta has {len(node.value)} entries; at most {MAX_DIM} are allowed")
        return None, None
    got = [_angle(c, x, k, unit) for k, x in enumerate(node.value, 1)]
    if any(g is None for g in got):
        return None, None
    for k, x in enumerate(node.value, 1):
        c.where[f"theta.{k}"] = pos(x)
    theta = tuple(g[0] for g in got)  # type: ignore[index]
    units = tuple(g[1] for g in got)  # type: ignore[index]
    return theta, (units if "rad" in units else None)


def _angle(c: Checker, node: yaml.Node, k: int, unit: str) -> tuple[Entry, str] | None:
    """One entry of theta: ``60``, ``57.5``, ``"45/2"``, ``60°``, ``1 rad`` (never evaluated:
    a number and a unit, or nothing)."""
    if not isinstance(node, yaml.ScalarNode) or (
        not node.style and node.value in ("", "~", "null", "Null", "NULL")
    ):
        return c.number(node, f"theta entry {k}")  # type: ignore[return-value]  # its error
    m = re.match(_ANGLE, node.value.strip())
    expected = (
        'an angle: a number of degrees (60, 57.5, "45/2") or of radians with rad '
        "(1 rad, 0.5 rad); write no π or formulas: 180/π degrees is 1 rad"
    )
    try:
        p, q = parse_entry(m["number"] if m and m["number"] else node.value, expected)
    except AnswerError:
        try:  # say what the file has, unit and all
            parse_entry(node.value, expected)
        except AnswerError as err:
            c.error(node, f"theta entry {k}: {err}")
        return None
    if m and m["unit"]:
        unit = "rad" if m["unit"].startswith("rad") else "deg"
    # ten turns: 3600°, or 62.8 rad (the one-place decimal just inside 3600° = 62.83… rad)
    top, den, name = (3600, 1, "degrees") if unit == "deg" else (628, 10, "radians")
    if abs(p) * den > top * q:
        most = "3600" if unit == "deg" else "62.8"
        c.error(node, f"theta entry {k} is {node.value}; expected {name} from -{most} to {most}")
        return None
    return (p, q), unit


def _source(
    c: Checker, keys: dict, d_model: int | None
) -> tuple[tuple[str, ...] | None, Matrix | None]:
    """``source`` and ``X_src``: the second sentence of cross-attention, both or neither."""
    if "source" not in keys and "X_src" not in keys:
        return None, None
    if "source" not in keys:
        c.error(
            keys["X_src"][0],
            "X_src is given but 'source' is not; list the source sentence's tokens under "
            "source, one per row of X_src",
        )
        return None, None
    if "X_src" not in keys:
        c.error(
            keys["source"][0],
            "source lists a second sentence but X_src is missing; give X_src, one row per "
            "source token, as wide as X",
        )
        return None, None
    tokens = _tokens(c, keys["source"][1], "source", "X_src")
    node = keys["X_src"][1]
    X_src = c.matrix(node, "X_src", MAX_TOKENS, key="X_src")
    rows = len(node.value) if isinstance(node, yaml.SequenceNode) and node.value else None
    if tokens is not None and rows is not None and rows <= MAX_TOKENS and len(tokens) != rows:
        c.error(
            keys["source"][1],
            f"source lists {len(tokens)} labels, but X_src has {rows} rows; expected one "
            "source token per row of X_src",
        )
    if X_src is not None and d_model is not None and len(X_src[0]) != d_model:
        c.error(
            node,
            f"X_src has {len(X_src[0])} {'column' if len(X_src[0]) == 1 else 'columns'}, but "
            f"X has {d_model}; the same W_K and W_V read both, so X_src needs {d_model}",
        )
        return None, None
    if tokens is None or X_src is None:
        return None, None
    return tuple(tokens), X_src
