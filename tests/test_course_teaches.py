"""Issue 40, item 3: a course that teaches before it tests. Each stage opens with its idea, the
tables its questions read, one cell of its own step worked term by term and the cell next to
it for the student; its heading stays in view at 80×24; its answers are no common guess, so
typing one number (or guessing small integers) passes no stage, while an honest student
passes every one; a hint after a miss works the first term of the cell."""

from __future__ import annotations

import functools
import io
import itertools
import os
import random
import re
import sys
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path

import pytest
from rich.console import Console

from tests.conftest import PLAIN_ENV, ROOT
from tests.test_learn import right_answer
from tutor.assess import learn as ln
from tutor.assess import quiz as qz
from tutor.assess import stageplan as sp
from tutor.cli.common import open_lesson
from tutor.core.course import COUNT, load_course
from tutor.core.engine import derive
from tutor.text import format as fmt

COURSE = load_course()
N = len(COURSE.stages)
DERIVED = {s.lesson: derive(open_lesson(s.lesson)) for s in COURSE.stages}
PLANS = [sp.plan(DERIVED[s.lesson], s) for s in COURSE.stages]
PROMPT = re.compile(r"(\S+\[[^\]\n]+\]) = $")


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ATTN_TUTOR_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


# ---------------------------------------------------------------------------------------------
# the cells a stage asks


@pytest.mark.parametrize("n", range(1, N + 1))
def test_a_stage_s_answers_are_no_common_guess_and_never_repeat_in_a_row(n: int) -> None:
    stage, p = COURSE.stages[n - 1], PLANS[n - 1]
    places = p.d.lesson.precision
    answers = [sp.answer(q, places) for q in p.order]
    assert len(set(answers)) >= stage.count  # a streak of different answers
    shared = {a for a in answers if answers.count(a) >= sp.SHARED}
    assert not shared and not {Decimal(0), Decimal(1)} & set(answers), stage.title
    every_whole = all(a == a.to_integral_value() for a in answers)
    if every_whole:  # a guesser's small integers never hit
        assert all(abs(a) > sp.SMALL for a in answers), stage.title
    asked = [q for q, _ in zip(sp.questions(p), range(3 * len(p.order)), strict=False)]
    said = [sp.answer(p.worked, places)] + [sp.answer(q, places) for q in asked]
    assert all(a != b for a, b in itertools.pairwise(said))  # never the last again
    assert (p.worked.step, p.worked.i, p.worked.j) not in {(q.step, q.i, q.j) for q in p.order}


def test_the_choice_is_the_same_for_the_same_stage_and_says_when_numbers_are_new() -> None:
    sp.plan.cache_clear()
    again = [sp.plan(DERIVED[s.lesson], s) for s in COURSE.stages]
    for p, q in zip(PLANS, again, strict=True):
        assert [x.name for x in p.order] == [x.name for x in q.order]
        assert p.worked.name == q.worked.name and p.practice == q.practice
    # cats-chase-mice's own K is mostly 1s: stage 2 works it with new numbers in X
    assert PLANS[1].practice == ("X",) and PLANS[1].lesson is DERIVED["cats-chase-mice"]
    assert PLANS[4].practice == () and PLANS[4].d is DERIVED["cats-chase-mice"]


# ---------------------------------------------------------------------------------------------
# guessers and an honest student, through the learn loop with a fake input stream


class Mute:
    """A console that prints nothing (the guessers' thousands of lines are not read)."""

    width = 80

    def print(self, *args: object, **kwargs: object) -> None:
        pass


class Typist(io.StringIO):
    """Types ``answer(prompt)`` for each line asked, ``lines`` of them, then Ctrl-D."""

    def __init__(self, answer: Callable[[str], str], lines: int) -> None:
        super().__init__()
        self.answer, self.left = answer, lines

    def readline(self, *args) -> str:  # type: ignore[no-untyped-def, override]
        if not self.left:
            return ""
        self.left -= 1
        return self.answer("") + "\n"


