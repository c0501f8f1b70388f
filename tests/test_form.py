"""The answer form (``export --format form``): its HTML, read as a parser reads it, and the page
as a student meets it, in a real headless Chromium (Debian's ``chromium``, driven by Playwright):
filled with the right values, saved and graded to full marks; entries grade could not read
flagged; entries kept across a reload; nothing fetched from the network.

The browser tests skip, saying why, only when Playwright or a Chromium cannot be had.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path

import pytest

from tests.conftest import LESSONS
from tests.test_hostile import clean
from tutor.core.engine import Derivation, derive
from tutor.core.errors import AnswerError
from tutor.core.kinds import fill_steps
from tutor.core.lessonfile import load_lesson
from tutor.core.numbers import read_answer
from tutor.export.form import form_page
from tutor.text import format as fmt
from tutor.text.cells import cell_name, parse_cell

# a lesson of each kind the form must lay out
KINDS = {
    "single": "cats-chase-mice",
    "causal": "the-cake-causal",
    "multi-head": "the-cake-two-heads",
    "sinusoidal": "go-go-go",
    "decoding": "the-cake-next-token",
}
ALL = sorted(p.stem for p in LESSONS.glob("*.yaml"))


def derived(name: str) -> Derivation:
    return derive(load_lesson(LESSONS / f"{name}.yaml", name=name))


class Page(HTMLParser):
    """The page's inputs and the text of its table cells, as a browser's parser reads them."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.inputs: list[dict[str, str | None]] = []
        self.tds: list[str] = []
        self.scripts: list[str] = []
        self.external: list[str] = []
        self._td: list[str] | None = None
        self._script: list[str] | None = None
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "input" and "data-cell" in a:
            self.inputs.append(a)
        if tag == "td":
            self._td = []
        if tag == "script":
            self._script = []
        for key in ("src", "href"):
            if a.get(key):
                self.external.append(f"{tag} {key}={a[key]}")

    def handle_endtag(self, tag: str) -> None:
        if tag == "td" and self._td is not None:
            self.tds.append("".join(self._td).strip())
            self._td = None
        if tag == "script" and self._script is not None:
            self.scripts.append("".join(self._script))
            self._script = None

    def handle_data(self, data: str) -> None:
        for buf in (self._td, self._script):
            if buf is not None:
                buf.append(data)


def asked(d: Derivation) -> list[tuple[str, str]]:
    """(cell name, aria-label) of every cell the form asks, in the page's order."""
    out = []
    for step in fill_steps(d):
        who = step.key if step.head is None else f"head {step.head} {step.name}"
        for i, j in d.asked(step):
            label = f"{who}, row {step.rows[i]}, column {step.cols[j]}"
            out.append((cell_name(step, i, j), label))
    return out


# ---------------------------------------------------------------------------------------------
# the HTML


