"""Export: Markdown and LaTeX worksheets and answer keys, the blank answer sheet, SVG/HTML walks,
and how --output refuses to overwrite."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.conftest import FIXTURES, bundled_lessons

TWO_HEADS = str(FIXTURES / "grade" / "two-heads-causal.yaml")
STEPS = ("Q", "K", "V", "scores", "scaled", "weights", "Z")


def export(run, *args: str) -> str:  # type: ignore[no-untyped-def]
    result = run("export", *args)
    assert result.exit_code == 0, result.stderr
    return result.stdout


# ---------------------------------------------------------------------------------------------
# Markdown


def test_md_answer_key_has_inputs_steps_tables_and_working(run) -> None:  # type: ignore[no-untyped-def]
    md = export(run, "cats-chase-mice", "--format", "md")
    assert md.startswith("# Cats chase mice: answer key\n")
    assert "$$Z = \\mathrm{softmax}" in md
    for heading in ("## Inputs", "### X, the tokens (3 × 4)", "### Q = X · W\\_Q, the queries"):
        assert heading in md
    assert "Shape: (3 × 4) · (4 × 2) = 3 × 2" in md
    assert "Shape: (3 × 2) · (2 × 3) = 3 × 3" in md  # Q · Kᵀ
    assert "| **cats** | 0.49 | 1.67 |" in md  # the Z table
    assert "- $Q_{\\text{cats}, 1} = 1 \\cdot 1 + 0 \\cdot 0 + 1 \\cdot 1 + 0 \\cdot 0 = 2$" in md
    assert "= 4 / \\sqrt{2} = 2 \\sqrt{2} \\approx 2.83$" in md
    assert "\\frac{e^{2.83}}{e^{1.41} + e^{2.83} + e^{1.41}} \\approx 0.67" in md
    # the rounding trap is named, so a grader does not mark 0.48 as a slip
    assert "\\approx 0.49 \\quad (\\text{the rounded inputs shown give } 0.48)" in md
    # every table row has as many cells as the header
    for table in re.findall(r"(?:^\|.*\|\n)+", md, flags=re.M):
        widths = {line.count(" | ") for line in table.splitlines() if not line.startswith("|---")}
        assert len(widths) == 1, table


def test_md_worksheet_leaves_the_cells_blank_but_keeps_the_inputs(run) -> None:  # type: ignore[no-untyped-def]
    md = export(run, "cats-chase-mice", "--format", "md", "--no-answers")
    assert md.startswith("# Cats chase mice: worksheet\n")
    assert "| **chase** | 0 | 2 | 0 | 1 |" in md  # X is given
    assert "| **cats** |   |   |" in md  # Q to fill
    assert "0.49" not in md
    assert "\\cdot" not in md  # no working


def test_md_multi_head_causal(run) -> None:  # type: ignore[no-untyped-def]
    md = export(run, TWO_HEADS, "--format", "md")
    assert "### Head 1: first" in md and "### Head 2" in md
    assert md.count("Causal mask: before the softmax") == 2
    assert "#### concat: the heads side by side (3 × 4)" in md
    assert "#### output = concat · W\\_O (3 × 2)" in md


# ---------------------------------------------------------------------------------------------
# LaTeX


def _balanced(tex: str) -> None:
    body = re.sub(r"\\[{}]", "", tex)
    assert body.count("{") == body.count("}")
    for env in set(re.findall(r"\\begin\{(\w+\*?)\}", tex)):
        assert tex.count(f"\\begin{{{env}}}") == tex.count(f"\\end{{{env}}}"), env
    assert tex.count("\\[") == tex.count("\\]")


@pytest.mark.parametrize("answers", [True, False])
@pytest.mark.parametrize("lesson", ["cats-chase-mice", "the-cake", TWO_HEADS])
def test_tex_is_a_complete_balanced_document(run, lesson: str, answers: bool) -> None:  # type: ignore[no-untyped-def]
    args = ["--format", "tex"] + ([] if answers else ["--no-answers"])
    tex = export(run, lesson, *args)
    assert tex.startswith("\\documentclass")
    assert "\\usepackage{amsmath,amssymb}" in tex
    assert "\\begin{document}" in tex and tex.rstrip().endswith("\\end{document}")
    assert "\\begin{bmatrix}" in tex
    _balanced(tex)
    assert not re.search(r"[^\x00-\x7f]", tex), "pdflatex-safe: ASCII only"
    if answers:
        assert "\\begin{align*}" in tex
    else:
        assert "\\begin{align*}" not in tex and "\\underline{\\hspace{1.3cm}}" in tex


def test_tex_shows_the_values(run) -> None:  # type: ignore[no-untyped-def]
    tex = export(run, "cats-chase-mice", "--format", "tex")
    assert "Z = \\begin{bmatrix}\n  0.49 & 1.67 \\\\\n  1.00 & 1.33 \\\\\n  0.74 & 1.50\n" in tex
    assert "rows: cats, chase, mice; columns: 1, 2" in tex


def test_tex_escapes_specials_in_the_lessons_words(tmp_path, run) -> None:  # type: ignore[no-untyped-def]
    lesson = tmp_path / "odd.yaml"
    lesson.write_text(
        'title: "50% of R&D_costs: $x^2 {ok} ~ √2 · 3 × 4 − 1 ☃"\n'
        "tokens: [a&b, c_d, e%]\nX: [[1], [2], [3]]\nW_Q: [[1]]\nW_K: [[1]]\nW_V: [[1]]\n"
    )
    tex = export(run, str(lesson), "--format", "tex")
    assert "50\\% of R\\&D\\_costs: \\$x\\textasciicircum{}2 \\{ok\\}" in tex
    assert "a\\&b, c\\_d, e\\%" in tex
    _balanced(tex)
    assert not re.search(r"[^\x00-\x7f]", tex)


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex is not installed")
@pytest.mark.parametrize("answers", [True, False])
@pytest.mark.parametrize("lesson", [p.stem for p in bundled_lessons()] + [TWO_HEADS])
def test_tex_compiles_with_pdflatex_and_fits_the_page(
    tmp_path, run, lesson: str, answers: bool
) -> None:  # type: ignore[no-untyped-def]
    # the-cake's Z working once ran 139pt off the page and its align* 1185pt past the bottom
    tex = export(run, lesson, "--format", "tex", *([] if answers else ["--no-answers"]))
    (tmp_path / "sheet.tex").write_text(tex)
    done = subprocess.run(
        ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "sheet.tex"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout[-3000:]
    assert (tmp_path / "sheet.pdf").stat().st_size > 1000
    log = (tmp_path / "sheet.log").read_text(errors="replace")
    assert "Overfull" not in log, [line for line in log.splitlines() if "Overfull" in line]


def test_tex_breaks_long_sums_and_puts_the_rounding_remark_on_its_own_row(run) -> None:  # type: ignore[no-untyped-def]
    tex = export(run, "the-cake", "--format", "tex")
    assert "\\allowdisplaybreaks" in tex
    block = tex[tex.index("Z_{\\text{I}, 2} &=") :]
    first, second, remark = block.splitlines()[:3]
    assert first.count("\\cdot") == 4 and first.endswith("+ \\\\")
    assert second.count("\\cdot") == 4 and "\\approx 0.19" in second
    assert remark == "&\\phantom{=}\\ \\text{(the rounded inputs shown give $0.20$)} \\\\"
    # Markdown keeps the one-line form
    md = export(run, "the-cake", "--format", "md")
    assert "\\approx 0.19 \\quad (\\text{the rounded inputs shown give } 0.20)$" in md


# ---------------------------------------------------------------------------------------------
# the answer sheet


def test_sheet_is_a_matrix_of_nulls_per_step_with_named_rows_and_columns(run) -> None:  # type: ignore[no-untyped-def]
    text = export(run, "cats-chase-mice", "--format", "sheet")
    data = yaml.safe_load(text)
    assert list(data) == ["lesson", "fingerprint", "student", "student_id", *STEPS]
    assert data["lesson"] == "cats-chase-mice"
    assert data["scores"] == [[None] * 3] * 3
    assert data["Z"] == [[None] * 2] * 3
    assert "# scores = Q · Kᵀ: (3 × 2) · (2 × 3) = 3 × 3; columns: cats, chase, mice" in text
    assert "  - [null, null]  # chase" in text
    assert "attn-tutor grade cats-chase-mice THIS-FILE" in text


def test_sheet_for_heads_has_one_entry_per_head_then_concat_and_output(run) -> None:  # type: ignore[no-untyped-def]
    text = export(run, TWO_HEADS, "--format", "sheet")
    data = yaml.safe_load(text)
    assert list(data) == [
        "lesson",
        "fingerprint",
        "student",
        "student_id",
        "heads",
        "concat",
        "output",
    ]
    assert [list(h) for h in data["heads"]] == [list(STEPS)] * 2
    assert data["concat"] == [[None] * 4] * 3
    assert data["output"] == [[None] * 2] * 3
    assert "masked" not in text.replace("causal mask", "")
    assert "# causal mask: the 0 entries above the diagonal are given (not graded)" in text
    weights = data["heads"][0]["weights"]  # the mask's cells come filled in, the rest blank
    assert weights == [[None, 0, 0], [None, None, 0], [None, None, None]]
    assert data["heads"][1]["scaled"][0][1] == "-inf"


# ---------------------------------------------------------------------------------------------
# the walk as SVG and HTML


def test_svg_is_the_coloured_walk(run) -> None:  # type: ignore[no-untyped-def]
    svg = export(run, "cats-chase-mice", "--format", "svg")
    assert svg.lstrip().startswith("<svg")
    assert svg.rstrip().endswith("</svg>")
    text = svg.replace("&#160;", " ")
    assert "attn-tutor walk cats-chase-mice" in text
    assert "scaled = scores / √d_k" in text
    assert len(set(re.findall(r"fill: (#[0-9a-f]{6})", svg))) > 5  # the colours survive


def test_html_is_the_coloured_walk(run) -> None:  # type: ignore[no-untyped-def]
    html = export(run, "cats-chase-mice", "--format", "html")
    assert "<!DOCTYPE html>" in html
    assert "color: #" in html
    assert "Z = weights · V" in html
    assert "0.49" in html


def test_no_answers_makes_no_sense_for_a_picture_of_the_walk(run) -> None:  # type: ignore[no-untyped-def]
    result = run("export", "cats-chase-mice", "--format", "svg", "--no-answers")
    assert result.exit_code == 2
    assert "--no-answers" in result.stderr


def test_unknown_format_is_a_usage_error(run) -> None:  # type: ignore[no-untyped-def]
    result = run("export", "cats-chase-mice", "--format", "docx")
    assert result.exit_code == 2
    assert "md, tex, sheet, form, svg, html, pdf, typ" in result.stderr


# ---------------------------------------------------------------------------------------------
# --output and --force


def test_output_writes_the_file_and_prints_nothing(tmp_path, run) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "key.md"
    result = run("export", "cats-chase-mice", "--output", str(out))
    assert result.exit_code == 0, result.stderr
    assert result.stdout == ""
    assert out.read_text().startswith("# Cats chase mice: answer key")


def test_output_refuses_to_overwrite_without_force(tmp_path, run) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "sheet.yaml"
    out.write_text("my precious answers\n")
    result = run("export", "cats-chase-mice", "-f", "sheet", "-o", str(out))
    assert result.exit_code == 1
    assert str(out) in result.stderr and "--force" in result.stderr
    assert out.read_text() == "my precious answers\n"
    result = run("export", "cats-chase-mice", "-f", "sheet", "-o", str(out), "--force")
    assert result.exit_code == 0, result.stderr
    assert out.read_text().startswith("# attn-tutor answer sheet")


def test_output_to_a_folder_or_missing_folder_is_a_clean_error(tmp_path, run) -> None:  # type: ignore[no-untyped-def]
    result = run("export", "cats-chase-mice", "-o", str(tmp_path))
    assert result.exit_code == 1 and "folder" in result.stderr
    result = run("export", "cats-chase-mice", "-o", str(tmp_path / "no" / "such.md"))
    assert result.exit_code == 1 and "cannot write" in result.stderr


def test_output_dash_is_stdout_as_for_new(tmp_path, run, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.chdir(tmp_path)
    result = run("export", "cats-chase-mice", "-o", "-")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith("# Cats chase mice: answer key")
    assert list(tmp_path.iterdir()) == []  # no file named "-"


def test_html_has_the_lessons_title_escaped(tmp_path, run) -> None:  # type: ignore[no-untyped-def]
    html = export(run, "cats-chase-mice", "--format", "html")
    assert "<title>Cats chase mice: attn-tutor walk cats-chase-mice</title>" in html
    lesson = tmp_path / "odd.yaml"
    lesson.write_text(
        'title: "<b>A & {B}</b>"\ntokens: [a]\nX: [[1]]\nW_Q: [[1]]\nW_K: [[1]]\nW_V: [[1]]\n'
    )
    html = export(run, str(lesson), "--format", "html")
    assert "<title>&lt;b&gt;A &amp; {B}&lt;/b&gt;: attn-tutor walk odd</title>" in html


def test_one_token_is_singular_in_the_worksheet_and_the_walk(tmp_path, run) -> None:  # type: ignore[no-untyped-def]
    lesson = tmp_path / "solo.yaml"
    lesson.write_text("title: Solo\ntokens: [solo]\nX: [[1]]\nW_Q: [[1]]\nW_K: [[1]]\nW_V: [[1]]\n")
    assert "N = 1 token (solo), d_model = 1, d_k = 1, d_v = 1." in export(run, str(lesson))
    assert "$N = 1$ token (solo)" in export(run, str(lesson), "--format", "tex")
    assert "N = 1 token (solo) · d_model = 1 · d_k = 1 · d_v = 1" in run("walk", str(lesson)).stdout


def test_a_long_sum_in_the_answer_key_shows_its_ends_and_counts_the_rest(tmp_path, run) -> None:  # type: ignore[no-untyped-def]
    """d_model 16: Q's sums have 16 terms; the key shows 4, the count of the 10 between, and 2."""
    ones = "[" + ", ".join(["1"] * 16) + "]"
    lesson = tmp_path / "wide.yaml"
    lesson.write_text(
        f"title: Wide\ntokens: [a, b]\nX: [{ones}, {ones}]\n"
        + "".join(f"{w}: [{', '.join(['[2]'] * 16)}]\n" for w in ("W_Q", "W_K", "W_V"))
    )
    md = export(run, str(lesson))
    expected = r"1 \cdot 2 + 1 \cdot 2 + 1 \cdot 2 + 1 \cdot 2 + (\text{10 more terms}) + "
    assert f"$Q_{{\\text{{a}}, 1}} = {expected}1 \\cdot 2 + 1 \\cdot 2 = 32$" in md
    tex = export(run, str(lesson), "--format", "tex")
    assert r"(\text{10 more terms})" in tex
    _balanced(tex)


