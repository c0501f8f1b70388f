"""The layers point down (issue 24): ``core`` and ``text`` import none of the five edges, and
``teach``, ``assess``, ``author``, ``export`` and ``explore`` do not import each other (only the
CLI and the notebook API join them). Read from the source, so a lazy import inside a function
counts as much as one at the top."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent / "tutor"
EDGES = ("teach", "assess", "author", "export", "explore")


def _imports(path: Path) -> set[str]:
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module)
            out |= {f"{node.module}.{a.name}" for a in node.names}
        elif isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
    return {m for m in out if m.startswith("tutor.")}


def _layer(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in (*EDGES, "core", "text") else None


@pytest.mark.parametrize("layer", [*EDGES, "core", "text"])
def test_a_layer_imports_only_what_lies_below_it(layer: str) -> None:
    below = {"core"} if layer == "text" else set() if layer == "core" else {"core", "text"}
    wrong = []
    for path in sorted((ROOT / layer).rglob("*.py")):
        for module in _imports(path):
            other = _layer(module)
            if other in (None, layer) or other in below:
                continue
            wrong.append(f"{path.relative_to(ROOT.parent)} imports {module}")
    assert wrong == []


def test_the_scan_sees_imports() -> None:
    assert "tutor.core.kinds" in _imports(ROOT / "core" / "spec.py")
    assert "tutor.teach.walk" in _imports(ROOT / "teach" / "pictures.py")
