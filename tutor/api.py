"""attn-tutor as a Python library, for notebooks and scripts: the same lessons, engine, judge and
grader as the command line, and nothing else. The library never prints, exits or reads the
terminal; errors are ``tutor.LessonError`` (a lesson or sheet, with file:line:col) and
``tutor.TutorError`` (anything else a user gave).

    import tutor
    lesson = tutor.lesson("cats-chase-mice")        # a name, a path, or a dict of the YAML keys
    d = lesson.derive()
    d["weights"].exact                              # a sympy Matrix, exact
    d["weights"].numpy()                            # the same as float64
    d.cell("Z[cats, 1]").working                    # the cell worked term by term
    tutor.judge(lesson, "Z[cats, 1]", "0.49")       # the quiz's judge: right, and why
    tutor.grade(lesson, {"Q": [[2, 0], …]})         # a sheet (a dict or a file), graded
    tutor.check_function(lesson, my_attention)      # your NumPy attention, step by step
    lesson.walk(step="weights")                     # shows itself in Jupyter (HTML, Markdown)
"""

from __future__ import annotations

import html as _html
import io
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tutor.core.errors import LessonError, TutorError

__all__ = [
    "Cell",
    "Derivation",
    "GradeReport",
    "Lesson",
    "LessonError",
    "StepValues",
    "TutorError",
    "Verdict",
    "Walk",
    "check_function",
    "grade",
    "judge",
    "lesson",
]


# ---------------------------------------------------------------------------------------------
# display: the walk's own renderables, recorded (HTML with the walk's colours, or plain text)


def _record(parts: list[Any], width: int = 100) -> tuple[str, str]:
    """(html, text) of Rich renderables, as the terminal shows them at ``width`` columns."""
    from tutor.teach.pictures import document

    page = document(parts, "html", "attn-tutor", "attn-tutor", width)
    style = re.search(r"<style>(.*?)</style>", page, re.S)
    body = re.search(r"<body>(.*?)</body>", page, re.S)
    fragment = (f"<style>{style[1]}</style>" if style else "") + (body[1] if body else page)
    from rich.console import Console

    # not a Jupyter console: in a kernel Rich would display what it prints (issue 40)
    console = Console(width=width, file=io.StringIO(), color_system=None, force_jupyter=False)
    for part in parts:
        console.print(part)
    return fragment, console.file.getvalue()


class Shown:
    """Something that shows itself in a notebook (HTML and Markdown) and as text (``str``)."""

    def _parts(self) -> list[Any]:  # the Rich renderables
        raise NotImplementedError

    def _repr_html_(self) -> str:
        return _record(self._parts())[0]

    def _repr_markdown_(self) -> str:
        return "```text\n" + _record(self._parts())[1].rstrip() + "\n```\n"

    def __str__(self) -> str:
        return _record(self._parts())[1]


class Walk(Shown):
    """The walk of a lesson (all of it, or some steps), as ``attn-tutor walk`` shows it."""

    def __init__(self, d: Any, steps: list[str] | None, exact: bool) -> None:
        self._d, self._steps, self._exact = d, steps, exact

    def _parts(self) -> list[Any]:
        from tutor.teach.walk import WalkOptions, walk

        return walk(self._d, WalkOptions(steps=self._steps, exact=self._exact, width=100))


# ---------------------------------------------------------------------------------------------
# lessons and derivations


class Lesson:
    """A validated lesson (its exact inputs and the instructor's words)."""

    def __init__(self, core: Any) -> None:
        self.core = core  # tutor.core.lesson.Lesson

    name = property(lambda self: self.core.name)
    title = property(lambda self: self.core.title)
    tokens = property(lambda self: self.core.tokens)
    precision = property(lambda self: self.core.precision)

    def derive(self) -> Derivation:
        """Every step, exactly (remembered: the same object each time)."""
        got = self.__dict__.get("_derivation")
        if got is None:
            from tutor.core.engine import derive

            got = self.__dict__["_derivation"] = Derivation(derive(self.core))
        return got

    def walk(self, step: str | list[str] | None = None, exact: bool = False) -> Walk:
        """The walk, or some of its steps (``step="weights"``), to show in a notebook."""
        steps = [step] if isinstance(step, str) else step
        if steps is not None:
            known = {s.name for s in self.derive().core.steps}
            bad = [s for s in steps if s not in known]
            if bad:
                raise TutorError(
                    f"no step {bad[0]!r} in lesson {self.name}; it has: {', '.join(sorted(known))}"
                )
        return Walk(self.derive().core, steps, exact)

    def code(self) -> str:
        """The lesson as a short NumPy program (``attn-tutor code``)."""
        from tutor.export.code import program

        return program(self.derive().core)

    def __repr__(self) -> str:
        return f"<Lesson {self.name}: {self.title}>"

    def _repr_markdown_(self) -> str:
        from tutor.text.words import lesson_facts

        return f"**{_md(self.title)}** (`{self.name}`): " + ", ".join(lesson_facts(self.core))


