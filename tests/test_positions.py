"""Issue 17: positions (E + P, sinusoidal, RoPE) and cross-attention, against numpy."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
import sympy

from tests import lessongen
from tests.conftest import LESSONS
from tests.test_engine import assert_matches_numpy
from tutor.core.engine import Exact, derive
from tutor.core.lessonfile import load_lesson


def position_cases(count: int, seed: int) -> list[str]:
    """Random lessons with positions or a source sentence (the kinds issue 17 adds)."""
    rng = random.Random(seed)
    cases = []
    for k in range(count):
        kind = ("given", "sinusoidal", "rope", "cross")[k % 4]
        n = rng.choice([1, 2, 3, 4, 5])
        d_model, d_v = rng.randint(1, 5), rng.randint(1, 3)
        d_k = rng.choice([2, 4]) if kind == "rope" else rng.randint(1, 4)
        heads = rng.choice([0, 0, 2])
        cases.append(
            lessongen.lesson_text(
                rng,
                n,
                d_model,
                d_k,
                d_v,
                rng.choice(["i", "id", "idf"]),
                heads=heads,
                causal=kind != "cross" and rng.random() < 0.3,
                w_o=heads > 0 and rng.random() < 0.5,
                positions=kind if kind != "cross" else "none",
                source=rng.randint(1, 4) if kind == "cross" else 0,
            )
        )
    return cases


@pytest.mark.parametrize("text", position_cases(40, seed=17))
def test_random_position_lessons_agree_with_numpy(tmp_path: Path, text: str) -> None:
    path = tmp_path / "random.yaml"
    path.write_text(text)
    assert_matches_numpy(path)


@pytest.mark.parametrize("text", position_cases(16, seed=170))
def test_each_new_steps_rule_gives_its_cells(tmp_path: Path, text: str) -> None:
    """``Step.combine`` of every cell (E + P, Q_rot, K_rot, cross-attention's scores) gives
    the value ``derive`` computed."""
    path = tmp_path / "random.yaml"
    path.write_text(text)
    d = derive(load_lesson(path))
    kit = Exact()
    for step in d.steps:
        for i in range(len(step.rows)):
            for j in range(len(step.cols)):
                cell = step.cells[i][j]
                made = step.combine(i, j, lambda r: r.step.cells[r.i][r.j].exact, kit)
                if cell.masked:
                    assert made == -sympy.oo
                    continue
                gap = abs(sympy.N(made - cell.exact, 40))
                assert gap < sympy.Rational(1, 10**30), (step.key, i, j, made, cell)


# ---------------------------------------------------------------------------------------------
# graded fairly: honest students of every habit, and each new slip named


def _graded(run, path: Path, d, written) -> dict:  # type: ignore[no-untyped-def, type-arg]
    from tests import students

    sheet = path.with_suffix(".sheet.yaml")
    sheet.write_text(students.sheet_text(d, written))
    result = run("grade", str(path), str(sheet), "--json")
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


@pytest.mark.parametrize("text", position_cases(8, seed=1717))
def test_every_honest_student_gets_full_marks(run, tmp_path: Path, text: str) -> None:  # type: ignore[no-untyped-def]
    from tests import students

    path = tmp_path / "lesson.yaml"
    path.write_text(text)
    d = derive(load_lesson(path))
    for habit in students.HABITS:
        rep = _graded(run, path, d, students.Student(d, habit).work())
        assert rep["score"] == rep["total"], (
            habit,
            [c for c in rep["cells"] if c["verdict"] != "correct"],
        )


# ---------------------------------------------------------------------------------------------
# every error of the new keys, with the bad lesson itself

W = "W_Q: [[1, 0], [0, 1]]\nW_K: [[1, 0], [0, 1]]\nW_V: [[1, 0], [0, 1]]\n"
HEAD = "title: t\ntokens: [a, b]\n"
X = "X: [[1, 0], [0, 1]]\n"
E = "E: [[1, 0], [0, 1]]\n"
P = "P: [[0, 1], [1, 0]]\n"
SRC = "source: [x, y, z]\nX_src: [[1, 0], [0, 1], [1, 1]]\n"
BAD = {
    "x-and-e": HEAD + X + E + P + W,
    "p-without-e": HEAD + X + P + W,
    "p-and-sinusoidal": HEAD + E + P + "positions: sinusoidal\n" + W,
    "p-rows": HEAD + E + "P: [[0, 1]]\n" + W,
    "p-cols": HEAD + E + "P: [[0, 1, 2], [1, 0, 2]]\n" + W,
    "e-alone": HEAD + E + W,
    "given-without-p": HEAD + E + "positions: given\n" + W,
    "sinusoidal-with-x": HEAD + X + "positions: sinusoidal\n" + W,
    "rope-with-e": HEAD + E + "positions: rope\n" + W,
    "positions-unknown": HEAD + X + "positions: learned\n" + W,
    "none-with-e": HEAD + E + "positions: none\n" + W,
    "theta-without-rope": HEAD + X + "theta: [90]\n" + W,
    "theta-not-list": HEAD + X + "positions: rope\ntheta: 90\n" + W,
    "theta-long": HEAD + X + "positions: rope\ntheta: [" + ", ".join(["1"] * 17) + "]\n" + W,
    "theta-entry": HEAD + X + "positions: rope\ntheta: [ninety]\n" + W,
    "theta-range": HEAD + X + "positions: rope\ntheta: [5000]\n" + W,
    "theta-count": HEAD + X + "positions: rope\ntheta: [90, 60]\n" + W,
    "rope-odd-dk": HEAD
    + X
    + "positions: rope\n"
    + "W_Q: [[1], [0]]\nW_K: [[1], [0]]\nW_V: [[1], [0]]\n",
    "x-src-alone": HEAD + X + "X_src: [[1, 0]]\n" + W,
    "source-alone": HEAD + X + "source: [x]\n" + W,
    "source-count": HEAD + X + "source: [x, y]\nX_src: [[1, 0], [0, 1], [1, 1]]\n" + W,
    "x-src-cols": HEAD + X + "source: [x]\nX_src: [[1, 0, 1]]\n" + W,
    "source-token": HEAD + X + "source: [x, 'y,z', w]\nX_src: [[1, 0], [0, 1], [1, 1]]\n" + W,
    "source-causal": HEAD + X + SRC + "mask: causal\n" + W,
    "source-positions": HEAD + X + SRC + "positions: rope\ntheta: [90]\n" + W,
    "token-count-e": "title: t\ntokens: [a]\n" + E + P + W,
}

EXPECT = {
    "x-and-e": ("4:1", "both X and E are given"),
    "p-without-e": (
        "4:1",
        "P (positions) is added to the token embeddings E, but this lesson gives X",
    ),
    "p-and-sinusoidal": ("4:1", "P is given and also positions: sinusoidal"),
    "p-rows": ("4:4", "P has 1 row, but E has 2"),
    "p-cols": ("4:4", "P has 3 columns, but E has 2"),
    "e-alone": ("3:1", "E (token embeddings) needs positions to add"),
    "given-without-p": ("4:12", "positions: given, but there is no P"),
    "sinusoidal-with-x": ("4:12", "positions: sinusoidal adds positions to the token embeddings E"),
    "rope-with-e": ("4:12", "positions: rope rotates Q and K instead of adding positions to X"),
    "positions-unknown": (
        "4:12",
        "positions is 'learned'; expected one of: none, given, sinusoidal, rope",
    ),
    "none-with-e": ("4:12", "positions: none, but the lesson gives E"),
    "theta-without-rope": ("4:1", "theta sets the angles of positions: rope"),
    "theta-not-list": ("5:8", "theta should be a list of angles in degrees"),
    "theta-long": ("5:8", "theta has 17 entries; at most 16"),
    "theta-entry": ("5:9", "theta entry 1: found 'ninety'"),
    "theta-range": ("5:9", "theta entry 1 is 5000; expected degrees from -3600 to 3600"),
    "theta-count": ("5:8", "theta lists 2 angles, but d_k = 2 makes 1 pair of columns"),
    "rope-odd-dk": ("4:12", "but W_Q has 1 column; expected an even d_k"),
    "x-src-alone": ("4:1", "X_src is given but 'source' is not"),
    "source-alone": ("4:1", "source lists a second sentence but X_src is missing"),
    "source-count": ("4:9", "source lists 2 labels, but X_src has 3 rows"),
    "x-src-cols": ("5:8", "X_src has 3 columns, but X has 2"),
    "source-token": ("4:13", "source token 2 ('y,z') contains ','"),
    "source-causal": ("6:7", "mask: causal hides the tokens after each token of one sentence"),
    "source-positions": (
        "6:12",
        "positions and a source sentence (cross-attention) are not combined",
    ),
    "token-count-e": ("2:9", "but E has 2 rows; expected one token per row of E"),
}


def test_every_bad_case_has_its_expectation() -> None:
    assert set(BAD) == set(EXPECT)


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_position_lesson_names_file_line_col(run, tmp_path: Path, name: str) -> None:  # type: ignore[no-untyped-def]
    from tutor.core.errors import LessonError

    path = tmp_path / f"{name}.yaml"
    path.write_text(BAD[name])
    where, fragment = EXPECT[name]
    with pytest.raises(LessonError) as err:
        load_lesson(path)
    first = str(err.value.problems[0])
    assert first.startswith(f"{path}:{where}: "), first
    assert fragment in first, first
    result = run("walk", str(path))  # the CLI: exit 1, the message, no traceback
    assert result.exit_code == 1
    assert f"{path}:{where}: " in result.stderr
    assert "Traceback" not in result.output + result.stderr


# ---------------------------------------------------------------------------------------------
# the bundled lessons through the public commands


NEW_LESSONS = ("dog-bites-dog", "go-go-go", "ha-ha-ha-rope", "chat-noir-cross")


@pytest.mark.parametrize("name", NEW_LESSONS)
def test_bundled_lessons_walk_check_and_export(run, name: str) -> None:  # type: ignore[no-untyped-def]
    walk = run("walk", name)
    assert walk.exit_code == 0, walk.stderr
    check = run("check", name)
    assert check.exit_code == 0 and "warning" not in check.stdout, check.stdout
    doc = json.loads(run("walk", name, "--json").stdout)
    names = [s["name"] for s in doc["steps"]]
    for kind in ("md", "tex", "sheet"):
        assert run("export", name, "-f", kind).exit_code == 0, kind
    if name == "chat-noir-cross":
        assert doc["source"] == ["the", "black", "cat"]
        assert "X_src" in names
        assert "from the source sentence: K = X_src · W_K" in walk.stdout
        scores = next(s for s in doc["steps"] if s["name"] == "scores")
        assert (len(scores["rows"]), len(scores["cols"])) == (2, 3)  # N_target × N_source
    elif name == "ha-ha-ha-rope":
        assert names.index("Q_rot") < names.index("scores")
        assert "Q_rot[ha#2, 1] = Q[ha#2, 1]·cos 60° − Q[ha#2, 2]·sin 60°" in walk.stdout
        assert "sin = √3/2" in walk.stdout
    else:
        assert names[:3] == ["E", "P", "X"] and doc["positions"] in ("given", "sinusoidal")
        assert "X = E + P" in walk.stdout


def test_the_json_of_older_lessons_has_no_new_keys(run) -> None:  # type: ignore[no-untyped-def]
    doc = json.loads(run("walk", "cats-chase-mice", "--json").stdout)
    assert list(doc) == ["lesson", "title", "tokens", "steps"]


def test_sinusoidal_positions_are_exact() -> None:
    from tests.conftest import LESSONS

    d = derive(load_lesson(LESSONS / "go-go-go.yaml"))
    P = d.step("P")
    assert [c.exact for c in P.cells[0]] == [0, 1, 0, 1]
    assert P.cells[1][0].exact == sympy.sin(1)
    assert P.cells[2][3].exact == sympy.cos(sympy.Rational(2, 100))
    assert d.step("X").cells[1][0].exact == sympy.sin(1) + 1


def test_rope_keeps_rational_scores_exact() -> None:
    from tests.conftest import LESSONS

    d = derive(load_lesson(LESSONS / "ha-ha-ha-rope.yaml"))
    assert d.step("Q_rot").cells[1][1].exact == sympy.sqrt(3) / 2
    scores = d.step("scores")
    assert all(c.is_rational for row in scores.cells for c in row)  # √3·√3 cancels
    # only the distance between two tokens matters: every diagonal holds one number
    n = len(scores.rows)
    for k in range(-n + 1, n):
        assert len({scores.cells[i][i - k].q for i in range(n) if 0 <= i - k < n}) == 1


def test_the_fingerprint_includes_the_new_numbers(tmp_path: Path) -> None:
    from tests.conftest import LESSONS

    base = (LESSONS / "ha-ha-ha-rope.yaml").read_text()
    prints = set()
    for text in (
        base,
        base.replace("theta: [60]", "theta: [90]"),
        base.replace("positions: rope", "positions: none").replace("theta: [60]", ""),
    ):
        path = tmp_path / "l.yaml"
        path.write_text(text)
        prints.add(load_lesson(path).fingerprint)
    cross = (LESSONS / "chat-noir-cross.yaml").read_text()
    for text in (cross, cross.replace("- [1, 0, 0]           # the", "- [1, 1, 0]")):
        path = tmp_path / "l.yaml"
        path.write_text(text)
        prints.add(load_lesson(path).fingerprint)
    assert len(prints) == 5


def test_a_sheet_for_another_kind_of_lesson_is_refused_not_crashed(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    sheet = tmp_path / "s.yaml"
    sheet.write_text("lesson: the-cake-two-heads\nheads:\n  - Q_rot: [[1, 2]]\n  - null\n")
    result = run("grade", "the-cake-two-heads", str(sheet))
    assert result.exit_code == 1
    assert "unknown key 'Q_rot'" in result.stderr and "Traceback" not in result.stderr


# ---------------------------------------------------------------------------------------------
# each new slip is named by the judge


SLIP_CASES = [
    ("dog-bites-dog", "X", 0, 2, "0.00", "forgot-position"),
    ("dog-bites-dog", "X", 2, 2, "0.00", "wrong-position"),
    ("ha-ha-ha-rope", "Q_rot", 1, 1, "0", "not-rotated"),
    ("ha-ha-ha-rope", "Q_rot", 1, 1, "-0.87", "rotated-backwards"),
    ("ha-ha-ha-rope", "Q_rot", 1, 0, "-0.5", "rotated-wrong-position"),
    ("chat-noir-cross", "K", 0, 0, "1", "target-keys"),
    ("chat-noir-cross", "V", 0, 0, "1", "target-values"),
    ("chat-noir-cross", "scores", 0, 0, "2", "target-keys"),
]


@pytest.mark.parametrize(("lesson", "step", "i", "j", "answer", "slip"), SLIP_CASES)
def test_each_new_slip_is_named(
    lesson: str, step: str, i: int, j: int, answer: str, slip: str
) -> None:
    from tests.conftest import LESSONS
    from tutor.assess import judge as jd
    from tutor.core.numbers import read_answer

    d = derive(load_lesson(LESSONS / f"{lesson}.yaml"))
    judge = jd.judge_for(d)
    s = d.step(step)
    a = read_answer(answer)
    assert not judge.judge(s, i, j, a).right
    assert slip in [x.name for x in judge.slips(s, i, j, a)]


@pytest.mark.parametrize("name", NEW_LESSONS)
def test_variants_keep_positions_and_the_source_sentence(run, tmp_path: Path, name: str) -> None:  # type: ignore[no-untyped-def]
    result = run("variants", name, "-o", str(tmp_path / "out"), "--count", "3", "--seed", "2")
    assert result.exit_code == 0, result.stderr
    original = load_lesson(LESSONS / f"{name}.yaml")
    numbers = set()
    for written in sorted((tmp_path / "out").iterdir()):
        v = load_lesson(written)
        # positions as the lesson gives them: P as written, sinusoidal stays, RoPE keeps θ
        assert (v.positions, v.P, v.theta) == (original.positions, original.P, original.theta)
        assert v.source == original.source
        assert (v.X_src is None) == (original.X_src is None)
        numbers.add((v.X, v.X_src, v.heads))
    assert len(numbers) == 3 and (original.X, original.X_src, original.heads) not in numbers


@pytest.mark.parametrize("text", position_cases(8, seed=4242))
def test_judging_every_cell_never_raises(tmp_path: Path, text: str) -> None:
    """Every cell of random position and cross-attention lessons (target longer or shorter
    than the source) through the judge, its slips and its slip-of-the-pen check."""
    from tutor.assess import judge as jd
    from tutor.core.numbers import read_answer

    path = tmp_path / "l.yaml"
    path.write_text(text)
    d = derive(load_lesson(path))
    judge = jd.judge_for(d)
    answers = [read_answer(a) for a in ("0", "1", "-0.5")]
    for s in d.steps:
        if s.given:
            continue
        for i in range(len(s.rows)):
            for j in range(len(s.cols)):
                for a in answers:
                    verdict = judge.judge(s, i, j, a)
                    assert verdict.kind in ("exact", "rounded", "hand", "fewer", "wrong")
                    judge.slips(s, i, j, a)
                    judge.pen_slip(s, i, j, a)


def test_a_decimal_theta_is_written_as_a_decimal_of_degrees(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Issue 28: θ = 57.5 printed as ``cos 115/2°`` read as cos(115)/2."""
    from tests.conftest import LESSONS

    path = tmp_path / "rope575.yaml"
    text = (LESSONS / "ha-ha-ha-rope.yaml").read_text()
    path.write_text(text.replace("theta: [60]", "theta: [57.5]"))
    out = run("walk", str(path)).stdout
    assert "cos 57.5°" in out and "1 × 57.5° = 57.5°" in out
    assert "115/2" not in out
