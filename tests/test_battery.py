"""The battery (issue 31, item 2): generated lessons of every kind and of the legal combinations,
small and at the limits, through every command. None may exit 70 (an internal error) or print a
traceback, and each run happens in a child process whose timeout bounds its cost (a bound, not a
timed assertion: a run that never ends fails instead of hanging the suite).

Two parts:

- by default, a slice: every kind of lesson, small, each through one command (the commands taken
  in turn, so the slice touches every kind and every command once);
- ``-m battery``: every kind at every size and every legal pair of features, through every
  command. Minutes of work, so it is deselected unless asked for (``pytest -m battery``).
"""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests import lessongen
from tests.conftest import PLAIN_ENV, ROOT
from tests.test_combinations import LEGAL, with_implied
from tutor.core.spec import MAX_DIM, MAX_HEADS, MAX_TOKENS

MAIN = "from tutor.cli import main; main()"
TIMEOUT = 180  # seconds for one command on one lesson: the bound, far above any normal run

# lesson kinds: lessongen.KINDS, with the source sentence both shorter and longer than the target
KINDS = (*(k for k in lessongen.KINDS if k != "cross"), "cross-shorter", "cross-longer")
# sizes: small; entries at the extremes (1e30 and 1e-30); fractions with 15-digit denominators;
# and the largest shapes (32 tokens, dimension 16, 4 heads)
SIZES = ("small", "huge", "long", "wide")

# the features each kind has (the names of spec.FEATURES), and its positions key
KIND_FEATURES: dict[str, set[str]] = {
    "single": set(),
    "causal": {"causal"},
    "heads": {"heads", "W_O"},
    "given": {"positions"},
    "sinusoidal": {"positions"},
    "rope": {"rope"},
    "cross-shorter": {"source"},
    "cross-longer": {"source"},
    "grouped": {"grouped", "W_O"},
    "next": {"next"},
    "columns": {"columns"},
    "bias": {"bias"},
}


