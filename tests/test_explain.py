"""Cell names and attn-tutor explain: the tree's numbers are the walk's numbers."""

from __future__ import annotations

import json
import random
import re

import pytest

from tests.conftest import LESSONS
from tutor.core.engine import derive
from tutor.core.errors import UsageError
from tutor.core.lessonfile import load_lesson
from tutor.text import format as fmt
from tutor.text.cells import cell_name, parse_cell


def lesson(name: str):  # type: ignore[no-untyped-def]
    return derive(load_lesson(LESSONS / f"{name}.yaml", name=name))


@pytest.fixture(scope="module")
def cats():  # type: ignore[no-untyped-def]
    return lesson("cats-chase-mice")


@pytest.fixture(scope="module")
def heads():  # type: ignore[no-untyped-def]
    return lesson("the-cake-two-heads")


@pytest.mark.parametrize(
    ("text", "key", "i", "j"),
    [
        ("Z[cats, 1]", "Z", 0, 0),
        ("  Z [ mice ,2 ] ", "Z", 2, 1),
        ("scores[cats, chase]", "scores", 0, 1),
        ("scores[cats, 2]", "scores", 0, 1),
        ("W_Q[3, 1]", "W_Q", 2, 0),
        ("X[chase, 4]", "X", 1, 3),
        ("weights[mice, mice]", "weights", 2, 2),
    ],
)
def test_parse_cell(cats, text: str, key: str, i: int, j: int) -> None:  # type: ignore[no-untyped-def]
    step, r, c = parse_cell(cats, text)
    assert (step.key, r, c) == (key, i, j)


def test_parse_cell_with_heads(heads) -> None:  # type: ignore[no-untyped-def]
    step, i, j = parse_cell(heads, "head2.Z[it, 1]")
    assert (step.name, step.head, i, j) == ("Z", 2, 5, 0)
    step, i, j = parse_cell(heads, "concat[it, h2.1]")
    assert (step.key, j) == ("concat", 2)
    assert parse_cell(heads, "concat[it, 3]")[2] == 2
    assert parse_cell(heads, "W_O[h1.2, 4]")[1:] == (1, 3)


def test_every_cell_name_reads_back(heads) -> None:  # type: ignore[no-untyped-def]
    for step in heads.steps:
        for i in range(len(step.rows)):
            for j in range(len(step.cols)):
                assert parse_cell(heads, cell_name(step, i, j)) == (step, i, j)


