"""attn-tutor as a Python library, for notebooks and scripts: the same lessons, engine, judge and
grader as the command line, and nothing else. The library never prints, exits or reads the
terminal. Every error it raises is a ``tutor.TutorError``:

- ``tutor.LessonError``: a lesson or sheet (a file, or a dict) is not valid; each problem with
  its place, ``file:line:col`` (``<dict> X[2][0]`` for a dict);
- ``tutor.UsageError``: a bad name, such as a cell that is not in the lesson; its subclass
  ``tutor.ArgumentError``: an argument of the wrong type or out of its range
  (``places=60``, ``step=5``, a sheet that is a list);
- ``tutor.AnswerError``: a typed answer that cannot be read as a number;
- ``tutor.NoSuchStep``: ``d["nope"]``; a ``KeyError`` too, as a mapping's missing key is.

Sizes are checked before any work: a dict lesson or sheet is measured (values, bytes, depth)
before it is written out as YAML, with the limits of a lesson file (20,000 values, 1 MiB).

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

from tutor.core.errors import (
    AnswerError,
    ArgumentError,
    LessonError,
    NoSuchStep,
    TutorError,
    UsageError,
)

__all__ = [
    "AnswerError",
    "ArgumentError",
    "Cell",
    "Derivation",
    "GradeReport",
    "Lesson",
    "LessonError",
    "NoSuchStep",
    "StepValues",
    "TutorError",
    "UsageError",
    "Verdict",
    "Walk",
    "check_function",
    "grade",
    "judge",
    "lesson",
    "lesson_from_arrays",
    "lesson_from_torch",
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
    """A validated lesson (its exact inputs and the instructor's words), made by
    ``tutor.lesson(...)``; ``ArgumentError`` when made from anything but a loaded lesson."""

    def __init__(self, core: Any) -> None:
        from tutor.core.lesson import Lesson as CoreLesson

        if not isinstance(core, CoreLesson):
            raise ArgumentError(f"a Lesson is made by tutor.lesson(...), not from {_kind(core)}")
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
        """The walk, or some of its steps (``step="weights"`` or a list of names), to show in a
        notebook. Raises ``TutorError`` for a step the lesson does not have, ``ArgumentError``
        for a step that is not a name or ``exact`` that is not True or False."""
        _is("exact", exact, bool, "True or False")
        steps = [step] if isinstance(step, str) else step
        if not (steps is None or (isinstance(steps, list | tuple) and _all_text(steps))):
            raise ArgumentError(f"step is {_kind(step)}; expected a step's name or a list of them")
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
    strings (``"1/3"``, or a ``Fraction``); a float such as 0.1 is read as the decimal it
    prints as. Raises ``LessonError`` for a lesson that is not valid (a dict is measured
    first: more than 20,000 values or 1 MiB is refused before any work) and ``ArgumentError``
    for a source that is none of these."""
    if isinstance(source, Lesson):
        return source
    from tutor.core.lessonfile import load_lesson, load_lesson_text

    if isinstance(source, dict):
        import yaml

        from tutor.core.plaindata import plain

        data = plain(source, "<dict>")  # measured and copied before it is dumped
        text = yaml.safe_dump(data, allow_unicode=True, sort_keys=False)
        title = data.get("title")
        return Lesson(
            load_lesson_text(text, "<dict>", title if isinstance(title, str) else "lesson")
        )
    if not isinstance(source, str | Path):
        raise ArgumentError(f"a lesson is a name, a path or a dict, not {_kind(source)}")
    path = _path(source, "lesson")
    if path.suffix.lower() in (".yaml", ".yml") or _exists(path):
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
        from tutor.core.engine import Derivation as CoreDerivation

        if not isinstance(core, CoreDerivation):
            raise ArgumentError(
                f"a Derivation is made by tutor.lesson(...).derive(), not from {_kind(core)}"
            )
        self.core = core  # tutor.core.engine.Derivation

    @property
    def steps(self) -> list[str]:
        """The steps' keys, in the order of the computation (``head2.Q`` with heads)."""
        return [s.key for s in self.core.steps]

    def __getitem__(self, key: str) -> StepValues:
        """A step by its key; ``NoSuchStep`` (a ``TutorError`` and a ``KeyError``) if none."""
        for s in self.core.steps:
            if isinstance(key, str) and s.key == key:
                return StepValues(s, self.core)
        shown = _short(key) if isinstance(key, str) else f"named by {_kind(key)}"
        raise NoSuchStep(f"no step {shown}; the steps are: {', '.join(self.steps)}")

    def cell(self, name: str, places: int | None = None) -> Cell:
        """A cell by its name, as ``walk --cell`` takes it (``Z[cats, 1]``, ``head2.Q[it, 1]``),
        its working rounded to ``places`` decimals (0 to 10; the lesson's precision by default).
        Raises ``UsageError`` for a name that is no cell, ``ArgumentError`` for a bad type or
        ``places`` out of range."""
        from tutor.assess.exact import exact_value
        from tutor.text import working as wk
        from tutor.text.cells import cell_name, parse_cell

        _is("name", name, str, "a cell's name such as 'Z[cats, 1]'")
        step, i, j = parse_cell(self.core, name)
        places = self.core.lesson.precision if places is None else _places(places)
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
    """Judge one typed answer (text, or an int or float) for one cell, with the quiz's own
    judge. Raises ``UsageError`` for a cell that is not in the lesson, ``AnswerError`` for an
    answer that cannot be read, ``ArgumentError`` for arguments of the wrong type."""
    from tutor.assess import judge as jd
    from tutor.core.numbers import read_answer
    from tutor.text import working as wk
    from tutor.text.cells import cell_name, parse_cell

    _is("cell", cell, str, "a cell's name such as 'Z[cats, 1]'")
    typed = _answer_text(answer)
    les = lesson(source)
    d = les.derive().core
    step, i, j = parse_cell(d, cell)
    read = read_answer(typed)
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
    """Grade an answer sheet (a dict of step → rows, as the YAML sheet holds, or its file).
    Raises ``LessonError`` for a sheet that cannot be read (a dict is measured first, as a
    dict lesson is), ``ArgumentError`` for a sheet that is neither a dict nor a path."""
    import tempfile

    from tutor.assess.grade import grade as grade_sheet
    from tutor.assess.sheet import read_sheet

    if not isinstance(sheet, dict | str | Path):
        raise ArgumentError(f"a sheet is a dict or a path, not {_kind(sheet)}")
    if isinstance(sheet, dict):
        from tutor.core.plaindata import plain

        answers = plain(sheet, "<sheet>")  # measured and copied before any work
    else:
        path = _path(sheet, "sheet")
    les = lesson(source)
    d = les.derive().core
    if isinstance(sheet, dict):
        import json

        data = {"lesson": les.name, "fingerprint": les.core.fingerprint, **answers}
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "sheet.yaml"
            path.write_text(json.dumps(data), encoding="utf-8")
            return GradeReport(grade_sheet(d, read_sheet(path, d)))
    return GradeReport(grade_sheet(d, read_sheet(path, d)))


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
    compare every step it returns (Z, ``(Z, steps)`` or a dict of steps) with the lesson's.
    What the function raises or returns is reported, never raised; ``ArgumentError`` when
    ``fn`` is not callable."""
    from tutor.assess.codecheck import check_function as check

    if not callable(fn):
        raise ArgumentError(f"fn is {_kind(fn)}; expected a function such as attention(X, W_Q, …)")
    return CodeCheck(check(lesson(source).derive().core, fn))


# ---------------------------------------------------------------------------------------------
# arguments, checked at the door


def _kind(value: Any) -> str:
    """What a value is, in a message: its type, never its (maybe huge) text."""
    name = type(value).__name__
    return "None" if value is None else ("an " if name[0] in "aeiou" else "a ") + name


def _short(text: str, most: int = 60) -> str:
    return repr(text if len(text) <= most else text[:most] + "…")


def _is(name: str, value: Any, kind: type, expected: str) -> None:
    if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
        raise ArgumentError(f"{name} is {_kind(value)}; expected {expected}")


def _all_text(values: Any) -> bool:
    return all(isinstance(v, str) for v in values)


def _places(places: Any) -> int:
    """``places`` as given, when it is a whole number of decimals a lesson may show (0 to 10)."""
    from tutor.core.spec import MAX_PRECISION

    _is("places", places, int, f"a whole number of decimals from 0 to {MAX_PRECISION}")
    if not 0 <= places <= MAX_PRECISION:
        shown = places if abs(places).bit_length() < 64 else "a huge number"
        raise ArgumentError(f"places is {shown}; expected 0 to {MAX_PRECISION} decimals")
    return int(places)


def _answer_text(answer: Any) -> str:
    """A typed answer: text as it is, or an int or float written as a person would type it."""
    if isinstance(answer, str):
        return answer
    if isinstance(answer, bool) or not isinstance(answer, int | float):
        raise ArgumentError(f"answer is {_kind(answer)}; expected the answer as text, like '0.49'")
    if isinstance(answer, int) and abs(answer).bit_length() > 4000:
        raise AnswerError("that answer is a whole number of over 1,200 digits; it cannot be read")
    return str(answer)


def _path(source: str | Path, what: str) -> Path:
    """A path from a str or Path; a NUL cannot be in one."""
    if "\0" in str(source):
        raise ArgumentError(f"a {what}'s name or path cannot hold a NUL character")
    return Path(source)


def _exists(path: Path) -> bool:
    try:
        return path.exists()
    except (OSError, ValueError):  # a name too long for the system: no such file
        return False


def _md(text: str) -> str:
    return _html.escape(text).replace("*", "\\*").replace("_", "\\_")


# ---------------------------------------------------------------------------------------------
# lessons made from arrays and from a real layer


class MadeLesson(Lesson):
    """A lesson made from arrays (``lesson_from_arrays``, ``lesson_from_torch``): a ``Lesson``,
    with its file's text (``yaml``) and how far rounding every entry moved the output
    (``moved``: the largest |difference| over Z, or over the output with W_O; ``moved_text``
    says it in words)."""

    def __init__(self, made: Any) -> None:
        super().__init__(made.lesson)
        self.yaml: str = made.yaml
        self.moved: float = made.moved
        from tutor.author.fromarrays import moved_text

        self.moved_text: str = moved_text(made)

    def save(self, path: str | Path, force: bool = False) -> Path:
        """Write the lesson file (never over an existing file unless ``force``)."""
        from tutor.author.new import write_new

        target = _path(path, "lesson")
        write_new(target, self.yaml, force)
        return target


def _heads_of(key: str, value: Any, ndim: int) -> dict[str, Any]:
    """One array (one head), or a list of them / an array with one more axis (one per head);
    None in a list: that head has none (a bias)."""
    import numpy as np

    if value is None:
        return {}
    if isinstance(value, list | tuple) and any(v is None for v in value):  # a head without one
        return {f"{key}.{h}": v for h, v in enumerate(value, 1) if v is not None}
    try:
        depth = np.ndim(value)
    except Exception:  # a ragged list: the checker says what it is
        depth = ndim
    if depth == ndim + 1 and isinstance(value, list | tuple | np.ndarray) and len(value) >= 1:
        return {f"{key}.{h}": v for h, v in enumerate(value, 1)}
    return {key: value}


def lesson_from_arrays(
    X: Any = None,
    W_Q: Any = None,
    W_K: Any = None,
    W_V: Any = None,
    *,
    E: Any = None,
    P: Any = None,
    W_O: Any = None,
    b_Q: Any = None,
    b_K: Any = None,
    b_V: Any = None,
    b_O: Any = None,
    tokens: list[str] | str | None = None,
    places: int = 4,
    name: str = "from-arrays",
    causal: bool = False,
) -> MadeLesson:
    """A lesson made from NumPy arrays, every entry rounded to ``places`` decimals (half away
    from zero), as ``attn-tutor new NAME --from FILE.npz`` makes it. ``X`` (or ``E`` and ``P``)
    is N × d_model; ``W_Q``, ``W_K``, ``W_V`` are d_model × d_k (d_v), or a list of them (or a
    3-D array), one per head; fewer W_K/W_V than W_Q make grouped heads; ``W_O`` mixes the
    heads. ``b_Q``, ``b_K``, ``b_V`` are one row each (or a list of rows, as the weights they
    go with), ``b_O`` one row with ``W_O``. ``tokens``: a list of words (default t1, t2, …).
    The result is a ``Lesson`` with ``yaml`` (the file's text), ``moved`` (how far rounding
    moved the output), ``moved_text`` and ``save(path)``. Raises ``TutorError`` naming the
    array and what was expected (a shape, a number)."""
    from tutor.author.fromarrays import make

    _is("causal", causal, bool, "True or False")
    _is("name", name, str, "a lesson name such as 'my-layer'")
    named: dict[str, Any] = {}
    for key, value in (("X", X), ("E", E), ("P", P), ("W_O", W_O), ("b_O", b_O)):
        if value is not None:
            named[key] = value
    for key, value, ndim in (("W_Q", W_Q, 2), ("W_K", W_K, 2), ("W_V", W_V, 2)):
        named |= _heads_of(key, value, ndim)
    for key, value in (("b_Q", b_Q), ("b_K", b_K), ("b_V", b_V)):
        named |= _heads_of(key, value, 1)
    command = f"tutor.lesson_from_arrays(..., places={places!r})"
    return MadeLesson(make(named, name, places, tokens, "<arrays>", command, causal))


def lesson_from_torch(
    module: Any,
    x: Any,
    tokens: list[str] | str | None = None,
    places: int = 4,
    name: str = "from-torch",
) -> MadeLesson:
    """A lesson made from a ``torch.nn.MultiheadAttention`` and its input ``x`` ((N, d), or a
    batch of one: (1, N, d) or (N, 1, d)): its packed ``in_proj_weight`` split into W_Q, W_K,
    W_V (transposed to the lesson's X·W), the heads by head_dim, ``out_proj`` as W_O; every
    entry rounded to ``places`` decimals. The lesson's output is the module's, to the rounding
    (``moved``). PyTorch is imported here only; ``TutorError`` when it is not installed."""
    from tutor.author.fromarrays import from_torch, make

    _is("name", name, str, "a lesson name such as 'my-layer'")
    named = from_torch(module, x)
    command = f"tutor.lesson_from_torch(module, x, places={places!r})"
    return MadeLesson(make(named, name, places, tokens, "<module>", command))
