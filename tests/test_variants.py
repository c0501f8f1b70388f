"""variants: one lesson per student, as an instructor makes them from an LMS roster."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import LESSONS
from tutor.core.engine import derive
from tutor.core.lessonfile import load_lesson


def roster(path: Path, n: int) -> Path:
    """A Moodle-style export: BOM, ';' between fields, headers in any case, an email column."""
    lines = ["First name;SURNAME;ID number;Email address"]
    lines += [f"Ann{k};Lee-{k};s{1000 + k};ann{k}@example.org" for k in range(1, n + 1)]
    path.write_text("\ufeff" + "\n".join(lines) + "\n", encoding="utf-8")
    return path


def rows(path: Path) -> list[dict]:
    """Each row of the lesson's attention, worked by the engine, as plain numbers."""
    d = derive(load_lesson(path))
    scaled, weights = d.step("scaled"), d.step("weights")
    n = d.lesson.n
    out = []
    for i in range(n):
        w = [weights.cells[i][j].value for j in range(n)]
        ranked = sorted(w, reverse=True)
        out.append(
            {
                "top": w.index(ranked[0]),
                "margin": ranked[0] - ranked[1],
                "peak": ranked[0],
                "uniform": ranked[0] - ranked[-1] < 1e-12,
                "loud": max(abs(scaled.cells[i][j].value) for j in range(n)),
            }
        )
    return out


@pytest.fixture(scope="module")
def class_of_30(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str]:
    from typer.testing import CliRunner

    from tests.conftest import PLAIN_ENV
    from tutor.cli import app

    here = tmp_path_factory.mktemp("class")
    csv = roster(here / "roster.csv", 30)
    args = ["variants", "cats-chase-mice", "--roster", str(csv), "--seed", "7"]
    result = CliRunner().invoke(app, [*args, "--output", str(here / "out")], env=PLAIN_ENV)
    assert result.exit_code == 0, result.stderr
    return here, csv, result.stdout


def test_a_roster_of_30_gives_30_distinct_valid_variants(class_of_30, run) -> None:  # type: ignore[no-untyped-def]
    here, _, stdout = class_of_30
    assert "wrote 30 variants of cats-chase-mice" in stdout
    files = sorted((here / "out").glob("*.yaml"))
    assert [f.name for f in files][:2] == [
        "variant-01-ann1-lee-1.yaml",
        "variant-02-ann2-lee-2.yaml",
    ]
    assert len(files) == 30
    check = run("check", str(here / "out"))
    assert check.exit_code == 0
    assert "checked 30 lessons: all valid" in check.stdout
    original = load_lesson(LESSONS / "cats-chase-mice.yaml")
    numbers = set()
    for f in files:
        v = load_lesson(f)
        assert (v.tokens, v.mask, len(v.heads), v.title) == (
            original.tokens, original.mask, len(original.heads), original.title
        )  # fmt: skip
        assert (v.d_model, v.d_k, v.d_v) == (original.d_model, original.d_k, original.d_v)
        entries = [e for m in (v.X, v.heads[0].W_Q, v.heads[0].W_K, v.heads[0].W_V) for r in m
                   for e in r]  # fmt: skip
        assert all(q == 1 and abs(p) <= 3 for p, q in entries)  # small integers
        numbers.add((v.X, v.heads[0].W_Q, v.heads[0].W_K, v.heads[0].W_V))
    assert len(numbers) == 30  # no two the same
    h = original.heads[0]
    assert (original.X, h.W_Q, h.W_K, h.W_V) not in numbers  # and none is the original


def test_every_variant_keeps_the_teaching_intent(class_of_30) -> None:  # type: ignore[no-untyped-def]
    here, _, _ = class_of_30
    before = rows(LESSONS / "cats-chase-mice.yaml")
    assert [r["uniform"] for r in before] == [False, True, False]  # chase: a deliberate even split
    for f in sorted((here / "out").glob("*.yaml")):
        for old, new in zip(before, rows(f), strict=True):
            assert new["loud"] <= max(4, old["loud"])
            assert new["peak"] <= max(0.9, old["peak"])
            assert not new["uniform"] or old["uniform"]
            if not old["uniform"]:
                assert new["top"] == old["top"], f
                assert new["margin"] >= min(0.05, old["margin"]) - 1e-12


def test_each_file_names_its_variant_and_student(class_of_30) -> None:  # type: ignore[no-untyped-def]
    here, _, _ = class_of_30
    text = (here / "out" / "variant-07-ann7-lee-7.yaml").read_text()
    head = text.splitlines()[:5]
    assert head[1:4] == ["# variant: variant-07", "# student: Ann7 Lee-7 (id s1007)", "# seed: 7"]
    assert head[4].startswith("# Made with: attn-tutor variants cats-chase-mice --roster ")


