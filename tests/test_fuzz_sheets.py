"""Fuzzing the instructor's surfaces: `check` on mutated lessons, `grade` on mutated sheets.

Either surface must answer every mutant with exit 0 or 1 (never a traceback or an internal
error), name the file when it refuses it, and print valid JSON when `grade --json` succeeds.
FUZZ_EXAMPLES (default 150) sets how many mutants each test tries.
"""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from typer.testing import CliRunner

from tests.conftest import PLAIN_ENV
from tests.test_fuzz_lessons import EXAMPLES, mutants
from tests.test_grade import fill, true_values
from tutor.cli import app

RUNNER = CliRunner()


def cli(*args: str):  # type: ignore[no-untyped-def]
    return RUNNER.invoke(app, list(args), env=PLAIN_ENV)


def _sheets() -> list[str]:
    blank = cli("export", "cats-chase-mice", "--format", "sheet").stdout
    filled = fill(blank, true_values("cats-chase-mice", "2"))
    return [blank, filled]


SHEETS = _sheets()
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=5000,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def assert_clean(result, path: Path) -> None:  # type: ignore[no-untyped-def]
    assert "Traceback" not in result.stdout + result.stderr
    assert "internal error" not in result.stderr, result.stderr
    assert result.exit_code in (0, 1), (result.exit_code, result.stderr)
    if result.exit_code == 1:
        assert str(path) in result.stdout + result.stderr


@FUZZ
@given(data=mutants())
def test_check_answers_every_mutated_lesson_cleanly(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "mutant.yaml"
    path.write_bytes(data)
    result = cli("check", str(path))
    assert_clean(result, path)
    assert result.stdout.strip(), "check always ends with a summary line"


@FUZZ
@given(data=mutants(SHEETS))
def test_grade_answers_every_mutated_sheet_cleanly(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "sheet.yaml"
    path.write_bytes(data)
    result = cli("grade", "cats-chase-mice", str(path), "--json")
    assert_clean(result, path)
    if result.exit_code == 0:
        report = json.loads(result.stdout)
        assert 0 <= report["score"] <= report["total"] == len(report["cells"])
