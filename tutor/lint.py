"""``check``: every problem of many lesson files, plus warnings about lessons that teach badly.

A lesson can be valid and still make a poor exercise. Three things are worth a warning:

* a row of weights that is uniform because every score in it is equal (nothing to learn from Z);
* scores so far apart that softmax is one-hot (largest weight above ``ONE_HOT``);
* entries that are unpleasant by hand: more than ``MAX_PLACES`` decimal places, or a fraction
  whose denominator is above ``MAX_DENOMINATOR``.

Warnings never make a lesson invalid. They need the engine, so this module imports sympy.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tutor.engine import Step, causal_mask, given, matmul, numbered, rational, scale, softmax
from tutor.errors import LessonError, Problem
from tutor.format import MINUS, decimal_places, decimal_text, number, plural, round_half_up
from tutor.lesson import Entry, Head, Lesson, Matrix, check_lesson, find_lesson, is_dir
from tutor.spec import MAX_ERRORS

ONE_HOT = 0.99
MAX_PLACES = 3
MAX_DENOMINATOR = 12


@dataclass(frozen=True)
class Report:
    """What ``check`` found in one file."""

    path: str
    lesson: Lesson | None  # None when the file has errors
    problems: list[Problem]

    @property
    def valid(self) -> bool:
        return self.lesson is not None


def check_lessons(names: list[str], extra: list[Path] | None = None) -> list[Report]:
    """Check each file, folder (its ``*.yaml``) or lesson name; never stop at the first bad one."""
    return [check_one(path, extra) for path in _expand(names)]


def _expand(names: list[str]) -> Iterator[str]:
    for name in names:
        if is_dir(Path(name)):  # a name too long to look up is checked (and reported) as a file
            yield from (str(p) for p in sorted(Path(name).glob("*.yaml")))
        else:
            yield name


def check_one(name: str, extra: list[Path] | None = None) -> Report:
    """Every problem of one lesson: errors, or (for a valid lesson) teaching warnings."""
    try:
        path = find_lesson(name, extra)
    except LessonError as err:
        return Report(name, None, err.problems)
    lesson, problems = check_lesson(path, path.stem)  # errors stop at MAX_ERRORS
    if lesson is not None:
        problems = problems + capped(teaching_warnings(lesson))
    # in file order, as an editor lists them (stable: one place keeps the order found)
    return Report(str(path), lesson, sorted(problems, key=lambda p: (p.line, p.col)))


def summary(reports: list[Report]) -> str:
    """One line: how many lessons, how many valid, how many errors and warnings."""
    errors = sum(p.severity == "error" for r in reports for p in r.problems)
    warnings = sum(p.severity == "warning" for r in reports for p in r.problems)
    invalid = sum(not r.valid for r in reports)
    n = len(reports)
    counts = [plural(errors, "error")] if errors else []
    counts += [plural(warnings, "warning")] if warnings else []
    verdict = f"{n - invalid} valid, {invalid} invalid" if invalid else "all valid"
    if n == 1:
        verdict = "invalid" if invalid else "valid"
    tail = f" ({', '.join(counts)})" if counts else ""
    return f"checked {plural(n, 'lesson')}: {verdict}{tail}"


# ---------------------------------------------------------------------------------------------
# teaching warnings


def capped(warnings: list[Problem]) -> list[Problem]:
    """The first ``MAX_ERRORS`` warnings and, when there are more, one that counts the rest."""
    if len(warnings) <= MAX_ERRORS:
        return warnings
    last = warnings[MAX_ERRORS - 1]
    rest = len(warnings) - MAX_ERRORS
    more = f"{plural(rest, 'more warning')} not shown"
    return [*warnings[:MAX_ERRORS], Problem(last.path, last.line, last.col, more, "warning")]


def teaching_warnings(lesson: Lesson) -> list[Problem]:
    """Warnings about a valid lesson that would teach badly, in file order."""
    found = list(_entry_warnings(lesson)) + list(_weight_warnings(lesson))
    return sorted(found, key=lambda p: (p.line, p.col))


def _matrices(lesson: Lesson) -> Iterator[tuple[str, str, Matrix]]:
    """Every given matrix: (position key prefix, name in messages, matrix)."""
    yield "X", "X", lesson.X
    for h, head in enumerate(lesson.heads, 1):
        key, shown = (f"heads.{h}.", f" of head {h}") if lesson.multi_head else ("", "")
        yield f"{key}W_Q", f"W_Q{shown}", head.W_Q
        yield f"{key}W_K", f"W_K{shown}", head.W_K
        yield f"{key}W_V", f"W_V{shown}", head.W_V
    if lesson.W_O is not None:
        yield "W_O", "W_O", lesson.W_O


def hard_entry(entry: Entry) -> str | None:
    """Why an entry is unpleasant by hand, or None when it is fine."""
    p, q = entry
    places = decimal_places(q)
    if places is not None and places > MAX_PLACES:
        text = decimal_text(round_half_up(rational(p, q), places))
        return (
            f"is {text}, with {places} decimal places; entries with at most {MAX_PLACES} "
            "keep the working readable by hand"
        )
    if places is None and q > MAX_DENOMINATOR:
        text = f"{MINUS if p < 0 else ''}{abs(p)}/{q}"
        return (
            f"is {text}; a denominator of {q} is hard to work with by hand (halves, thirds, "
            f"… up to twelfths are fine)"
        )
    return None


def _entry_warnings(lesson: Lesson) -> Iterator[Problem]:
    for key, shown, m in _matrices(lesson):
        for i, row in enumerate(m, 1):
            for j, entry in enumerate(row, 1):
                why = hard_entry(entry)
                if why:
                    line, col = lesson.where.get(f"{key}.{i}.{j}", lesson.where.get(key, (1, 1)))
                    yield Problem(
                        lesson.path, line, col, f"{shown} row {i}, column {j} {why}", "warning"
                    )


def attention(lesson: Lesson, head: Head) -> tuple[Step, Step, Step]:
    """One head's scores, scaled scores and weights, from the engine's primitives.

    Only what the warnings need: V and Z (the slow part of a whole derivation) are skipped.
    """
    X = given("X", lesson.X, lesson.labels)  # (N, d_model)
    Q = matmul("Q", X, given("W_Q", head.W_Q, numbered(len(head.W_Q))))  # (N, d_k)
    K = matmul("K", X, given("W_K", head.W_K, numbered(len(head.W_K))))  # (N, d_k)
    scores = matmul("scores", Q, K, transpose=True)  # (N, N)
    scaled = scale("scaled", scores, len(head.W_K[0]))  # (N, N)
    if lesson.mask == "causal":
        scaled = causal_mask("masked", scaled)
    return scores, scaled, softmax("weights", scaled)  # weights: (N, N)


def _weight_warnings(lesson: Lesson) -> Iterator[Problem]:
    for h, head in enumerate(lesson.heads, 1):
        yield from head_warnings(lesson, h, head)


def head_warnings(lesson: Lesson, h: int, head: Head) -> Iterator[Problem]:
    """Uniform or one-hot rows of weights in head ``h`` (1-based)."""
    labels = lesson.labels
    causal = lesson.mask == "causal"
    of_head = f" (head {h})" if lesson.multi_head else ""
    z = f"head{h}.Z" if lesson.multi_head else "Z"  # the cell's name, as explain takes it
    scores, scaled_step, weights = attention(lesson, head)
    for i, label in enumerate(labels):
        seen = list(range(i + 1)) if causal else list(range(len(labels)))
        if len(seen) < 2:
            continue  # one visible token: a weight of 1 is the only possible answer
        line, col = lesson.where.get(f"X.{i + 1}", lesson.where.get("X", (1, 1)))
        row = [scores.cells[i][j] for j in seen]
        if all(s.q == row[0].q for s in row):
            those = "all tokens" if not causal else f"the {len(seen)} tokens it sees"
            yield Problem(
                lesson.path,
                line,
                col,
                f"the weights of {label}{of_head} are uniform: every score in its row is "
                f"{number(row[0], 2, whole=True)}, so {those} get the same weight and "
                f"{z}[{label}] is a plain average; unless that is the point, change this row "
                "of X, or W_Q or W_K",
                "warning",
            )
            continue
        top = max(seen, key=lambda j: weights.cells[i][j].approx)
        if weights.cells[i][top].value > ONE_HOT:
            scaled = [scaled_step.cells[i][j] for j in seen]
            low = min(scaled, key=lambda c: c.approx)
            high = max(scaled, key=lambda c: c.approx)
            yield Problem(
                lesson.path,
                line,
                col,
                f"the weights of {label}{of_head} are nearly one-hot: "
                f"{number(weights.cells[i][top], 3)} on {labels[top]}, as its scaled scores "
                f"run from {number(low, 2, whole=True)} to {number(high, 2, whole=True)}; "
                "smaller entries in X, W_Q or W_K give softmax something to share",
                "warning",
            )
