"""The Gradescope autograder (issue 38, item 3): the zip as Gradescope takes it, unzipped into
a folder laid out like Gradescope's (``source/``, ``submission/``, ``results/``), its
``run_autograder`` run for real, and ``results.json`` checked against Gradescope's documented
fields. The library function is tested on its own too."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

import jsonschema
import pytest

from tests.conftest import LESSONS, ROOT
from tests.test_grade import blank_sheet, fill, slipped_sheet, true_values
from tutor.assess import autograde as ag
from tutor.assess import classgrade as cg
from tutor.core.engine import derive
from tutor.core.lessonfile import load_lesson

VISIBILITY = {"enum": ["hidden", "after_due_date", "after_published", "visible"]}
# Gradescope's results.json, as its autograder specification documents it
RESULTS = {
    "type": "object",
    "required": ["score", "tests", "execution_time", "output"],
    "additionalProperties": False,
    "properties": {
        "score": {"type": "number", "minimum": 0},
        "execution_time": {"type": "number", "minimum": 0},
        "output": {"type": "string", "minLength": 1},
        "stdout_visibility": VISIBILITY,
        "tests": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["name", "score", "max_score", "output", "visibility"],
                "additionalProperties": False,
                "properties": {
                    "name": {"type": "string", "minLength": 1},
                    "score": {"type": "number", "minimum": 0},
                    "max_score": {"type": "number", "minimum": 0},
                    "output": {"type": "string"},
                    "visibility": VISIBILITY,
                },
            },
        },
    },
}
CATS = "cats-chase-mice"


@pytest.fixture(scope="module")
def zips(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The autograder zips, built once through the command line: one lesson, and a folder of
    two variants."""
    from typer.testing import CliRunner

    from tests.conftest import PLAIN_ENV
    from tutor.cli import app

    tmp = tmp_path_factory.mktemp("zips")
    runner = CliRunner()

    def run(*args: str):  # type: ignore[no-untyped-def]
        result = runner.invoke(app, list(args), env=PLAIN_ENV)
        assert result.exit_code == 0, result.stderr
        return result

    run("autograder", CATS, "-o", str(tmp / "one.zip"))
    run("variants", str(LESSONS / f"{CATS}.yaml"), "--count", "2", "--seed", "3", "--output",
        str(tmp / "variants"))  # fmt: skip
    run("autograder", str(tmp / "variants"), "-o", str(tmp / "variants.zip"))
    return {"one": tmp / "one.zip", "variants": tmp / "variants.zip", "dir": tmp / "variants"}


