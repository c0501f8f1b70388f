"""One decoding step with the KV cache (next: / walk --next-token --x): the new row equals the
last row of the whole attention worked again, agrees with numpy, counts what it saves, and goes
through walk, explain, JSON, quiz, sheet and grade; every bad --x is refused with its reason."""

from __future__ import annotations

import dataclasses
import json
import random
from pathlib import Path

import numpy as np
import pytest

from tests import lessongen, reference
from tests.conftest import LESSONS
from tutor.core.decode import saving
from tutor.core.engine import Product, derive
from tutor.core.lesson import NextToken
from tutor.core.lessonfile import load_lesson

NEXT = LESSONS / "the-cake-next-token.yaml"


def random_next_lessons(
    count: int, seed: int, causal: bool = True, steps: tuple[int, int] | None = None
) -> list[str]:
    """Random lessons with one next token (or, with ``steps``, a list of that many)."""
    rng = random.Random(seed)
    out = []
    for k in range(count):
        n, d_model, d_k, d_v = (
            rng.randint(1, 5),
            rng.randint(1, 4),
            rng.randint(1, 3),
            rng.randint(1, 3),
        )
        kinds = rng.choice(["i", "id", "idf"])
        if k % 3 == 2:
            text = lessongen.grouped_lesson_text(
                rng, n, d_model, d_k, d_v, 4, rng.choice([1, 2]), kinds, causal=causal, w_o=True
            )
        else:
            text = lessongen.lesson_text(
                rng, n, d_model, d_k, d_v, kinds, heads=rng.choice([0, 2]), causal=causal,
                w_o=rng.random() < 0.5,
            )  # fmt: skip
        if steps is None:
            out.append(text + lessongen.next_entry(rng, d_model, kinds))
        else:  # next: as a list (tests/test_kv_steps.py)
            out.append(text + lessongen.next_list(rng, d_model, rng.randint(*steps), kinds))
    return out


def load_text(tmp_path: Path, text: str):  # type: ignore[no-untyped-def]
    path = tmp_path / "next.yaml"
    path.write_text(text)
    return load_lesson(path)


def extended(lesson):  # type: ignore[no-untyped-def]
    """The lesson with the next token as one more row of X, and no next: step."""
    assert lesson.next is not None
    return dataclasses.replace(
        lesson, tokens=(*lesson.tokens, lesson.next.token), X=(*lesson.X, lesson.next.x), next=None
    )


PAIRS = [("q_new", "Q"), ("k_new", "K"), ("v_new", "V"), ("scores_new", "scores")]
PAIRS += [("weights_new", "weights"), ("z_new", "Z"), ("concat_new", "concat")]
PAIRS += [("output_new", "output")]


@pytest.mark.parametrize("text", random_next_lessons(18, 4), ids=lambda t: str(hash(t) % 1000))
def test_the_new_row_is_exactly_the_last_row_of_the_whole_causal_attention(
    tmp_path: Path, text: str
) -> None:
    lesson = load_text(tmp_path, text)
    d, full = derive(lesson), derive(extended(lesson))
    compared = 0
    for new, old in PAIRS:
        for s in (s for s in d.steps if s.name == new):
            (row,) = s.cells
            last = full.step(old, s.head).cells[-1]
            for a, b in zip(row, last, strict=True):
                assert a.q == b.q  # rational: the same fraction
                assert a.exact == b.exact  # irrational: the same exact form
                compared += 1
    assert compared > 0


@pytest.mark.parametrize(
    "text", random_next_lessons(12, 9, causal=False), ids=lambda t: str(hash(t) % 1000)
)
def test_the_new_row_agrees_with_numpy(tmp_path: Path, text: str) -> None:
    lesson = load_text(tmp_path, text)
    d = derive(lesson)
    ref = reference.attention(extended(lesson))  # numpy, all N+1 tokens worked again
    for new, old in PAIRS:
        for s in (s for s in d.steps if s.name == new):
            key = (old, s.head)
            if key not in ref:
                continue
            got = np.array([[c.value for c in s.cells[0]]])
            np.testing.assert_allclose(got, ref[key][-1:], rtol=1e-9, atol=1e-12, err_msg=new)


