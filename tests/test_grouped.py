"""Grouped heads (kv_groups): agreement with numpy and torch, what the walk says, and the
round trip through every command."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest

from tests import lessongen, reference
from tests.conftest import LESSONS
from tutor.core.engine import Concat, Exact, Product, derive
from tutor.core.lessonfile import load_lesson

GROUPED = LESSONS / "the-cake-grouped.yaml"


def random_grouped(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        groups = rng.choice([1, 1, 2, 4])
        heads = groups * rng.choice([1, 2, 4]) if groups < 4 else 4
        heads = min(heads, 4)
        out.append(
            lessongen.grouped_lesson_text(
                rng,
                rng.randint(1, 5),
                rng.randint(1, 4),
                rng.randint(1, 3),
                rng.randint(1, 3),
                heads,
                groups,
                rng.choice(["i", "id", "idf"]),
                causal=rng.random() < 0.5,
                w_o=rng.random() < 0.5,
            )
        )
    return out


def load_text(tmp_path: Path, text: str):  # type: ignore[no-untyped-def]
    path = tmp_path / "grouped.yaml"
    path.write_text(text)
    return load_lesson(path)


def values(step) -> np.ndarray:  # type: ignore[no-untyped-def]
    return np.array([[c.value for c in row] for row in step.cells])


@pytest.mark.parametrize("text", random_grouped(30, 17), ids=lambda t: str(hash(t) % 1000))
def test_random_grouped_lessons_agree_with_numpy(tmp_path: Path, text: str) -> None:
    lesson = load_text(tmp_path, text)
    d = derive(lesson)
    ref = reference.grouped_attention(text)
    size = len(lesson.heads) // lesson.kv_groups
    for (name, n), expected in ref.items():
        if name in ("K", "V"):  # a group's K and V are made by its first head
            step = d.step(name, (n - 1) * size + 1)
        elif name in ("concat", "output"):
            step = d.step(name)
        else:
            step = d.step(name, n)
        np.testing.assert_allclose(values(step), expected, rtol=1e-9, atol=1e-12, err_msg=name)
    assert not any(s.name in ("K", "V") and (s.head - 1) % size for s in d.steps)


@pytest.mark.parametrize("text", random_grouped(6, 5), ids=lambda t: str(hash(t) % 1000))
def test_every_cell_is_its_sources_combined(tmp_path: Path, text: str) -> None:
    d = derive(load_text(tmp_path, text))
    kit = Exact()
    for step in d.steps:
        if not isinstance(step, Product | Concat):
            continue
        n, m = step.shape
        for i in range(n):
            for j in range(m):
                got = step.combine(i, j, lambda r: r.step.cells[r.i][r.j].exact, kit)
                assert float(got) == pytest.approx(step.cells[i][j].value, rel=1e-12, abs=1e-12)


def test_the_bundled_lesson_agrees_with_torch_enable_gqa() -> None:
    torch = pytest.importorskip("torch")
    from torch.nn.functional import scaled_dot_product_attention

    text = GROUPED.read_text()
    lesson = load_lesson(GROUPED)
    d = derive(lesson)
    ref = reference.grouped_attention(text)
    H, G = len(lesson.heads), lesson.kv_groups
    q = torch.tensor(np.stack([ref[("Q", h)] for h in range(1, H + 1)]))[None]  # (1, H, N, d_k)
    k = torch.tensor(np.stack([ref[("K", g)] for g in range(1, G + 1)]))[None]  # (1, G, N, d_k)
    v = torch.tensor(np.stack([ref[("V", g)] for g in range(1, G + 1)]))[None]  # (1, G, N, d_v)
    z = scaled_dot_product_attention(q, k, v, enable_gqa=True)[0].numpy()
    for h in range(1, H + 1):
        np.testing.assert_allclose(values(d.step("Z", h)), z[h - 1], rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("seed", range(4))
def test_random_grouped_causal_lessons_agree_with_torch(tmp_path: Path, seed: int) -> None:
    torch = pytest.importorskip("torch")
    from torch.nn.functional import scaled_dot_product_attention

    rng = random.Random(seed)
    text = lessongen.grouped_lesson_text(rng, 4, 3, 2, 2, 4, [1, 2][seed % 2], causal=True)
    lesson = load_text(tmp_path, text)
    d = derive(lesson)
    ref = reference.grouped_attention(text)
    H, G = 4, lesson.kv_groups
    q = torch.tensor(np.stack([ref[("Q", h)] for h in range(1, H + 1)]))[None]
    k = torch.tensor(np.stack([ref[("K", g)] for g in range(1, G + 1)]))[None]
    v = torch.tensor(np.stack([ref[("V", g)] for g in range(1, G + 1)]))[None]
    z = scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)[0].numpy()
    for h in range(1, H + 1):
        np.testing.assert_allclose(values(d.step("Z", h)), z[h - 1], rtol=1e-9, atol=1e-12)


def test_the_walk_says_which_k_and_v_each_head_reads_and_counts_parameters(run) -> None:
    out = run("walk", str(GROUPED), env={"COLUMNS": "250"}).stdout
    assert "reads the group's K and V from head 1 (head1.K, head1.V)" in out
    assert "reads the group's K and V from head 3 (head3.K, head3.V)" in out
    lesson = load_lesson(GROUPED)
    h, g, d, dk, dv = 4, 2, lesson.d_model, lesson.d_k, lesson.d_v
    # issue 28: K/V weights of this lesson and of MHA side by side, W_Q counted apart
    grouped, full = g * d * (dk + dv), h * d * (dk + dv)
    lines = [" ".join(line.strip("│ ").split()) for line in out.splitlines()]
    assert f"▸ GQA G={g} {g} {grouped} {g * (dk + dv)}" in lines
    assert f"MHA {h} {full} {h * (dk + dv)}" in lines
    assert f"W_Q is the same in every row: {h} × ({d}×{dk}) = {h * d * dk} weights" in out
    assert "head2.K" not in out.replace("(head1.K", "")  # head 2 shows no K of its own


def test_multi_query_attention_is_one_group(tmp_path: Path, run) -> None:
    text = lessongen.grouped_lesson_text(random.Random(3), 3, 2, 2, 2, 2, 1)
    path = tmp_path / "mqa.yaml"
    path.write_text(text)
    out = run("walk", str(path), env={"COLUMNS": "250"}).stdout
    assert "multi-query: every head read them" in out


def test_explain_a_head_without_its_own_k_names_the_head_that_has_it(run) -> None:
    result = run("explain", str(GROUPED), "head2.K[I, 1]")
    assert result.exit_code == 2
    assert "head 2 has no K of its own" in result.stderr and "head1.K[…]" in result.stderr
    ok = run("explain", str(GROUPED), "head2.scores[I, ate]")
    assert ok.exit_code == 0 and "head1.K[ate, 1]" in ok.stdout


def test_the_json_lists_each_groups_k_once(run) -> None:
    data = json.loads(run("walk", str(GROUPED), "--json").stdout)
    keys = [(s["name"], s["head"]) for s in data["steps"]]
    assert ("K", 1) in keys and ("K", 3) in keys
    assert ("K", 2) not in keys and ("K", 4) not in keys
    assert ("Q", 2) in keys and ("Z", 4) in keys


def test_the_fingerprint_includes_the_groups(tmp_path: Path) -> None:
    w = "[[1, 0], [0, 1]]"
    common = f"title: t\ntokens: [a, b]\nX: {w}\n"
    plain = common + f"heads:\n  - W_Q: {w}\n    W_K: {w}\n    W_V: {w}\n"
    grouped = (
        common + f"kv_groups: 1\nheads:\n  - W_Q: {w}\nkv_heads:\n  - W_K: {w}\n    W_V: {w}\n"
    )
    (tmp_path / "p.yaml").write_text(plain)
    (tmp_path / "g.yaml").write_text(grouped)
    a, b = load_lesson(tmp_path / "p.yaml"), load_lesson(tmp_path / "g.yaml")
    assert a.heads == b.heads and b.kv_groups == 1
    assert a.fingerprint != b.fingerprint


@pytest.mark.parametrize("places", ["2", "4"])
def test_a_sheet_of_the_true_values_gets_full_marks(run, tmp_path: Path, places: str) -> None:
    from tests.test_grade import blank_sheet, fill, grade_json, true_values

    sheet = blank_sheet(run, str(GROUPED))
    assert sheet.count("    K:") == 2  # one K per group, under the head that makes it
    data = grade_json(run, tmp_path, str(GROUPED), fill(sheet, true_values(str(GROUPED), places)))
    assert data["score"] == data["total"] > 0


def test_the_quiz_asks_about_grouped_heads(run) -> None:
    result = run("quiz", str(GROUPED), "--seed", "1", "--count", "3", input="0\n0\n0\n")
    assert result.exit_code in (0, 1), result.stderr
    assert "Traceback" not in result.stdout + result.stderr


@pytest.mark.parametrize(("name", "mine", "other"), [("scores", "K", "K"), ("Z", "V", "V")])
def test_reading_another_groups_keys_or_values_is_a_named_slip(name, mine, other) -> None:  # type: ignore[no-untyped-def]
    from tutor.assess.judge import judge_for
    from tutor.core.numbers import read_answer

    d = derive(load_lesson(GROUPED))
    ref = reference.grouped_attention(GROUPED.read_text())
    head = 2  # group 1; the slip reads group 2's K or V
    left = ref[("Q", head)] if name == "scores" else ref[("weights", head)]
    wrong = left @ (ref[(other, 2)].T if name == "scores" else ref[(other, 2)])
    right = left @ (ref[(mine, 1)].T if name == "scores" else ref[(mine, 1)])
    i, j = np.argwhere(np.abs(np.round(wrong, 2) - np.round(right, 2)) > 0.015)[0]
    step = d.step(name, head)
    found = judge_for(d, 2).slips(step, i, j, read_answer(f"{wrong[i, j]:.2f}"))
    assert f"other-group-{mine}" in [s.name for s in found]
    assert any("group 2 (head3." in s.message for s in found)


def test_a_grouped_cross_attention_head_reads_its_groups_keys_from_the_target(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Head 2 of a group has no W_K of its own: the target-keys slip of its scores is made with
    its group's (it raised KeyError: W_K (head 2))."""
    from tutor.assess.judge import judge_for
    from tutor.core.numbers import read_answer

    path = tmp_path / "g.yaml"
    path.write_text(
        lessongen.features_text(random.Random(1), {"grouped", "heads"}, 3, 2, 2, 2, 2, 1, source=2)
    )
    d = derive(load_lesson(path))
    scores = d.step("scores", 2)
    K = scores.args[1]
    assert K.head == 1 and not d.has("W_K", 2)
    X, W_K, q = d.step("X"), d.step("W_K", 1), d.step("Q", 2).cells[0]
    # token 0's query · the key of row 0 of X (the target sentence), with the group's W_K
    pairs = list(zip(X.cells[0], W_K.cells, strict=True))
    key = [sum(x.exact * w[c].exact for x, w in pairs) for c in range(2)]
    wrong = sum(a.exact * b for a, b in zip(q, key, strict=True))
    assert abs(wrong - scores.cells[0][0].exact) > 1
    found = judge_for(d).slips(scores, 0, 0, read_answer(f"{float(wrong):.2f}"))
    assert [s.name for s in found] == ["target-keys"]


@pytest.mark.parametrize("text", random_grouped(10, 8), ids=lambda t: str(hash(t) % 1000))
def test_random_grouped_lessons_validate_against_the_schema(text: str) -> None:
    import jsonschema
    import yaml

    from tutor.author.schema import SCHEMA

    assert list(jsonschema.Draft202012Validator(SCHEMA).iter_errors(yaml.safe_load(text))) == []


def test_check_warns_when_every_head_has_its_own_group(run, tmp_path: Path) -> None:
    text = lessongen.grouped_lesson_text(random.Random(1), 3, 2, 2, 2, 2, 2)
    path = tmp_path / "g.yaml"
    path.write_text(text)
    assert "kv_groups is 2, one group per head: nothing is shared" in run("check", str(path)).stdout
    assert "nothing is shared" not in run("check", str(GROUPED)).stdout


def test_the_json_says_which_group_each_head_reads(run) -> None:
    data = json.loads(run("walk", str(GROUPED), "--json").stdout)
    assert data["kv_groups"] == 2
    assert data["group_of_head"] == {"1": 1, "2": 1, "3": 2, "4": 2}
    plain = json.loads(run("walk", "the-cake-two-heads", "--json").stdout)
    assert "kv_groups" not in plain and "group_of_head" not in plain
