"""export --format pdf|typ: typst worksheets and answer keys, read back with pypdf."""

from __future__ import annotations

import io
import re
import sys
from pathlib import Path

import pytest

from tests.conftest import LESSONS
from tutor.core.engine import Concat, Softmax, derive
from tutor.core.install import install_command
from tutor.core.lessonfile import load_lesson
from tutor.export import typst_doc
from tutor.export.worksheet import fill_steps
from tutor.text import format as fmt
from tutor.text import words
from tutor.text import working as wk

pypdf = pytest.importorskip("pypdf", reason="pip install -e '.[test]' (pypdf, typst)")
pytest.importorskip("typst", reason="pip install -e '.[test]' (pypdf, typst)")

MM_PER_PT = 25.4 / 72


def pdf(run, tmp_path: Path, *args: str) -> pypdf.PdfReader:  # type: ignore[no-untyped-def]
    out = tmp_path / "out.pdf"
    result = run("export", *args, "--format", "pdf", "--output", str(out), "--force")
    assert result.exit_code == 0, result.stderr
    return pypdf.PdfReader(io.BytesIO(out.read_bytes()))


def text_of(reader: pypdf.PdfReader) -> str:
    return "\n".join(page.extract_text() for page in reader.pages)


def flat(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def test_worksheet_has_name_line_fingerprint_tokens_and_points(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    reader = pdf(run, tmp_path, "the-cake", "--no-answers")
    text = flat(text_of(reader))
    d = derive(load_lesson(LESSONS / "the-cake.yaml"))
    assert len(reader.pages) >= 2
    assert "I ate the cake and it was delicious: worksheet" in text
    for word in ("Name:", "ID:", "Points:"):
        assert word in text
    assert f"fingerprint {d.lesson.fingerprint}" in text
    for token in d.lesson.labels:
        assert token in text
    points = [d.step_points(s) for s in fill_steps(d)]
    assert f"/ {sum(points)}" in text
    for step in fill_steps(d):  # every step says what it is worth
        assert f"{step.shape[0]} × {step.shape[1]}) {d.step_points(step)} points" in text
    assert "0.23" not in text  # no answers on a worksheet (it → cake's weight)


def test_answer_key_shows_each_softmax_rows_e_x_and_total(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    text = flat(text_of(pdf(run, tmp_path, "the-cake")))
    d = derive(load_lesson(LESSONS / "the-cake.yaml"))
    (weights,) = [s for s in d.steps if s.name == "weights"]
    for i in range(len(weights.rows)):
        row = wk.softmax_row(weights, i, d.lesson.precision)
        assert row.total in text
        for _key, _x, e_x, _share in row.rows:
            assert e_x in text
    assert "the rounded inputs give" in text  # Z: what a student's rounded weights give


def test_a_six_token_two_head_key_fits_in_half_of_the_latex_pages(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The issue measured 18 pages of LaTeX for a 6-token two-head key."""
    text = (LESSONS / "the-cake-two-heads.yaml").read_text(encoding="utf-8")
    text = text.replace(
        "tokens: [I, ate, the, cake, and, it, was, delicious]",
        "tokens: [I, ate, the, cake, and, it]",
    )
    text = re.sub(r"  - \[.*\] +# (was|delicious)\n", "", text)
    six = tmp_path / "six.yaml"
    six.write_text(text, encoding="utf-8")
    assert derive(load_lesson(six)).lesson.n == 6
    assert len(pdf(run, tmp_path, str(six)).pages) <= 18 // 2


def test_long_sums_are_elided_in_the_key(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    wide = tmp_path / "wide.yaml"
    d_model = 14
    rows = ", ".join(["[" + ", ".join(["1"] * d_model) + "]"] * 2)
    w = ", ".join(["[1, 0]"] * d_model)
    wide.write_text(
        f"version: 1\ntitle: wide\ntokens: [a, b]\nX: [{rows}]\n"
        f"W_Q: [{w}]\nW_K: [{w}]\nW_V: [{w}]\nprecision: 2\n",
        encoding="utf-8",
    )
    result = run("export", str(wide), "--format", "typ")
    assert result.exit_code == 0, result.stderr
    assert "more terms)" in result.stdout
    assert "more terms)" in flat(text_of(pdf(run, tmp_path, str(wide))))


@pytest.mark.parametrize(("paper", "size_mm"), [("a4", (210, 297)), ("letter", (215.9, 279.4))])
def test_paper_size(run, tmp_path, paper: str, size_mm: tuple[float, float]) -> None:  # type: ignore[no-untyped-def]
    reader = pdf(run, tmp_path, "cats-chase-mice", "--paper", paper)
    box = reader.pages[0].mediabox
    assert float(box.width) * MM_PER_PT == pytest.approx(size_mm[0], abs=0.5)
    assert float(box.height) * MM_PER_PT == pytest.approx(size_mm[1], abs=0.5)


def test_bad_paper_is_a_usage_error(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    result = run(
        "export",
        "cats-chase-mice",
        "--format",
        "pdf",
        "--paper",
        "a5",
        "-o",
        str(tmp_path / "x.pdf"),
    )
    assert result.exit_code == 2
    assert "--paper 'a5': expected a4 or letter" in result.stderr
    assert not (tmp_path / "x.pdf").exists()
    result = run("export", "cats-chase-mice", "--format", "md", "--paper", "letter")
    assert result.exit_code == 2
    assert "apply to pdf and typ, not md" in result.stderr


def test_missing_font_folder_is_a_usage_error(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    result = run(
        "export",
        "cats-chase-mice",
        "-f",
        "pdf",
        "--font-path",
        str(tmp_path / "no"),
        "-o",
        str(tmp_path / "x.pdf"),
    )
    assert result.exit_code == 2
    assert "--font-path" in result.stderr and "no such folder" in result.stderr


def test_without_typst_pdf_says_how_to_install_it(run, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setitem(sys.modules, "typst", None)  # import typst now raises ImportError
    result = run("export", "cats-chase-mice", "-f", "pdf", "-o", str(tmp_path / "x.pdf"))
    assert result.exit_code == 1
    assert f"optional extra: {install_command('pdf')}" in result.stderr
    assert "Traceback" not in result.stderr
    assert run("export", "cats-chase-mice", "-f", "typ").exit_code == 0  # the source needs no typst


def test_a_folder_of_variants_is_one_pdf_with_each_students_pages(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    roster = tmp_path / "roster.csv"
    roster.write_text(
        'name,id\nAnn Lee,101\nBo Chen,102\n"Cy ""#Diaz"" $x$ ]",103\n', encoding="utf-8"
    )
    folder = tmp_path / "class"
    made = run(
        "variants", "cats-chase-mice", "--roster", str(roster), "--seed", "3", "-o", str(folder)
    )
    assert made.exit_code == 0, made.stderr
    reader = pdf(run, tmp_path, str(folder), "--no-answers")
    pages = [flat(p.extract_text()) for p in reader.pages]
    firsts = [k for k, p in enumerate(pages) if "Cats chase mice: worksheet" in p]
    assert len(firsts) == 3
    assert len(pages) >= 3 and len(pages) % 3 == 0  # the same number of pages each
    for k, (name, sid) in zip(
        firsts, [("Ann Lee", 101), ("Bo Chen", 102), ('Cy "#Diaz" $x$ ]', 103)], strict=True
    ):
        assert f"Name: {name} (id {sid})" in pages[k]
        variant = next(folder.glob(f"variant-*-{name.split()[0].lower()}*.yaml"))
        assert f"fingerprint {load_lesson(variant).fingerprint}" in pages[k]
        assert "page 1" in pages[k]  # each student's pages are numbered from 1
    # the joined file is read strictly, and its bookmarks go student by student, each to the
    # student's first page, with that student's own headings under it
    strict = pypdf.PdfReader(io.BytesIO(reader.stream.getvalue()), strict=True)
    entries = [e for e in strict.outline if not isinstance(e, list)]
    assert [e["/Title"] for e in entries] == [
        "variant-01 · Ann Lee (id 101)",
        "variant-02 · Bo Chen (id 102)",
        'variant-03 · Cy "#Diaz" $x$ ] (id 103)',
    ]
    assert [strict.get_destination_page_number(e) for e in entries] == firsts
    children = [e for e in strict.outline if isinstance(e, list)]
    assert len(children) == 3 and all(
        c[0]["/Title"] == "Cats chase mice: worksheet" for c in children
    )


def test_an_empty_folder_is_an_error(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    result = run("export", str(tmp_path), "-f", "pdf", "-o", str(tmp_path / "x.pdf"))
    assert result.exit_code == 1
    assert "has no lesson files" in result.stderr


HOSTILE = [  # tokens may not hold [ ] , #: the title and description carry those
    "$x$",
    "\\",
    '"q"',
    "*b*",
    "_i_",
    "<lab>",
    "@ref",
    "//c",
    "/*c",
    "{1+1}",
    "`r`",
    "= h",
    "- l",
]


DESCRIPTION = '#import "/etc/passwd" ] [a] #{1+1} #let x = 1'


def test_hostile_tokens_print_literally(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    tokens = HOSTILE
    n = len(tokens)
    quoted = ", ".join("'" + t.replace("'", "''") + "'" for t in tokens)
    rows = ", ".join(f"[{1 if k % 2 else 0}, {k % 3}]" for k in range(n))
    lesson = tmp_path / "hostile.yaml"
    lesson.write_text(
        f"version: 1\ntitle: 'A $title] #set'\ndescription: '{DESCRIPTION}'\n"
        f"tokens: [{quoted}]\nX: [{rows}]\n"
        "W_Q: [[1, 0], [0, 1]]\nW_K: [[1, 0], [0, 1]]\nW_V: [[1, 0], [0, 1]]\nprecision: 2\n",
        encoding="utf-8",
    )
    reader = pdf(run, tmp_path, str(lesson), "--no-answers")
    text = text_of(reader)
    assert "A $title] #set: worksheet" in text
    assert DESCRIPTION in text
    for token in tokens:
        assert token in text, token


def test_typ_is_the_editable_source(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "k.typ"
    assert run("export", "cats-chase-mice", "-f", "typ", "-o", str(out)).exit_code == 0
    source = out.read_text(encoding="utf-8")
    assert '#set page(paper: "a4"' in source
    import typst

    assert typst.compile(source.encode("utf-8"))[:5] == b"%PDF-"


def test_cjk_tokens_render_or_the_user_is_told_which_font(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    lesson = tmp_path / "cjk.yaml"
    lesson.write_text(
        "version: 1\ntitle: 猫が鼠を追う\ntokens: [猫, 追う, 鼠]\n"
        "X: [[1, 0], [0, 1], [1, 1]]\nW_Q: [[1, 0], [0, 1]]\nW_K: [[1, 0], [0, 1]]\n"
        "W_V: [[1, 0], [0, 1]]\nprecision: 2\n",
        encoding="utf-8",
    )
    out = tmp_path / "cjk.pdf"
    result = run("export", str(lesson), "-f", "pdf", "-o", str(out))
    assert result.exit_code == 0, result.stderr
    sheet = typst_doc.Sheet(derive(load_lesson(lesson)))
    assert typst_doc.wide_characters([sheet])[:1] == ["猫"]
    if typst_doc.font_note([sheet], []) is None:  # a CJK font is installed: the tokens print
        assert "猫" in text_of(pypdf.PdfReader(out))
    else:
        assert "Noto Sans CJK" in result.stderr and "--font-path" in result.stderr


def test_a_pdf_is_not_written_to_a_terminal() -> None:
    pexpect = pytest.importorskip("pexpect")
    child = pexpect.spawn(
        sys.executable,
        ["-m", "tutor", "export", "cats-chase-mice", "--format", "pdf"],
        env={"NO_COLOR": "1", "COLUMNS": "100", "TERM": "dumb", "PATH": "/usr/bin:/bin"},
        cwd=str(LESSONS.parent),
        encoding="utf-8",
        timeout=30,
    )
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 2
    assert "give --output FILE.pdf" in child.before
    assert "%PDF" not in child.before


def test_typ_headings_use_the_walk_titles_for_new_steps(run) -> None:  # type: ignore[no-untyped-def]
    # X worked as E + P and the turned scores have their own headings, as in the walk
    text = run("export", "dog-bites-dog", "--format", "typ").stdout
    assert "X = E + P, each token with its position" in text
    rope = run("export", "ha-ha-ha-rope", "--format", "typ").stdout
    assert "scores = Q_rot · K_rotᵀ" in rope


def test_typst_dying_is_an_error_not_an_abort(run, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Out of memory, typst aborts (SIGABRT): it took attn-tutor with it (exit 134). It runs in
    a child process now, whose end is said as what it is; here the child aborts as typst does."""
    monkeypatch.setattr(typst_doc, "_COMPILER", "import os; os.abort()")
    out = tmp_path / "x.pdf"
    result = run("export", "cats-chase-mice", "-f", "pdf", "-o", str(out))
    assert result.exit_code == 1
    assert "typst stopped (SIGABRT) while compiling the document, most likely out of memory" in (
        flat(result.stderr)
    )
    assert not out.exists()


def test_a_class_pdf_is_compiled_one_student_at_a_time(run, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Each student's sheet is its own typst document (so memory does not grow with the class),
    and the joined PDF has each student's pages, in order, numbered from 1."""
    folder = tmp_path / "class"
    made = run("variants", "the-cake", "--count", "3", "--seed", "5", "-o", str(folder))
    assert made.exit_code == 0, made.stderr
    sources: list[str] = []
    compile_pdf = typst_doc.compile_pdf

    def counted(text: str, font_paths=()):  # type: ignore[no-untyped-def]
        sources.append(text)
        return compile_pdf(text, font_paths)

    monkeypatch.setattr(typst_doc, "compile_pdf", counted)
    reader = pdf(run, tmp_path, str(folder))
    assert len(sources) == 3
    assert all(s.count("#counter(page).update(1)") == 1 for s in sources)
    pages = [flat(p.extract_text()) for p in reader.pages]
    firsts = [k for k, p in enumerate(pages) if "answer key" in p and "page 1" in p]
    assert len(firsts) == 3
    for k, path in zip(firsts, sorted(folder.glob("*.yaml")), strict=True):
        assert f"fingerprint {load_lesson(path).fingerprint}" in pages[k]
    assert reader.metadata is not None
    assert reader.metadata.title == "I ate the cake and it was delicious: answer key"


def test_a_long_key_is_compiled_in_parts_pages_numbered_on(run, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A key longer than PART_CHARS is compiled part by part (typst's memory grows with the
    document), cut only between steps; the joined PDF numbers its pages 1, 2, … across the
    parts, and holds every step once, in order, each table whole."""
    sources: list[str] = []
    compile_pdf = typst_doc.compile_pdf

    def counted(text: str, font_paths=()):  # type: ignore[no-untyped-def]
        sources.append(text)
        return compile_pdf(text, font_paths)

    whole = pdf(run, tmp_path, "the-cake")
    monkeypatch.setattr(typst_doc, "compile_pdf", counted)
    monkeypatch.setattr(typst_doc, "PART_CHARS", 7_000)  # about a step a part
    reader = pdf(run, tmp_path, "the-cake")
    assert len(sources) >= 4
    # every part after the first carries the footer on and starts its page count where the
    # last part ended; every part begins at a step (a heading), never inside a table
    for text in sources[1:]:
        assert re.search(r"#counter\(page\)\.update\((\d+)\)", text)
        body = text.split("#counter(page).update(", 1)[1].split("\n", 1)[1]
        assert body.startswith(("#block(", "#heading("))
    pages = [flat(p.extract_text()) for p in reader.pages]
    assert [int(re.search(r"page (\d+)\s*$", p)[1]) for p in pages] == list(  # type: ignore[index]
        range(1, len(pages) + 1)
    )
    assert all("I ate the cake and it was delicious · answer key" in p for p in pages)
    # a bookmark a part, named by its pages, each to its first page
    strict = pypdf.PdfReader(io.BytesIO(reader.stream.getvalue()), strict=True)
    entries = [e for e in strict.outline if not isinstance(e, list)]
    spans = [re.fullmatch(r"I ate the cake and it was delicious, pages (\d+)–(\d+)", e["/Title"])
             for e in entries]  # fmt: skip
    assert len(entries) == len(sources) and all(spans)
    assert [strict.get_destination_page_number(e) + 1 for e in entries] == [
        int(m[1])
        for m in spans  # type: ignore[index]
    ]
    assert int(spans[-1][2]) == len(pages)  # type: ignore[index]
    d = derive(load_lesson(LESSONS / "the-cake.yaml"))
    text = " ".join(pages)
    at = 0
    for step in fill_steps(d):  # each step's heading, in order
        title = f"{words.step_title(step, d.lesson)} ({step.shape[0]} × {step.shape[1]})"
        at = text.find(f"{title} {d.step_points(step)} points", at)
        assert at != -1, title
    # the same answers as the key made in one piece: only where the pages break differs
    assert flat(text_of(whole)).split("page 1", 1)[1].replace(" ", "").count("0.23") == (
        text.replace(" ", "").count("0.23")
    )


def test_a_key_of_many_cells_sets_its_working_as_plain_lines(run, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Past PLAIN_WORKING_FROM worked cells, each cell's working is a plain line (typst's math
    layout is the cost of the largest keys), named as explain reads it, with the same numbers
    the working of every other export shows; below it, the key stays in math."""
    d = derive(load_lesson(LESSONS / "cats-chase-mice.yaml"))
    places = d.lesson.precision
    assert typst_doc.worked_lines(d) < typst_doc.PLAIN_WORKING_FROM
    assert "This key works" not in typst_doc.source([typst_doc.Sheet(d)], answers=True)
    monkeypatch.setattr(typst_doc, "PLAIN_WORKING_FROM", 10)
    typ = typst_doc.source([typst_doc.Sheet(d)], answers=True)
    assert f"This key works {typst_doc.worked_lines(d)} cells" in typ
    grids = [line for line in typ.splitlines() if line.startswith("#text(size: 0.9em")]
    assert grids and not any("$" in line for line in grids)  # no math in the working
    assert "no working" not in typst_doc.source([typst_doc.Sheet(d)], answers=False)
    text = flat(text_of(pdf(run, tmp_path, "cats-chase-mice")))
    for step in fill_steps(d):
        if isinstance(step, Softmax | Concat):
            continue
        for i in range(len(step.rows)):
            for j in range(len(step.cols)):
                w = wk.working(step, i, j, places, terms=typst_doc.KEY_TERMS)
                assert f"{w.name} " in text  # the name explain takes
                assert w.numbers.replace(" ", "") in text.replace(" ", "")
    name = wk.working(fill_steps(d)[-1], 0, 0, places).name
    assert run("explain", "cats-chase-mice", name).exit_code == 0
    # the worksheet has no working at all, whatever its size
    assert "This key works" not in typst_doc.source([typst_doc.Sheet(d)], answers=False)


def test_a_negative_exact_form_is_set_as_math() -> None:
    """``-√2/2`` was set as a string in math, where the √ lost its bar and sank below the line;
    it is math like ``√2/2``."""
    assert typst_doc.exact_math("-√2/2") == "-sqrt(2) \\/ 2"
    assert typst_doc.exact_math("−3√15/7") == "-3sqrt(15) \\/ 7"
    d = derive(load_lesson(LESSONS / "dog-bites-dog.yaml"))
    typ = typst_doc.source([typst_doc.Sheet(d)], answers=True)
    assert '"-√2/2"' not in typ and "= -sqrt(2) \\/ 2 approx" in typ


def _wide(tmp_path: Path, seed: int, n: int, kinds: str, name: str, answers: bool):  # type: ignore[no-untyped-def]
    """A random lesson of ``n`` tokens (d = 2): its path, derivation, step ``name`` and the
    typst source of that step's block."""
    import random

    from tests.lessongen import lesson_text

    path = tmp_path / "wide.yaml"
    path.write_text(lesson_text(random.Random(seed), n, 2, 2, 2, kinds))
    d = derive(load_lesson(path))
    step = next(s for s in fill_steps(d) if s.name == name)
    typ = typst_doc.source([typst_doc.Sheet(d)], answers=answers)
    part = typ.split(words.step_title(step, d.lesson), 1)[1].split("#block(", 1)[0]
    return path, d, step, part


def test_a_softmax_of_many_keys_is_set_in_bands(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A softmax row of more than 10 keys had columns of 1fr (0.4 cm for 33 keys) and its
    numbers ran into each other; it is set in bands of 7 keys of 1.6 cm, each band under its
    keys' names, the total after the last: every share in the table, in key order."""
    path, d, weights, part = _wide(tmp_path, 7, 12, "i", "weights", answers=True)
    table = part.split("#table(", 1)[1].split("\n)\n", 1)[0]
    assert "1fr" not in table and table.count("1.6cm") == typst_doc.BAND_KEYS
    assert table.count("[*total*]") == len(weights.rows)  # under the last band of each row
    text = flat(text_of(pdf(run, tmp_path, str(path))))
    places = d.lesson.precision
    for i, token in enumerate(weights.rows[:2]):
        share = " ".join(fmt.shown(c, weights, places) for c in weights.cells[i][:7])
        assert f"share {share}" in text, token  # the first band's shares, in order, legible


@pytest.mark.parametrize("answers", [True, False])
def test_a_table_wider_than_the_line_is_set_in_bands_of_columns(run, tmp_path, answers) -> None:  # type: ignore[no-untyped-def]
    """24 columns squeezed across the line were 0.63 cm each: a key's −1402.66 ran into its
    neighbours and a worksheet's boxes were too narrow to write in. Such a table is set as a
    few, each a band of its columns under its own labels, every column as wide as its longest
    number (a box at least 1.25 cm), the bands as even as they can be, every row in each."""
    path, d, scores, part = _wide(tmp_path, 3, 24, "idf", "scores", answers)
    tables = re.findall(r"#table\(columns: \(auto, ([^)]*)\), rows.*?\n\)", part, flags=re.S)
    assert len(tables) >= 2
    widths = [[float(w.strip().removesuffix("cm")) for w in t.split(",")] for t in tables]
    assert max(map(len, widths)) - min(map(len, widths)) <= 1 and sum(map(len, widths)) == 24
    longest = max(len(fmt.shown(c, scores, d.lesson.precision)) for r in scores.cells for c in r)
    need = typst_doc.WRITE_CM if not answers else typst_doc.CHAR_CM * longest + 0.4
    assert min(w for band in widths for w in band) >= min(need, typst_doc.BOX_WIDTH_CM) - 0.01
    for token in scores.cols:  # each column under its label once, each row in every band
        assert part.count(f'size: 1em, "{token}")') + part.count(f'size: 0.75em, "{token}")') == 1
    assert part.count(f'text(weight: "bold", "{scores.rows[0]}")') == len(tables)
    text = flat(text_of(pdf(run, tmp_path, str(path), *([] if answers else ["--no-answers"]))))
    assert "Shape: (24 × 2) · (2 × 24) = 24 × 24." in text


def test_without_pypdf_a_key_in_parts_says_how_to_install_it(run, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A key of one part needs no pypdf (its own compile is the PDF); a key in parts (or a
    class) does, and without it the command says which extra to install, and writes nothing."""
    monkeypatch.setitem(sys.modules, "pypdf", None)  # import pypdf now raises ImportError
    out = tmp_path / "x.pdf"
    assert run("export", "cats-chase-mice", "-f", "pdf", "-o", str(out)).exit_code == 0
    out.unlink()
    monkeypatch.setattr(typst_doc, "PART_CHARS", 7_000)
    result = run("export", "the-cake", "-f", "pdf", "-o", str(out))
    assert result.exit_code == 1 and not out.exists()
    assert f"needs pypdf, part of the pdf extra: {install_command('pdf')}" in flat(result.stderr)
    assert "Traceback" not in result.stderr