@pytest.fixture
def quick(monkeypatch: pytest.MonkeyPatch) -> None:
    """The same judge, reader and working, remembered: each is a pure function of its
    arguments, and a guesser types the same few texts thousands of times."""
    from tutor.assess import judge as jd

    def remember(method):  # type: ignore[no-untyped-def]
        seen: dict = {}  # type: ignore[type-arg]

        def call(self, step, i, j, answer, *rest):  # type: ignore[no-untyped-def]
            key = (id(self), id(step), i, j, answer.text, rest)
            if key not in seen:
                seen[key] = method(self, step, i, j, answer, *rest)
            return seen[key]

        return call

    monkeypatch.setattr(jd.Judge, "judge", remember(jd.Judge.judge))
    monkeypatch.setattr(jd.Judge, "slips", remember(jd.Judge.slips))
    for name in ("read_answer", "working", "value_text"):
        monkeypatch.setattr(qz, name, functools.lru_cache(None)(getattr(qz, name)))
    monkeypatch.setattr(ln, "first_term", functools.lru_cache(None)(ln.first_term))


def sit(n: int, answer: Callable[[str], str], lines: int, seed: int) -> ln.Sitting:
    """Stage ``n`` of the bundled path, played with ``--stage n``, through ``learn.run``."""
    prepare = lambda stage: (PLANS[n - 1], [])  # noqa: E731
    return ln.run(COURSE, [], Mute(), Typist(answer, lines), prepare, lambda *a: None, seed, only=n)  # type: ignore[arg-type]


ROUND = (COUNT + ln.EXTRA) * qz.MAX_TRIES + 1  # lines a round can read, and "try again"
GUESSERS = {
    "yes 0": lambda rng: lambda _: "0",
    "yes 1": lambda rng: lambda _: "1",
    "random 0-9": lambda rng: lambda _: str(rng.randint(0, 9)),
}


@pytest.mark.parametrize("guesser", GUESSERS)
def test_a_guesser_passes_no_stage_in_a_hundred_runs(quick: None, guesser: str) -> None:
    passed = []
    for run in range(100):
        rng = random.Random(run)  # seeded: the same guesses every time the test runs
        for n in range(1, N + 1):
            sitting = sit(n, GUESSERS[guesser](rng), ROUND, run)  # a round each
            assert sitting.results, n  # it did answer
            passed += sitting.passed
    assert passed == []


def honest_student(n: int) -> ln.Sitting:
    """Stage ``n`` answered with the exact value at the lesson's places, each time."""
    d = PLANS[n - 1].d
    c = Console(file=io.StringIO(), width=80, color_system=None)

    def honest(_: str) -> str:
        name = PROMPT.search(c.file.getvalue().splitlines()[-1])[1]  # type: ignore[attr-defined, index]
        return right_answer(d, name)

    prepare = lambda stage: (PLANS[n - 1], [])  # noqa: E731
    return ln.run(COURSE, [], c, Typist(honest, 3), prepare, lambda *a: None, 1, only=n)  # type: ignore[arg-type]


def test_an_honest_student_passes_every_stage(quick: None) -> None:
    for n in range(1, N + 1):
        sitting = honest_student(n)
        assert sitting.passed == [COURSE.stages[n - 1].id], COURSE.stages[n - 1].title


# ---------------------------------------------------------------------------------------------
# what the stage shows


def test_stage_two_shows_w_k_and_w_v_and_works_one_cell_first(run) -> None:  # type: ignore[no-untyped-def]
    r = run("learn", "--stage", "2", input="q\n")
    out = r.stdout
    assert "W_K (4 × 2)" in out and "W_V (4 × 2)" in out
    assert " K (3 × 2)" not in out and " V (3 × 2)" not in out  # never a table of answers
    p = PLANS[1]
    worked = out.index(f"Worked for you: {p.worked.name} = row ")
    first = out.index(f"Question 1/5: {p.order[0].name}")
    assert out.index("Stage 2/14: Queries, keys and values") < worked < first
    assert f"Your turn: {p.order[0].name}, worked the same way." in out
    assert "new numbers" in out  # and says why the numbers are not the lesson's own


