"""Several decoding steps (``next:`` as a list, issue 28 item 3): the new tokens are stacked as
rows of the decoding steps, each seeing the cache and the new tokens up to itself. The rows are
exactly the last rows of the whole causal attention worked again, agree with numpy worked one
token at a time, count what each step saves, and go through walk, JSON, quiz, exports, grade
and the explorer; a bad list is refused at its file, line and column."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

from tests import students
from tests.conftest import FIXTURES
from tests.test_kv_cache import PAIRS, load_text, products, random_next_lessons
from tutor.core.decode import saving, savings
from tutor.core.engine import derive
from tutor.core.lessonfile import load_lesson

STEPS = FIXTURES / "exercises" / "7-kv-cache-three-steps.yaml"


def random_step_lessons(count: int, seed: int, causal: bool = True) -> list[str]:
    """Random lessons (one head, heads with W_O, grouped heads) with 2 to 4 new tokens."""
    return random_next_lessons(count, seed, causal, steps=(2, 4))


def extended(lesson):  # type: ignore[no-untyped-def]
    """The lesson with every new token as one more row of X, and no decoding steps."""
    new = lesson.decoding
    return dataclasses.replace(
        lesson,
        tokens=(*lesson.tokens, *(t.token for t in new)),
        X=(*lesson.X, *(t.x for t in new)),
        next=None,
        next_after=(),
    )


@pytest.mark.parametrize("text", random_step_lessons(12, 5), ids=lambda t: str(hash(t) % 1000))
def test_the_new_rows_are_exactly_the_last_rows_of_the_whole_causal_attention(
    tmp_path: Path, text: str
) -> None:
    lesson = load_text(tmp_path, text)
    t = len(lesson.decoding)
    d, full = derive(lesson), derive(extended(lesson))
    compared = 0
    for new, old in PAIRS:
        for s in (s for s in d.steps if s.name == new):
            assert len(s.rows) == t
            last = full.step(old, s.head).cells[-t:]
            for row, whole in zip(s.cells, last, strict=True):
                for a, b in zip(row, whole, strict=True):
                    assert a.q == b.q and a.exact == b.exact
                    compared += 1
    assert compared > 0
    assert len(d.step("K_cache", 1 if lesson.multi_head else None).rows) == lesson.n + t


def numpy_decode(lesson) -> dict[tuple[str, int | None], np.ndarray]:  # type: ignore[no-untyped-def]
    """What a decoder does, in numpy float64: one new token at a time, its q against the keys
    so far (the lesson's K, V and the new rows before it, then its own), appending its k, v."""

    def f(m) -> np.ndarray:  # type: ignore[no-untyped-def]
        return np.array([[p / q for p, q in row] for row in m], dtype=float)

    X = f(lesson.X)
    heads = len(lesson.heads)
    zs: dict[tuple[str, int | None], np.ndarray] = {}
    for number, head in enumerate(lesson.heads, 1):
        h = number if lesson.multi_head else None
        W_Q, W_K, W_V = f(head.W_Q), f(head.W_K), f(head.W_V)
        K, V = X @ W_K, X @ W_V
        rows = []
        for new in lesson.decoding:
            x = f((new.x,))[0]
            K, V = np.vstack([K, x @ W_K]), np.vstack([V, x @ W_V])
            s = (x @ W_Q) @ K.T / np.sqrt(W_K.shape[1])
            w = np.exp(s - s.max())
            rows.append((w / w.sum()) @ V)
        zs[("z_new", h)] = np.array(rows)
    if lesson.multi_head:
        joined = np.hstack([zs[("z_new", h)] for h in range(1, heads + 1)])
        zs[("concat_new", None)] = joined
        if lesson.W_O is not None:
            zs[("output_new", None)] = joined @ f(lesson.W_O)
    return zs


@pytest.mark.parametrize(
    "text", random_step_lessons(12, 8, causal=False), ids=lambda t: str(hash(t) % 1000)
)
def test_the_new_rows_agree_with_numpy_worked_one_token_at_a_time(
    tmp_path: Path, text: str
) -> None:
    lesson = load_text(tmp_path, text)
    d = derive(lesson)
    for (name, head), expected in numpy_decode(lesson).items():
        got = np.array([[c.value for c in row] for row in d.step(name, head).cells])
        np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-12, err_msg=name)


