"""The README's two commands are the ones that work on a fresh machine, and CI runs the same
test command: if one changes, the others must follow."""

from __future__ import annotations

import re

from tests.conftest import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")
CI = (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def quick_start() -> list[str]:
    """The commands of the Quick start section's code blocks, in order."""
    section = README.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    return [block.strip() for block in re.findall(r"```sh\n(.*?)```", section, re.S)]


def test_quick_start_has_the_install_and_the_test_command() -> None:
    install, tests = quick_start()
    assert install.endswith("attn-tutor walk cats-chase-mice")
    assert "pytest" in tests and "'.[test]'" in tests


def test_commands_need_no_python_and_install_into_a_venv() -> None:
    """PEP 668 refuses `pip install` into Debian's and Ubuntu's Python, which may have no
    `python` at all: each command makes .venv with python3 and uses its Python."""
    for command in quick_start():
        assert command.startswith("python3 -m venv .venv && .venv/bin/python -m pip install ")
        assert not re.search(r"(^|&& )python ", command), command


def test_ci_runs_exactly_the_readme_test_command() -> None:
    _, tests = quick_start()
    lines = [line for line in CI.splitlines() if not line.startswith("#")]
    assert any(line.startswith(f"{tests} ||") for line in lines), "not the README's command"
    assert "ruff check . && ruff format --check ." in CI
    assert '"$status" -eq 5' in CI  # no tests collected fails CI


def test_development_section_uses_the_same_test_command() -> None:
    _, tests = quick_start()
    development = README.split("## Development", 1)[1]
    assert tests in development
    assert tests in (ROOT / "docs" / "how-to" / "develop.md").read_text(encoding="utf-8")
    assert quick_start()[0] in (ROOT / "docs" / "index.md").read_text(encoding="utf-8")


def test_the_readme_fits_on_a_screen_and_its_links_lead_somewhere() -> None:
    """At most 150 lines (issue 42): the rest lives in the docs site, which the README links."""
    assert len(README.splitlines()) <= 150
    links = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", README)
    assert any(link.startswith("docs/") for link in links)
    for link in links:
        if not link.startswith("http"):
            assert (ROOT / link).exists(), link
