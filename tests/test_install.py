"""The install advice of a command that needs an extra (issue 25): a command that works where
the person is, the README's ``.venv`` in a checkout or an environment of their own."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tutor.core.install import install_command


def in_venv(monkeypatch: pytest.MonkeyPatch, venv: Path) -> None:
    monkeypatch.setattr(sys, "prefix", str(venv))
    monkeypatch.setattr(sys, "base_prefix", "/usr")
    monkeypatch.setattr(sys, "executable", str(venv / "bin" / "python"))


def checkout(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "pyproject.toml").write_text((ROOT / "pyproject.toml").read_text())
    return folder


def test_in_the_readmes_venv_it_is_that_pythons_pip_on_the_checkout(monkeypatch, tmp_path) -> None:  # type: ignore[no-untyped-def]
    in_venv(monkeypatch, checkout(tmp_path) / ".venv")
    monkeypatch.chdir(tmp_path)
    assert install_command("pdf") == ".venv/bin/python -m pip install '.[pdf]'"
    assert install_command() == ".venv/bin/python -m pip install ."


def test_from_the_folder_above_the_checkout_the_paths_lead_into_it(monkeypatch, tmp_path) -> None:  # type: ignore[no-untyped-def]
    in_venv(monkeypatch, checkout(tmp_path / "my tutor") / ".venv")
    monkeypatch.chdir(tmp_path)
    assert install_command("pdf") == "'my tutor/.venv/bin/python' -m pip install './my tutor[pdf]'"


@pytest.mark.parametrize("where", ["elsewhere", "not a checkout", "not called .venv", "no venv"])
def test_anywhere_else_it_is_the_package_index(monkeypatch, tmp_path, where: str) -> None:  # type: ignore[no-untyped-def]
    project = tmp_path / "project"
    venv = project / ("env" if where == "not called .venv" else ".venv")
    in_venv(monkeypatch, venv)
    if where != "not a checkout":
        checkout(project)
    else:
        project.mkdir()
        (project / "pyproject.toml").write_text('[project]\nname = "something-else"\n')
    if where == "no venv":
        monkeypatch.setattr(sys, "base_prefix", str(venv))
    cwd = tmp_path / "elsewhere" if where == "elsewhere" else project
    cwd.mkdir(exist_ok=True)
    monkeypatch.chdir(cwd)
    assert install_command("pdf") == "pip install 'attn-tutor[pdf]'"
    assert install_command() == "pip install attn-tutor"