@pytest.mark.parametrize("text", random_step_lessons(9, 3), ids=lambda t: str(hash(t) % 1000))
def test_each_steps_multiplications_are_counted_cell_by_cell(tmp_path: Path, text: str) -> None:
    lesson = load_text(tmp_path, text)
    new = ("q_new", "k_new", "v_new", "scores_new", "z_new", "output_new")
    old = ("Q", "K", "V", "scores", "Z", "output")
    each = savings(lesson)
    for k, s in enumerate(each, 1):  # step k alone: the lesson with the first k - 1 tokens in X
        done = lesson.decoding[: k - 1]
        at = dataclasses.replace(
            lesson,
            tokens=(*lesson.tokens, *(t.token for t in done)),
            X=(*lesson.X, *(t.x for t in done)),
            next=lesson.decoding[k - 1],
            next_after=(),
        )
        assert s == saving(at)
        assert s.cached == products(derive(at), new, causal=False)
        assert s.full == products(derive(extended(at)), old, causal=True)
        assert s.reused_rows == lesson.n + k - 1


def test_the_first_step_counts_as_the_single_form() -> None:
    lesson = load_lesson(STEPS)
    first = dataclasses.replace(lesson, next_after=())
    assert savings(lesson)[0] == saving(first)


def test_the_walk_counts_each_step_and_the_totals(run) -> None:  # type: ignore[no-untyped-def]
    out = " ".join(run("walk", str(STEPS), env={"COLUMNS": "80"}).stdout.split())
    each = savings(load_lesson(STEPS))
    for k, (token, s) in enumerate(zip(("the", "quiet", "town"), each, strict=True), 1):
        assert (
            f"step {k}, {token}: {s.reused_rows} rows of K and V reused; {s.cached} "
            f"multiplications with the cache, against {s.full} to work all {s.reused_rows + 1} "
            "tokens again"
        ) in out
    cached, full = sum(s.cached for s in each), sum(s.full for s in each)
    assert f"{cached} multiplications with the cache, against {full}" in out
    assert f"{full - cached} saved" in out
    assert "reused from the cache: rows rain, falls, on" in out
    assert "new: the, quiet, town (k_new)" in out
    assert "x_new, the next tokens" in out and "weights_new = softmax of each new row" in out


def test_the_masked_cells_are_given_not_asked() -> None:
    d = derive(load_lesson(STEPS))
    masked = d.step("masked_new")
    n, t = d.lesson.n, len(d.lesson.decoding)
    hidden = {(i, j) for i in range(t) for j in range(n + t) if j > n + i}
    assert {(i, j) for i in range(t) for j in range(n + t) if masked.cells[i][j].masked} == hidden
    weights = d.step("weights_new")
    assert all(weights.cells[i][j].q == 0 for i, j in hidden)
    asked = set(d.asked(d.step("scaled_new")))
    assert asked == {(i, j) for i in range(t) for j in range(n + t)} - hidden


