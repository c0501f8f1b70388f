"""The searches of ``new`` and ``variants`` are bounded (issue 43, item 4): a search that spends
its budget of CPU seconds gives up with a message naming the budget and writes nothing. The
budget is set below zero here, so the first look at it finds it spent; bench/bench.py --limits
and bench/variants.py measure the real searches."""

from __future__ import annotations

import pytest

from tutor.author import budget


@pytest.fixture
def spent(monkeypatch):  # type: ignore[no-untyped-def]
    monkeypatch.setattr(budget, "SECONDS", -1.0)


def test_variants_that_spend_the_budget_write_nothing(run, tmp_path, spent) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "class"
    result = run("variants", "cats-chase-mice", "--count", "3", "--seed", "1", "-o", str(out))
    assert result.exit_code == 1, result.output
    message = " ".join(result.output.split())
    assert "variants of cats-chase-mice: the search for 3 variants (0 found) gave up after" in (
        message
    )
    assert "s of CPU time (its budget), writing nothing; ask for fewer variants" in message
    assert "Traceback" not in result.output
    assert not out.exists()


def test_new_that_spends_the_budget_writes_nothing(run, tmp_path, spent) -> None:  # type: ignore[no-untyped-def]
    # seed 3 draws a lesson with faults, so the search starts (and finds its budget spent)
    path = tmp_path / "x.yaml"
    result = run("new", "x", "--tokens", "the cat sat on the mat", "--seed", "3", "-o", str(path))
    assert result.exit_code == 1, result.output
    message = " ".join(result.output.split())
    assert "new: the search for hand-friendly numbers gave up after -1 s of CPU time" in message
    assert "writing nothing; try fewer tokens or heads" in message
    assert not path.exists()
