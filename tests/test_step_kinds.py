"""Every kind of step through every consumer (issue 24): a step the engine makes has its entry in
``tutor.core.kinds`` and its words in ``tutor.text.steps``, and the walk, the quiz, the answer
sheet, the Markdown and TeX keys, the typst document, the explorer, ``--cell`` and the judge
each take it. A new kind of step without its entries fails here, loudly, by name."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from tests.lessongen import KINDS as LESSON_KINDS
from tests.lessongen import kind_text, next_entry, next_list
from tutor.assess import judge, quiz
from tutor.assess.sheet import answer_sheet
from tutor.core import kinds
from tutor.core.engine import Derivation, Options, derive
from tutor.core.lessonfile import load_lesson_text
from tutor.explore import views
from tutor.explore.model import Settings
from tutor.export import typst_doc, worksheet
from tutor.teach import focus, walk
from tutor.text import steps, theme, words

SEEDS = range(3)
KINDS = (*LESSON_KINDS, "heads-next", "qkv", "next-steps")
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "exercises"
EXERCISES = [p for p in sorted(FIXTURES.glob("*.yaml")) if "Q:" in p.read_text()]


def _lesson(kind: str, seed: int) -> Derivation:
    rng = random.Random(f"{kind}-{seed}")
    if kind == "qkv":  # Q, K and V given: the lesson starts at the scores
        path = EXERCISES[seed % len(EXERCISES)]
        return derive(load_lesson_text(path.read_text(), str(path), path.stem))
    if kind == "heads-next":  # the decoding row of several heads: concat_new and output_new
        text = kind_text(rng, "heads")
        d_model = load_lesson_text(text, "heads.yaml", "heads").d_model
        text += next_entry(rng, d_model)
    elif kind == "next-steps":  # next: as a list: several new tokens, the shifted mask
        text = kind_text(rng, "heads" if seed % 2 else "causal")
        d_model = load_lesson_text(text, "steps.yaml", "steps").d_model
        text += next_list(rng, d_model, 2 + seed % 2)
    else:
        text = kind_text(rng, kind)
    return derive(load_lesson_text(text, f"{kind}.yaml", kind))


@pytest.fixture(scope="module")
def derivations() -> dict[str, list[Derivation]]:
    out = {kind: [_lesson(kind, seed) for seed in SEEDS] for kind in KINDS}
    # the explorer's variation: the scaled scores times a factor (the tempered step)
    out["tempered"] = [derive(d.lesson, Options(factor=(2, 1))) for d in out["single"]]
    return out


def _all(derivations: dict[str, list[Derivation]]) -> list[Derivation]:
    return [d for ds in derivations.values() for d in ds]


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_every_step_made_has_its_kind_and_its_words(derivations) -> None:
    made = {s.name for d in _all(derivations) for s in d.steps}
    assert made - set(kinds.BY_NAME) == set(), "steps with no entry in tutor.core.kinds"
    assert made - set(steps.STEPS) == set(), "steps with no words in tutor.text.steps"
    # and no entry is dead: every kind in the tables is made by some lesson kind
    assert set(kinds.BY_NAME) - made == set()
    assert set(steps.STEPS) == set(kinds.BY_NAME)


@pytest.mark.parametrize("name", list(steps.STEPS))
def test_every_kind_has_its_words(name: str) -> None:
    entry = steps.STEPS[name]
    assert steps.said(name, "title") and steps.said(name, "why") and steps.said(name, "tex")
    assert entry.colour in (*theme.PALETTE.values(), theme.PLAIN)
    assert set(entry.forms) <= set(steps.FORMS)
    if entry.slips is not None:
        assert entry.slips in judge.SLIP_RULES
    kind = kinds.BY_NAME[name]
    if kind.asked:
        assert steps.said(name, "quiz"), f"{name} is asked but has no quiz formula"
    if kind.repeats:
        assert kind.repeats in kinds.BY_NAME and kind.decoding


def test_every_family_of_slips_belongs_to_a_step() -> None:
    used = {s.slips for s in steps.STEPS.values() if s.slips}
    assert used == set(judge.SLIP_RULES)


def test_the_lists_keep_the_engines_order(derivations) -> None:
    order = [s.name for s in derive(_lesson("heads", 0).lesson).steps]
    for names in (kinds.QUIZ_STEPS, kinds.FILLED_STEPS, kinds.FOCUS_STEPS, kinds.TOKEN_ROWS):
        here = [n for n in names if n in order]
        assert here == sorted(here, key=order.index)
    assert kinds.PRIORITY[0] == "Z" and set(kinds.PRIORITY) == set(kinds.QUIZ_STEPS)


@pytest.mark.parametrize("kind", [*KINDS, "tempered"])
def test_the_walk_heads_every_step_with_its_words(kind: str, derivations) -> None:
    from rich.console import Console

    for d in derivations[kind]:
        turned = d.lesson.layout == "columns"
        console = Console(width=400, no_color=True, record=True)
        for step in d.steps:
            console.print(walk.step_section(d, step, walk.WalkOptions(width=400)))
        out = _flat(console.export_text())
        for step in d.steps:
            assert _flat(words.step_title(step, d.lesson, turned)) in out, step.name
            assert _flat(steps.say(step, "why", d.lesson, turned)) in out, step.name


def test_the_walk_works_the_tempered_step_as_a_product(derivations) -> None:
    """scaled × t is its own rule (Times), not a division: the walk, the working and the quiz's
    inputs multiply by t (they once said "divided by √1", read from the Scale rule)."""
    from rich.console import Console

    from tutor.text import working as wk

    d = derive(derivations["single"][0].lesson, Options(factor=(3, 2)))
    tempered = d.step("tempered")
    console = Console(width=400, no_color=True, record=True)
    console.print(walk.step_section(d, tempered, walk.WalkOptions(width=400)))
    out = _flat(console.export_text())
    assert "× 3/2 =" in out
    assert "t = 3/2, so every scaled score is multiplied by 3/2." in out
    assert "divided" not in out and "√d_k" not in out and "d_k =" not in out
    w = wk.working(tempered, 0, 0, d.lesson.precision)
    assert w.how == "scaled[{0}, {0}] × 3/2".format(tempered.rows[0])
    assert wk.plain(w.work[0]).endswith("·(3/2)")
    assert quiz.inputs(quiz.Question(tempered, 0, 0), 2)[-1] == "t = 3/2"


@pytest.mark.parametrize("kind", KINDS)
def test_quiz_judge_and_sheet_take_every_asked_step(kind: str, derivations) -> None:
    for d in derivations[kind]:
        turned = d.lesson.layout == "columns"
        sheet = answer_sheet(d)
        asked = set(quiz.quiz_steps(d))
        for step in d.steps:
            kind_of = kinds.BY_NAME[step.name]
            if kind_of.asked and not step.given and step.name in asked:
                assert quiz.formula(d, step, turned), step.name
                judge.alternatives(d, step, 0, 0)  # runs for every asked step
            if step in worksheet.fill_steps(d):
                assert f"# {words.step_title(step, d.lesson, turned)}:" in sheet, step.name


@pytest.mark.parametrize("kind", KINDS)
def test_every_step_is_on_the_keys(kind: str, derivations) -> None:
    for d in derivations[kind]:
        tex = worksheet.latex(d)
        md = worksheet.markdown(d)
        typ = typst_doc.source([typst_doc.Sheet(d)], answers=True)
        turned = d.lesson.layout == "columns"  # md, tex and the sheet show the tables turned
        for step in worksheet.fill_steps(d):
            assert steps.say(step, "tex", d.lesson, turned) in tex, step.name
            title = words.step_title(step, d.lesson, turned)
            assert re.sub(r"([*_\[\]`])", r"\\\1", title) in md or title in md, step.name
            title = words.step_title(step, d.lesson)  # typst's tables stay in rows
            assert title in typ or typst_doc.lit(title)[1:-1] in typ, step.name


@pytest.mark.parametrize("kind", [*KINDS, "tempered"])
def test_the_explorer_shows_every_step(kind: str, derivations) -> None:
    for d in derivations[kind]:
        shown = {n for page in views.pages(d) for row in page.rows for n in row}
        for step in d.steps:
            assert step.name in shown, f"{step.name} is on no page of the explorer"
            assert views.title(step, Settings(factor=(2, 1))), step.name


@pytest.mark.parametrize("kind", KINDS)
def test_cell_names_every_focus_step(kind: str, derivations) -> None:
    for d in derivations[kind]:
        for step in d.steps:
            if step.name in kinds.FOCUS_STEPS and step.head in (None, 1):
                i, j = len(step.rows) - 1, len(step.cols) - 1
                where = f"{step.key}[{step.rows[i]}, {step.cols[j]}]"
                assert focus.worked_cell(step, focus.from_cell(d, where)) == (i, j), where


def test_the_explorer_says_where_cross_attention_keys_come_from() -> None:
    """Its headings read the step table's forms too: K and V of a source sentence are X_src's."""
    from tutor.core.lessonfile import load_lesson

    root = Path(__file__).resolve().parent.parent
    d = derive(load_lesson(root / "lessons" / "chat-noir-cross.yaml"))
    assert views.title(d.step("K"), Settings()).endswith("X_src·W_K")
    assert views.title(d.step("V"), Settings()).endswith("X_src·W_V")
    assert views.title(d.step("Q"), Settings()).endswith("X·W_Q")
