"""The walk through the CLI: golden output, the JSON contract, options and usage errors.

Regenerate the goldens after an intended change of output with:
    UPDATE_GOLDEN=1 python -m pytest tests/test_walk.py
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, PLAIN_ENV, bundled_lessons

GOLDEN = FIXTURES / "golden"


def check_golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if os.environ.get("UPDATE_GOLDEN"):
        path.write_text(text)
    assert path.exists(), f"missing golden {path}; run with UPDATE_GOLDEN=1 to create it"
    assert text == path.read_text()


@pytest.mark.parametrize(
    ("args", "golden"),
    [
        (("walk", "cats-chase-mice"), "walk-cats-chase-mice.txt"),
        (
            ("walk", "cats-chase-mice", "--exact", "--step", "scaled", "--step", "weights,Z"),
            "walk-cats-exact.txt",
        ),
    ],
)
def test_walk_golden_width_100_no_colour(run, args, golden: str) -> None:  # type: ignore[no-untyped-def]
    result = run(*args)
    assert result.exit_code == 0, result.stderr
    check_golden(golden, result.stdout)


def test_walk_at_80_columns_splits_wide_tables_instead_of_squashing(run) -> None:  # type: ignore[no-untyped-def]
    result = run("walk", "the-cake", "--exact", env={"COLUMNS": "80"})
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert max(len(line.rstrip()) for line in lines) <= 80
    assert "…" not in result.stdout
    assert "columns" in result.stdout  # a column block title such as "columns 1–5"


def test_walk_shows_the_articles_working(run) -> None:  # type: ignore[no-untyped-def]
    out = run("walk").stdout
    assert "= 1·1 + 0·0 + 1·1 + 0·0 = 2" in out
    assert "= 2·2 + 0·1 = 4" in out
    assert "4 / √2 = 2√2 ≈ 2.83" in out
    assert "0.16 × [2, 1] + 0.67 × [0, 2] + 0.16 × [1, 1]" in out
    assert "[0.49, 1.67]" in out
    assert "[0.48, 1.66]" in out  # the note about rounded inputs
    assert "(3 × 4) · (4 × 2) = 3 × 2" in out


def test_json_contract(run) -> None:  # type: ignore[no-untyped-def]
    result = run("walk", "cats-chase-mice", "--json", "--exact")
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    assert data["lesson"] == "cats-chase-mice"
    assert data["tokens"] == ["cats", "chase", "mice"]
    names = [s["name"] for s in data["steps"]]
    assert names == ["X", "W_Q", "W_K", "W_V", "Q", "K", "V", "scores", "scaled", "weights", "Z"]
    z = data["steps"][-1]
    assert z["head"] is None and z["rows"] == ["cats", "chase", "mice"] and z["cols"] == ["1", "2"]
    assert z["value"][0][0] == pytest.approx(3 / (2 + 2.718281828459045**2**0.5), rel=1e-15)
    assert z["exact"][0][0] == "3/(2 + exp(sqrt(2)))"
    plain = json.loads(run("walk", "--json").stdout)
    assert "exact" not in plain["steps"][0]


def test_json_with_step_filter(run) -> None:  # type: ignore[no-untyped-def]
    data = json.loads(run("walk", "--json", "--step", "Q,Z").stdout)
    assert [s["name"] for s in data["steps"]] == ["Q", "Z"]


@pytest.mark.parametrize("path", bundled_lessons(), ids=lambda p: p.stem)
def test_every_bundled_lesson_walks(run, path) -> None:  # type: ignore[no-untyped-def]
    result = run("walk", path.stem)
    assert result.exit_code == 0, result.stderr
    # the column layout reads the product the other way round: Z = V · weights
    assert "Z = weights · V" in result.stdout or "Z = V · weights" in result.stdout


def test_precision_option(run) -> None:  # type: ignore[no-untyped-def]
    out = run("walk", "--precision", "4", "--step", "Z").stdout
    assert "0.4907" in out


@pytest.mark.parametrize(
    ("args", "code", "fragment"),
    [
        (("walk", "--step", "sores"), 2, "unknown step 'sores' (did you mean scores?)"),
        (("walk", "--step", "masked"), 2, "has no 'masked' step"),
        (("walk", "--precision", "11"), 2, "--precision"),
        (("walk", "nope"), 1, "no lesson named 'nope'"),
        (("walk", "--head", "3"), 2, "has a single head"),
        (("walk", "the-cake-two-heads", "--head", "3"), 2, "has 2 heads"),
        (("frobnicate",), 2, "No such command"),
    ],
)
def test_errors_exit_codes(run, args, code: int, fragment: str) -> None:  # type: ignore[no-untyped-def]
    result = run(*args)
    assert result.exit_code == code
    assert fragment in result.stderr + result.stdout
    assert "Traceback" not in result.stderr + result.stdout


def test_list_shows_bundled_lessons(run) -> None:  # type: ignore[no-untyped-def]
    out = run("list", env={"COLUMNS": "200"}).stdout
    assert "cats-chase-mice" in out and "Cats chase mice" in out


HEAVY = ("sympy", "numpy", "mpmath", "textual")


@pytest.mark.parametrize("args", [["--help"], ["list"], ["list", "--help"], ["walk", "--help"]])
def test_help_and_list_do_not_import_sympy_numpy_or_textual(args: list[str]) -> None:
    """Start-up at the floor (issue 43, item 6; the times are bench/bench.py's): ``--help`` and
    ``list`` load none of the heavy dependencies, and ``list`` not even Rich's console."""
    code = (
        "import sys; from tutor.cli import app; from typer.testing import CliRunner; "
        f"r = CliRunner().invoke(app, {args!r}); assert r.exit_code == 0, r.output; "
        f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize("args", [["--help"], ["--bogus"], ["cats-chase-mice", "--step", "x"]])
def test_the_entry_point_runs_one_command_as_the_app_does(args: list[str]) -> None:
    """``main`` builds only the command it runs (typer converts every registered command before
    parsing: bench/README.md); each command's help and errors are the app's, word for word."""
    import typer.main
    from typer.testing import CliRunner

    from tutor.cli import COMMANDS, app, app_for

    runner = CliRunner()
    for name in COMMANDS:
        one = app_for([name, *args])
        assert list(typer.main.get_command(one).commands) == [name]  # type: ignore[attr-defined]
        got = runner.invoke(one, [name, *args], env=PLAIN_ENV)
        want = runner.invoke(app, [name, *args], env=PLAIN_ENV)
        assert (got.exit_code, got.output) == (want.exit_code, want.output), name
    assert app_for(["--help"]) is app and app_for([]) is app and app_for(["wlak"]) is app


def run_main(*args: str) -> tuple[str, list[str]]:
    """Run the console script's ``main`` in a fresh process: its output, and the lines its
    probe wrote (whether the collector was on after importing the command line, the command
    modules imported, and whether sympy was imported before the command's module)."""
    code = (
        "import gc, sys; from tutor.cli import main; print(gc.isenabled(), file=sys.stderr)\n"
        f"sys.argv = ['attn-tutor', *{list(args)!r}]\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "names = list(sys.modules)\n"
        "print(sorted(m for m in names if m.startswith('tutor.cli.')), file=sys.stderr)\n"
        "print('sympy' in names and names.index('sympy') < names.index('tutor.cli.teach'), "
        "file=sys.stderr)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, **PLAIN_ENV},
    )
    return out.stdout, out.stderr.splitlines()


def test_a_run_imports_its_commands_module_alone_and_sympy_first() -> None:
    """The console script imports the module of the command it runs, not every command's, and
    sympy before it, at the bottom of the stack (start-up, bench/README.md); importing the
    command line turns the collector off only while typer loads."""
    out, (enabled, modules, sympy_first) = run_main("walk", "cats-chase-mice", "--step", "Q")
    assert "Q[cats, 1]" in out
    assert enabled == "True"
    assert modules == "['tutor.cli.common', 'tutor.cli.exits', 'tutor.cli.teach']"
    assert sympy_first == "True"
    out, (_, _, sympy_first) = run_main("walk", "--help")  # help stays without sympy
    assert "--step" in out and sympy_first == "False"


def test_list_prints_without_a_rich_console(tmp_path: Path) -> None:
    """``list`` is plain columns: Rich's console and text (about 20 ms of imports) stay out."""
    code = (
        "import sys; from tutor.cli import main; sys.argv = ['attn-tutor', 'list']\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in ('rich.console', 'rich.text', 'tutor.text.steps') "
        "if m in sys.modules), file=sys.stderr)"
    )
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path)}
    for _ in range(2):  # the second with every summary remembered
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
        )
    assert "cats-chase-mice" in out.stdout
    assert out.stderr.strip() == "[]"


