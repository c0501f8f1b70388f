"""The example notebook (issues 29 and 40), run by a real Jupyter kernel (nbclient): every cell
runs, and each cell shows what it should, once. The tutor's objects display themselves through
``_repr_html_`` / ``_repr_markdown_`` only; the library never writes to a stream or calls
``display`` (Rich's Console detects a kernel and displays what it renders unless told not to)."""

from __future__ import annotations

import pytest

from tests.conftest import ROOT

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

NOTEBOOK = ROOT / "examples" / "cats-chase-mice.ipynb"

# text only the library makes, run where the kernel is: nothing may show
QUIET = """\
v = tutor.judge(lesson, "Z[cats, 1]", "0.49")
s = str(v)
t = str(lesson.walk(step="weights")) + str(d["scores"])
u = str(tutor.check_function(lesson, attention))
h = v._repr_html_() + lesson.walk()._repr_html_()
m = v._repr_markdown_() + lesson.walk()._repr_markdown_()
"""


@pytest.fixture(scope="module")
def ran() -> list:
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell(QUIET))
    nbclient.NotebookClient(nb, timeout=120, kernel_name="python3", resources={
        "metadata": {"path": str(ROOT)}}).execute()  # fmt: skip
    return [(cell.source, cell.outputs) for cell in nb.cells if cell.cell_type == "code"]


def _one(outputs: list) -> dict:
    """The cell's one output, a result; no display_data, no stream, no error beside it."""
    kinds = [o.output_type for o in outputs]
    assert kinds == ["execute_result"], kinds
    return outputs[0]["data"]


def test_each_cell_shows_one_thing_once(ran) -> None:
    shown = {source.splitlines()[-1]: outputs for source, outputs in ran}
    assert len(ran) == 8
    lesson = _one(ran[0][1])
    assert "Cats chase mice" in lesson["text/markdown"]
    walk = _one(ran[1][1])
    assert {"text/html", "text/markdown"} <= set(walk)
    assert walk["text/markdown"].count("scores[cats, chase]") <= 1  # one walk, not five
    assert "cats" in walk["text/html"]
    right = _one(ran[2][1])
    assert right["text/markdown"].count("✓ scores[cats, chase] = 4") == 1
    slip = _one(ran[3][1])
    assert slip["text/markdown"].count("✗ weights[cats, chase]") == 1
    assert "softmax of the raw scores" in slip["text/markdown"]
    # the verdict names the slip first, before what no careful rounding gives
    said = " ".join(slip["text/markdown"].split())
    assert "✗ weights[cats, chase] = 0.79: that is the softmax of the raw scores" in said
    assert "text/plain" in _one(ran[4][1])  # the NumPy array
    check = _one(ran[5][1])
    assert check["text/markdown"].count("Every step your function returns matches the lesson.") == 1
    assert "text/latex" in _one(ran[6][1])  # sympy's own display of the exact Z
    assert ran[7][1] == [], shown  # building text shows nothing


def test_the_notebooks_words_and_the_judge_agree(ran) -> None:
    """Where the notebook says the judge names a forgotten √d_k, the judge names it."""
    import json
    import re

    import tutor

    cells = json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]
    words = "".join(c["source"] if isinstance(c["source"], str) else "".join(c["source"])
                    for c in cells if c["cell_type"] == "markdown")  # fmt: skip
    assert "forget √d_k" in words and "the judge names it" in words.lower()
    cell, answer = re.search(r'tutor\.judge\(lesson, "(weights\[[^"]+)", "([^"]+)"\)',
                             ran[3][0]).groups()  # fmt: skip
    v = tutor.judge("cats-chase-mice", cell, answer)
    assert not v.right and v.slips == ("softmax-of-raw-scores",)


def test_the_notebooks_verdict_names_the_slip_first() -> None:
    """The notebook's "0.79" (softmax of the raw scores): the verdict's message opens with the
    slip, not with "no careful rounding gives that"."""
    import tutor

    v = tutor.judge("cats-chase-mice", "weights[cats, chase]", "0.79")
    assert v.message.startswith("that is the softmax of the raw scores")
    assert str(v).splitlines()[0].startswith("✗ weights[cats, chase] = 0.79: that is the softmax")