# tokens from several scripts (issue 19.8): Latin with accents, Greek, Cyrillic, CJK, symbols,
# superscripts and circled digits, each with what the .tex should say for it
SCRIPTS = {
    "café": "caf\\'{e}",
    "Łódź": "\\L{}\\'{o}d\\'{z}",
    "naïve": 'na\\"{\\i}ve',
    "straße": "stra\\ss{}e",
    "αβ": "$\\alpha$$\\beta$",
    "Ωmega": "$\\Omega$mega",
    "Привет": "Privet",
    "中文": "[U+4E2D][U+6587]",
    "①": "(1)",
    "x²": "x\\textsuperscript{2}",
    "ĸ": "[U+0138]",
    "☃": "[U+2603]",
}


def scripts_lesson(tmp_path: Path) -> Path:
    tokens = list(SCRIPTS)
    lesson = tmp_path / "scripts.yaml"
    rows = ", ".join(f"[{k % 3}, {k % 2}]" for k in range(len(tokens)))
    lesson.write_text(
        'title: "Größe · ① ² ĸ"\n'
        'description: "Ελληνικά, русский, 日本語"\n'
        f"tokens: [{', '.join(tokens)}]\n"
        f"X: [{rows}]\nW_Q: [[1], [0]]\nW_K: [[1], [1]]\nW_V: [[1, 0], [0, 1]]\n",
        encoding="utf-8",
    )
    return lesson


