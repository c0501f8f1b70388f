"""One error path, over every command: help works, bad usage exits 2, a bad file exits 1 naming
the path, an internal bug ends with a short "please report" message (exit 70), and
ATTN_TUTOR_DEBUG=1 lets the traceback through. The commands come from the app itself, so a new
command is covered (or, for the internal-bug test, must be added to ``BUG``) automatically.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import typer.main

from tutor.cli import app

COMMANDS = typer.main.get_command(app).commands  # type: ignore[attr-defined]
NAMES = sorted(COMMANDS)

# how to make each command reach its core: the arguments, and a core function to break
BUG = {
    "walk": (["cats-chase-mice"], "tutor.core.engine.derive"),
    "quiz": (["cats-chase-mice"], "tutor.core.engine.derive"),
    "explain": (["cats-chase-mice", "Z[cats, 1]"], "tutor.core.engine.derive"),
    "progress": ([], "tutor.assess.history.summarize"),
    "learn": (["--status"], "tutor.core.course.load_course"),
    "list": ([], "tutor.teach.listing.iter_lessons"),
    "softmax": (["1", "2"], "tutor.teach.warmup.softmax_row"),
    # commands of other issues: used only where the app has them
    "export": (["cats-chase-mice"], "tutor.core.engine.derive"),
    "grade": (["cats-chase-mice", "sheet.yaml"], "tutor.assess.classgrade.sheet_files"),
    "autograder": (
        ["cats-chase-mice", "-o", "autograder-out.zip"],
        "tutor.export.autograder.build",
    ),
    "schema": ([], "tutor.author.schema.schema_text"),
    "explore": (["cats-chase-mice"], "tutor.explore.model.Explorer.__init__"),
    "check": (["cats-chase-mice"], "tutor.author.check.check_lessons"),
    "new": (["a-lesson", "--tokens", "a b", "--output", "-"], "tutor.author.new.generate"),
    "variants": (
        ["cats-chase-mice", "--count", "2", "--output", "variants-out"],
        "tutor.author.variants.make_variants",
    ),
    "code": (["cats-chase-mice"], "tutor.export.code.program"),
    "check-code": (
        ["cats-chase-mice", str(Path(__file__).resolve().parent.parent / "fixtures/code/good.py")],
        "tutor.assess.codecheck.check_file",
    ),
}


def arguments(name: str) -> list:  # type: ignore[type-arg]
    return [p for p in COMMANDS[name].params if p.param_type_name == "argument"]


def _is_int(p) -> bool:  # type: ignore[no-untyped-def]
    descriptor = getattr(p, "type_descriptor", None)
    if descriptor is not None:  # typer 0.29 keeps the annotation
        return descriptor.annotation is int
    return getattr(p.type, "name", "") in ("integer", "int range", "integer range")  # click


def int_options(name: str) -> list:  # type: ignore[type-arg]
    """Options whose value is an int."""
    return [p for p in COMMANDS[name].params if p.param_type_name == "option" and _is_int(p)]


def clean(result) -> str:  # type: ignore[no-untyped-def]
    text = result.stdout + result.stderr
    assert "Traceback" not in text
    return text


def test_help_lists_every_command(run) -> None:  # type: ignore[no-untyped-def]
    result = run("--help")
    assert result.exit_code == 0
    for name in NAMES:
        assert name in result.stdout
    assert set(NAMES) >= {"walk", "list", "quiz", "progress", "explain", "softmax"}


@pytest.mark.parametrize("name", NAMES)
def test_every_command_has_help(run, name: str) -> None:  # type: ignore[no-untyped-def]
    result = run(name, "--help")
    assert result.exit_code == 0, result.stderr
    assert COMMANDS[name].help, f"{name} has no docstring"
    assert "Usage:" in clean(result)


@pytest.mark.parametrize("name", NAMES)
def test_bad_option_is_a_usage_error(run, name: str) -> None:  # type: ignore[no-untyped-def]
    result = run(name, "--no-such-option")
    assert result.exit_code == 2
    assert result.stderr.strip()
    clean(result)


@pytest.mark.parametrize("name", NAMES)
def test_bad_option_values_are_usage_errors(run, name: str) -> None:  # type: ignore[no-untyped-def]
    """Every integer option given a word, a decimal, or a value out of its range exits 2."""
    args = BUG[name][0]
    for opt in int_options(name):
        bounds = [str(opt.min - 1)] if getattr(opt, "min", None) is not None else []
        bounds += [str(opt.max + 1)] if getattr(opt, "max", None) is not None else []
        for value in ("abc", "1.5", *bounds):
            result = run(name, *args, opt.opts[0], value)
            assert result.exit_code == 2, (opt.opts, value, result.stdout, result.stderr)
            assert result.stderr.strip()
            clean(result)


def test_too_many_arguments(run) -> None:  # type: ignore[no-untyped-def]
    for name in ("walk", "quiz", "progress", "list"):
        result = run(name, "a", "b", "c")
        assert result.exit_code == 2, name
        clean(result)


def bad_files(tmp_path: Path) -> dict[str, Path]:
    folder = tmp_path / "folder.yaml"
    folder.mkdir()
    (tmp_path / "binary.yaml").write_bytes(b"\x00\xff\xfe\x01binary")
    (tmp_path / "latin1.yaml").write_bytes("title: caf\xe9\n".encode("latin-1"))
    (tmp_path / "empty.yaml").write_bytes(b"")
    (tmp_path / "deep.yaml").write_text("[" * 20_000)
    return {
        "missing": tmp_path / "missing.yaml",
        "folder": folder,
        "binary": tmp_path / "binary.yaml",
        "latin1": tmp_path / "latin1.yaml",
        "empty": tmp_path / "empty.yaml",
        "deep": tmp_path / "deep.yaml",
    }


def test_int_options_are_found() -> None:
    assert {p.name for p in int_options("walk")} == {"head", "precision"}


FILE_COMMANDS = [n for n in NAMES if any(p.name == "lesson" for p in arguments(n))]
NEEDED = {  # required options
    "variants": ["--count", "1", "--output", "variants-out"],
    "autograder": ["-o", "autograder-out.zip"],
}


@pytest.mark.parametrize("name", [n for n in FILE_COMMANDS if n != "progress"])
@pytest.mark.parametrize("kind", ["missing", "folder", "binary", "latin1", "empty", "deep"])
def test_bad_lesson_file_exits_1_naming_it(run, tmp_path: Path, name: str, kind: str) -> None:  # type: ignore[no-untyped-def]
    path = bad_files(tmp_path)[kind]
    args = [str(path) if p.name == "lesson" else "Z[cats, 1]" for p in arguments(name)]
    args += NEEDED.get(name, [])
    result = run(name, *args, input="")
    assert result.exit_code == 1, (result.stdout, result.stderr)
    assert str(path) in result.stderr
    assert "internal error" not in result.stderr
    clean(result)


@pytest.mark.parametrize("name", NAMES)
def test_internal_bug_asks_for_a_report(run, monkeypatch, name: str) -> None:  # type: ignore[no-untyped-def]
    assert name in BUG, f"add {name!r} to BUG: how to reach its core"
    args, target = BUG[name]

    def broken(*a, **k):  # type: ignore[no-untyped-def]
        raise RuntimeError("a deliberate bug")

    monkeypatch.setattr(target, broken)
    result = run(name, *args, input="")
    assert result.exit_code == 70, (result.stdout, result.stderr)
    assert "internal error (RuntimeError" in result.stderr
    assert "please report" in result.stderr
    assert "ATTN_TUTOR_DEBUG=1" in result.stderr
    assert len(result.stderr.strip().splitlines()) <= 3  # short, at any width
    clean(result)

    debug = run(name, *args, input="", env={"ATTN_TUTOR_DEBUG": "1"})
    assert isinstance(debug.exception, RuntimeError)  # re-raised: a developer sees it all
    assert "a deliberate bug" in str(debug.exception)


def test_debug_traceback_in_a_real_process(tmp_path: Path) -> None:
    """Through ``python -m tutor``: a bug under ATTN_TUTOR_DEBUG=1 prints its traceback."""
    import os
    import subprocess
    import sys

    from tests.conftest import PLAIN_ENV, ROOT

    code = (
        "import sys, tutor.core.engine\n"
        "def broken(*a): raise RuntimeError('a deliberate bug')\n"
        "tutor.core.engine.derive = broken\n"
        "from tutor.cli import main\n"
        "sys.argv = ['attn-tutor', 'walk']\n"
        "main()\n"
    )
    env = {**os.environ, **PLAIN_ENV}
    plain = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=env
    )
    assert plain.returncode == 70
    assert "Traceback" not in plain.stderr and "please report" in plain.stderr
    env["ATTN_TUTOR_DEBUG"] = "1"
    debug = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=env
    )
    assert debug.returncode == 1
    assert "Traceback" in debug.stderr and "a deliberate bug" in debug.stderr