def _python(code: str) -> str:
    """What a fresh interpreter prints after running ``code``."""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return out.stdout.strip()


def test_engine_does_not_import_rich_typer_or_yaml() -> None:
    """The engine works on a Lesson (frozen data); reading YAML is the lesson file's job."""
    code = (
        "import sys, tutor.core.engine; "
        "print([m for m in ('rich', 'typer', 'yaml') if m in sys.modules])"
    )
    assert _python(code) == "[]"


def test_core_modules_do_not_import_rich_or_typer() -> None:
    modules = [
        "tutor.core.engine",
        "tutor.core.lessonfile",
        "tutor.core.catalog",
        "tutor.core.numbers",
        "tutor.assess.judge",
        "tutor.text.format",
    ]
    code = (
        f"import sys, {', '.join(modules)}; "
        "print([m for m in ('rich', 'typer') if m in sys.modules])"
    )
    assert _python(code) == "[]"


def test_core_imports_nothing_above_it() -> None:
    """core is the bottom layer: importing all of it loads no other tutor package."""
    code = (
        "import sys, pkgutil, importlib, tutor.core as c; "
        "mods = [m.name for m in pkgutil.iter_modules(c.__path__)]; "
        "[importlib.import_module('tutor.core.' + m) for m in mods]; "
        "print(sorted({m.split('.')[1] for m in sys.modules if m.startswith('tutor.')}))"
    )
    assert _python(code) == "['core']"