def test_a_hint_after_a_miss_works_the_first_term(run) -> None:  # type: ignore[no-untyped-def]
    r = run("learn", "--stage", "2", input="12345\nq\n")
    q = PLANS[1].order[0]
    a, b = q.step.pair(q.i, q.j, 0)
    x, y = (fmt.operand(r.step.cells[r.i][r.j], 2) for r in (a, b))
    value = int(x) * int(y)
    out = " ".join(r.stdout.split())  # as read, not as wrapped at 80 columns
    hint = out[out.index("Hint: ") : out.index("Try again")]
    # a piece of the cell worked, not the question again
    assert f"the first term is {x}·{y} = {value}; then the other 3 products" in hint


# ---------------------------------------------------------------------------------------------
# at a terminal of 80×24


pexpect = pytest.importorskip("pexpect")
MORE = "Enter: more · q: stop"


def screen_lines(text: str) -> list[str]:
    return [line for line in text.replace("\r\n", "\n").split("\n")]


@pytest.mark.parametrize("colour", [False, True], ids=["NO_COLOR", "colour"])
def test_each_stage_s_heading_stays_in_view_at_80_by_24(tmp_path: Path, colour: bool) -> None:
    env = {**os.environ, **PLAIN_ENV, "ATTN_TUTOR_HOME": str(tmp_path / "h"), "TERM": "xterm"}
    del env["COLUMNS"], env["LINES"]  # the terminal's own size: 80 × 24
    if colour:
        env.pop("NO_COLOR", None)
        env["FORCE_COLOR"] = "1"
    for n in (1, 2, 5, 7, 8):
        title = f"Stage {n}/{N}: {COURSE.stages[n - 1].title}"
        child = pexpect.spawn(
            sys.executable, ["-m", "tutor", "learn", "--stage", str(n)], cwd=str(ROOT),
            env=env, encoding="utf-8", timeout=30, dimensions=(24, 80),
        )  # fmt: skip
        child.expect_exact(title)
        screens = 0
        while child.expect([re.escape(MORE), r"Question 1/\d+: \S+\[[^\]]*\]"]) == 0:
            shown = screen_lines(title + child.before)
            assert len(shown) <= 24, (n, len(shown))  # one screen, the pager's line last
            screens += 1
            child.send(" ")  # a key, at once
            child.expect_exact(title)  # every screen starts with the stage's heading
        text = title + child.before + child.after
        child.expect(r" = ")
        last = screen_lines(text + child.before + child.after)
        plain = [re.sub(r"\x1b\[[0-9;]*m", "", line) for line in last]
        assert len(plain) <= 24, (n, len(plain))  # heading and first question on one screen
        assert plain[0].startswith("Stage") and any("Question 1/" in x for x in plain)
        child.sendline("q")
        child.expect(pexpect.EOF)
        child.close()
        assert child.exitstatus == 0
        assert screens >= (1 if n in (1, 2, 7, 8) else 0), n


@pytest.mark.parametrize(
    "sizes", [[1, 3, 2, 10, 2, 1], [1, 3, 2, 10, 9, 2, 1], [1, 3, 12], [1, 4, 20, 3], [1, 2, 3]]
)
def test_a_stage_opening_is_cut_between_its_parts_and_leaves_room_for_the_question(
    sizes: list[int],
) -> None:
    from tutor.teach.course_view import screens_of

    pages = screens_of(sizes, 24, 10)
    assert [k for p in pages for k in p] == list(range(len(sizes)))  # in order, each once
    for n, kept in enumerate(pages):
        lines = (sizes[0] if n else 0) + sum(sizes[k] for k in kept)
        assert lines <= 23 or len(kept) == 1  # a screen and the pager's line, or one tall part
    assert (sizes[0] if len(pages) > 1 else 0) + sum(sizes[k] for k in pages[-1]) + 10 <= 24
