"""Item analysis (issue 39, item 7): ``grade … --items FILE.csv`` and the report's section; the
discrimination checked against numpy's correlation of the gradebook's own columns and by hand."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import numpy as np
import pytest
import sympy

from tests.conftest import LESSONS
from tests.students import HABITS, Student, junk, sheet_text
from tutor.assess.items import point_biserial
from tutor.core.engine import derive
from tutor.core.lessonfile import load_lesson

# (what the student does, the slip): 3 honest, 3 forget √d_k, 2 e^x without the total, 2 junk
# (not softmax down the columns: on cats-chase-mice its one slipped cell, 0.25, is x/Σx too, a
# tie the judge names as either, so it is no sure item)
CLASS = [("honest", None)] * 3 + [("slip", "not-scaled")] * 3
CLASS += [("slip", "unnormalised")] * 2 + [("junk", None)] * 2


def write_class(folder: Path, kinds: list[tuple[str, str | None]]) -> None:
    d = derive(load_lesson(LESSONS / "cats-chase-mice.yaml"))
    folder.mkdir()
    for k, (kind, slip) in enumerate(kinds):
        if kind == "junk":
            written = junk(d, "random", k)
        else:
            written = Student(d, HABITS[k % len(HABITS)], slip=slip).work()
        (folder / f"s{k:02d}.yaml").write_text(sheet_text(d, written, f"Student {k:02d}"))


def read_csv(path: Path) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8"))))


def test_point_biserial_by_hand_and_its_undefined_cases() -> None:
    xs = [sympy.Integer(x) for x in (0, 1, 1)]
    ys = [sympy.Integer(y) for y in (1, 2, 4)]
    # n = 3: Σx = 2, Σy = 7, n·Σx² − (Σx)² = 2, n·Σy² − (Σy)² = 14, n·Σxy − ΣxΣy = 4
    r, why = point_biserial(xs, ys)
    assert r == 2 / sympy.sqrt(7) and why == ""
    assert point_biserial(xs[:2], ys[:2]) == (None, "fewer than 3 sheets")
    assert point_biserial([sympy.Integer(1)] * 3, ys) == (None, "every sheet scored the same on it")
    assert point_biserial(xs, [sympy.Integer(5)] * 3)[0] is None


def test_point_biserial_matches_numpy_on_fractions() -> None:
    rng = np.random.default_rng(39)
    nums = rng.integers(0, 40, size=(2, 25))
    xs = [sympy.Rational(int(n), 4) for n in nums[0]]
    ys = [sympy.Rational(int(n), 3) for n in nums[1]]
    r, _ = point_biserial(xs, ys)
    want = np.corrcoef(nums[0] / 4, nums[1] / 3)[0, 1]
    assert abs(float(r) - want) < 1e-12  # type: ignore[arg-type]


def test_items_csv_agrees_with_numpy_on_the_gradebooks_columns(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    write_class(tmp_path / "sheets", CLASS)
    book, items = tmp_path / "book.csv", tmp_path / "items.csv"
    result = run("grade", "cats-chase-mice", str(tmp_path / "sheets"), "--csv", str(book),
                 "--items", str(items))  # fmt: skip
    assert result.exit_code == 0, result.stderr
    rows, found = read_csv(book), read_csv(items)
    assert list(found[0]) == ["Item", "Kind", "What", "Students", "Right %", "Discrimination",
                              "Why undefined"]  # fmt: skip
    steps = [f for f in found if f["Kind"] == "step"]
    assert [f["Item"] for f in steps] == ["Q", "K", "V", "scores", "scaled", "weights", "Z"]
    total = np.array([float(r["Total"]) for r in rows])
    for f in steps:
        x = np.array([float(r[f["Item"]]) for r in rows])  # the gradebook's points of the step
        want = np.corrcoef(x, total - x)[0, 1]  # against the rest of the total
        assert abs(float(f["Discrimination"]) - want) <= 0.005 + 1e-9, (f, want)
        assert f["Students"] == "10"
    slips = {f["Item"]: f for f in found if f["Kind"] == "slip"}
    assert set(slips) == {"not-scaled", "unnormalised"}
    assert slips["not-scaled"]["Right %"] == "70"  # 3 of 10 made it
    avoided = np.array([0.0 if "not-scaled" in k else 1.0 for k in
                        [str(s) for _, s in CLASS]])  # fmt: skip
    want = np.corrcoef(avoided, total)[0, 1]
    assert abs(float(slips["not-scaled"]["Discrimination"]) - want) <= 0.005 + 1e-9
    # the reading: the hardest step and the one that separates most, said on screen
    hardest = min(steps, key=lambda f: int(f["Right %"]))["Item"]
    assert f"Hardest step: {hardest} ({min(int(f['Right %']) for f in steps)}\u00a0% right)" in (
        result.stderr
    )
    assert "most separates strong from weak sheets" in result.stderr


def test_undefined_discrimination_is_a_dash_with_why(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    write_class(tmp_path / "two", [("honest", None), ("junk", None)])
    items = tmp_path / "items.csv"
    result = run("grade", "cats-chase-mice", str(tmp_path / "two"), "--items", str(items))
    assert result.exit_code == 0, result.stderr
    found = read_csv(items)
    assert {f["Discrimination"] for f in found} == {"—"}
    assert {f["Why undefined"] for f in found} == {"fewer than 3 sheets"}
    write_class(tmp_path / "same", [("honest", None)] * 3)
    result = run("grade", "cats-chase-mice", str(tmp_path / "same"), "--items", str(items))
    found = read_csv(items)
    assert {f["Why undefined"] for f in found} == {"every sheet scored the same on it"}
    assert {f["Right %"] for f in found} == {"100"}
    assert "Every step was right on every sheet: no step is hard" in result.stderr


@pytest.mark.parametrize("kind", ["md", "html"])
def test_the_report_has_an_item_analysis(run, tmp_path, kind) -> None:  # type: ignore[no-untyped-def]
    write_class(tmp_path / "sheets", CLASS)
    page, items = tmp_path / f"report.{kind}", tmp_path / "items.csv"
    result = run("grade", "cats-chase-mice", str(tmp_path / "sheets"), "--report", "--output",
                 str(page), "--items", str(items))  # fmt: skip
    assert result.exit_code == 0, result.stderr
    text = page.read_text(encoding="utf-8")
    assert "Item analysis" in text
    steps = [f for f in read_csv(items) if f["Kind"] == "step"]
    hardest = min(steps, key=lambda f: int(f["Right %"]))  # the first of equals
    assert f"Hardest step: {hardest['Item']} ({hardest['Right %']}\u00a0% right)." in text
    assert "slip: not-scaled" in text
    screen = run("grade", "cats-chase-mice", str(tmp_path / "sheets"), "--report").stdout
    assert "Item analysis" in screen and "slip: unnormalised" in screen


def test_items_is_written_only_where_it_may_be(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    write_class(tmp_path / "sheets", CLASS[:3])
    sheet = tmp_path / "sheets" / "s00.yaml"
    before = sheet.read_text()
    result = run("grade", "cats-chase-mice", str(tmp_path / "sheets"), "--items", str(sheet))
    assert result.exit_code == 2 and "--items" in result.stderr
    assert sheet.read_text() == before
