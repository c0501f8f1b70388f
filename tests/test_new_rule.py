"""Issue 37: a toy step with a NEW rule follows with its class, its kinds entry and its words
entry alone. The rule ``centred = scaled − the row's mean`` is defined in this file only; the
fixture puts it between the scaled scores and the softmax (weights = softmax(centred)) and
registers its kinds and words entries. Every consumer then takes it by asking the rule: walk
(with its own words), ``walk --json``, the quiz (with its slip), the answer sheet, the md, tex
and typst keys, ``code``, grading with follow-through, the explorer's working, variants."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pytest

from tests.test_grade import blank_sheet, cell_key, fill
from tutor.core import engine, kinds
from tutor.core.catalog import find_lesson
from tutor.core.engine import Kit, Ref, RuleSlip, Step, T, by_rule
from tutor.core.lessonfile import load_lesson
from tutor.text import format as fmt
from tutor.text import steps
from tutor.text.theme import PALETTE

LESSON = "cats-chase-mice"


@dataclass(frozen=True, eq=False)
class Centred(Step):
    """Each score minus the mean of its row (``axis`` "column": of its column, a slip)."""

    axis: str = "row"
    slips: ClassVar[tuple[RuleSlip, ...]] = (
        RuleSlip("column-mean", changed=(("axis", "column"),)),
        RuleSlip("not-centred", skipped=True),
    )

    def sources(self, i: int, j: int) -> tuple[Ref, ...]:
        (src,) = self.args
        n, m = src.shape
        line = [(i, k) for k in range(m)] if self.axis == "row" else [(k, j) for k in range(n)]
        return (Ref(src, i, j), *(Ref(src, a, b) for a, b in line))

    def combine(self, i: int, j: int, value: Callable[[Ref], T], kit: Kit[T]) -> T:
        own, *line = (value(r) for r in self.sources(i, j))
        return own - kit.total(line) / kit.whole(len(line))  # type: ignore[operator, no-any-return]

    def numpy(self, args: Sequence[str]) -> str:
        return f"{args[0]} - {args[0]}.mean(axis=1, keepdims=True)"

    def how(self, i: int, j: int, names: Sequence[str]) -> str:
        return f"{names[0]} − the mean of its {self.axis}"

    def written(self, i: int, j: int, operands: Sequence[str]) -> str:
        return f"{operands[0]} − ({' + '.join(operands[1:])}) / {len(operands) - 1}"


TITLE = "centred = scaled − the row's mean"
WHY = "Each scaled score minus the mean of its row: the softmax is the same, the numbers smaller."
WORDS = steps.StepWords(
    PALETTE["scores"],
    steps.Words(
        title=TITLE,
        why=WHY,
        quiz="centred = scaled − the mean of the scaled row",
        tex=r"centred $=$ scaled $-$ the row's mean",
        short="scaled − its row's mean",
    ),
    slips_said={
        "column-mean": "that takes the mean of the column; centre on the mean of the row",
        "not-centred": "that is the scaled score itself; subtract the row's mean",
    },
)


@pytest.fixture
def centred(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The toy rule in the pipeline (after scaled, before softmax), its kinds and words."""
    attend = engine.attend

    def with_centred(
        Q, K, V, divisor, head, mask=None, factor=(1, 1), suffix="", made=None, **more
    ):  # type: ignore[no-untyped-def]
        made_here = attend(Q, K, V, divisor, head, mask, factor, suffix, made, **more)
        if suffix or mask is not None:  # the toy: a lesson's own row, no mask
            return made_here
        scores, scaled, *_ = made_here
        rule = Centred("centred", head, scaled.rows, scaled.cols, (), (scaled,))
        c = by_rule(rule)
        weights = engine.softmax("weights", c, head=head)
        return [scores, scaled, c, weights, engine.matmul("Z", weights, V, head=head)]

    monkeypatch.setattr(engine, "attend", with_centred)
    monkeypatch.setitem(steps.STEPS, "centred", WORDS)
    kind = kinds.Kind("centred", per_head=True, asked=True, priority=3, sheet="head")
    kinds.add(
        kinds.Kind(**{**kind.__dict__, "points": True, "focus": True, "token_rows": True}),
        after="scaled",
    )
    try:
        yield
    finally:
        kinds.remove("centred")


def derivation() -> engine.Derivation:
    path = find_lesson(LESSON)
    return engine.derive(load_lesson(path, path.stem))


def test_the_rule_works_its_cells_and_the_weights_read_them(centred) -> None:  # type: ignore[no-untyped-def]
    d = derivation()
    c = d.step("centred")
    scaled = np.array([[x.value for x in row] for row in d.step("scaled").cells])
    got = np.array([[x.value for x in row] for row in c.cells])
    assert np.allclose(got, scaled - scaled.mean(axis=1, keepdims=True))
    assert d.step("weights").args == (c,)
    assert str(c.cells[0][0].exact) == "-sqrt(2)/3"  # exact: √2 − (√2 + 2√2 + √2)/3


