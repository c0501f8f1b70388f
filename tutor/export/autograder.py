"""The zip Gradescope takes for an autograder: ``setup.sh`` and ``run_autograder`` at its root,
the lesson(s) in ``lessons/``, and attn-tutor itself as a wheel in ``dist/`` (built from the
source this attn-tutor runs from), or, when no wheel can be built (an installed copy without
its source), a pinned version that ``setup.sh`` installs from PyPI.

Gradescope unzips it into ``/autograder/source``, runs ``setup.sh`` once when it builds the
image, then ``run_autograder`` for each submission (``tutor.assess.autograde``).
"""

from __future__ import annotations

import io
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import tutor

SETUP = """\
#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder's image (choose the
# Ubuntu 24.04 base image: attn-tutor needs Python 3.11 or newer).
set -euo pipefail
cd /autograder/source
apt-get update -qq
apt-get install -y -qq python3 python3-venv python3-pip > /dev/null
python3 -m venv /autograder/venv
/autograder/venv/bin/python -m pip install --quiet {install}
"""

RUN = """\
#!/usr/bin/env bash
# Gradescope runs this for each submission: grade what is in submission/, write
# results/results.json. ATTN_TUTOR_PYTHON: another Python with attn-tutor (for a test).
ROOT="${AUTOGRADER_ROOT:-/autograder}"
PYTHON="${ATTN_TUTOR_PYTHON:-$ROOT/venv/bin/python}"
export AUTOGRADER_ROOT="$ROOT"
mkdir -p "$ROOT/results"
rm -f "$ROOT/results/results.json"
"$PYTHON" -m tutor.assess.autograde || true
if [ ! -s "$ROOT/results/results.json" ]; then
  echo '{"score": 0, "tests": [], "output": "The autograder could not run; tell your' \\
    'instructor."}' > "$ROOT/results/results.json"
fi
"""


@dataclass(frozen=True)
class Built:
    """The zip's bytes, and what is worth saying about how attn-tutor gets installed."""

    data: bytes
    notes: tuple[str, ...]


def build(lessons: list[tuple[str, str]]) -> Built:
    """The autograder zip for ``lessons`` (file name, YAML text): one lesson, or a folder of
    variants (the student's variant is found from the sheet)."""
    wheel, notes = _wheel()
    install = f"dist/{wheel[0]}" if wheel else f"attn-tutor=={_version()}"
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        _script(z, "setup.sh", SETUP.format(install=install))
        _script(z, "run_autograder", RUN)
        for name, text in lessons:
            z.writestr(f"lessons/{name}", text)
        if wheel:
            z.writestr(f"dist/{wheel[0]}", wheel[1])
    return Built(buf.getvalue(), tuple(notes))


def _script(z: zipfile.ZipFile, name: str, text: str) -> None:
    info = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
    info.external_attr = 0o100755 << 16  # executable, as Gradescope runs it
    info.compress_type = zipfile.ZIP_DEFLATED
    z.writestr(info, text)


def _version() -> str:
    try:
        return metadata.version("attn-tutor")
    except metadata.PackageNotFoundError:
        return "0.1.0"


def _wheel() -> tuple[tuple[str, bytes] | None, list[str]]:
    """attn-tutor as a wheel, built from the source it runs from (``pip wheel``); None, and a
    note, when there is no source beside the package or the build fails."""
    source = Path(tutor.__file__).resolve().parent.parent
    pinned = f"setup.sh installs attn-tutor=={_version()} from PyPI instead"
    if not (source / "pyproject.toml").is_file():
        return None, [f"no attn-tutor source to build a wheel from; {pinned}"]
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", tmp, str(source)]
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        except (OSError, subprocess.TimeoutExpired) as err:
            return None, [f"could not build attn-tutor's wheel ({err}); {pinned}"]
        wheels = sorted(Path(tmp).glob("attn_tutor-*.whl"))
        if done.returncode != 0 or not wheels:
            last = (done.stderr.strip().splitlines() or ["no wheel made"])[-1]
            return None, [f"could not build attn-tutor's wheel ({last}); {pinned}"]
        return (wheels[0].name, wheels[0].read_bytes()), []