def test_repeated_tokens_need_their_number(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "rep.yaml"
    path.write_text(
        "title: r\ntokens: [the, dog, the]\nX: [[1], [2], [3]]\n"
        "W_Q: [[1]]\nW_K: [[1]]\nW_V: [[1]]\n"
    )
    d = derive(load_lesson(path))
    assert parse_cell(d, "Z[the#2, 1]")[1] == 2
    with pytest.raises(UsageError, match="'the' appears 2 times in Z; say which: the#1, the#2"):
        parse_cell(d, "Z[the, 1]")


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("Zz[cats, 1]", "no step 'Zz' (did you mean Z?); steps: X, W_Q"),
        ("Z[dog, 1]", "Z has no row 'dog'; rows: cats, chase, mice"),
        ("Z[cats, 3]", "Z has no column '3'; columns: 1, 2"),
        ("Z[cats, 0]", "no column '0'"),
        ("Z(cats, 1)", "write STEP[ROW, COL]"),
        ("__import__('os').system('true')", "write STEP[ROW, COL]"),
        ("head1.Z[cats, 1]", "single head"),
        ("masked[cats, cats]", "no step 'masked'"),
        ("Z[cats, 1]" * 30, "at most 200 characters"),
    ],
)
def test_bad_cell_names_say_what_is_valid(cats, text: str, fragment: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(UsageError) as err:
        parse_cell(cats, text)
    assert fragment in str(err.value)


def test_heads_need_a_head_prefix(heads) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(UsageError, match=r"name one: head1\.Z, head2\.Z"):
        parse_cell(heads, "Z[it, 1]")
    with pytest.raises(UsageError, match="head3 does not exist"):
        parse_cell(heads, "head3.Z[it, 1]")
    with pytest.raises(UsageError, match="shared by all heads"):
        parse_cell(heads, "head1.concat[it, 1]")


def test_explain_z_cats_1_shows_the_whole_chain(run) -> None:  # type: ignore[no-untyped-def]
    result = run("explain", "cats-chase-mice", "Z[cats, 1]")
    assert result.exit_code == 0, result.stderr
    out = result.stdout
    assert any(
        line.startswith("Z[cats, 1] = row cats of weights · column 1 of V")
        for line in out.splitlines()
    )
    assert "= 3/(2 + e^√2) ≈ 0.49" in out
    assert "weights[cats, chase] = softmax of the cats row of scaled" in out
    assert "scaled[cats, chase] = scores[cats, chase] / √d_k = 4 / √2 = 2√2 ≈ 2.83" in out
    assert "scores[cats, chase] = query of cats · key of chase = 2·2 + 0·1 = 4" in out
    assert "Q[cats, 1] = row cats of X · column 1 of W_Q = 1·1 + 0·0 + 1·1 + 0·0 = 2" in out
    assert "V[mice, 1] = row mice of X · column 1 of W_V" in out
    assert "(worked above)" in out


def test_explain_masked_and_heads(run) -> None:  # type: ignore[no-untyped-def]
    out = run("explain", "the-cake-causal", "weights[I, ate]").stdout
    assert "masked[I, ate] = −∞" in out and "ate is hidden = 0.00" in out
    out = run("explain", "the-cake-two-heads", "output[it, 4]").stdout
    assert "concat[it, h2.1] = head2.Z[it, 1]" in out
    assert "head1.weights[it, cake]" in out


def test_explain_bad_cell_exits_2(run) -> None:  # type: ignore[no-untyped-def]
    result = run("explain", "cats-chase-mice", "Z[dog, 1]")
    assert result.exit_code == 2
    assert "rows: cats, chase, mice" in result.stderr
    assert "Traceback" not in result.stderr


def test_explain_stays_bounded_on_a_big_lesson(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from tests import lessongen

    path = tmp_path / "big.yaml"
    path.write_text(lessongen.lesson_text(random.Random(7), 32, 6, 5, 5, "i"))
    row = load_lesson(path).labels[2]
    result = run("explain", str(path), f"Z[{row}, 1]", "--limit", "5")
    assert result.exit_code == 0, result.stderr
    assert "… and 27 more cells of weights" in result.stdout
    assert len(result.stdout.splitlines()) < 1000


@pytest.mark.parametrize("name", ["cats-chase-mice", "the-cake-causal", "the-cake-two-heads"])
def test_explain_matches_the_walks_numbers(run, name: str) -> None:  # type: ignore[no-untyped-def]
    """For sampled cells of every step: the tree's value is the walk's JSON value, rounded."""
    data = json.loads(run("walk", name, "--json").stdout)
    rng = random.Random(name)
    d = lesson(name)
    for s in data["steps"]:
        key = f"head{s['head']}.{s['name']}" if s["head"] else s["name"]
        i, j = rng.randrange(len(s["rows"])), rng.randrange(len(s["cols"]))
        cell = f"{key}[{s['rows'][i]}, {s['cols'][j]}]"
        out = run("explain", name, cell, env={"COLUMNS": "400"}).stdout
        root = out.splitlines()[1]
        assert root.startswith(cell + " ")
        value = s["value"][i][j]
        step, r, c = parse_cell(d, cell)
        shown = fmt.shown(step.cells[r][c], step, 2)
        assert re.search(rf"[=≈] {re.escape(shown)}$", root), (root, shown)
        if value is not None:
            assert float(shown.replace("−", "-")) == pytest.approx(value, abs=0.005 + 1e-12)
        else:
            assert shown == "−∞"