@pytest.mark.parametrize("answers", [True, False])
def test_tex_is_ascii_whatever_the_tokens_script(tmp_path, run, answers: bool) -> None:  # type: ignore[no-untyped-def]
    lesson = scripts_lesson(tmp_path)
    tex = export(run, str(lesson), "--format", "tex", *([] if answers else ["--no-answers"]))
    assert tex.isascii(), sorted({ch for ch in tex if not ch.isascii()})
    _balanced(tex)
    for written in SCRIPTS.values():
        assert written in tex, written
    assert 'Gr\\"{o}\\ss{}e' in tex


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex is not installed")
def test_tex_of_tokens_in_many_scripts_compiles(tmp_path, run) -> None:  # type: ignore[no-untyped-def]
    tex = export(run, str(scripts_lesson(tmp_path)), "--format", "tex")
    (tmp_path / "sheet.tex").write_text(tex)
    done = subprocess.run(
        ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "sheet.tex"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout[-3000:]


# ---------------------------------------------------------------------------------------------
# issue 27, item 5 (cross-attention part): the handouts say where K and V come from


def _walk_titles(run, lesson: str) -> set[str]:  # type: ignore[no-untyped-def]
    walk = run("walk", lesson, env={"COLUMNS": "200"}).stdout
    return {m[1].strip() for m in re.finditer(r"^(.+?) ─{3,}$", walk, re.M)}


def _md_titles(text: str) -> set[str]:
    found = re.finditer(r"^#{3,4} (.+)$", text, re.M)
    return {re.sub(r" \(\d+ × \d+\)$", "", m[1]).replace("\\_", "_") for m in found}


ONE_HEAD_ROWS = [
    p.stem
    for p in bundled_lessons()
    if "heads:" not in p.read_text() and "layout: columns" not in p.read_text()
]


@pytest.mark.parametrize("lesson", ONE_HEAD_ROWS)
def test_every_worksheet_heading_is_the_walks(run, lesson: str) -> None:  # type: ignore[no-untyped-def]
    walk = _walk_titles(run, lesson)
    md = _md_titles(export(run, lesson, "--format", "md"))
    assert md and md <= walk, md - walk
    typ = export(run, lesson, "--format", "typ")
    typ_titles = {
        re.sub(r" \(\d+ × \d+\)$", "", t)
        for t in re.findall(r'heading\(level: 3, "([^"]+)"\)', typ)
    }
    assert typ_titles and typ_titles <= walk, typ_titles - walk
    sheet = export(run, lesson, "--format", "sheet")
    sheet_titles = set(re.findall(r"^  # (.+?): \(", sheet, re.M))
    assert sheet_titles <= walk, sheet_titles - walk


def test_cross_attention_handouts_make_k_and_v_from_the_source(run) -> None:  # type: ignore[no-untyped-def]
    walk = _walk_titles(run, "chat-noir-cross")
    assert {"K = X_src · W_K, the source sentence's keys",
            "V = X_src · W_V, the source sentence's values"} <= walk  # fmt: skip
    for fmt in ("md", "typ", "sheet"):
        text = export(run, "chat-noir-cross", "--format", fmt).replace("\\_", "_")
        assert "K = X_src · W_K" in text and "V = X_src · W_V" in text, fmt
        assert "K = X · W_K" not in text and "V = X · W_V" not in text, fmt
        assert "the keys and values from the source sentence (X_src)" in text or fmt == "sheet"
        # shapes read X_src: N_src × d_model times d_model × d_k
        assert "(3 × 3) · (3 × 2) = 3 × 2" in text, fmt
    tex = export(run, "chat-noir-cross", "--format", "tex")
    assert r"$K = X_{\mathrm{src}} W_K$" in tex and r"$V = X_{\mathrm{src}} W_V$" in tex
    assert "$K = X W_K$" not in tex


def test_focus_takes_a_source_column_as_cell_does(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    text = (FIXTURES.parent / "lessons" / "chat-noir-cross.yaml").read_text()
    good = tmp_path / "good.yaml"
    good.write_text(text + 'focus: "weights[chat, cat]"\n')
    assert run("check", str(good)).stdout == "checked 1 lesson: valid\n"
    cell = run("walk", "chat-noir-cross", "--cell", "weights[chat, cat]").stdout
    assert run("walk", str(good)).stdout == cell.replace("chat-noir-cross", "good")
    bad = tmp_path / "bad.yaml"
    bad.write_text(text + 'focus: "weights[chat, noir]"\n')
    result = run("check", str(bad))
    assert result.exit_code == 1
    line = len(text.splitlines()) + 1
    assert (
        f"{bad}:{line}:8: focus: the column 'noir' is not a source token; source tokens: "
        "the, black, cat"
    ) in result.stdout


def test_column_handouts_read_the_walks_turned_words(run) -> None:  # type: ignore[no-untyped-def]
    """A lesson in columns shows its tables turned in md, tex and the sheet, so their headings
    are the walk's turned ones (Q = W_Q · X, scores = Kᵀ · Q), not the rows layout's."""
    walk = _walk_titles(run, "tokens-as-columns")
    assert {"Q = W_Q · X, the queries", "scores = Kᵀ · Q", "Z = V · weights"} <= walk
    md = _md_titles(export(run, "tokens-as-columns", "--format", "md"))
    assert md and md <= walk, md - walk
    sheet = export(run, "tokens-as-columns", "--format", "sheet")
    sheet_titles = set(re.findall(r"^ *# (.+?): turned", sheet, re.M))
    assert sheet_titles and sheet_titles <= walk, sheet_titles - walk
    tex = export(run, "tokens-as-columns", "--format", "tex")
    assert r"$Q = W_Q X$" in tex and r"$\mathrm{scores} = K^\top Q$" in tex
    assert "$Q = X W_Q$" not in tex
