"""Stated limits, enforced with clear errors: size, tokens, dimensions, nesting, aliases."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import FIXTURES
from tests.test_hostile import tutor


def lesson(tokens: int = 2, d_model: int = 1, d_k: int = 1) -> str:
    row = "[" + ", ".join(["1"] * d_model) + "]"
    w = "[" + ", ".join(["[" + ", ".join(["1"] * d_k) + "]"] * d_model) + "]"
    toks = ", ".join(f"t{i}" for i in range(tokens))
    x = "[" + ", ".join([row] * tokens) + "]"
    return f"title: Limits\ntokens: [{toks}]\nX: {x}\nW_Q: {w}\nW_K: {w}\nW_V: {w}\n"


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        (lesson(tokens=129), "tokens has 129 entries; at most 128 are allowed"),
        (lesson(d_model=513), "row 1 of X has 513 entries; at most 512 are allowed"),
        (lesson(d_k=513), "row 1 of W_Q has 513 entries; at most 512 are allowed"),
        ("[" * 20000, "nested more than 16 levels deep"),
        ("x: " + "[" * 20000 + "]" * 20000, "nested more than 16 levels deep"),
        ("title: t\n" + "\n".join(f"k{i}: &a{i} [1]" for i in range(5)), "anchors"),
        ("\ufefftitle: BOM only", "missing key 'tokens'"),
    ],
)
def test_limits_give_a_clean_error_quickly(tmp_path: Path, text: str, fragment: str) -> None:
    """In a real process: its timeout is the guard that the refusal comes at once."""
    path = tmp_path / "limit.yaml"
    path.write_text(text, encoding="utf-8")
    result = tutor("walk", str(path), "--json", env={"COLUMNS": "1000"}, text=True)
    assert result.returncode == 1
    assert fragment in result.stderr
    assert str(path) in result.stderr
    assert "Traceback" not in result.stderr


def test_largest_legal_lesson_is_accepted(run, tmp_path: Path) -> None:
    path = tmp_path / "big.yaml"
    path.write_text(lesson(tokens=128, d_model=4, d_k=2))
    result = run("walk", str(path), "--json", "--step", "Z")
    assert result.exit_code == 0, result.stderr


def test_file_over_one_mebibyte_is_refused_before_parsing(run, tmp_path: Path) -> None:
    path = tmp_path / "huge.yaml"
    path.write_text("# " + "x" * (1024 * 1024) + "\n")
    result = run("walk", str(path))
    assert result.exit_code == 1
    assert "may be at most 1 MiB" in result.stderr


def test_alias_bomb_is_refused_at_once() -> None:
    """In a real process: its timeout is the guard (expanded, the bomb runs out of memory)."""
    result = tutor("walk", str(FIXTURES / "lessons" / "bad" / "alias-bomb.yaml"), text=True)
    assert result.returncode == 1 and "anchors" in result.stderr