def lesson_text(
    features: set[str], size: str, seed: int, positions: str = "", longer_source: bool = False
) -> str:
    """A legal lesson with ``features`` (spec.FEATURES names) at ``size`` (``SIZES``); a
    source sentence is one token shorter than the target, or longer with ``longer_source``."""
    rng = random.Random(seed)
    f = with_implied(features)
    entries = {"small": "idf", "huge": "hi", "long": "l", "wide": "idf"}[size]
    wide = size == "wide"
    n = MAX_TOKENS if wide else 3
    heads = (MAX_HEADS if wide else 2) if "heads" in f else 0
    d_model = MAX_DIM if wide else 2
    d_k = MAX_DIM if wide else 2  # even: RoPE turns pairs
    d_v = (MAX_DIM // heads if heads else MAX_DIM) if wide else 2
    if "rope" in f:
        positions = "rope"
    elif "positions" in f:
        positions = positions or rng.choice(["given", "sinusoidal"])
    else:
        positions = "none"
    source = 0
    if "source" in f:
        if longer_source and wide:  # the source at the limit, the target one shorter
            n -= 1
        source = n + 1 if longer_source else n - 1
    return lessongen.features_text(
        rng,
        f,
        n,
        d_model,
        d_k,
        d_v,
        heads,
        heads // 2,
        entries,
        positions,
        source,
        d_out=MAX_DIM if wide else None,
    )


def kind_lesson(kind: str, size: str, seed: int = 0) -> str:
    positions = kind if kind in ("given", "sinusoidal") else ""
    return lesson_text(KIND_FEATURES[kind], size, seed, positions, kind == "cross-longer")


# ---------------------------------------------------------------------------------------------
# the commands: each a list of runs (argv after the program), made from the lesson's path and a
# folder of its own; a run may need what an earlier run printed (the sheet, a cell's name)


def cli(args: list[str], home: Path, stdin: str = "") -> subprocess.CompletedProcess[str]:
    """One run of attn-tutor in a child process, bounded by ``TIMEOUT``."""
    env = {**PLAIN_ENV, "ATTN_TUTOR_HOME": str(home), "PATH": "/usr/bin:/bin", "HOME": str(home)}
    try:
        return subprocess.run(
            [sys.executable, "-c", MAIN, *args],
            input=stdin,
            capture_output=True,
            text=True,
            cwd=ROOT,
            env=env,
            timeout=TIMEOUT,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"attn-tutor {' '.join(args)} did not finish in {TIMEOUT} s")


def sound(done: subprocess.CompletedProcess[str], args: list[str]) -> None:
    """A legal lesson: the command succeeds, with no internal error and no traceback."""
    said = f"attn-tutor {' '.join(args)}: exit {done.returncode}\n{done.stderr[-3000:]}"
    assert "Traceback" not in done.stdout + done.stderr, said
    assert "internal error" not in done.stderr, said
    assert done.returncode == 0, said


def last_cell(path: Path, home: Path) -> str:
    """The name of the last cell of the lesson's last step (the one that depends on the most),
    read from walk --json --exact, which is itself checked."""
    args = ["walk", str(path), "--json", "--exact"]
    done = cli(args, home)
    sound(done, args)
    step = json.loads(done.stdout)["steps"][-1]
    head = f"head{step['head']}." if step["head"] is not None else ""
    return f"{head}{step['name']}[{step['rows'][-1]}, {step['cols'][-1]}]"


def run_walk(path: Path, home: Path) -> None:
    sound(cli(["walk", str(path)], home), ["walk"])


def run_explain(path: Path, home: Path) -> None:
    args = ["explain", str(path), last_cell(path, home)]
    sound(cli(args, home), args)


def run_export(fmt: str) -> Callable[[Path, Path], None]:
    def export(path: Path, home: Path) -> None:
        out = home / f"{path.stem}.{fmt}"
        args = ["export", str(path), "--format", fmt, "-o", str(out), "--force"]
        sound(cli(args, home), args)
        assert out.stat().st_size > 0
        if fmt == "pdf":
            assert out.read_bytes().startswith(b"%PDF-")

    return export


def run_quiz(path: Path, home: Path) -> None:
    """Scripted answers: a wrong number, the extremes, a fraction, junk, a skip, a right-looking
    0.5, and then the end of input."""
    answers = "0\n1e30\n-1e-30\n7/3\nabc\n\n0.5\n1e30\n"
    args = ["quiz", str(path), "--seed", "3", "--count", "8"]
    sound(cli(args, home, answers), args)


def run_grade(path: Path, home: Path) -> None:
    """A blank answer sheet of the lesson, graded."""
    sheet = home / f"{path.stem}-sheet.yaml"
    args = ["export", str(path), "--format", "sheet", "-o", str(sheet), "--force"]
    sound(cli(args, home), args)
    text = sheet.read_text(encoding="utf-8")
    text = re.sub(r"^(student:).*$", r"\1 Ann Lee", text, count=1, flags=re.M)
    sheet.write_text(text, encoding="utf-8")
    args = ["grade", str(path), str(sheet)]
    sound(cli(args, home), args)


def run_simple(*command: str) -> Callable[[Path, Path], None]:
    def simple(path: Path, home: Path) -> None:
        args = [command[0], str(path), *command[1:]]
        sound(cli(args, home), args)

    return simple


COMMANDS: dict[str, Callable[[Path, Path], None]] = {
    "walk": run_walk,
    "walk --exact": run_simple("walk", "--exact"),
    "walk --json --exact": lambda path, home: bool(last_cell(path, home)),  # type: ignore[dict-item]
    **{f"export {f}": run_export(f) for f in ("md", "tex", "sheet", "svg", "typ", "pdf")},
    "explain": run_explain,
    "quiz": run_quiz,
    "grade": run_grade,
    "check": run_simple("check"),
    "code": run_simple("code", "-o", "-"),
}


def lesson_file(tmp_path: Path, text: str) -> tuple[Path, Path]:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    path = tmp_path / "battery.yaml"
    path.write_text(text, encoding="utf-8")
    return path, home


# ---------------------------------------------------------------------------------------------
# the default slice: every kind, small, through one command each (in turn)

SLICE = [(kind, list(COMMANDS)[k % len(COMMANDS)]) for k, kind in enumerate(KINDS)]
SLICE += [  # and the commands the kinds did not reach, on the lessons of the last kinds
    (KINDS[-1 - k], name) for k, name in enumerate(list(COMMANDS)[len(KINDS) :])
]


@pytest.mark.parametrize(("kind", "command"), SLICE, ids=[f"{k}-{c}" for k, c in SLICE])
def test_a_small_lesson_of_each_kind_goes_through_a_command(
    tmp_path: Path, kind: str, command: str
) -> None:
    path, home = lesson_file(tmp_path, kind_lesson(kind, "small"))
    COMMANDS[command](path, home)


def test_the_slice_reaches_every_kind_and_every_command() -> None:
    assert {k for k, _ in SLICE} == set(KINDS)
    assert {c for _, c in SLICE} == set(COMMANDS)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("size", SIZES)
def test_every_generated_lesson_is_legal(tmp_path: Path, kind: str, size: str) -> None:
    """The battery's lessons are what they claim: legal, of their kind, at their size."""
    from tutor.core.lessonfile import load_lesson

    path, _ = lesson_file(tmp_path, kind_lesson(kind, size))
    lesson = load_lesson(path)
    assert with_implied(KIND_FEATURES[kind]) <= lesson.features
    if size == "wide":
        assert max(len(lesson.tokens), len(lesson.source or ())) == MAX_TOKENS
        assert len(lesson.X[0]) == MAX_DIM
    if kind.startswith("cross"):
        longer = len(lesson.source) > len(lesson.tokens)
        assert longer == (kind == "cross-longer")


# ---------------------------------------------------------------------------------------------
# the whole battery: pytest -m battery


@pytest.mark.battery
@pytest.mark.parametrize("command", list(COMMANDS))
@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("kind", KINDS)
def test_battery_every_kind_and_size(tmp_path: Path, kind: str, size: str, command: str) -> None:
    path, home = lesson_file(tmp_path, kind_lesson(kind, size, seed=SIZES.index(size)))
    COMMANDS[command](path, home)


@pytest.mark.battery
@pytest.mark.parametrize("command", list(COMMANDS))
@pytest.mark.parametrize("size", ("small", "huge"))
@pytest.mark.parametrize("pair", LEGAL, ids=lambda p: "+".join(sorted(p)))
def test_battery_every_legal_pair(tmp_path: Path, pair: set[str], size: str, command: str) -> None:
    path, home = lesson_file(tmp_path, lesson_text(pair, size, seed=11))
    COMMANDS[command](path, home)


def test_walk_exact_of_a_columns_lesson_at_the_limits_elides_as_rows_do(tmp_path: Path) -> None:
    """Found by the battery's run of bench --limits: walk --exact of a 32-token columns lesson
    ran 73 s (1 s in rows): its tables were drawn from a turned copy of each step, which the
    guard against exact forms too long to build did not recognise. Now the same cells are
    elided (…) in both layouts, and the run is bounded by the child's timeout."""
    columns = kind_lesson("columns", "wide")
    rows = columns.replace("layout: columns\n", "")
    said = {}
    for name, text in (("columns", columns), ("rows", rows)):
        (tmp_path / name).mkdir()
        path, home = lesson_file(tmp_path / name, text)
        args = ["walk", str(path), "--exact", "--step", "weights,Z"]
        done = cli(args, home)
        sound(done, args)
        said[name] = done.stdout
    assert said["columns"].count("… ≈") == said["rows"].count("… ≈") > 0
    assert "exact form too long to show" in said["columns"]