def lesson(source: str | Path | dict[str, Any] | Lesson) -> Lesson:
    """A lesson by name (``"cats-chase-mice"``), by path, or from a dict of its YAML keys.

    Numbers in a dict are read from their text, as a lesson file's are: write fractions as
    strings (``"1/3"``); a float such as 0.1 is read as the decimal it prints as."""
    if isinstance(source, Lesson):
        return source
    from tutor.core.lessonfile import load_lesson, load_lesson_text

    if isinstance(source, dict):
        import yaml

        try:
            text = yaml.safe_dump(source, allow_unicode=True, sort_keys=False)
        except yaml.YAMLError as err:
            raise TutorError(f"that dict cannot be a lesson: {err}") from None
        return Lesson(load_lesson_text(text, "<dict>", str(source.get("title", "lesson"))))
    if not isinstance(source, str | Path):
        raise TutorError(f"a lesson is a name, a path or a dict, not {type(source).__name__}")
    path = Path(source)
    if path.suffix.lower() in (".yaml", ".yml") or path.exists():
        return Lesson(load_lesson(path))
    from tutor.core.catalog import find_lesson

    return Lesson(load_lesson(find_lesson(str(source)), str(source)))


@dataclass(frozen=True)
class StepValues(Shown):
    """One step of a derivation: its cells exactly (``exact``) and as float64 (``numpy()``)."""

    step: Any  # tutor.core.engine.Step
    d: Any

    name = property(lambda self: self.step.name)
    head = property(lambda self: self.step.head)
    rows = property(lambda self: self.step.rows)
    cols = property(lambda self: self.step.cols)

    @property
    def exact(self) -> Any:
        """A sympy Matrix of the exact values (−oo where the mask hides a score)."""
        import sympy

        from tutor.assess.exact import exact_value

        return sympy.Matrix([[exact_value(c) for c in row] for row in self.step.cells])

    def numpy(self) -> Any:
        """The values as a float64 array (correctly rounded; −inf where masked)."""
        from tutor.assess.codecheck import floats

        return floats(self.step)

    def _parts(self) -> list[Any]:
        from tutor.teach.walk import WalkOptions, step_section

        return [step_section(self.d, self.step, WalkOptions(width=100))]

    def __repr__(self) -> str:
        return f"<{self.step.key} {self.step.shape[0]} × {self.step.shape[1]}>"


@dataclass(frozen=True)
class Cell(Shown):
    """One cell: its exact value, a float, and its working as the walk writes it."""

    name: str
    exact: Any
    value: float
    working: str

    def _parts(self) -> list[Any]:
        from rich.text import Text

        return [Text(self.working)]


class Derivation:
    """Every step of a lesson: ``d["weights"]``, ``d["head2.Z"]``, ``d.cell("Z[cats, 1]")``."""

    def __init__(self, core: Any) -> None:
        self.core = core  # tutor.core.engine.Derivation

    @property
    def steps(self) -> list[str]:
        """The steps' keys, in the order of the computation (``head2.Q`` with heads)."""
        return [s.key for s in self.core.steps]

    def __getitem__(self, key: str) -> StepValues:
        for s in self.core.steps:
            if s.key == key:
                return StepValues(s, self.core)
        raise KeyError(f"no step {key!r}; the steps are: {', '.join(self.steps)}")

    def cell(self, name: str, places: int | None = None) -> Cell:
        """A cell by its name, as ``walk --cell`` takes it (``Z[cats, 1]``, ``head2.Q[it, 1]``)."""
        from tutor.assess.exact import exact_value
        from tutor.text import working as wk
        from tutor.text.cells import cell_name, parse_cell

        step, i, j = parse_cell(self.core, name)
        places = self.core.lesson.precision if places is None else places
        c = step.cells[i][j]
        return Cell(
            cell_name(step, i, j), exact_value(c), float(c.approx), wk.full_text(step, i, j, places)
        )


