"""Issue 28, item 6: check's warning about two words with the same row says only what is true,
and each claim is held against the derivation itself."""

from __future__ import annotations

from pathlib import Path

import pytest

from tutor.core.engine import derive
from tutor.core.lessonfile import load_lesson

W = "W_Q: [[1, 0], [0, 1]]\nW_K: [[1, 1], [0, 1]]\nW_V: [[1, 0], [1, 1]]\n"
CASES = {
    # name: (extra keys, the rows key, what the warning says, steps equal, steps that differ)
    "plain": ("", "X", "the same weights and Z", ("Q", "K", "V", "weights", "Z"), ()),
    "causal": (
        "mask: causal\n",
        "X",
        "under mask: causal dog sees 1 token more than cat, so their weights differ (and Z can)",
        ("Q", "K", "V"),
        ("weights",),
    ),
    "rope": (
        "positions: rope\ntheta: [90]\n",
        "X",
        "the same query, key and value before positions; RoPE turns them by different "
        "positions, so their scores, weights and Z can differ",
        ("Q", "K", "V"),
        ("Q_rot", "K_rot", "weights"),
    ),
    "sinusoidal": (
        "positions: sinusoidal\n",
        "E",
        "the same embedding; their positions are added to it, so their rows of X, queries, "
        "keys and values differ by position alone",
        (),
        ("X", "Q", "K", "V"),
    ),
    "cross": (
        "source: [le, chat]\nX_src: [[1, 2], [0, 1]]\n",
        "X",
        "the same query, and so the same scores, weights and Z",
        ("Q", "weights", "Z"),
        (),
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_duplicate_rows_warning_is_true(run, tmp_path: Path, name: str) -> None:  # type: ignore[no-untyped-def]
    extra, key, said, equal, differ = CASES[name]
    path = tmp_path / f"{name}.yaml"
    path.write_text(f"title: t\ntokens: [cat, dog]\n{key}: [[1, 2], [1, 2]]\n{extra}{W}")
    result = run("check", str(path))
    out = " ".join(result.stdout.split())
    assert result.exit_code == 0 and f"{path}:3:" in out
    assert f"the row of {key} of dog is the same as cat's" in out and said in out, out
    if name != "plain":
        assert "the same weights and Z" not in out
    d = derive(load_lesson(path))

    def row(step: str, i: int) -> list:  # type: ignore[type-arg]
        return [c.exact for c in d.step(step, None).cells[i]]

    for step in equal:
        assert row(step, 0) == row(step, 1), step
    for step in differ:
        assert row(step, 0) != row(step, 1), step
