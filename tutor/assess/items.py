"""Item analysis of a class: per step, and per named slip, how many students, the share right,
and a discrimination index, with one line for the instructor.

The discrimination of a step is the point-biserial correlation (Pearson's r, which is the
point-biserial when one side is right/wrong) of the step's points against the rest of the total
(the sheet's points less that step's), so a step does not correlate with itself. A named slip's
"score" is 1 for a sheet that avoided it and 0 for one it surely explains, against the sheet's
total. Exact: ``point_biserial`` works in sympy rationals and returns r as an exact surd, computed
here once; everything shown is rounded from it by ``tutor.text.format``. Undefined (fewer than 3
sheets, every sheet scoring the same on the item, or on the rest) it is None, with why.

Pure: graded reports in, ``Item`` rows and a reading out; ``items_csv`` writes them through the
one CSV writer (``classgrade.csv_text``).
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy

from tutor.assess.marked import Marked

UNDEFINED = "—"
TOO_FEW = 3  # a correlation of fewer sheets says nothing


@dataclass(frozen=True)
class Item:
    """One step (``kind`` "step") or one named slip ("slip") across the class."""

    name: str  # the step's key ("weights", "head1.Z") or the slip's id ("not-scaled")
    kind: str
    what: str  # words: the step's key again, or what the slip means
    students: int
    right: sympy.Rational  # step: points earned of points possible; slip: share who avoided it
    discrimination: sympy.Expr | None  # exact r, or None when undefined
    why: str = ""  # why the discrimination is undefined


def point_biserial(
    xs: list[sympy.Rational], ys: list[sympy.Rational]
) -> tuple[sympy.Expr | None, str]:
    """Pearson's r of ``xs`` against ``ys`` (the point-biserial when ``xs`` is 0/1), exact:
    ``(n·Σxy − Σx·Σy) / √((n·Σx² − (Σx)²)·(n·Σy² − (Σy)²))``; or None and why it is
    undefined."""
    n = len(xs)
    if n < TOO_FEW:
        return None, f"fewer than {TOO_FEW} sheets"
    sx, sy = sum(xs, sympy.Integer(0)), sum(ys, sympy.Integer(0))
    sxx = n * sum((x * x for x in xs), sympy.Integer(0)) - sx * sx
    syy = n * sum((y * y for y in ys), sympy.Integer(0)) - sy * sy
    sxy = n * sum((x * y for x, y in zip(xs, ys, strict=True)), sympy.Integer(0)) - sx * sy
    if sxx == 0:
        return None, "every sheet scored the same on it"
    if syy == 0:
        return None, "every sheet scored the same on the rest"
    return sxy / sympy.sqrt(sxx * syy), ""


def items(reports: list[Marked], slips: dict[str, str] | None = None) -> list[Item]:
    """The steps in the order the sheets have them, then each named slip (``slips``: its id and
    words, most frequent first, as the class report lists them)."""
    from tutor.assess.classreport import named_slips

    totals: list[sympy.Rational] = []
    by_step: dict[str, list[sympy.Rational]] = {}
    worth: dict[str, int] = {}
    for k, r in enumerate(reports):
        total = sympy.Integer(0)
        for step, earned, possible in r.points_by_step():  # once per sheet: it is not free
            by_step.setdefault(step.key, [sympy.Integer(0)] * len(reports))[k] = earned
            worth[step.key] = worth.get(step.key, 0) + possible
            total += earned
        totals.append(total)
    out = []
    for key, xs in by_step.items():
        rest = [t - x for t, x in zip(totals, xs, strict=True)]
        r, why = point_biserial(xs, rest)
        right = sum(xs, sympy.Integer(0)) / worth[key] if worth[key] else sympy.Integer(0)
        out.append(Item(key, "step", key, len(reports), right, r, why))
    named = [set(named_slips(r)) for r in reports]
    for slip, words in (slips or {}).items():
        avoided = [sympy.Integer(slip not in made) for made in named]
        r, why = point_biserial(avoided, totals)
        right = sum(avoided, sympy.Integer(0)) / len(reports) if reports else sympy.Integer(0)
        out.append(Item(slip, "slip", words, len(reports), right, r, why))
    return out


def percent_text(share: sympy.Rational) -> str:
    """A share as a whole percentage, half up: ``41 %`` (a no-break space: never split)."""
    from tutor.text.format import expr_rounded

    return f"{expr_rounded(100 * share, 0)}\u00a0%"


def index_text(item: Item) -> str:
    """The discrimination to two places (``0.53``, ``-0.12``), or ``—``."""
    from tutor.text.format import expr_rounded

    if item.discrimination is None:
        return UNDEFINED
    return expr_rounded(item.discrimination, 2).replace("−", "-")


def reading(found: list[Item]) -> str:
    """One line for the instructor: the hardest step, and the one that most separates strong
    from weak sheets."""
    steps = [i for i in found if i.kind == "step"]
    if not steps:
        return "No steps were graded."
    hardest = min(steps, key=lambda i: i.right)  # the first of equals, in the sheet's order
    if hardest.right == 1:
        return "Every step was right on every sheet: no step is hard, none separates the sheets."
    line = f"Hardest step: {hardest.name} ({percent_text(hardest.right)} right)."
    defined = [i for i in steps if i.discrimination is not None]
    if not defined:
        return f"{line} No step's discrimination is defined ({steps[0].why})."
    best = max(defined, key=lambda i: i.discrimination)  # type: ignore[arg-type,return-value]
    return (
        f"{line} The step that most separates strong from weak sheets: {best.name} "
        f"(discrimination {index_text(best)})."
    )


ITEMS_HEADER = ("Item", "Kind", "What", "Students", "Right %", "Discrimination", "Why undefined")


def items_rows(found: list[Item]) -> list[list[object]]:
    """The items as the CSV's rows, with its header."""
    rows: list[list[object]] = [list(ITEMS_HEADER)]
    for i in found:
        right = percent_text(i.right).removesuffix("\u00a0%")  # a number, for a spreadsheet
        rows.append([i.name, i.kind, i.what, i.students, right, index_text(i), i.why])
    return rows


def items_csv(found: list[Item]) -> str:
    """``--items FILE.csv``: one row per step and per named slip (the one CSV writer, so a slip's
    or a step's words never run as a formula)."""
    from tutor.assess.classgrade import csv_text

    return csv_text(items_rows(found))