# ---------------------------------------------------------------------------------------------
# the judge, the grader and the code check


@dataclass(frozen=True)
class Verdict(Shown):
    """One answer for one cell, judged as the quiz judges it."""

    cell: str
    answer: str
    right: bool
    kind: str  # "exact" | "rounded" | "hand" | "fewer" | "wrong"
    message: str
    slips: tuple[str, ...]  # the slips that explain a wrong answer (ids)
    working: str

    def _parts(self) -> list[Any]:
        from rich.text import Text

        mark = "✓" if self.right else "✗"
        lines = [f"{mark} {self.cell} = {self.answer}: {self.message}"]
        from tutor.assess.slips import REMINDERS

        for s in self.slips:  # the slip in words, and the right way (its id in ``slips``)
            what, right = REMINDERS.get(s, (s, ""))
            lines.append(f"  slip: {what}" + (f"; {right}" if right else ""))
        lines.append(self.working)
        return [Text("\n".join(lines))]


def judge(source: Any, cell: str, answer: str) -> Verdict:
    """Judge one typed answer for one cell, with the quiz's own judge."""
    from tutor.assess import judge as jd
    from tutor.core.numbers import read_answer
    from tutor.text import working as wk
    from tutor.text.cells import cell_name, parse_cell

    les = lesson(source)
    d = les.derive().core
    step, i, j = parse_cell(d, cell)
    read = read_answer(str(answer))
    J = jd.judge_for(d)
    v = J.judge(step, i, j, read)
    named = [] if v.right else J.slips(step, i, j, read)
    slips = tuple(s.name for s in named)
    message = v.message
    if named:  # the slip first: what the answer is, before what it is not
        message = f"{named[0].message}; {v.message}"
    return Verdict(
        cell_name(step, i, j), read.text, v.right, v.kind, message, slips,
        wk.full_text(step, i, j, les.precision),
    )  # fmt: skip


class GradeReport(Shown):
    """A graded sheet: ``score``, ``total``, ``points``, ``out_of``, and ``to_dict()`` (the
    ``grade --json`` object); shows the report as ``attn-tutor grade`` prints it."""

    def __init__(self, report: Any) -> None:
        from tutor.assess.grade import report_json

        self.core = report
        self._json = report_json(report)

    score = property(lambda self: self._json["score"])
    total = property(lambda self: self._json["total"])
    points = property(lambda self: self._json["points"])
    out_of = property(lambda self: self._json["out_of"])

    def to_dict(self) -> dict[str, Any]:
        return dict(self._json)

    def _parts(self) -> list[Any]:
        from tutor.assess.report import report

        return list(report(self.core, 100))


def grade(source: Any, sheet: dict[str, Any] | str | Path) -> GradeReport:
    """Grade an answer sheet (a dict of step → rows, as the YAML sheet holds, or its file)."""
    import tempfile

    from tutor.assess.grade import grade as grade_sheet
    from tutor.assess.sheet import read_sheet

    les = lesson(source)
    d = les.derive().core
    if isinstance(sheet, dict):
        import json

        data = {"lesson": les.name, "fingerprint": les.core.fingerprint, **sheet}
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "sheet.yaml"
            path.write_text(json.dumps(data, default=str), encoding="utf-8")
            return GradeReport(grade_sheet(d, read_sheet(path, d)))
    return GradeReport(grade_sheet(d, read_sheet(Path(sheet), d)))


class CodeCheck(Shown):
    """Your function against the lesson: ``ok``, the first ``difference`` and its slip."""

    def __init__(self, report: Any) -> None:
        self.core = report

    ok = property(lambda self: self.core.ok)
    difference = property(lambda self: self.core.difference)
    problem = property(lambda self: self.core.problem)

    def _parts(self) -> list[Any]:
        from rich.text import Text

        from tutor.assess.codecheck import report_text

        return [Text("\n".join(report_text(self.core)))]


def check_function(source: Any, fn: Callable[..., Any]) -> CodeCheck:
    """Call your ``fn(X, W_Q, W_K, W_V, mask=None)`` with the lesson's numbers (float64) and
    compare every step it returns (Z, ``(Z, steps)`` or a dict of steps) with the lesson's."""
    from tutor.assess.codecheck import check_function as check

    return CodeCheck(check(lesson(source).derive().core, fn))


def _md(text: str) -> str:
    return _html.escape(text).replace("*", "\\*").replace("_", "\\_")