def test_same_seed_same_files_and_another_seed_others(class_of_30, run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    here, csv, _ = class_of_30
    first = {f.name: f.read_text() for f in (here / "out").glob("*.yaml")}
    for seed, same in (("7", True), ("8", False)):
        out = tmp_path / seed
        result = run(
            "variants", "cats-chase-mice", "--roster", str(csv), "--seed", seed, "-o", str(out)
        )
        assert result.exit_code == 0, result.stderr
        again = {f.name: f.read_text() for f in out.glob("*.yaml")}
        assert again.keys() == first.keys()
        strip = lambda t: [x for x in t.splitlines() if not x.startswith("#")]  # noqa: E731
        assert (all(strip(again[k]) == strip(first[k]) for k in first)) is same
        if same:
            assert all(again[k].replace(str(out), str(here / "out")) == first[k] for k in first)


def test_count_without_a_roster_names_them_variant_01(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    result = run("variants", "the-cake-causal", "--count", "3", "--seed", "1", "-o", str(tmp_path))
    assert result.exit_code == 0, result.stderr
    assert sorted(f.name for f in tmp_path.iterdir()) == [
        "variant-01.yaml", "variant-02.yaml", "variant-03.yaml"
    ]  # fmt: skip
    text = (tmp_path / "variant-02.yaml").read_text()
    assert "# variant: variant-02\n# seed: 1\n" in text and "# student:" not in text
    assert load_lesson(tmp_path / "variant-02.yaml").mask == "causal"


def test_a_lesson_of_decimals_keeps_its_kind_of_decimals(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    lesson = tmp_path / "halves.yaml"
    lesson.write_text(
        "title: Halves\ntokens: [a, b, c]\nX: [[1, 0.5], [0.5, 1], [1, 1]]\n"
        "W_Q: [[1, 0.5], [0, 1]]\nW_K: [[0.5, 0], [1, 0.5]]\nW_V: [[1, 0], [0.5, 1]]\n"
    )
    result = run("variants", str(lesson), "--count", "4", "--seed", "3", "-o", str(tmp_path / "v"))
    assert result.exit_code == 0, result.stderr
    for f in (tmp_path / "v").glob("*.yaml"):
        v = load_lesson(f)
        entries = {e for m in (v.X, v.heads[0].W_Q, v.heads[0].W_K, v.heads[0].W_V) for r in m
                   for e in r}  # fmt: skip
        assert entries <= {(0, 1), (1, 2), (1, 1)}


@pytest.mark.parametrize(
    ("text", "place", "fragment"),
    [
        ("", ":1:1: ", "the roster is empty"),
        ("Score,Grade\n1,2\n", ":1:1: ", "names no name or id column (found: score, grade)"),
        ("Name,ID\nAnn,1\n,\nBob,2\n", None, None),  # a blank line is skipped
        ("Name,ID\nAnn,1\n ,  ,x\n", ":3:1: ", "neither a name nor an id"),
        (
            "name;id\nAnn;1\nBob;2\nAnn;1\n",
            ":4:1: ",
            "Ann (id 1) is listed twice (first on line 2)",
        ),
        ("Name\n", ":1:1: ", "lists no students"),
        ('Name,ID\n"Ann,1\n', ":", "not a valid CSV row"),
    ],
)
def test_a_bad_roster_is_an_error_with_its_line(  # type: ignore[no-untyped-def]
    run, tmp_path: Path, text: str, place: str | None, fragment: str | None
) -> None:
    csv = tmp_path / "r.csv"
    csv.write_text(text)
    result = run(
        "variants",
        "cats-chase-mice",
        "--roster",
        str(csv),
        "--seed",
        "1",
        "-o",
        str(tmp_path / "o"),
    )
    if fragment is None:
        assert result.exit_code == 0, result.stderr
        assert len(list((tmp_path / "o").iterdir())) == 2
        return
    assert result.exit_code == 1
    assert f"{csv}{place}" in result.stderr and fragment in result.stderr
    assert not (tmp_path / "o").exists()  # nothing written


def test_a_roster_that_is_not_a_text_file(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    csv = tmp_path / "r.csv"
    csv.write_bytes(b"Name\n\xff\xfe\n")
    result = run("variants", "cats-chase-mice", "--roster", str(csv), "-o", str(tmp_path / "o"))
    assert result.exit_code == 1
    assert f"{csv}:2:1: is not UTF-8 text" in result.stderr
    missing = run("variants", "cats-chase-mice", "--roster", str(tmp_path / "no.csv"), "-o", "o")
    assert missing.exit_code == 1 and "no such roster file" in missing.stderr


@pytest.mark.parametrize("args", [[], ["--count", "2", "--roster", "r.csv"]])
def test_count_or_roster_but_not_both(run, tmp_path: Path, args: list[str]) -> None:  # type: ignore[no-untyped-def]
    result = run("variants", "cats-chase-mice", *args, "-o", str(tmp_path / "o"))
    assert result.exit_code == 2
    assert "give either --count N or --roster FILE" in result.stderr


def test_it_never_replaces_files_without_force(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    args = ["variants", "cats-chase-mice", "--count", "2", "--seed", "1", "-o", str(tmp_path)]
    assert run(*args).exit_code == 0
    (tmp_path / "variant-01.yaml").write_text("mine")
    again = run(*args)
    assert again.exit_code == 1
    assert (
        f"{tmp_path / 'variant-01.yaml'} already exists (2 files would be replaced)" in again.stderr
    )
    assert (tmp_path / "variant-01.yaml").read_text() == "mine"
    assert run(*args, "--force").exit_code == 0
    assert (tmp_path / "variant-01.yaml").read_text() != "mine"


def test_too_few_distinct_variants_is_said_and_nothing_is_written(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    one = tmp_path / "one.yaml"  # one token, 1 × 1 matrices: at most 127 other lessons
    one.write_text("title: One\ntokens: [a]\nX: [[1]]\nW_Q: [[1]]\nW_K: [[1]]\nW_V: [[1]]\n")
    result = run("variants", str(one), "--count", "130", "--seed", "1", "-o", str(tmp_path / "o"))
    assert result.exit_code == 1
    assert "different from the variants before it in 20 tries" in result.stderr
    assert "too few distinct variants" in result.stderr
    assert not (tmp_path / "o").exists()
