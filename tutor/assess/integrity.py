"""What a class's sheets say about themselves, checked: flags for the instructor, never a score.

Three flags, each said in one sentence that names what was found:

* ``not-their-variant``: the sheet's student (id, else name) is not the student its variant was
  made for (a sheet copied from a classmate's file, the name and id changed);
* ``identical``: two or more sheets with the same answers in every cell, where that is not what
  honest work gives (they share a wrong answer, or they are for different variants);
* ``other-variant``: the answers fit another variant's numbers clearly better than the sheet's
  own (worked on a neighbour's numbers); its named slips are then no evidence of a
  misconception, and the class report leaves them out.

Pure: a class's marks in (``marked.Marked``: what each sheet wrote is kept as a digest, and how
well it fits each variant as counts, both made where the sheet was graded), flags out
(``Marked.flags``); the flags change no verdict or point.
"""

from __future__ import annotations

import hashlib
import unicodedata
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tutor.assess import grade as gr
from tutor.core.engine import Derivation
from tutor.text import format as fmt

if TYPE_CHECKING:
    from tutor.assess.marked import Marked

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


def roster_flag(r: Marked) -> Flag | None:
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


def answers_digest(r: gr.Report) -> bytes:
    """What a sheet wrote in every cell, as a digest: two sheets share it when they wrote the
    same (each cell's step, place and value, or its text when it cannot be read)."""
    h = hashlib.sha256()
    for g in r.cells:
        a = g.entry.answer
        written = f"={a.value}" if a is not None else f"~{g.entry.text}"
        h.update(f"{g.step.key}\0{g.i}\0{g.j}\0{written}\0".encode("utf-8", "surrogatepass"))
    return h.digest()


def identical_flags(reports: list[Marked]) -> dict[int, Flag]:
    """Sheets with the same answers everywhere, where honest work would not make them so."""
    groups: dict[bytes, list[Marked]] = {}
    for r in reports:
        if r.got.written >= 3:
            groups.setdefault(r.got.answers, []).append(r)
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


def variant_flag(r: Marked, others: list[Derivation]) -> Flag | None:
    """Another variant's numbers that the answers fit clearly better than the sheet's own
    (``others``: the class's variants, whose fits the sheet's marks hold, ``Got.fits``)."""
    written = r.got.written
    if written < 2 * FIT_LEAST:
        return None
    fits = dict(zip((id(d.lesson) for d in others), r.got.fits, strict=True))
    own = fits[id(r.d.lesson)]
    best, where = own, None
    for d in others:
        if d.lesson is r.d.lesson:
            continue
        n = fits[id(d.lesson)]
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


def flag_class(reports: list[Marked], variants: list[Derivation]) -> None:
    """Set every report's ``flags`` (in place): roster, identical answers, another variant."""
    same = identical_flags(reports)
    for r in reports:
        found = [roster_flag(r), same.get(id(r))]
        if len(variants) > 1:
            found.append(variant_flag(r, variants))
        r.flags = [f for f in found if f is not None]
