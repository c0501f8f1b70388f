"""Issue 28, item 4: a lesson with heads compares K/V weights and the KV cache of MHA, GQA and
MQA at its width (× layers: when given), with W_Q counted apart, in the header and the JSON."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest

from tests import lessongen
from tests.conftest import LESSONS
from tutor.core.engine import derive
from tutor.core.errors import LessonError
from tutor.core.lessonfile import load_lesson

GROUPED = LESSONS / "the-cake-grouped.yaml"


def size(matrix) -> int:  # type: ignore[no-untyped-def]
    rows, cols, _ = np.shape(matrix)  # entries are (numerator, denominator) pairs
    return rows * cols


def own_counts(path: Path) -> tuple[int, int, int]:
    """The lesson's own K/V weights, cache numbers per token and W_Q weights, counted from the
    matrices it holds and the K and V steps it derives (one per key/value head)."""
    lesson = load_lesson(path)
    d = derive(lesson)
    owners = sorted(
        {lesson.group_heads(lesson.group_of(h))[0] for h in range(1, len(lesson.heads) + 1)}
    )
    weights = sum(size(lesson.heads[h - 1].W_K) + size(lesson.heads[h - 1].W_V) for h in owners)
    cache = sum(len(d.step("K", h).cols) + len(d.step("V", h).cols) for h in owners)
    w_q = sum(size(h.W_Q) for h in lesson.heads)
    return int(weights), cache, int(w_q)


@pytest.mark.parametrize(("heads", "groups"), [(4, 2), (4, 1), (4, 4), (2, 1), (3, 1)])
def test_the_json_compares_mha_gqa_and_mqa(run, tmp_path: Path, heads: int, groups: int) -> None:  # type: ignore[no-untyped-def]
    rng = random.Random(heads * 10 + groups)
    text = lessongen.grouped_lesson_text(rng, 3, 3, 2, 2, heads, groups)
    path = tmp_path / "g.yaml"
    path.write_text(text.replace("kv_groups:", "layers: 12\nkv_groups:"))
    weights, cache, w_q = own_counts(path)
    doc = json.loads(run("walk", str(path), "--json").stdout)["kv"]
    assert doc["layers"] == 12 and doc["query_heads"] == heads and doc["W_Q_weights"] == w_q
    rows = {r["kv_heads"]: r for r in doc["compared"]}
    mine = rows[groups]
    assert mine["this_lesson"] and sum(r["this_lesson"] for r in rows.values()) == 1
    assert (mine["kv_weights"], mine["kv_cache_per_token"]) == (weights, cache)
    per_head = (weights // groups, cache // groups)  # every K/V head is as large
    expected = [g for g in range(heads, 0, -1) if heads % g == 0 and (g in (1, heads) or g > 1)]
    assert [r["kv_heads"] for r in doc["compared"]] == expected
    names = [r["attention"] for r in doc["compared"]]
    assert names[0] == "MHA" and names[-1] == "MQA" and set(names[1:-1]) <= {"GQA"}
    for g, r in rows.items():
        assert (r["kv_weights"], r["kv_cache_per_token"]) == (g * per_head[0], g * per_head[1])
        assert r["kv_weights_all_layers"] == 12 * r["kv_weights"]
        assert r["kv_cache_per_token_all_layers"] == 12 * r["kv_cache_per_token"]


def test_the_header_shows_the_table_at_80_columns(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "g32.yaml"
    path.write_text(GROUPED.read_text().replace("kv_groups: 2", "kv_groups: 2\nlayers: 32"))
    out = run("walk", str(path), "--step", "Q", env={"COLUMNS": "80"}).stdout
    lines = [line.strip("│ ").rstrip() for line in out.splitlines()]
    assert "K/V heads   W_K+W_V   cache/token   W_K+W_V ×32   cache ×32" in lines
    assert "MHA               4        48            16          1536         512" in lines
    assert "▸ GQA G=2           2        24             8           768         256" in lines
    assert "MQA               1        12             4           384         128" in lines
    assert any("W_Q is the same in every row: 4 × (3×2) = 24 weights" in x for x in lines)
    assert max(len(x) for x in out.splitlines()) <= 80, [x for x in out.splitlines() if len(x) > 80]


def test_one_head_has_no_table_and_mha_marks_itself(run) -> None:  # type: ignore[no-untyped-def]
    assert "K/V heads" not in run("walk", "cats-chase-mice", "--step", "Q").stdout
    assert "kv" not in json.loads(run("walk", "cats-chase-mice", "--json").stdout)
    out = run("walk", "the-cake-two-heads", "--step", "Q").stdout
    assert "▸ MHA" in out and "  MQA" in out and "GQA" not in out.split("Head 1")[0]


@pytest.mark.parametrize(
    ("text", "where", "fragment"),
    [
        ("layers: 0\n", "1:9", "layers is 0; expected a whole number from 1 to 1000"),
        ("layers: lots\n", "1:9", "layers is lots; expected a whole number"),
        ("layers: 4\n", "1:1", "but this lesson has one head; give two or more heads"),
    ],
)
def test_a_bad_layers_names_file_line_col(tmp_path: Path, text, where, fragment) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "bad.yaml"
    body = (
        (LESSONS / "cats-chase-mice.yaml").read_text()
        if "heads" in fragment
        else GROUPED.read_text()
    )
    path.write_text(text + body)
    with pytest.raises(LessonError) as err:
        load_lesson(path)
    first = str(err.value.problems[0])
    assert first.startswith(f"{path}:{where}: ") and fragment in first, first
