"""A late enrolment changes no one's numbers: a student's variant depends only on the seed and
their id (``variants.student_key``), and ``variants --add`` writes only the missing students'."""

from __future__ import annotations

from pathlib import Path

import pytest

from tutor.author.variants import numbers_of
from tutor.core.lessonfile import load_lesson


def roster(path: Path, ks: list[int]) -> Path:
    lines = ["First name,Last name,ID number"]
    lines += [f"Ann{k},Lee{k},s{1000 + k}" for k in ks]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def numbers(folder: Path) -> dict[str, dict]:
    """Each student's id → the numbers of their variant."""
    out = {}
    for p in folder.glob("*.yaml"):
        lesson = load_lesson(p, name=p.stem)
        out[lesson.variant.student_id] = numbers_of(lesson)  # type: ignore[union-attr]
    return out


@pytest.fixture(scope="module")
def run():  # type: ignore[no-untyped-def]
    from typer.testing import CliRunner

    from tests.conftest import PLAIN_ENV
    from tutor.cli import app

    runner = CliRunner()
    return lambda *args: runner.invoke(app, [str(a) for a in args], env=PLAIN_ENV)


def make(run, csv: Path, out: Path, *more: str):  # type: ignore[no-untyped-def]
    result = run("variants", "cats-chase-mice", "--roster", csv, "--seed", "7", "-o", out, *more)
    assert result.exit_code == 0, result.stderr
    return numbers(out)


def test_one_student_inserted_keeps_all_30_numbers(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    before = make(run, roster(tmp_path / "a.csv", list(range(1, 31))), tmp_path / "a")
    late = list(range(1, 31))
    late.insert(12, 99)  # enrolled late, sorted into the middle of the export
    after = make(run, roster(tmp_path / "b.csv", late), tmp_path / "b")
    assert len(before) == 30 and len(after) == 31
    kept = sum(after[sid] == nums for sid, nums in before.items())
    assert kept == 30
    # reordered and one removed: still everyone's own numbers
    shuffled = list(reversed(range(2, 31)))
    again = make(run, roster(tmp_path / "c.csv", shuffled), tmp_path / "c")
    assert all(again[sid] == before[sid] for sid in again)


def test_add_writes_only_the_missing_students(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "class"
    first = make(run, roster(tmp_path / "a.csv", [1, 2, 3]), out)
    stamps = {p.name: p.stat().st_mtime_ns for p in out.glob("*.yaml")}
    texts = {p.name: p.read_text(encoding="utf-8") for p in out.glob("*.yaml")}
    late = roster(tmp_path / "b.csv", [1, 2, 99, 3, 4])
    result = run("variants", "cats-chase-mice", "--add", late, "-o", out)
    assert result.exit_code == 0, result.stderr
    assert "added 2 variants" in result.stdout and "3 already written" in result.stdout
    files = sorted(p.name for p in out.glob("*.yaml"))
    assert files == [*sorted(texts), "variant-04-ann99-lee99.yaml", "variant-05-ann4-lee4.yaml"]
    for name, text in texts.items():  # untouched
        assert (out / name).read_text(encoding="utf-8") == text
        assert (out / name).stat().st_mtime_ns == stamps[name]
    whole = make(run, late, tmp_path / "whole")  # the same as the whole roster made at once
    assert numbers(out) == whole == {**first, **{k: whole[k] for k in ("s1099", "s1004")}}
    assert "# seed: 7" in (out / "variant-04-ann99-lee99.yaml").read_text(encoding="utf-8")
    again = run("variants", "cats-chase-mice", "--add", late, "-o", out)
    assert again.exit_code == 0 and "nothing written" in again.stdout


def test_add_says_what_it_needs(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    csv = roster(tmp_path / "a.csv", [1, 2])
    empty = run("variants", "cats-chase-mice", "--add", csv, "-o", tmp_path / "none")
    assert empty.exit_code == 1 and "holds no variants of cats-chase-mice" in empty.stderr
    make(run, csv, tmp_path / "k")
    other = run("variants", "cats-chase-mice", "--add", csv, "--seed", "8", "-o", tmp_path / "k")
    assert other.exit_code == 2 and "made with seed 7" in other.stderr
    both = run("variants", "cats-chase-mice", "--add", csv, "--force", "-o", tmp_path / "k")
    assert both.exit_code == 2 and "without --force" in both.stderr
    for bad in (["--add", csv, "--roster", csv], ["--add", csv, "--count", "2"]):
        result = run("variants", "cats-chase-mice", *bad, "-o", tmp_path / "k")
        assert result.exit_code == 2 and "give either --count N" in result.stderr