def products(d, names: tuple[str, ...], causal: bool) -> int:  # type: ignore[no-untyped-def]
    """Multiplications in the matmul steps ``names``, counted cell by cell (a masked score or
    its weight of 0 costs nothing)."""
    total = 0
    for s in d.steps:
        if s.name not in names or not isinstance(s, Product):
            continue
        for i in range(len(s.rows)):
            for j in range(len(s.cols)):
                if causal and s.name == "scores" and j > i:
                    continue
                terms = s.terms(i, j)
                if causal and s.name == "Z":
                    terms = terms[: i + 1]
                total += len(terms)
    return total


@pytest.mark.parametrize("text", random_next_lessons(9, 2), ids=lambda t: str(hash(t) % 1000))
def test_the_multiplications_saved_are_counted_cell_by_cell(tmp_path: Path, text: str) -> None:
    lesson = load_text(tmp_path, text)
    d, full = derive(lesson), derive(extended(lesson))
    new = ("q_new", "k_new", "v_new", "scores_new", "z_new", "output_new")
    old = ("Q", "K", "V", "scores", "Z", "output")
    s = saving(lesson)
    assert s.cached == products(d, new, causal=False)
    assert s.full == products(full, old, causal=True)


def test_the_walk_shows_the_reused_rows_and_the_saving(run) -> None:
    out = run("walk", str(NEXT), env={"COLUMNS": "250"}).stdout
    lesson = load_lesson(NEXT)
    s = saving(lesson)
    assert "reused from the cache: rows I, ate, the (3 × 2 numbers of K, no multiplications)" in out
    assert f"{s.cached} with the cache, against {s.full} to work all 4 tokens again" in out
    assert f"{s.saved} saved" in out


def test_walk_next_token_on_the_command_line_equals_the_lessons_next(run) -> None:
    lesson = load_lesson(NEXT)
    assert lesson.next == NextToken("cake", ((2, 1), (0, 1), (1, 1)))
    by_file = json.loads(run("walk", str(NEXT), "--json").stdout)
    plain = str(LESSONS / "the-cake-causal.yaml")
    args = ("walk", str(NEXT), "--json", "--next-token", "cake", "--x", "[2, 0, 1]")
    assert json.loads(run(*args).stdout) == by_file
    other = json.loads(run(*args[:-1], "[2, 0, 1/2]").stdout)
    assert other != by_file
    assert json.loads(run(*args[:-1], "[4/sqrt(4), 0, 1]").stdout) == by_file  # the quiz's reader
    r = run(*args[:-1], "[sqrt(2), 0, 1]")
    assert r.exit_code == 2 and "--x entry 1: found 'sqrt(2)', which is not a fraction" in r.stderr
    assert "z_new" not in run("walk", plain, "--json").stdout


@pytest.mark.parametrize(
    ("x", "says"),
    [
        ("[1, 0]", "--x has 2 entries, but X has 3 columns"),
        ("[1, 0, __import__('os')]", "--x entry 3: found \"__import__('os')\""),
        ("[1, 0, 9**9**9]", "--x entry 3: could not read '9**9**9' as a number: that power is too"),
        ("[1, 0, 1", "a bracket is not closed"),
        ("[]", "--x is empty"),
        ("[1,,0]", "--x entry 2: found ''"),
        ("[1, 0, 1/0]", "--x entry 3: found '1/0', a division by zero"),
        ("[" + "1, " * 20 + "1]", "--x has 21 entries; at most 16"),
    ],
)
def test_a_bad_x_is_a_usage_error_with_the_reason(run, x: str, says: str) -> None:  # type: ignore[no-untyped-def]
    result = run("walk", str(NEXT), "--next-token", "pie", "--x", x)
    assert result.exit_code == 2
    assert says in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("--next-token", "p,e", "--x", "[1, 0, 1]"), "--next-token ('p,e') contains ','"),
        (("--next-token", " ", "--x", "[1, 0, 1]"), "--next-token is empty"),
        (("--x", "[1, 0, 1]"), "--x needs --next-token too"),
        (("--next-token", "pie"), "--next-token needs --x too"),
    ],
)
def test_a_bad_next_token_is_a_usage_error(run, args, says: str) -> None:  # type: ignore[no-untyped-def]
    result = run("walk", str(NEXT), *args)
    assert result.exit_code == 2 and says in result.stderr


def test_explain_reads_the_cache_through_to_the_lessons_k(run) -> None:
    out = run("explain", str(NEXT), "scores_new[cake, ate]").stdout
    assert "K_cache[ate, 1] = K[ate, 1], from the cache" in out
    own = run("explain", str(NEXT), "scores_new[cake, cake]").stdout
    assert "K_cache[cake, 1] = k_new[cake, 1], the new row" in own


