"""Fuzzing: mutated lessons never crash, hang or run code; valid mutants agree with numpy.

Every mutant goes through the CLI (`walk --json`): it either succeeds and matches the numpy
reference, or exits 1 with the file named in a one-line-per-problem message and no traceback.
Set FUZZ_EXAMPLES to try more (the default keeps the suite fast).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests import reference
from tests.conftest import LESSONS, PLAIN_ENV
from tutor.core.lessonfile import load_lesson

SEEDS = [p.read_text() for p in sorted(LESSONS.glob("*.yaml"))]
PAYLOADS = [
    "[",
    "]",
    "{",
    "}",
    ":",
    "- ",
    ", ",
    "&a ",
    "*a",
    "!!python/object/apply:os.system ['true']",
    "!!binary",
    "null",
    "~",
    ".inf",
    "-.nan",
    "yes",
    "1e999",
    "9" * 40,
    '"1/0"',
    "0x1F",
    "1:30",
    "'",
    '"',
    "\t",
    "\x00",
    "\ufeff",
    "é",
    "W_q",
    "heads: []",
    "mask: causal",
    "__import__('os')",
    "[[1]]",
    "[" * 200,
    "\n",
    "#",
    "-1",
    "0.1",
    '"-2/7"',
    "precision: 99",
]
EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "150"))


@st.composite
def mutants(draw: st.DrawFn, seeds: list[str] = SEEDS) -> bytes:
    """A seed text with 1 to 4 insertions, replacements, dropped or doubled lines, truncations."""
    text = draw(st.sampled_from(seeds))
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["insert", "replace", "drop-line", "dup-line", "truncate"]))
        lines = text.splitlines(keepends=True)
        if kind == "drop-line" and lines:
            i = draw(st.integers(0, len(lines) - 1))
            text = "".join(lines[:i] + lines[i + 1 :])
        elif kind == "dup-line" and lines:
            i = draw(st.integers(0, len(lines) - 1))
            text = "".join([*lines[: i + 1], lines[i], *lines[i + 1 :]])
        elif kind == "truncate":
            text = text[: draw(st.integers(0, len(text)))]
        else:
            at = draw(st.integers(0, len(text)))
            payload = draw(st.sampled_from(PAYLOADS) | st.text(max_size=6))
            end = at + (draw(st.integers(0, 4)) if kind == "replace" else 0)
            text = text[:at] + payload + text[end:]
    data = text.encode("utf-8", "surrogatepass")
    if draw(st.booleans()):  # sometimes raw bytes too: invalid UTF-8, NULs
        at = draw(st.integers(0, len(data)))
        data = data[:at] + draw(st.binary(max_size=4)) + data[at:]
    return data


def also_explain_and_quiz(run, path: Path, token: str, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A valid mutant also explains a cell and runs a short quiz cleanly."""
    z = "head1.Z" if "heads" in path.read_text(errors="replace") else "Z"
    explained = run("explain", str(path), f"{z}[{token}, 1]", env=PLAIN_ENV)
    assert explained.exit_code in (0, 2), explained.stderr  # 2: a token that is no cell name
    home = {**PLAIN_ENV, "ATTN_TUTOR_HOME": str(tmp_path / "home")}
    quizzed = run("quiz", str(path), "--count", "2", "--seed", "0", input="skip\n1\n", env=home)
    assert quizzed.exit_code == 0, quizzed.stderr
    for r in (explained, quizzed):
        assert "Traceback" not in r.stdout + r.stderr
        assert "internal error" not in r.stderr, r.stderr


@settings(
    max_examples=EXAMPLES,
    deadline=3000,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=mutants())
def test_mutated_lessons_fail_cleanly_or_agree_with_numpy(run, tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "mutant.yaml"
    path.write_bytes(data)
    result = run("walk", str(path), "--json", env=PLAIN_ENV)
    assert "Traceback" not in result.stdout + result.stderr
    assert "internal error" not in result.stderr, result.stderr
    if result.exit_code == 0:
        out = json.loads(result.stdout)
        lesson = load_lesson(path)
        ref = reference.attention(lesson)
        for step in out["steps"]:
            expected = ref.get((step["name"], step["head"]))
            if expected is None:
                continue
            got = np.array([[np.nan if v is None else v for v in row] for row in step["value"]])
            mask = np.isfinite(expected)
            np.testing.assert_allclose(got[mask], expected[mask], rtol=1e-9, atol=1e-12)
        also_explain_and_quiz(run, path, lesson.tokens[0], tmp_path)
    else:
        assert result.exit_code == 1, (result.exit_code, result.stderr)
        assert str(path) in result.stderr
