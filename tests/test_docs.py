"""Docs that cannot lie (issue 42): the site builds with ``mkdocs build --strict`` (no broken
link or anchor) and works from files, offline; every command, option and lesson key has a
reference entry with words in it; every module of ``tutor/`` is named on the architecture page;
every shell example that shows its output is run and compared."""

from __future__ import annotations

import importlib.util
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

DOCS = ROOT / "docs"
README = ROOT / "README.md"


def docsgen():  # type: ignore[no-untyped-def]
    """tools/docsgen.py, the mkdocs hook that writes the reference pages."""
    spec = importlib.util.spec_from_file_location("docsgen", ROOT / "tools" / "docsgen.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site built once, strictly, into a folder of the test's own."""
    if importlib.util.find_spec("mkdocs") is None or importlib.util.find_spec("material") is None:
        pytest.skip("mkdocs-material is not installed: pip install -e '.[test]' brings it")
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(ROOT / "mkdocs.yml"),
         "-d", str(out)],
        cwd=ROOT, capture_output=True, text=True, env=env, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-4000:]
    return out


def test_the_site_builds_strictly_with_every_page(site: Path) -> None:
    for page in ("index", "reference/commands", "reference/lesson-format", "reference/api"):
        assert (site / f"{page}.html").is_file(), page
    api = (site / "reference" / "api.html").read_text(encoding="utf-8")
    for name in ("lesson", "judge", "grade", "check_function", "Derivation"):
        assert f'id="tutor.api.{name}"' in api, name  # mkdocstrings rendered the docstrings


def test_the_site_works_offline_from_files(site: Path) -> None:
    """Nothing is fetched: no script, style, font or picture from the web (links a reader may
    follow are fine), and pages link to files, not to folders a server would complete."""
    fetched = re.compile(r"""(?:src|srcset)=["']?https?:|<link[^>]+href=["']?https?:""", re.I)
    for page in site.rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        assert not fetched.search(text), f"{page}: {fetched.search(text).group(0)}"  # type: ignore[union-attr]
        for host in ("fonts.googleapis", "fonts.gstatic", "cdn.jsdelivr", "unpkg.com"):
            assert host not in text, f"{page} names {host}"
    css = "".join(p.read_text(encoding="utf-8") for p in site.rglob("*.css"))
    assert "@import url(http" not in css and "fonts.googleapis" not in css
    # the offline plugin: search works from file:// without a server
    assert list((site / "search").glob("search_index.js")), "no offline search index"


def test_every_command_and_option_has_a_reference_entry(site: Path) -> None:
    gen = docsgen()
    page = gen.commands_page()
    built = (site / "reference" / "commands.html").read_text(encoding="utf-8")
    _, _, commands = gen.app_commands()
    assert len(commands) >= 17
    for name, cmd in commands:
        assert f"## `{name}` {{#{name}}}" in page, name
        assert f'id="{name}"' in built, name
        assert (cmd.help or "").strip(), f"{name} has no help"
        for param in cmd.params:
            if getattr(param, "hidden", False) or param.param_type_name == "argument":
                continue
            rows = [line for line in page.split(f"## `{name}`")[1].split("\n## ")[0].splitlines()]
            row = next((r for r in rows if r.startswith(f"| `{param.opts[0]}`")), None)
            assert row, f"{name} {param.opts[0]} has no reference entry"
            assert row.rstrip(" |").split(" | ")[-1].strip(), f"{name} {param.opts[0]}: no words"


def test_every_lesson_key_has_a_reference_entry(site: Path) -> None:
    from tutor.core import spec

    page = docsgen().lesson_format_page()
    built = (site / "reference" / "lesson-format.html").read_text(encoding="utf-8")
    entries = {
        m.group(1): m.group(2).strip()
        for m in re.finditer(r"^\| `([^`]+)`[^|]*\|[^|]*\| (.*) \|$", page, re.M)
    }
    nested = {
        "heads": (*spec.HEAD_KEYS, *spec.GIVEN_HEAD_KEYS, *spec.QUERY_HEAD_KEYS),
        "kv_heads": spec.KV_HEAD_KEYS,
        "quiz": spec.QUIZ_KEYS,
        "variant": spec.VARIANT_KEYS,
        "next": spec.NEXT_KEYS,
    }
    keys = [*spec.TOP_KEYS, *(f"{p}.{k}" for p, ks in nested.items() for k in ks)]
    for key in keys:
        assert entries.get(key), f"lesson key {key} has no reference entry"
        assert f"<code>{key}</code>" in built, key
    unknown = set(entries) - set(keys)
    assert not unknown, f"entries for keys the loader does not know: {unknown}"


