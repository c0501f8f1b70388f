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

from tutor.core.engine import Derivation, Product, Ref, Softmax, Step
from tutor.teach.colours import COLOURS, PLAIN
from tutor.text import working as wk
from tutor.text.cells import cell_name

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


def _name(step: Step, i: int, j: int) -> Text:
    return Text(cell_name(step, i, j), style=f"bold {COLOURS.get(step.name, PLAIN)}")


def _label(step: Step, i: int, j: int, b: _Budget, note: str = "") -> Text:
    """The cell's line: how it is made, its working in numbers and its value (exact when short
    and cheap to build, rounded always)."""
    b.nodes += 1
    w = wk.working(step, i, j, b.places, terms=wk.Elide(b.limit, b.limit, 0))
    cell = step.cells[i][j]
    value = w.result(exact=cell.q is not None or b.exact, limit=wk.MAX_EXACT)
    text = _name(step, i, j)
    if note:
        text.append(f" {value}  ")
        text.append(note, style="dim italic")
        return text
    said = [part for part in (w.how, w.numbers) if part]
    aside = f", {w.aside}" if w.aside else ""
    text.append("".join(f" = {part}" for part in said) + f"{aside} {value}")
    return text


# ---------------------------------------------------------------------------------------------
# the cells each cell is made from


def _parents(step: Step, i: int, j: int) -> list[list[Ref]]:
    """The cells this one is computed from (``Step.sources``), in groups, each limited on its
    own: a product's row and column; the visible scores of a softmax row; else the one cell."""
    if step.hidden(i, j):  # a hidden key's weight is 0 whatever its row holds
        return []
    refs = step.sources(i, j)
    if isinstance(step, Product):  # its sources are pairs: (row cell, column cell), …
        return [list(refs[::2]), list(refs[1::2])]
    return [[r for r in refs if not r.step.cells[r.i][r.j].masked]] if refs else []


def _leaf(step: Step) -> bool:
    """Cells whose working already shows given numbers only (Q, K, V and the W matrices)."""
    return step.given or (isinstance(step, Product) and all(a.given for a in step.args))


def _grow(tree: Tree, step: Step, i: int, j: int, b: _Budget) -> None:
    b.seen.add((step.key, i, j))
    if _leaf(step):
        return
    if isinstance(step, Softmax):
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