def gradescope(zip_path: Path, root: Path, uploads: dict[str, str | bytes]) -> dict:  # type: ignore[type-arg]
    """Unzip as Gradescope does, put the upload in submission/, run run_autograder for real
    (with this interpreter and this checkout instead of setup.sh's install), read results."""
    with zipfile.ZipFile(zip_path) as z:
        z.extractall(root / "source")
    (root / "submission").mkdir()
    (root / "results").mkdir()
    for name, body in uploads.items():
        f = root / "submission" / name
        f.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(body, bytes):
            f.write_bytes(body)
        else:
            f.write_text(body, encoding="utf-8")
    env = {
        **os.environ,
        "AUTOGRADER_ROOT": str(root),
        "ATTN_TUTOR_PYTHON": sys.executable,
        "PYTHONPATH": str(ROOT),
    }
    script = ["bash", str(root / "source" / "run_autograder")]
    done = subprocess.run(script, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr + done.stdout
    results = json.loads((root / "results" / "results.json").read_text(encoding="utf-8"))
    jsonschema.validate(results, RESULTS)
    return results


def test_the_zip_has_what_gradescope_runs(zips: dict[str, Path]) -> None:
    with zipfile.ZipFile(zips["one"]) as z:
        names = z.namelist()
        assert {"setup.sh", "run_autograder", f"lessons/{CATS}.yaml"} <= set(names)
        wheel = [n for n in names if n.startswith("dist/attn_tutor-") and n.endswith(".whl")]
        assert len(wheel) == 1  # attn-tutor itself, built from this source
        setup = z.read("setup.sh").decode()
        assert f"pip install --quiet {wheel[0]}" in setup
        for script in ("setup.sh", "run_autograder"):
            mode = z.getinfo(script).external_attr >> 16
            assert mode & stat.S_IXUSR and z.read(script).startswith(b"#!/usr/bin/env bash\n")
        with zipfile.ZipFile(z.open(wheel[0])) as whl:  # a wheel with the package and lessons
            assert "tutor/assess/autograde.py" in whl.namelist()
    with zipfile.ZipFile(zips["variants"]) as z:
        assert len([n for n in z.namelist() if n.startswith("lessons/")]) == 2


def test_an_honest_sheet_gets_full_marks(run, zips: dict[str, Path], tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    sheet = fill(blank_sheet(run, CATS), true_values(CATS, "3"))
    results = gradescope(zips["one"], tmp_path, {"cats-sheet.yaml": sheet})
    assert results["score"] == 51 == sum(t["max_score"] for t in results["tests"])
    assert [t["name"] for t in results["tests"]] == ["Q", "K", "V", "scores", "scaled",
                                                     "weights", "Z"]  # fmt: skip
    assert all(t["score"] == t["max_score"] and t["visibility"] == "visible"
               for t in results["tests"])  # fmt: skip
    assert results["tests"][0]["output"] == "6 of 6 cells right."


def test_one_slip_loses_its_cells_with_feedback(run, zips: dict[str, Path], tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    results = gradescope(zips["one"], tmp_path, {"sheet.json": slipped_sheet(run)})
    assert results["score"] == 50
    q = results["tests"][0]
    assert (q["name"], q["score"], q["max_score"]) == ("Q", 5, 6)
    assert "Q[cats, 1]: you wrote 1; expected 2" in q["output"]
    assert "Q[cats, 1] = 1·1 + 0·0 + 1·1 + 0·0" in q["output"]  # the working
    scores = results["tests"][3]
    assert scores["score"] == 9 and "Right from your own earlier answers" in scores["output"]


def variant_sheet(lesson: Path, exact: bool = True) -> str:
    """A variant's sheet filled with its true values, as a form's JSON download would be."""
    from tutor.assess.sheet import fill_steps

    d = derive(load_lesson(lesson))
    doc: dict[str, object] = {
        "lesson": d.lesson.name,
        "fingerprint": d.lesson.fingerprint,
        "variant": d.lesson.variant.id if d.lesson.variant else None,
        "student": "Ann",
    }
    for step in fill_steps(d):
        doc[step.name] = [[str(c.exact) for c in row] for row in step.cells]
    return json.dumps(doc)


def test_a_variants_autograder_finds_the_students_variant(
    zips: dict[str, Path], tmp_path: Path
) -> None:
    second = sorted(zips["dir"].glob("*.yaml"))[1]
    results = gradescope(zips["variants"], tmp_path, {"ann-sheet.json": variant_sheet(second)})
    assert results["score"] == sum(t["max_score"] for t in results["tests"]) > 0
    assert results["output"].startswith("Ann: ")


@pytest.mark.parametrize(
    ("uploads", "says"),
    [
        ({}, "Nothing was uploaded"),
        ({"scan.png": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"}, "scan.png is not an answer sheet"),
        ({"a.yaml": "lesson: cats-chase-mice\n", "b.json": "{}"}, "2 answer sheets were uploaded"),
        ({"sheet.yaml": "Q: [[1, 2]\n"}, "sheet.yaml could not be graded"),
        ({"sheet.yaml": b"\xff\xfe\x00junk"}, "sheet.yaml could not be graded"),
        ({"other.yaml": "CAKE"}, "for another assignment"),
    ],
)
def test_a_wrong_upload_scores_0_and_says_what_to_upload(
    run,
    zips: dict[str, Path],
    tmp_path: Path,
    uploads: dict,
    says: str,  # type: ignore[type-arg]
) -> None:  # type: ignore[no-untyped-def]
    if uploads.get("other.yaml") == "CAKE":
        uploads = {"other.yaml": blank_sheet(run, "the-cake")}
    results = gradescope(zips["one"], tmp_path, uploads)
    assert results["score"] == 0 and results["tests"] == []
    assert says in results["output"]
    assert "Upload one answer sheet" in results["output"]


# ---------------------------------------------------------------------------------------------
# the library function: a submission folder in, the results out


def one_lesson() -> cg.Lessons:
    return cg.Lessons([load_lesson(LESSONS / f"{CATS}.yaml")], CATS)


def test_autograde_as_a_library(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "nested").mkdir()
    (tmp_path / "nested" / "my-sheet.yaml.txt").write_text(slipped_sheet(run))
    (tmp_path / ".DS_Store").write_bytes(b"\x00\x01")  # hidden: not the student's upload
    (tmp_path / "__MACOSX").mkdir()
    (tmp_path / "__MACOSX" / "._my-sheet.yaml").write_bytes(b"\x00\x05")
    out = ag.autograde(tmp_path, one_lesson())
    assert out["score"] == 50 and len(out["tests"]) == 7  # type: ignore[arg-type]
    assert str(out["output"]).startswith("50 of 51 points")
    q = out["tests"][0]  # type: ignore[index]
    assert "Q[cats, 1]" in q["output"]
    # 1 for 2 in one cell is a slip of the pen, not X·W_K (which also gives 1 there)
    assert "X·W_K" not in q["output"]


def test_a_comma_costs_one_cell_in_the_autograder_too(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    values = true_values(CATS, "3")
    values["weights"][0][0] = "0,16"
    (tmp_path / "s.json").write_text(fill(blank_sheet(run, CATS), values))
    out = ag.autograde(tmp_path, one_lesson())
    weights = next(t for t in out["tests"] if t["name"] == "weights")  # type: ignore[union-attr]
    assert weights["score"] == 8 and "cannot read `0,16`: write 0.16" in weights["output"]


def test_run_writes_results_even_when_the_lessons_are_missing(tmp_path: Path) -> None:
    (tmp_path / "submission").mkdir()
    out = ag.run(tmp_path)
    assert out["score"] == 0 and "could not load its lesson" in str(out["output"])
    written = json.loads((tmp_path / "results" / "results.json").read_text())
    jsonschema.validate(written, RESULTS)


def test_bash_is_there() -> None:
    assert shutil.which("bash"), "run_autograder is a bash script, as Gradescope runs it"