def test_walk_says_its_own_words(centred, run) -> None:  # type: ignore[no-untyped-def]
    result = run("walk", LESSON)
    assert result.exit_code == 0, result.stderr
    out = " ".join(result.stdout.split())
    assert TITLE in out and WHY in out
    # its working, from its rule: how (in names) and the numbers read off the tables
    assert "centred[cats, cats] = scaled[cats, cats] − the mean of its row" in out
    assert "= 1.41 − (1.41 + 2.83 + 1.41) / 3 ≈ −0.47" in out
    assert "√d_k" not in out.split(TITLE)[1].split("weights")[0]  # no words borrowed from Scale


def test_walk_json_has_the_step(centred, run) -> None:  # type: ignore[no-untyped-def]
    result = run("walk", LESSON, "--json")
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    names = [s["name"] for s in data["steps"]]
    assert names.index("scaled") + 1 == names.index("centred") == names.index("weights") - 1


def test_code_prints_its_numpy_line_and_equals_walk_json(centred, run) -> None:  # type: ignore[no-untyped-def]
    code = run("code", LESSON)
    assert code.exit_code == 0, code.stderr
    assert "centred = scaled - scaled.mean(axis=1, keepdims=True)" in code.stdout
    assert "weights = softmax(centred)" in code.stdout
    space: dict[str, object] = {}
    exec(code.stdout, space)
    data = json.loads(run("walk", LESSON, "--json").stdout)
    for step in data["steps"]:
        if step["name"] in ("centred", "weights", "Z"):
            want = np.array(step["value"])
            assert np.allclose(space[step["name"]], want), step["name"]


def test_quiz_asks_it_and_names_its_slip(centred) -> None:  # type: ignore[no-untyped-def]
    from tutor.assess import judge, quiz
    from tutor.core.numbers import read_answer

    d = derivation()
    c = d.step("centred")
    q = quiz.choose(d, steps=["centred"], count=1)[0]
    assert q.step is c
    (line,) = quiz.inputs(q, 2)  # each cell it reads once, its own first
    own = f"scaled[{c.rows[q.i]}, {c.cols[q.j]}] = "
    assert line.startswith(own) and line.count(own) == 1 and line.count("scaled[") == 3
    skipped = fmt.decimal_text(fmt.round_half_up(d.step("scaled").cells[q.i][q.j], 2))
    jd = judge.judge_for(d)
    answer = read_answer(skipped)
    assert not jd.judge(c, q.i, q.j, answer).right
    assert [s.message for s in jd.slips(c, q.i, q.j, answer)] == [
        "that is the scaled score itself; subtract the row's mean"
    ]


def test_the_sheet_and_keys_have_it(centred, run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    sheet = run("export", LESSON, "--format", "sheet")
    assert sheet.exit_code == 0, sheet.stderr
    assert re.search(r"^centred:", sheet.stdout, re.M)
    for form in ("md", "tex", "typ"):
        out = tmp_path / f"key.{form}"
        result = run("export", LESSON, "--format", form, "-o", str(out))
        assert result.exit_code == 0, (form, result.stderr)
        text = out.read_text()
        assert "the row's mean" in text and "1.41 + 2.83 + 1.41) / 3" in text, form


def test_grade_follows_through_a_forgotten_centring(centred, run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A student who writes the scaled scores as centred loses centred's cells only: the
    softmax of their own (uncentred) row is the true weights, and Z follows."""
    d = derivation()

    def rows(step: Step) -> list[list[str]]:
        return [[fmt.decimal_text(fmt.round_half_up(x, 3)) for x in r] for r in step.cells]

    values = {s.key: rows(s) for s in kinds.fill_steps(d)}
    values["centred"] = rows(d.step("scaled"))
    sheet = tmp_path / "sheet.yaml"
    sheet.write_text(fill(blank_sheet(run, LESSON), values))
    result = run("grade", LESSON, str(sheet), "--json")
    assert result.exit_code == 0, result.stderr
    cells = json.loads(result.stdout)["cells"]
    wrong = {cell_key(c) for c in cells if c["verdict"] == "wrong"}
    c = d.step("centred")
    assert wrong == {f"centred[{r}, {k}]" for r in c.rows for k in c.cols}
    later = [x["verdict"] for x in cells if x["step"] in ("weights", "Z")]
    assert later and set(later) <= {"correct", "follow-through"}


def test_explorer_and_variants_take_it(centred) -> None:  # type: ignore[no-untyped-def]
    from tutor.author.variants import products, work
    from tutor.explore.model import Settings
    from tutor.explore.views import working_text

    d = derivation()
    c = d.step("centred")
    text = working_text(c, 0, 1, 2, Settings())
    assert text.startswith("centred[cats, chase] = scaled[cats, chase] − the mean of its row")
    assert "2.83 − (1.41 + 2.83 + 1.41) / 3" in text
    assert products(c, d) == 0 and work(d) > 0
