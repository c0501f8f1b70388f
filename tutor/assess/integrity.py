"""What a class's sheets say about themselves, checked: flags for the instructor, never a score.

Three flags, each said in one sentence that names what was found:

* ``not-their-variant``: the sheet's student (id, else name) is not the student its variant was
  made for (a sheet copied from a classmate's file, the name and id changed);
* ``identical``: two or more sheets with the same answers in every cell, where that is not what
  honest work gives (they share a wrong answer, or they are for different variants);
* ``other-variant``: the answers fit another variant's numbers clearly better than the sheet's
  own (worked on a neighbour's numbers); its named slips are then no evidence of a
  misconception, and the class report leaves them out.

Pure: reports in, flags out (``grade.Report.flags``); the flags change no verdict or point.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

from tutor.assess import grade as gr
from tutor.core.engine import Derivation
from tutor.text import format as fmt

FIT_MARGIN = 0.2  # another variant fits "clearly better": this share of the cells more, and
FIT_LEAST = 3  # at least this many cells more


@dataclass(frozen=True)
class Flag:
    kind: str  # "not-their-variant" | "identical" | "other-variant"
    message: str


def _same_person(a: str, b: str) -> bool:
    def norm(s: str) -> str:
        return " ".join(unicodedata.normalize("NFKC", s).casefold().split())

    return norm(a) == norm(b)


def roster_flag(r: gr.Report) -> Flag | None:
    """The sheet's student against the student its variant was made for."""
    variant = r.d.lesson.variant
    header = r.sheet.header
    if variant is None or header is None:
        return None
    if variant.student_id and header.student_id:
        if _same_person(variant.student_id, header.student_id):
            return None
        # another of the student's own ids (Canvas's SIS User ID for its ID), under their name
        if variant.student and header.student and _same_person(variant.student, header.student):
            return None
    elif not (variant.student and header.student) or _same_person(variant.student, header.student):
        return None
    made_for = variant.student or "another student"
    if variant.student_id:
        made_for += f" (id {variant.student_id})"
    says = header.student or "no name"
    if header.student_id:
        says += f" (id {header.student_id})"
    return Flag(
        "not-their-variant", f"the sheet names {says}, but {variant.id} was made for {made_for}"
    )


def _answers(r: gr.Report) -> tuple[object, ...]:
    return tuple(
        (g.step.key, g.i, g.j, g.entry.answer.value if g.entry.answer else g.entry.text)
        for g in r.cells
    )


def identical_flags(reports: list[gr.Report]) -> dict[int, Flag]:
    """Sheets with the same answers everywhere, where honest work would not make them so."""
    groups: dict[tuple[object, ...], list[gr.Report]] = {}
    for r in reports:
        if sum(g.entry.answer is not None for g in r.cells) >= 3:
            groups.setdefault(_answers(r), []).append(r)
    out: dict[int, Flag] = {}
    for same in groups.values():
        if len(same) < 2:
            continue
        variants = {id(r.d.lesson) for r in same}
        shared_wrong = any(g.verdict == "wrong" for g in same[0].cells)
        if len(variants) < 2 and not shared_wrong:
            continue  # every answer right on the same numbers: honest work agrees
        for r in same:
            others = ", ".join(o.sheet.path for o in same if o is not r)
            out[id(r)] = Flag("identical", f"the answers are the same in every cell as {others}")
    return out


def fit(d: Derivation, r: gr.Report) -> int:
    """How many of the sheet's written cells are what ``d``'s numbers show (at its places)."""
    places = d.lesson.precision
    count = 0
    for g in r.cells:
        a = g.entry.answer
        if a is None or not a.value.is_Rational:
            continue
        try:
            step = d.step(g.step.name, g.step.head)
            cell = step.cells[g.i][g.j]
        except (KeyError, IndexError):
            continue
        if not cell.masked and gr.rounded(a.value, places) == fmt.as_shown(cell, places):
            count += 1
    return count


def variant_flag(r: gr.Report, others: list[Derivation]) -> Flag | None:
    """Another variant's numbers that the answers fit clearly better than the sheet's own."""
    written = sum(g.entry.answer is not None for g in r.cells)
    if written < 2 * FIT_LEAST:
        return None
    own = fit(r.d, r)
    best, where = own, None
    for d in others:
        if d.lesson is r.d.lesson:
            continue
        n = fit(d, r)
        if n > best:
            best, where = n, d
    if where is None or best - own < max(FIT_LEAST, FIT_MARGIN * written):
        return None
    name = where.lesson.variant.id if where.lesson.variant else where.lesson.name
    return Flag(
        "other-variant",
        f"{best} of {written} answers fit the numbers of {name}, {own} those of its own "
        f"{r.d.lesson.variant.id if r.d.lesson.variant else r.d.lesson.name}",
    )


def flag_class(reports: list[gr.Report], variants: list[Derivation]) -> None:
    """Set every report's ``flags`` (in place): roster, identical answers, another variant."""
    same = identical_flags(reports)
    for r in reports:
        found = [roster_flag(r), same.get(id(r))]
        if len(variants) > 1:
            found.append(variant_flag(r, variants))
        r.flags = [f for f in found if f is not None]