def test_the_quiz_asks_a_later_rows_weight(run) -> None:  # type: ignore[no-untyped-def]
    result = run(
        "quiz", str(STEPS), "--steps", "weights_new", "--count", "3", "--seed", "2",
        input="0\n0\n0\n0\n0\n0\n",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "weights_new[" in result.stdout and "Traceback" not in result.output


@pytest.mark.parametrize("fmt", ["md", "tex", "sheet"])
def test_exports_have_a_row_per_new_token(run, fmt: str) -> None:  # type: ignore[no-untyped-def]
    result = run("export", str(STEPS), "--format", fmt, "-o", "-")
    assert result.exit_code == 0, result.output
    for token in ("the", "quiet", "town"):
        assert token in result.stdout
    assert "z_new" in result.stdout or r"z_{\mathrm{new}}" in result.stdout


def test_the_pdf_key_compiles(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    pypdf = pytest.importorskip("pypdf")
    pytest.importorskip("typst")
    out = tmp_path / "key.pdf"
    result = run("export", str(STEPS), "--format", "pdf", "-o", str(out))
    assert result.exit_code == 0, result.output
    text = " ".join(page.extract_text() for page in pypdf.PdfReader(out).pages)
    assert "town" in text and "cache" in text


def test_an_honest_sheet_of_a_several_heads_lesson_gets_full_marks(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "steps.yaml"
    path.write_text(next(t for t in random_step_lessons(6, 11) if "heads:" in t))
    rep = students.honest_report(run, path, tmp_path)
    assert rep["score"] == rep["total"] > 0


BASE = (FIXTURES / "exercises" / "5-kv-cache.yaml").read_text().split("next:")[0]


@pytest.mark.parametrize(
    ("tail", "where", "says"),
    [
        ("next: []\n", (22, 7), "next is an empty list"),
        ("next:\n  - {token: dawn, x: [2, 1]}\n  - 3\n", (24, 5), "entry 2 of next should be a"),
        ("next:\n  - {token: dawn, x: [2, 1]}\n  - {token: dew}\n", (24, 5), "'x' in entry 2"),
        ("next:\n  - {token: dawn, x: [2, 1]}\n  - {token: dew, x: [1]}\n", (24, 21), "1 entry"),
        ("next:\n  - {token: dawn, x: [2, 1]}\n  - {token: '', x: [1, 1]}\n", (24, 13), "empty"),
        ("next: [" + "{token: a, x: [1, 1]}, " * 29 + "{token: b, x: [1, 1]}]\n", (22, 7), "32"),
    ],
)
def test_a_bad_list_is_refused_where_it_is(
    run, tmp_path: Path, tail: str, where: tuple[int, int], says: str
) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "bad.yaml"
    path.write_text(BASE + tail)
    result = run("check", str(path))
    assert result.exit_code == 1
    line, col = where
    assert f"bad.yaml:{line}:{col}:" in result.output and says in result.output, result.output
    assert "Traceback" not in result.output


def test_rope_with_a_list_is_refused_at_next(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "rope.yaml"
    path.write_text(BASE + "next:\n  - {token: a, x: [1, 0]}\n  - {token: b, x: [0, 1]}\n")
    assert run("check", str(path)).exit_code == 0
    path.write_text(
        BASE + "positions: rope\nnext:\n  - {token: a, x: [1, 0]}\n  - {token: b, x: [0, 1]}\n"
    )
    result = run("walk", str(path))
    assert result.exit_code == 1
    assert "rope.yaml:24:3:" in result.output, result.output  # next's value, the later key
    assert "positions: rope are not combined" in result.output


def test_next_token_on_the_command_line_replaces_the_whole_list(run) -> None:  # type: ignore[no-untyped-def]
    doc = json.loads(
        run("walk", str(STEPS), "--json", "--next-token", "dusk", "--x", "[1, 1]").stdout
    )
    assert doc["next"]["token"] == "dusk" and "steps" not in doc["next"]


def test_variants_refuse_a_list_where_it_is(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    result = run("variants", str(STEPS), "--count", "2", "-o", str(tmp_path / "v"))
    assert result.exit_code == 1
    assert "7-kv-cache-three-steps.yaml:24:3: variants cannot yet" in result.output


def test_the_explorer_edits_and_saves_a_later_tokens_row(tmp_path: Path) -> None:
    from tutor.explore import model, save

    lesson = load_lesson(STEPS)
    assert model.given_matrix(lesson, "x_new", None) == tuple(t.x for t in lesson.decoding)
    edited = model.with_entry(lesson, "x_new", None, 2, 0, (3, 1))
    assert edited.decoding[2].x == ((3, 1), (2, 1)) and edited.decoding[:2] == lesson.decoding[:2]
    assert save.changes(lesson, edited) == ["x_new[town, 1]: 1 → 3"]
    text = save.patched_text(lesson, edited, STEPS.read_text())
    assert text is not None and "{token: town, x: [3, 2]}" in text
