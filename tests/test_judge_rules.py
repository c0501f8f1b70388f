"""The judge asks the rule: its slip catalogue works the slips a rule declares, or the ones a rule
registers when they need the lesson, and −∞ is right exactly where the mask's own rule hides a
score."""

from __future__ import annotations

import dataclasses

import pytest

from tutor.assess import judge as jd
from tutor.core import decode, positions  # noqa: F401 (their rules: Append, Rotate)
from tutor.core.engine import RuleSlip, Step, derive
from tutor.core.lessonfile import load_lesson
from tutor.core.numbers import read_answer


def _rules(cls: type) -> list[type]:
    return [c for sub in cls.__subclasses__() for c in (sub, *_rules(sub))]


@pytest.mark.parametrize("rule", _rules(Step), ids=lambda c: c.__name__)
def test_every_rule_has_its_slips_registered_or_declared(rule: type) -> None:
    """A rule's classic slips are its registration in the catalogue (slips that need the
    lesson) or the data it declares (``Step.slips``, worked by the generic catalogue)."""
    registered = jd.rule_slips.dispatch(rule) is not jd.rule_slips.dispatch(object)
    assert registered or isinstance(rule.slips, tuple)


def test_a_rule_the_catalogue_never_heard_of_gets_the_slips_it_declares() -> None:
    """No registration: the generic catalogue works the declared slips (none declared: none),
    each named by its id and worded by the words table (its id when it has no words)."""

    @dataclasses.dataclass(frozen=True, eq=False)
    class Quiet(Step):
        pass

    @dataclasses.dataclass(frozen=True, eq=False)
    class Centred(Step):
        slips = (RuleSlip("not-centred", skipped=True),)

    cells = ((None,),)
    quiet = Quiet("quiet", None, ("a",), ("1",), cells)  # type: ignore[arg-type]
    assert jd.rule_slips(quiet, None, 0, 0) == []  # type: ignore[arg-type]
    step = Centred("centred", None, ("a",), ("1",), cells, (quiet,))  # type: ignore[arg-type]
    ((slip, alternative),) = jd.rule_slips(step, None, 0, 0)  # type: ignore[arg-type]
    assert slip.name == slip.message == "not-centred" and callable(alternative)


def test_minus_infinity_is_right_where_the_decoding_mask_hides_and_only_there(tmp_path) -> None:
    path = tmp_path / "two.yaml"
    path.write_text(
        "title: t\ntokens: [a, b]\nX: [[1, 0], [0, 1]]\nW_Q: [[1, 0], [0, 1]]\n"
        "W_K: [[1, 0], [0, 1]]\nW_V: [[1, 0], [0, 1]]\nmask: causal\n"
        "next:\n  - {token: c, x: [1, 1]}\n  - {token: d, x: [2, 1]}\n"
    )
    d = derive(load_lesson(path))
    judge = jd.judge_for(d)
    inf = read_answer("-inf")
    scaled, new = d.step("scaled"), d.step("scaled_new")
    assert judge.judge(scaled, 0, 1, inf).right and not judge.judge(scaled, 1, 1, inf).right
    # new token 0 (after a cache of 2) sees columns 0..2; token 1 sees all four
    assert [judge.judge(new, 0, j, inf).right for j in range(4)] == [False, False, False, True]
    assert not any(judge.judge(new, 1, j, inf).right for j in range(4))
