"""The one rule for telling a person how to install what a command needs: a command that works
in the environment they are running, not only from a package index."""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path


def install_command(extra: str | None = None) -> str:
    """The pip command that installs attn-tutor (with ``extra``) into the Python running now.

    Run from the README's ``.venv`` in a checkout (a virtual environment called ``.venv`` in the
    current folder or below it, beside the project's ``pyproject.toml``), that is the checkout
    through the environment's own Python: ``.venv/bin/python -m pip install '.[pdf]'``. Anywhere
    else it is the package index's ``pip install 'attn-tutor[pdf]'``.
    """
    suffix = f"[{extra}]" if extra else ""
    prefix = Path(sys.prefix)
    in_venv = sys.prefix != sys.base_prefix and prefix.name == ".venv"
    here = _relative(prefix.parent, Path.cwd()) if in_venv else None
    if here is not None and _is_checkout(prefix.parent):
        python = _relative(Path(sys.executable), Path.cwd()) or sys.executable
        target = here if here == "." else f".{os.sep}{here}"  # pip reads a bare name as a package
        return f"{shlex.quote(python)} -m pip install {shlex.quote(target + suffix)}"
    return f"pip install {shlex.quote('attn-tutor' + suffix)}"


def _is_checkout(folder: Path) -> bool:
    """Whether ``folder`` holds attn-tutor's own ``pyproject.toml``."""
    try:
        text = (folder / "pyproject.toml").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return 'name = "attn-tutor"' in text


def _relative(path: Path, folder: Path) -> str | None:
    """``path`` relative to ``folder`` (``.`` for the folder itself), or None if outside it."""
    try:
        inside = Path(os.path.abspath(path)).relative_to(os.path.abspath(folder))
    except ValueError:
        return None
    return str(inside) if inside.parts else "."
