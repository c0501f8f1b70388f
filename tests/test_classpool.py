"""A class graded on every core (issue 39, item 9): the pool's outputs are the serial code's,
byte for byte; one core or a few sheets stay serial; Ctrl-C ends the pool (exit 130, no worker
left)."""

from __future__ import annotations

import json
import os
import random
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from tests import students
from tests.conftest import LESSONS, ROOT
from tutor.assess import classpool
from tutor.core.engine import derive
from tutor.core.lessonfile import load_lesson

LESSON = LESSONS / "cats-chase-mice.yaml"


@pytest.fixture(scope="module")
def blank() -> str:
    return subprocess.run(
        [sys.executable, "-m", "tutor", "export", str(LESSON), "--format", "sheet"],
        cwd=ROOT, capture_output=True, text=True, check=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    ).stdout  # fmt: skip


def a_class(folder: Path, blank: str, count: int) -> Path:
    """Honest sheets of every habit, a named slip on some, junk, a blank one and a copy."""
    folder.mkdir()
    d = derive(load_lesson(LESSON))
    slips = ("not-scaled", "softmax-column", "digit", "truncated")
    for k in range(count):
        data = yaml.safe_load(blank)
        rng = random.Random(k)
        if k % 5 == 4:  # junk: random digits everywhere
            for key, rows in list(data.items()):
                if isinstance(rows, list):
                    data[key] = [[f"{rng.uniform(-9, 9):.2f}" for _ in row] for row in rows]
        elif k != 7:  # (sheet 7 is left blank)
            slip = slips[k % 4] if k % 2 else None
            data.update(students.Student(d, students.HABITS[k % 5], slip, seed=k).work())
        data["student"], data["student_id"] = f"Student {k:02d}", f"{100 + k}"
        (folder / f"s{k:02d}.yaml").write_text(json.dumps(data))
    copy = json.loads((folder / "s01.yaml").read_text())
    copy["student"], copy["student_id"] = "Copier", "999"
    (folder / "s99.yaml").write_text(json.dumps(copy))
    return folder


def outputs(run, folder: Path, out: Path) -> dict[str, str]:  # type: ignore[no-untyped-def]
    out.mkdir()
    got = run(
        "grade", str(LESSON), str(folder), "--json", "--csv", str(out / "book.csv"),
        "--report", "--output", str(out / "report.md"), "--feedback", str(out / "fb"),
        "--items", str(out / "items.csv"),
    )  # fmt: skip
    table = run("grade", str(LESSON), str(folder))
    files = {str(p.relative_to(out)): p.read_text() for p in sorted(out.rglob("*")) if p.is_file()}
    return {"json": got.stdout, "err": got.stderr, "table": table.output, **files}


def test_the_pool_writes_what_the_serial_grading_writes(run, tmp_path, blank, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    folder = a_class(tmp_path / "class", blank, 12)
    pooled: list[int] = []
    grade_all = classpool.grade_all

    def counting(jobs):  # type: ignore[no-untyped-def]
        pooled.append(classpool.workers(len(jobs)))
        return grade_all(jobs)

    monkeypatch.setattr(classpool, "grade_all", counting)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    parallel = outputs(run, folder, tmp_path / "a")
    monkeypatch.setattr(classpool, "MIN_SHEETS", 10**6)
    serial = outputs(run, folder, tmp_path / "b")
    assert pooled[0] == 2 and pooled[-1] == 0  # the first run used two workers, the last none
    parallel = {k: v.replace(str(tmp_path / "a"), "OUT") for k, v in parallel.items()}
    serial = {k: v.replace(str(tmp_path / "b"), "OUT") for k, v in serial.items()}
    assert parallel.keys() == serial.keys()
    for name in serial:
        assert parallel[name] == serial[name], name
    doc = json.loads(parallel["json"])
    kinds = {f["kind"] for s in doc["sheets"] for f in s["flags"]}
    slips = {c["slip"] for s in doc["sheets"] for c in s["cells"] if c["slip"]}
    assert "identical" in kinds and slips  # the class has flags and named slips to compare
    assert any(s["percent"] == 100 for s in doc["sheets"])


@pytest.mark.parametrize(("cores", "sheets"), [(1, 100), (2, classpool.MIN_SHEETS - 1)])
def test_one_core_or_a_few_sheets_stay_serial(monkeypatch, cores, sheets) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(os, "cpu_count", lambda: cores)
    assert classpool.workers(sheets) == 0
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    assert classpool.workers(classpool.MIN_SHEETS) == 2


def _children(pid: int) -> list[int]:
    out = []
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            text = status.read_text()
        except OSError:
            continue
        if re.search(rf"^PPid:\s+{pid}$", text, re.M):
            out.append(int(status.parent.name))
    return out


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc to see the workers")
def test_ctrl_c_ends_the_pool_with_exit_130_and_no_worker_left(tmp_path, blank) -> None:
    folder = tmp_path / "class"
    folder.mkdir()
    wrong = re.sub(r"\bnull\b(?=[,\]])", "7.77", blank)  # all wrong: every cell searched
    for k in range(60):
        (folder / f"s{k:02d}.yaml").write_text(wrong.replace('student: ""', f'student: "S{k}"'))
    proc = subprocess.Popen(
        [sys.executable, "-m", "tutor", "grade", str(LESSON), str(folder), "--csv",
         str(tmp_path / "book.csv")],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)}, start_new_session=True,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while len(_children(proc.pid)) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    workers = _children(proc.pid)
    if len(workers) < 2:
        proc.kill()
        pytest.skip("the pool did not start (one core?)")
    os.killpg(proc.pid, signal.SIGINT)  # a terminal's Ctrl-C: the whole foreground group
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, (out, err)
    assert "Traceback" not in out + err
    assert not (tmp_path / "book.csv").exists()
    deadline = time.monotonic() + 5
    while any(Path(f"/proc/{w}").exists() for w in workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [w for w in workers if Path(f"/proc/{w}").exists()]
