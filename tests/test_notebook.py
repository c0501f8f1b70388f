"""The example notebook (issue 29), run by a real Jupyter kernel (nbclient): every cell runs,
and the tutor's objects display themselves as HTML and Markdown."""

from __future__ import annotations

import pytest

from tests.conftest import ROOT

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

NOTEBOOK = ROOT / "examples" / "cats-chase-mice.ipynb"


def test_the_example_notebook_runs_and_shows_the_tutor() -> None:
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nbclient.NotebookClient(nb, timeout=120, kernel_name="python3", resources={
        "metadata": {"path": str(ROOT)}}).execute()  # fmt: skip
    outputs = [o for cell in nb.cells if cell.cell_type == "code" for o in cell.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    shown = [o["data"] for o in outputs if o.output_type == "execute_result"]
    assert sum("text/html" in data for data in shown) >= 4  # walk, verdicts, the code check
    text = "\n".join(data.get("text/markdown", "") for data in shown)
    assert "Every step your function returns matches the lesson." in text