def outside_brackets(text: str) -> str:
    """The text without what stands in (possibly nested) parentheses: the module names, not
    the code a module's description quotes."""
    depth, kept = 0, []
    for char in text:
        depth += char == "("
        if depth == 0:
            kept.append(char)
        depth -= char == ")" and depth > 0
    return "".join(kept)


def test_every_module_is_named_on_the_architecture_page() -> None:
    """Each package's row of the table names every module in it, and nothing else, so the page
    cannot fall behind the code."""
    page = (DOCS / "explanation" / "architecture.md").read_text(encoding="utf-8")
    rows = {
        m.group(1): m.group(2) for m in re.finditer(r"^\| `tutor/([\w.]+)` \| (.*?) \|", page, re.M)
    }
    package = ROOT / "tutor"
    for folder in sorted(p for p in package.iterdir() if (p / "__init__.py").is_file()):
        modules = {p.stem for p in folder.glob("*.py") if p.stem != "__init__"}
        assert folder.name in rows, f"tutor/{folder.name} has no row on the architecture page"
        named = set(re.findall(r"`(\w+)`", outside_brackets(rows[folder.name])))
        assert modules <= named, f"tutor/{folder.name}: not named: {sorted(modules - named)}"
        assert named <= modules, f"tutor/{folder.name}: no such module: {sorted(named - modules)}"
    for top in package.glob("*.py"):
        if top.stem != "__init__":
            assert top.name in rows, f"tutor/{top.name} has no row on the architecture page"


# -- shell examples -------------------------------------------------------------------------------

PAGES = [*sorted(DOCS.rglob("*.md")), README]


def console_examples() -> list[tuple[str, str, list[str]]]:
    """Every ``console`` block of the docs and the README: (where, command, expected lines).
    A ``$ `` line is a command; the lines under it are its output; a line ``...`` stands for
    any number of lines."""
    found = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for block in re.findall(r"^```console\n(.*?)^```", text, re.S | re.M):
            command, expected = None, []
            for line in [*block.splitlines(), "$ "]:
                if line.startswith("$ "):
                    if command:
                        found.append((page.relative_to(ROOT).as_posix(), command, expected))
                    command, expected = line[2:].strip(), []
                else:
                    expected.append(line.rstrip())
    return found


def matches(expected: list[str], got: list[str]) -> bool:
    """``...`` matches any run of lines (possibly none); every other line must be equal."""
    if not expected:
        return not got
    if expected[0] == "...":
        return any(matches(expected[1:], got[i:]) for i in range(len(got) + 1))
    return bool(got) and got[0] == expected[0] and matches(expected[1:], got[1:])


EXAMPLES = console_examples()


def test_there_are_examples_that_show_their_output() -> None:
    assert len(EXAMPLES) >= 5
    assert any(where == "README.md" for where, _, _ in EXAMPLES)


@pytest.mark.parametrize(
    "where,command,expected", EXAMPLES, ids=[f"{w}:{c}" for w, c, _ in EXAMPLES]
)
def test_a_shell_example_shows_what_the_command_prints(
    where: str, command: str, expected: list[str], tmp_path: Path
) -> None:
    words = shlex.split(command)
    env = {**os.environ, "NO_COLOR": "1", "TERM": "dumb", "COLUMNS": "100"}
    while "=" in words[0]:  # COLUMNS=80 attn-tutor …
        name, value = words.pop(0).split("=", 1)
        env[name] = value
    assert words[0] == "attn-tutor", f"{where}: an example runs attn-tutor: {command}"
    env["ATTN_TUTOR_HOME"] = str(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "tutor", *words[1:]],
        cwd=tmp_path, capture_output=True, text=True, env={**env, "PYTHONPATH": str(ROOT)},
        timeout=120,
    )  # fmt: skip
    got = [line.rstrip() for line in done.stdout.splitlines()]
    while got and not got[-1]:
        got.pop()
    while expected and not expected[-1]:
        expected = expected[:-1]
    assert matches(expected, got), f"{where}: `{command}` printed:\n" + "\n".join(got)
