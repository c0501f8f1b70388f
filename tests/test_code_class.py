"""``check-code LESSON DIR`` (issue 39, item 8): a class folder of students' files, each run in a
process of its own behind walls. Hostile files (each the attack itself) get their own error line
while the honest files beside them still pass; nothing is written outside a file's own working
folder, no process outlives the command, and the JSON has one stable record per file.

Regenerate the table's golden with:  UPDATE_GOLDEN=1 python -m pytest tests/test_code_class.py
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, ROOT
from tests.test_code_hostile import _alive
from tutor.assess import walls

GOOD = (FIXTURES / "code" / "good.py").read_text()
Z_ONLY = GOOD.split("    print(")[0] + "    return weights @ V\n"
NOT_SCALED = GOOD.replace("scores / np.sqrt(K.shape[1])", "scores")
SURVIVOR = (  # a process that leaves the process group and outlives its parent
    "import os, time\n"
    "if os.fork() == 0:\n"
    "    os.setsid()\n"
    "    if os.fork() == 0:\n"
    "        time.sleep(120)\n"
    "    os._exit(0)\n" + GOOD
)
GOLDEN = FIXTURES / "golden" / "check-code-class-80.txt"

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux walls")
# the walls a test relies on, where this machine has them (said in the skip otherwise)
NEEDS_LANDLOCK = pytest.mark.skipif(
    not (sys.platform.startswith("linux") and walls.landlock_abi() >= 6),
    reason="Landlock with TCP and signal scopes (Linux 6.12) is not in this kernel",
)
NEEDS_NAMESPACES = pytest.mark.skipif(
    not sys.platform.startswith("linux") or walls.unshare_works() is not None,
    reason="unshare -rnpfm is not permitted here: a process that leaves the group survives",
)


def _honest(folder: Path) -> None:
    (folder / "ada.py").write_text(GOOD)
    (folder / "ben.py").write_text(Z_ONLY)
    (folder / "cleo.py").write_text(NOT_SCALED)


def _leftover_folders() -> set[str]:
    return {p.name for p in Path(tempfile.gettempdir()).glob("attn-tutor-check-*")}


def _processes_naming(text: str) -> list[int]:
    """The live processes whose command line holds ``text`` (a class folder's path)."""
    out = []
    for p in Path("/proc").iterdir():
        if not p.name.isdigit():
            continue
        try:
            if text.encode() in (p / "cmdline").read_bytes() and _alive(int(p.name)):
                out.append(int(p.name))
        except OSError:
            continue
    return out


@pytest.fixture
def hostile(tmp_path, monkeypatch):  # type: ignore[no-untyped-def]
    """A class folder of honest and hostile files; the instructor's own cwd beside it; a
    listening socket and a process of the instructor's the files try to reach."""
    folder, mine = tmp_path / "class", tmp_path / "instructor"
    folder.mkdir()
    mine.mkdir()
    monkeypatch.chdir(mine)
    monkeypatch.setenv("SECRET_TOKEN", "hunter2-do-not-leak")
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    listener.settimeout(0.1)
    port = listener.getsockname()[1]
    victim = subprocess.Popen(["sleep", "120"])
    _honest(folder)
    files = {
        "hog.py": "import numpy as np\nbig = np.ones(3 * 1024**3 // 8)\n",
        "loops.py": "while True:\n    pass\n",
        "writes_cwd.py": f"open({str(mine / 'PWNED.txt')!r}, 'w').write('pwned')\n",
        "writes_beside.py": "import pathlib\n"
        "pathlib.Path(__file__).with_name('PWNED.txt').write_text('pwned')\n",
        "big_file.py": "with open('big.bin', 'wb') as f:\n"
        "    for _ in range(100):\n        f.write(b'x' * 1_000_000)\n",
        "fills_disk.py": "for i in range(100):\n"
        "    with open(f'part{i}.bin', 'wb') as f:\n        f.write(b'x' * 15_000_000)\n",
        "phones_home.py": f"import socket\nsocket.create_connection(('127.0.0.1', {port}), 2)\n",
        "kills.py": f"import os, signal\nos.kill({victim.pid}, signal.SIGKILL)\n",
        "survivor.py": SURVIVOR,
        "forks.py": "import subprocess\nsubprocess.run(['sleep', '120'])\n",
        "snoops.py": "import os\nprint(sorted(os.environ.items()))\n" + GOOD,
    }
    for name, text in files.items():
        (folder / name).write_text(text)
    (folder / "outside.py").symlink_to(tmp_path / "elsewhere.py")
    (tmp_path / "elsewhere.py").write_text(GOOD)
    yield folder, mine, listener, victim
    listener.close()
    victim.kill()
    victim.wait()


@NEEDS_LANDLOCK
@NEEDS_NAMESPACES
def test_hostile_files_each_get_their_own_line_and_the_honest_ones_pass(run, hostile) -> None:  # type: ignore[no-untyped-def]
    folder, mine, listener, victim = hostile
    before = _leftover_folders()
    result = run("check-code", "cats-chase-mice", str(folder), "--json", "--timeout", "10")
    assert result.exit_code == 1, result.output
    doc = json.loads(result.stdout)
    by = {f["file"]: f for f in doc["files"]}
    verdicts = {name: f["verdict"] for name, f in by.items()}
    assert verdicts == {
        "ada.py": "pass",
        "ben.py": "pass",
        "big_file.py": "error",
        "cleo.py": "mismatch",
        "fills_disk.py": "error",
        "forks.py": "error",
        "hog.py": "error",
        "kills.py": "error",
        "loops.py": "error",
        "outside.py": "skipped",
        "phones_home.py": "error",
        "snoops.py": "pass",
        "survivor.py": "error",
        "writes_beside.py": "error",
        "writes_cwd.py": "error",
    }
    assert list(by) == sorted(by)
    assert "MemoryError" in by["hog.py"]["line"]
    assert "did not finish within 10 s" in by["loops.py"]["line"]
    assert "File too large" in by["big_file.py"]["line"]
    assert "No space left on device" in by["fills_disk.py"]["line"]
    for name in ("writes_cwd.py", "writes_beside.py"):
        assert "PermissionError" in by[name]["line"], by[name]
    # Landlock refuses the signal; in a process namespace of its own the pid is not even there
    assert any(e in by["kills.py"]["line"] for e in ("PermissionError", "ProcessLookupError"))
    assert "OSError" in by["phones_home.py"]["line"] or "Error" in by["phones_home.py"]["line"]
    assert by["cleo.py"]["mismatch"]["slip"] == "not-scaled"
    assert "outside the folder" in by["outside.py"]["line"]
    assert "PermissionError" in by["survivor.py"]["line"]  # no new process: seccomp
    assert "PermissionError" in by["forks.py"]["line"]
    # nothing landed outside the files' own folders, nothing reached the instructor's processes
    assert not (mine / "PWNED.txt").exists() and not (folder / "PWNED.txt").exists()
    assert sorted(p.name for p in mine.iterdir()) == []
    with pytest.raises(TimeoutError):
        listener.accept()
    assert victim.poll() is None
    # the environment was scrubbed: no secret, no instructor's HOME
    printed = by["snoops.py"]["printed"]
    assert "hunter2" not in printed and "SECRET_TOKEN" not in printed
    assert f"'HOME', '{os.environ['HOME']}'" not in printed
    # no process of the class outlives the command; every working folder is deleted
    deadline = time.monotonic() + 5
    while _processes_naming(str(folder)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _processes_naming(str(folder)) == []
    assert _leftover_folders() <= before


SCHEMA = {
    "file": str,
    "verdict": str,
    "line": str,
    "checked": list,
    "mismatch": (dict, type(None)),
    "problem": (str, type(None)),
    "printed": str,
    "seconds": float,
}
MISMATCH = {"step", "head", "row", "col", "got", "expected", "slip", "why"}


def test_the_json_has_one_record_per_file_in_a_stable_schema(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    _honest(tmp_path)
    (tmp_path / "sub").mkdir()  # Moodle: a folder per student
    (tmp_path / "sub" / "dan.py").write_text(GOOD)
    result = run("check-code", "cats-chase-mice", str(tmp_path), "--json", "--jobs", "2")
    assert result.exit_code == 1, result.output
    doc = json.loads(result.stdout)
    assert set(doc) == {"lesson", "folder", "walls", "files", "counts", "ok"}
    assert doc["lesson"] == "cats-chase-mice" and doc["ok"] is False
    assert doc["counts"] == {"pass": 3, "mismatch": 1, "error": 0, "skipped": 0}
    assert set(doc["walls"]) == {
        "memory_bytes", "cpu_seconds", "file_size_bytes", "namespaces", "landlock_abi",
        "folder_bytes", "no_new_processes", "missing",
    }  # fmt: skip
    assert doc["walls"]["memory_bytes"] == 1024 * 1024 * 1024
    assert [f["file"] for f in doc["files"]] == ["ada.py", "ben.py", "cleo.py", "sub/dan.py"]
    for f in doc["files"]:
        assert set(f) == set(SCHEMA)
        for key, kind in SCHEMA.items():
            assert isinstance(f[key], kind), (key, f[key])
        for c in f["checked"]:
            assert set(c) == {"step", "head"}
    ada, cleo = doc["files"][0], doc["files"][2]
    assert [c["step"] for c in ada["checked"]] == [
        "Q",
        "K",
        "V",
        "scores",
        "scaled",
        "weights",
        "Z",
    ]
    assert "the student's own print" in ada["printed"]
    assert set(cleo["mismatch"]) == MISMATCH
    assert cleo["mismatch"]["step"] == "scaled" and isinstance(cleo["mismatch"]["got"], float)


def test_the_table_at_80_columns(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    _honest(tmp_path)
    for f in ("other_name.py", "raises.py"):
        (tmp_path / f).write_text((FIXTURES / "code" / f).read_text())
    (tmp_path / "zed.py").symlink_to("/etc/hostname")
    result = run("check-code", "cats-chase-mice", str(tmp_path), env={"COLUMNS": "80"})
    assert result.exit_code == 1
    if os.environ.get("UPDATE_GOLDEN"):
        GOLDEN.write_text(result.stdout)
    assert GOLDEN.exists(), f"missing golden {GOLDEN}; run with UPDATE_GOLDEN=1 to create it"
    assert result.stdout == GOLDEN.read_text()


def test_an_honest_class_passes_with_exit_0(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "ada.py").write_text(GOOD)
    (tmp_path / "ben.py").write_text(Z_ONLY)
    result = run("check-code", "the-cake", str(tmp_path), "--jobs", "1", "--memory", "512")
    assert result.exit_code == 0, result.output
    assert "2 files: 2 pass" in result.stdout


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--json"], "--json"),
        (["--jobs", "2"], "--jobs"),
        (["--memory", "2048"], "--memory"),
    ],
)
def test_the_class_options_are_for_a_folder(run, tmp_path, args, says) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "ada.py").write_text(GOOD)
    result = run("check-code", "cats-chase-mice", str(tmp_path / "ada.py"), *args)
    assert result.exit_code == 2, result.output
    assert says in result.output and "folder" in result.output


@pytest.mark.parametrize(
    "args", [["--jobs", "0"], ["--jobs", "-3"], ["--memory", "10"], ["--memory", "huge"]]
)
def test_jobs_and_memory_out_of_range_are_usage_errors(run, tmp_path, args) -> None:  # type: ignore[no-untyped-def]
    result = run("check-code", "cats-chase-mice", str(tmp_path), *args)
    assert result.exit_code == 2, result.output
    assert f"Invalid value for '{args[0]}'" in result.output
    assert "Traceback" not in result.output


def test_a_folder_without_python_files_is_an_error(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "notes.txt").write_text("no code here")
    result = run("check-code", "cats-chase-mice", str(tmp_path))
    assert result.exit_code == 1
    assert "no .py file" in result.output


def test_missing_walls_are_said_once(run, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(walls, "unshare_works", lambda: "unshare is not permitted here (test)")
    monkeypatch.setattr(walls, "seccomp_machine", lambda: "")
    (tmp_path / "ada.py").write_text(GOOD)
    (tmp_path / "ben.py").write_text(Z_ONLY)
    (tmp_path / "survivor.py").write_text(SURVIVOR)
    result = run("check-code", "cats-chase-mice", str(tmp_path), "--json")
    assert result.exit_code == 0, result.output
    assert result.stderr.count("unshare is not permitted here (test)") == 1
    doc = json.loads(result.stdout)
    assert doc["walls"]["namespaces"] is False and len(doc["walls"]["missing"]) == 2
    assert doc["walls"]["no_new_processes"] is False
    assert "seccomp" in result.stderr
    # without a process namespace, the process that left the group is still found and ended
    deadline = time.monotonic() + 5
    while _processes_naming(str(tmp_path)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _processes_naming(str(tmp_path)) == []


@NEEDS_NAMESPACES
def test_ctrl_c_stops_every_running_file_and_what_they_forked(tmp_path) -> None:
    """SIGINT to the tutor while two files loop (each with a child of its own, one that left
    the process group): exit 130 and no process of the class left."""
    folder = tmp_path / "class"
    folder.mkdir()
    loop = (
        "import contextlib, os, time\n"
        "with contextlib.suppress(OSError):\n"  # where new processes are refused, it loops alone
        "    if os.fork() == 0:\n        os.setsid()\n        time.sleep(120)\n"
        "while True:\n    pass\n"
    )
    for name in ("a.py", "b.py", "c.py"):
        (folder / name).write_text(loop)
    proc = subprocess.Popen(
        [sys.executable, "-m", "tutor", "check-code", "cats-chase-mice", str(folder),
         "--jobs", "2", "--timeout", "60"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip

    def theirs() -> list[int]:
        return [p for p in _processes_naming(str(folder)) if p != proc.pid]

    deadline = time.monotonic() + 30
    while len(theirs()) < 4 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(theirs()) >= 4  # two files running (each under unshare), or with a child each
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, (out, err)
    assert "Traceback" not in out + err
    deadline = time.monotonic() + 5
    while _processes_naming(str(folder)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _processes_naming(str(folder)) == []


def test_a_lesson_that_cannot_be_checked_is_refused_before_any_file_runs(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "writes.py").write_text("open('ran.txt', 'w').write('ran')\n")
    before = _leftover_folders()
    result = run("check-code", "ha-ha-ha-rope", str(tmp_path))
    assert result.exit_code == 1
    assert "cannot be worked that way" in result.output and "RoPE" in result.output
    assert _leftover_folders() <= before
