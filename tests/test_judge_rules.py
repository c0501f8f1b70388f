"""The judge asks the rule: its slip catalogue has one registration per rule class (a rule with
no slips says so), and −∞ is right exactly where the mask's own rule hides a score."""

from __future__ import annotations

import dataclasses

import pytest

from tutor.assess import judge as jd
from tutor.core import decode, positions  # noqa: F401 (their rules: Append, Rotate)
from tutor.core.engine import Step, derive
from tutor.core.lessonfile import load_lesson
from tutor.core.numbers import read_answer


def _rules(cls: type) -> list[type]:
    return [c for sub in cls.__subclasses__() for c in (sub, *_rules(sub))]


@pytest.mark.parametrize("rule", _rules(Step), ids=lambda c: c.__name__)
def test_every_rule_has_its_slips_registered(rule: type) -> None:
    assert jd.rule_slips.dispatch(rule) is not jd.rule_slips.dispatch(object)


def test_a_rule_without_slips_fails_loudly() -> None:
    @dataclasses.dataclass(frozen=True, eq=False)
    class Centred(Step):
        pass

    step = Centred("centred", None, ("a",), ("1",), ((None,),))  # type: ignore[arg-type]
    with pytest.raises(NotImplementedError, match="no rule for Centred"):
        jd.rule_slips(step, None, 0, 0)  # type: ignore[arg-type]


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