@pytest.mark.parametrize("places", ["2", "4"])
def test_a_sheet_of_the_true_values_gets_full_marks(run, tmp_path: Path, places: str) -> None:
    from tests.test_grade import blank_sheet, fill, grade_json, true_values

    sheet = blank_sheet(run, str(NEXT))
    assert "z_new:" in sheet and "K_cache:" not in sheet  # the cache is read, not filled
    data = grade_json(run, tmp_path, str(NEXT), fill(sheet, true_values(str(NEXT), places)))
    assert data["score"] == data["total"] > 0
    assert any(c["step"] == "weights_new" for c in data["cells"])


@pytest.mark.parametrize(
    ("name", "cell", "slip"),
    [("scores_new", (0, 1), "old-query"), ("weights_new", (0, 2), "left-out-itself")],
)
def test_the_decoding_slips_are_named(name: str, cell: tuple[int, int], slip: str) -> None:
    from tutor.assess.judge import judge_for
    from tutor.core.numbers import read_answer

    lesson = load_lesson(NEXT)
    d = derive(lesson)
    ref = reference.attention(extended(lesson))
    i, j = cell
    if slip == "old-query":  # the last cached token's query against the new cache
        wrong = ref[("Q", None)][-2] @ ref[("K", None)][j]
    else:  # softmax over the cached tokens only
        row = ref[("scaled", None)][-1][:-1]
        wrong = np.exp(row[j]) / np.exp(row).sum()
    found = judge_for(d, 2).slips(d.step(name), i, j, read_answer(f"{wrong:.2f}"))
    assert slip in [s.name for s in found]


def test_the_quiz_can_ask_about_the_new_row(run) -> None:
    result = run(
        "quiz",
        str(NEXT),
        "--steps",
        "weights_new",
        "--count",
        "1",
        "--seed",
        "0",
        input="0\n0\n0\n",
    )
    assert "weights_new[cake," in result.stdout


def test_check_warns_about_a_next_token_without_a_causal_mask(run, tmp_path: Path) -> None:
    text = (LESSONS / "cats-chase-mice.yaml").read_text() + "next: {token: dogs, x: [1, 0, 0, 1]}\n"
    path = tmp_path / "n.yaml"
    path.write_text(text)
    out = run("check", str(path)).stdout
    line = len(text.splitlines())
    assert f"n.yaml:{line}:7: warning: next: without mask: causal" in out
    assert "next: without" not in run("check", str(NEXT)).stdout


@pytest.mark.parametrize("lesson", [NEXT, LESSONS / "the-cake-grouped.yaml"])
def test_variants_keep_the_decoding_step_and_the_groups(run, tmp_path: Path, lesson: Path) -> None:  # type: ignore[no-untyped-def]
    result = run("variants", str(lesson), "-o", str(tmp_path / "v"), "--count", "3", "--seed", "1")
    assert result.exit_code == 0, result.stderr
    original = load_lesson(lesson)
    for written in sorted((tmp_path / "v").iterdir()):
        v = load_lesson(written)
        assert (v.kv_groups, len(v.heads), v.mask) == (
            original.kv_groups, len(original.heads), original.mask
        )  # fmt: skip
        assert (v.next is None) == (original.next is None)
        if v.next is not None:  # the same token comes next, with its own x
            assert v.next.token == original.next.token and len(v.next.x) == v.d_model
        for h in range(1, len(v.heads) + 1):  # the heads of a group read one W_K and W_V
            first = v.heads[v.group_heads(v.group_of(h))[0] - 1]
            assert (v.heads[h - 1].W_K, v.heads[h - 1].W_V) == (first.W_K, first.W_V)


def test_variants_keep_the_column_layout(run, tmp_path: Path) -> None:
    out = tmp_path / "v"
    result = run("variants", "tokens-as-columns", "-o", str(out), "--count", "1", "--seed", "1")
    assert result.exit_code == 0, result.stderr
    (written,) = out.iterdir()
    assert load_lesson(written).layout == "columns"


def test_the_json_carries_the_saving(run) -> None:
    data = json.loads(run("walk", str(NEXT), "--json").stdout)
    s = saving(load_lesson(NEXT))
    assert data["next"] == {
        "token": "cake",
        "reused_rows": 3,
        "multiplications": {"cached": s.cached, "full": s.full, "saved": s.saved},
    }
    assert [st["name"] for st in data["steps"]][-1] == "z_new"
