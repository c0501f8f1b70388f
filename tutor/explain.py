"""A cell's whole story: a Rich ``Tree`` of every number one cell depends on.

``Z[cats, 1]`` is a blend of the weights of the cats row and column 1 of V; each weight is a
softmax of a row of scaled scores; each scaled score is a score over √d_k; each score a query
dotted with a key; each query, key or value entry a row of X times a column of W. The tree is
built generically from each step's ``op``, so heads, the mask, concat and W_O need no special
cases. Every cell is worked once; later mentions say "worked above". Returns renderables only.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rich.console import Group
from rich.text import Text
from rich.tree import Tree

from tutor import format as fmt
from tutor.cells import cell_name, dot_phrase
from tutor.engine import Derivation, Step
from tutor.render import COLOURS

MAX_EXACT_CHARS = 48  # longer exact forms are left out; the rounded value is always shown
EXACT_MAX_TOKENS = 16  # beyond this, irrational exact forms are too slow to build per cell
MAX_NODES = 400  # a whole tree never grows past this, however large the lesson


@dataclass
class _Budget:
    places: int
    limit: int  # children shown per group before "… and N more"
    exact: bool  # whether irrational cells get their exact form
    seen: set[tuple[str, int, int]] = field(default_factory=set)
    rows_seen: set[tuple[str, int]] = field(default_factory=set)
    nodes: int = 0


def explain(d: Derivation, step: Step, i: int, j: int, places: int, limit: int = 8) -> Group:
    """The tree for one cell, with a one-line key to reading it."""
    budget = _Budget(places, limit, d.lesson.n <= EXACT_MAX_TOKENS)
    tree = Tree(_label(step, i, j, budget), guide_style="dim")
    _grow(tree, step, i, j, budget)
    intro = Text(
        f"Everything {cell_name(step, i, j)} depends on, down to the numbers the lesson gives. "
        "'=' marks an exact value, '≈' a rounded one (half away from zero). Numbers inside "
        "the working are shown rounded; every result is computed from the exact values.",
        style="dim",
    )
    return Group(intro, tree)


# ---------------------------------------------------------------------------------------------
# one line per cell


def _value(step: Step, i: int, j: int, b: _Budget) -> str:
    """``= 2``, ``= 2√2 ≈ 2.83`` or ``≈ 0.49``: exact when short, rounded always."""
    cell = step.cells[i][j]
    if cell.masked:
        return f"= {fmt.NEG_INF_TEXT}"
    shown = fmt.shown(cell, step, b.places)
    if not fmt.is_rounded(cell, b.places):
        return f"= {shown}"
    if cell.q is not None or b.exact:
        exact = fmt.exact_form(step, i, j) or ""
        if 0 < len(exact) <= MAX_EXACT_CHARS:
            return f"= {exact} ≈ {shown}"
    return f"≈ {shown}"


def _name(step: Step, i: int, j: int) -> Text:
    return Text(cell_name(step, i, j), style=f"bold {COLOURS.get(step.name, 'white')}")


def _how(step: Step, i: int, j: int, b: _Budget) -> str:
    """How the cell is made from earlier cells, in words and numbers."""
    cell = step.cells[i][j]
    if step.op == "input":
        return "given in the lesson"
    if step.op == "matmul":
        return f"{dot_phrase(step, i, j)} = {fmt.dot_working(step, i, j, b.places)[0]}"
    source = step.args[0]
    if step.op == "scale":
        score = fmt.operand(source.cells[i][j], b.places)
        return f"{cell_name(source, i, j)} / √{step.divisor} = {score} / √{step.divisor}"
    if step.op == "mask":
        if cell.masked:
            return f"{step.cols[j]} comes after {step.rows[i]}, so it is hidden"
        return f"{cell_name(source, i, j)}, visible ({step.cols[j]} is not after {step.rows[i]})"
    if step.op == "softmax":
        if step.hidden(i, j):
            hidden = f"{cell_name(source, i, j)} = {fmt.NEG_INF_TEXT}"
            return f"e^({fmt.NEG_INF_TEXT}) / total, since {hidden}: {step.cols[j]} is hidden"
        row = source.cells[i]
        visible = [k for k, c in enumerate(row) if not c.masked]
        total = " + ".join(f"e^{fmt.factor(row[k], b.places)}" for k in visible[: b.limit])
        if len(visible) > b.limit:
            total += f" + … ({len(visible)} terms)"
        where = f"softmax of the {step.rows[i]} row of {source.key}"
        return f"{where}: e^{fmt.factor(row[j], b.places)} / ({total})"
    if step.op == "concat":
        Z, k = step.source_of_column(j)
        return f"{cell_name(Z, i, k)}, column {j + 1} of {len(step.cols)} side by side"
    return step.op


def _label(step: Step, i: int, j: int, b: _Budget, note: str = "") -> Text:
    b.nodes += 1
    text = _name(step, i, j)
    if note:
        text.append(f" {_value(step, i, j, b)}  ")
        text.append(note, style="dim italic")
        return text
    text.append(f" = {_how(step, i, j, b)} {_value(step, i, j, b)}")
    return text


# ---------------------------------------------------------------------------------------------
# the cells each cell is made from


def _parents(step: Step, i: int, j: int) -> list[list[tuple[Step, int, int]]]:
    """The cells this one is computed from, in groups (each group is limited on its own)."""
    if step.op == "matmul":
        left, right = step.args
        n = len(left.cols)
        if step.transpose:
            return [[(left, i, k) for k in range(n)], [(right, j, k) for k in range(n)]]
        return [[(left, i, k) for k in range(n)], [(right, k, j) for k in range(n)]]
    if step.op == "scale":
        return [[(step.args[0], i, j)]]
    if step.op == "mask":
        return [] if step.cells[i][j].masked else [[(step.args[0], i, j)]]
    if step.op == "softmax":
        (source,) = step.args
        if step.hidden(i, j):
            return []
        return [[(source, i, k) for k, c in enumerate(source.cells[i]) if not c.masked]]
    if step.op == "concat":
        Z, k = step.source_of_column(j)
        return [[(Z, i, k)]]
    return []


def _leaf(step: Step) -> bool:
    """Cells whose working already shows given numbers only (Q, K, V and the W matrices)."""
    return step.op == "input" or (step.op == "matmul" and all(a.op == "input" for a in step.args))


def _grow(tree: Tree, step: Step, i: int, j: int, b: _Budget) -> None:
    b.seen.add((step.key, i, j))
    if _leaf(step):
        return
    if step.op == "softmax":
        # every weight of a row comes from the same row of scores: work that row once
        row = (step.key, i)
        if row in b.rows_seen:
            note = f"(the {step.rows[i]} row of {step.args[0].key} is worked above)"
            tree.add(Text(note, style="dim"))
            return
        if _parents(step, i, j):
            b.rows_seen.add(row)
    for group in _parents(step, i, j):
        for s, r, c in group[: b.limit]:
            if (s.key, r, c) in b.seen:
                tree.add(_label(s, r, c, b, note="(worked above)"))
            elif b.nodes >= MAX_NODES:
                tree.add(_label(s, r, c, b, note="(not expanded: the tree is long enough)"))
            else:
                _grow(tree.add(_label(s, r, c, b)), s, r, c, b)
        if len(group) > b.limit:
            rest = len(group) - b.limit
            cells = "cell" if rest == 1 else "cells"
            tree.add(Text(f"… and {rest} more {cells} of {group[0][0].key}", style="dim"))