def test_quiz_does_not_import_render() -> None:
    code = (
        "import sys; from tutor.assess import quiz; from tutor.core.engine import derive; "
        "from tutor.core.catalog import find_lesson; "
        "from tutor.core.lessonfile import load_lesson; "
        "d = derive(load_lesson(find_lesson('cats-chase-mice'))); "
        "q = quiz.Question(d.step('Z'), 0, 0); quiz.hint(q, 2); quiz.working(q, 2); "
        "print('tutor.teach.walk' in sys.modules)"
    )
    assert _python(code) == "False"


def test_python_dash_m_works() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "tutor", "walk", "--json", "--step", "Q"],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0
    assert json.loads(out.stdout)["steps"][0]["value"][0] == [2.0, 0.0]


def test_a_table_title_wider_than_its_table_is_not_cut(run) -> None:  # type: ignore[no-untyped-def]
    out = run("walk", "the-cake-two-heads", "--step", "Q", "--head", "1", env={"COLUMNS": "80"})
    assert "head1.W_Q (4 × 2)" in out.stdout


def test_a_whole_root_keeps_scaled_scores_exact(run) -> None:  # type: ignore[no-untyped-def]
    out = run("walk", "the-cake", "--step", "scaled").stdout
    assert "divided by √4 = 2, and the scaled scores stay exact" in out
    assert "scaled[it, cake] = 2 / √4 = 2 / 2 = 1" in out  # the lesson's focus


def test_huge_scores_walk_quickly_without_internal_error(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "huge.yaml"
    path.write_text(
        "title: t\ntokens: [a, b]\nX: [[1e15, 0], [0, 1]]\n"
        "W_Q: [[1e15], [0]]\nW_K: [[1], [0]]\nW_V: [[1], [0]]\n"
    )
    commands = [
        ("walk", str(path)),
        ("walk", str(path), "--exact"),
        ("explain", str(path), "weights[a, b]"),
        ("export", str(path), "--format", "md"),
    ]
    for args in commands:
        result = run(*args)
        assert result.exit_code == 0, (args, result.stderr)
    assert "weights" in run("walk", str(path)).stdout


def test_closed_stdin_does_not_crash_quiz_or_pause() -> None:
    import subprocess
    import sys

    for args in (["quiz", "--count", "1"], ["walk", "--pause", "--step", "Q"]):
        out = subprocess.run(
            [sys.executable, "-m", "tutor", *args],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert out.returncode == 0, out.stderr
        closed = subprocess.run(
            [
                sys.executable,
                "-c",
                "import os, sys, runpy; os.close(0); sys.stdin = None; "
                f"sys.argv = ['attn-tutor', *{args!r}]; "
                "runpy.run_module('tutor', run_name='__main__')",
            ],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert closed.returncode == 0, closed.stderr
        assert "internal error" not in closed.stderr


def test_empty_step_option_is_a_usage_error(run) -> None:  # type: ignore[no-untyped-def]
    result = run("walk", "--step", ",")
    assert result.exit_code == 2
    assert "--step needs a step name" in result.stderr


def three_token_lesson(folder, tokens: str):  # type: ignore[no-untyped-def]
    """A tiny valid lesson with these tokens (YAML flow list text), as a path."""
    path = folder / "tokens.yaml"
    path.write_text(
        f"title: Tokens\ntokens: {tokens}\nX: [[1, 0], [0, 1], [1, 1]]\n"
        "W_Q: [[1], [0]]\nW_K: [[1], [1]]\nW_V: [[1], [2]]\n"
    )
    return path


def test_tokens_are_shown_as_typed_not_as_emoji_codes(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    result = run(
        "walk", str(three_token_lesson(tmp_path, '[":smile:", a, b]')), "--step", "weights"
    )
    assert result.exit_code == 0, result.stderr
    assert "softmax of the :smile: row" in result.stdout
    assert "│ :smile: │" in result.stdout  # the softmax table's key column
    assert "😄" not in result.stdout


def test_wide_character_tokens_keep_the_table_borders_aligned(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    result = run(
        "walk", str(three_token_lesson(tmp_path, "[猫, 追う, ねずみ]")), "--step", "scores"
    )
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    start = next(k for k, x in enumerate(lines) if x.startswith("shape:"))
    table = [x for x in lines[start:] if x.startswith(("│", "├", "╭", "╰"))]  # Q · Kᵀ = scores
    header = "│ 猫 │ 追う │ ねずみ │"  # padded by cells, not characters, and not cut off
    assert sum(x.count(header) for x in table) == 2  # Kᵀ and scores