@pytest.mark.parametrize("name", ALL)
def test_every_asked_cell_has_one_input_named_as_walk_cell_names_it(name: str) -> None:
    d = derived(name)
    page = Page(form_page(d))
    got = [(a["data-cell"], a["aria-label"]) for a in page.inputs]
    assert got == asked(d)  # one each, in order: none for a given or masked cell
    for cell, _ in got[:: max(1, len(got) // 40)]:  # walk --cell reads each name back
        step, i, j = parse_cell(d, cell or "")
        assert cell_name(step, i, j) == cell
    assert page.external == []  # no src or href: nothing to fetch


def test_labels_read_as_words() -> None:
    labels = {a["data-cell"]: a["aria-label"] for a in Page(form_page(derived("the-cake"))).inputs}
    assert labels["weights[it, cake]"] == "weights, row it, column cake"
    heads = Page(form_page(derived("the-cake-two-heads"))).inputs
    assert {"data-cell": "head1.scores[I, ate]"}.items() <= next(
        a for a in heads if a["data-cell"] == "head1.scores[I, ate]"
    ).items()
    assert any(a["aria-label"] == "head 1 scores, row I, column ate" for a in heads)


def test_the_causal_masks_cells_are_given_not_asked() -> None:
    d = derived("the-cake-causal")
    page = Page(form_page(d))
    names = {a["data-cell"] for a in page.inputs}
    assert "scaled[I, ate]" not in names and "weights[I, ate]" not in names
    assert "scaled[ate, I]" in names
    masked = 8 * 7 // 2
    assert page.tds.count(fmt.NEG_INF_TEXT) == masked
    layout = json.loads(page.scripts[0])
    scaled = next(s for s in layout["steps"] if s["name"] == "scaled")
    assert len(scaled["given"]) == masked and set(scaled["given"].values()) == {"-inf"}


@pytest.mark.parametrize("name", [*KINDS.values(), "the-cake"])
def test_no_answer_is_in_the_page(name: str) -> None:
    d = derived(name)
    text = form_page(d)
    page = Page(text)
    given = {
        fmt.shown(c, s, d.lesson.precision) for s in d.steps if s.given for r in s.cells for c in r
    }
    answers = set()
    for step in fill_steps(d):
        for i, j in d.asked(step):
            cell = step.cells[i][j]
            if not fmt.is_integer(cell):  # small integers are everywhere (labels, inputs)
                answers.add(fmt.shown(cell, step, d.lesson.precision))
    answers -= given  # X = E + P: a sum may equal a given number by chance
    assert answers, "the lesson should have decimals to look for"
    # where a lesson's numbers can be: its tables, the inputs' attributes, the script's data
    # (the fixed prose, style and script hold example numbers such as 0.25 for every lesson)
    seen = {*page.tds, *(v for a in page.inputs for v in a.values() if v), page.scripts[0]}
    text = "\n".join(sorted(seen))
    found = sorted(a for a in answers if a in text or a.replace(fmt.MINUS, "-") in text)
    assert found == []
    # the tables to fill hold inputs only, the mask's cells aside; the script's data no values
    assert all(t in ("", fmt.NEG_INF_TEXT, "0") for t in page.tds[-len(page.inputs) :])
    layout = json.loads(page.scripts[0])
    assert set(layout) == {
        "lesson", "fingerprint", "variant", "student", "student_id", "heads", "stem", "steps"
    }  # fmt: skip
    assert all(set(s) == {"name", "head", "shape", "given"} for s in layout["steps"])


HOSTILE = ["<b>x", "a&amp;b", '"q"', "it's", "</script>", "<!--"]


@pytest.fixture
def hostile(tmp_path: Path) -> Path:
    """A lesson whose tokens, title and description are HTML waiting to happen."""
    text = (LESSONS / "cats-chase-mice.yaml").read_text(encoding="utf-8")
    tokens = ", ".join(json.dumps(t) for t in HOSTILE[:3])
    text = re.sub(r"^tokens: .*$", f"tokens: [{tokens}]", text, count=1, flags=re.M)
    text = re.sub(r"^title: .*$", 'title: "<script>alert(1)</script> & \\"x\\""', text, flags=re.M)
    path = tmp_path / "hostile.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_hostile_tokens_and_titles_are_escaped(hostile: Path) -> None:
    d = derive(load_lesson(hostile, name="hostile"))
    text = form_page(d)
    assert "<script>alert" not in text and "<b>x" not in text
    assert "&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;x&quot;" in text
    page = Page(text)
    assert [a["data-cell"] for a in page.inputs][:2] == ["Q[<b>x, 1]", "Q[<b>x, 2]"]
    assert [a["data-cell"] for a in page.inputs] == [c for c, _ in asked(d)]
    assert len(page.scripts) == 2  # the layout's JSON and the script: no </script> broke out
    assert json.loads(page.scripts[0])["lesson"] == "hostile"


# ---------------------------------------------------------------------------------------------
# the command


def test_export_form_writes_a_page(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "ccm.html"
    result = run("export", "cats-chase-mice", "--format", "form", "-o", str(out))
    assert result.exit_code == 0, result.stderr
    assert out.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    again = run("export", "cats-chase-mice", "--format", "form", "-o", str(out))
    assert again.exit_code == 1 and "already exists" in clean(again)
    assert "Traceback" not in again.stderr


def test_export_form_refuses_what_it_cannot_do(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    no = run("export", "cats-chase-mice", "--format", "form", "--no-answers")
    assert no.exit_code == 2 and "always blank" in clean(no)
    bad = tmp_path / "bad.yaml"
    bad.write_text("title: x\ntokens: [a]\n", encoding="utf-8")
    wrong = run("export", str(bad), "--format", "form", "-o", str(tmp_path / "x.html"))
    assert wrong.exit_code == 1 and "bad.yaml" in clean(wrong)
    assert "Traceback" not in wrong.stderr + wrong.stdout


def test_a_folder_of_variants_gives_a_page_each(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    folder = tmp_path / "variants"
    made = run("variants", "cats-chase-mice", "--count", "3", "--output", str(folder))
    assert made.exit_code == 0, made.stderr
    no_out = run("export", str(folder), "--format", "form")
    assert no_out.exit_code == 2 and "--output DIR" in clean(no_out)
    out = tmp_path / "forms"
    result = run("export", str(folder), "--format", "form", "-o", f"{out}/")
    assert result.exit_code == 0, result.stderr
    pages = sorted(out.glob("*-form.html"))
    assert len(pages) == 3 and "wrote 3 answer forms" in result.stdout
    layouts = [json.loads(Page(p.read_text(encoding="utf-8")).scripts[0]) for p in pages]
    assert len({lay["fingerprint"] for lay in layouts}) == 3  # new numbers each
    assert all(lay["variant"] and lay["stem"] == lay["variant"] for lay in layouts)


# ---------------------------------------------------------------------------------------------
# one reader: the page's and grade's agree on every entry of one corpus

CORPUS = [
    # read
    "0.25", "-0.25", "+0.25", " 0.49 ", "\u22120.49", "3/4", "-3/4", "0", "00.5", "007", ".5",
    "5.", "1e3", "1E-3", "2e-3", "1.5e+2", "4/sqrt(2)", "2√2", "√2", "2 √ 2", "√(2)/2", "2e",
    "2e^√2", "e^1.41/(e^1.41 + e^2.83 + e^1.41)", "3(1 + e)", "(1 + e)(2)", "2pi", "2π",
    "exp(1)", "ln(2)", "log(e)", "2^10", "2**-1", "-2^2", "(-2)^2", "1·2", "3×4", "6÷4",
    "sqrt(4)", "sqrt(2,)", "1/3 + 1/6", "-inf", "−∞", "- inf", "-Inf", "-oo", "1" * 30,
    "1e30", "e^138", "0^0", "((((1))))", "1.001^100", "10^59",
    # refused
    "0,24", "-0,5", "1,5,2", "0,5/2", "", "   ", "abc", "1/0", "1/(2-2)", "sqrt(-1)", "ln(0)",
    "ln(-1)", "(-8)^(1/3)", "1e31", "1" * 31, "e^139", "exp(139)", "10^61", "1.001^1000",
    "0^-1", "2 3", "1.5.2", "2x", "inf", "∞", "+inf", "1_000", "0x10", "1j", "2//3", "5%2",
    "2@3", "~1", "1#2", "(1, 2)", "()", "[1]", "'1'", "e.real", "sqrt", "sqrt(1, 2)",
    "sqrt(x=2)", "pi(2)", "True", "None", "1 if 1 else 2", "1 < 2", "√-2", "√ (2)", "2 e5",
    "1+" * 40 + "1", "9" * 201, "٣", "(1+2)2",
]  # fmt: skip


def python_reads(text: str) -> bool:
    try:
        read_answer(text)
    except AnswerError:
        return False
    return True


# ---------------------------------------------------------------------------------------------
# in a browser

ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
CHROMIUM = os.environ.get("ATTN_TUTOR_CHROMIUM", "/usr/bin/chromium")


@pytest.fixture(scope="module")
def browser():  # type: ignore[no-untyped-def]
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="Playwright is not installed (pip install playwright)"
    )
    if not (Path(CHROMIUM).exists() or shutil.which(CHROMIUM)):
        pytest.skip(f"no Chromium at {CHROMIUM} (Debian: apt-get install chromium)")
    with sync_api.sync_playwright() as p:
        try:
            b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        except Exception as err:  # a browser that will not start here
            pytest.skip(f"Chromium at {CHROMIUM} did not start: {err}")
        yield b
        b.close()


class Opened:
    """A form page open in the browser, with every request it made."""

    def __init__(self, browser, path: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
        self.context = browser.new_context(accept_downloads=True)
        self.page = self.context.new_page()
        self.requests: list[str] = []
        self.errors: list[str] = []
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.url = path.resolve().as_uri()
        self.tmp_path = tmp_path
        self.page.goto(self.url)

    def fill(self, values: dict[str, str]) -> None:
        """Type each value into its cell (as input events, so the page checks and keeps it)."""
        self.page.evaluate(
            """values => { for (const [cell, text] of Object.entries(values)) {
                const el = document.querySelector(`input[data-cell="${CSS.escape(cell)}"]`);
                el.value = text; el.dispatchEvent(new Event("input", {bubbles: true})); } }""",
            values,
        )

    def download(self, student: str) -> Path:
        self.page.fill("#student", student)
        with self.page.expect_download() as got:
            self.page.click('[data-action="download"] >> nth=0')
        target = self.tmp_path / got.value.suggested_filename
        got.value.save_as(target)
        return target

    def invalid(self) -> list[str]:
        return self.page.eval_on_selector_all(
            'input[aria-invalid="true"]', "els => els.map(e => e.dataset.cell)"
        )

    def close(self) -> None:
        self.context.close()


@pytest.fixture
def opened(browser, tmp_path: Path):  # type: ignore[no-untyped-def]
    pages: list[Opened] = []

    def open_page(path: Path) -> Opened:
        pages.append(Opened(browser, path, tmp_path))
        return pages[-1]

    yield open_page
    for p in pages:
        p.close()


def right_values(d: Derivation) -> dict[str, str]:
    """Every asked cell as a careful student writes it: the engine's value, rounded at the
    lesson's precision as the worksheet rounds it."""
    places = d.lesson.precision
    return {
        cell_name(step, i, j): fmt.shown(step.cells[i][j], step, places)
        for step in fill_steps(d)
        for i, j in d.asked(step)
    }


def page_for(d: Derivation, tmp_path: Path) -> Path:
    path = tmp_path / f"{d.lesson.name}-form.html"
    path.write_text(form_page(d), encoding="utf-8")
    return path


@pytest.mark.parametrize("kind", KINDS)
def test_a_form_filled_right_grades_to_full_marks(run, opened, tmp_path: Path, kind: str) -> None:  # type: ignore[no-untyped-def]
    name = KINDS[kind]
    d = derived(name)
    form = opened(page_for(d, tmp_path))
    form.fill(right_values(d))
    assert form.invalid() == []
    sheet = form.download("Ada Lovelace")
    assert sheet.name == f"{name}-Ada-Lovelace-sheet.json"
    data = json.loads(sheet.read_text(encoding="utf-8"))
    assert (data["lesson"], data["fingerprint"], data["student"]) == (
        name,
        d.lesson.fingerprint,
        "Ada Lovelace",
    )
    graded = run("grade", name, str(sheet), "--json")
    assert graded.exit_code == 0, graded.stderr
    report = json.loads(graded.stdout)
    assert report["student"] == "Ada Lovelace"
    assert report["score"] == report["total"] > 0
    assert form.requests == [form.url] and form.errors == []


def test_blank_cells_stay_blank(run, opened, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    d = derived("the-cake-causal")
    form = opened(page_for(d, tmp_path))
    values = right_values(d)
    form.fill({k: v for k, v in values.items() if k.startswith(("Q[", "K["))})
    data = json.loads(form.download("B").read_text(encoding="utf-8"))
    assert data["V"] == [[None] * 4] * 8
    assert data["scaled"][0][1] == "-inf" and data["weights"][0][1] == "0"  # given by the mask
    report = json.loads(run("grade", "the-cake-causal", str(form.download("B")), "--json").stdout)
    assert report["score"] == 64
    assert {c["verdict"] for c in report["cells"] if c["step"] == "V"} == {"blank"}


def test_a_variant_pages_sheet_is_graded_as_its_variant(run, opened, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    folder = tmp_path / "variants"
    assert (
        run("variants", "cats-chase-mice", "--count", "2", "--output", str(folder)).exit_code == 0
    )
    out = tmp_path / "forms"
    assert run("export", str(folder), "--format", "form", "-o", f"{out}/").exit_code == 0
    lesson = sorted(folder.glob("*.yaml"))[1]
    d = derive(load_lesson(lesson, name=lesson.stem))
    form = opened(out / f"{lesson.stem}-form.html")
    form.fill(right_values(d))
    sheet = form.download("Grace")
    assert sheet.name == f"{d.lesson.variant.id}-Grace-sheet.json"
    assert json.loads(sheet.read_text(encoding="utf-8"))["variant"] == d.lesson.variant.id
    report = json.loads(run("grade", str(folder), str(sheet), "--json").stdout)
    assert report["score"] == report["total"] > 0


def test_entries_grade_could_not_read_are_flagged(opened, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    form = opened(page_for(derived("the-cake-causal"), tmp_path))
    page = form.page
    form.fill({"weights[it, cake]": "0,24", "Q[I, 1]": "abc", "scaled[it, I]": "-inf"})
    assert sorted(form.invalid()) == ["Q[I, 1]", "scaled[it, I]", "weights[it, cake]"]
    cell = page.locator('input[data-cell="weights[it, cake]"]')
    message = page.locator("#" + cell.get_attribute("aria-describedby"))
    assert "0.24" in message.inner_text()
    cell.fill("0.24")
    assert cell.get_attribute("aria-invalid") is None and message.count() == 0
    assert sorted(form.invalid()) == ["Q[I, 1]", "scaled[it, I]"]


def test_reload_keeps_every_entry(opened, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    form = opened(page_for(derived("cats-chase-mice"), tmp_path))
    page = form.page
    page.fill("#student", "Émile")
    page.locator('input[data-cell="Z[mice, 2]"]').fill("1,5")
    page.locator('input[data-cell="Q[cats, 1]"]').fill("2")
    page.reload()
    assert page.input_value("#student") == "Émile"
    assert page.input_value('input[data-cell="Q[cats, 1]"]') == "2"
    assert page.input_value('input[data-cell="Z[mice, 2]"]') == "1,5"
    assert form.invalid() == ["Z[mice, 2]"]  # still flagged after the reload
    page.close()  # a closed tab, opened again
    again = form.context.new_page()
    again.goto(form.url)
    assert again.input_value('input[data-cell="Q[cats, 1]"]') == "2"


def test_the_keyboard_moves_like_a_spreadsheet(opened, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    page = opened(page_for(derived("the-cake-causal"), tmp_path)).page

    def focused() -> str:
        return page.evaluate("document.activeElement.dataset.cell")

    page.locator('input[data-cell="Q[I, 1]"]').focus()
    page.keyboard.press("Enter")
    assert focused() == "Q[ate, 1]"
    page.keyboard.press("ArrowRight")
    assert focused() == "Q[ate, 2]"
    page.keyboard.press("Tab")
    assert focused() == "Q[ate, 3]"
    page.keyboard.press("ArrowUp")
    assert focused() == "Q[I, 3]"
    page.keyboard.type("12")
    page.keyboard.press("ArrowLeft")  # inside the text: the caret moves, not the cell
    assert focused() == "Q[I, 3]"
    page.locator('input[data-cell="scaled[ate, I]"]').focus()
    page.keyboard.press("ArrowRight")  # scaled[ate, ate] is a cell; past it the mask's −∞
    assert focused() == "scaled[ate, ate]"
    page.keyboard.press("ArrowRight")
    assert focused() == "scaled[ate, ate]"
    page.locator('input[data-cell="Q[delicious, 4]"]').focus()
    page.keyboard.press("Enter")  # the last row: on to the next table
    assert focused() == "K[I, 1]"


def test_the_page_and_grade_read_one_corpus_alike(opened, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    page = opened(page_for(derived("cats-chase-mice"), tmp_path)).page
    browser = page.evaluate("texts => texts.map(t => attnForm.readAnswer(t).ok)", CORPUS)
    python = [python_reads(t) for t in CORPUS]
    differ = [(t, p, b) for t, p, b in zip(CORPUS, python, browser, strict=True) if p != b]
    assert differ == []
    assert 20 < sum(python) < len(CORPUS) - 20  # both sides of the line are tried


def test_a_forms_download_is_what_the_autograder_grades(opened, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The whole road: a form filled in the browser, its download uploaded to the Gradescope
    autograder's library function, full marks with one test per step; one cell typed with a
    decimal comma costs that cell only."""
    from tutor.assess import autograde as ag
    from tutor.assess import classgrade as cg

    name = "the-cake-causal"
    d = derived(name)
    lessons = cg.Lessons([load_lesson(LESSONS / f"{name}.yaml")], name)
    form = opened(page_for(d, tmp_path))
    values = right_values(d)
    form.fill(values)
    upload = tmp_path / "submission"
    upload.mkdir()
    form.download("Grace Hopper").rename(upload / "sheet.json")
    out = ag.autograde(upload, lessons)
    total = sum(t["max_score"] for t in out["tests"])  # type: ignore[union-attr]
    assert out["score"] == total > 0
    assert [t["name"] for t in out["tests"]] == [s.key for s in fill_steps(d)]  # type: ignore[union-attr]
    cell = next(k for k in values if k.startswith("weights["))
    form.fill({cell: values[cell].replace(".", ",")})
    (upload / "sheet.json").unlink()
    form.download("Grace Hopper").rename(upload / "sheet.json")
    out = ag.autograde(upload, lessons)
    assert out["score"] == total - 1
