"""Outputs that mean what was typed (issue 43, item 5): ``-o DIR/`` is a folder wherever a folder
can be meant, and a class folder's links are followed only inside it, never quoted."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def variants(run, tmp_path: Path) -> Path:  # type: ignore[no-untyped-def]
    folder = tmp_path / "v"
    result = run("variants", "cats-chase-mice", "--count", "2", "--seed", "1", "-o", str(folder))
    assert result.exit_code == 0, result.output
    return folder


@pytest.mark.parametrize("format", ["typ", "md", "sheet"])
def test_o_dir_slash_is_a_folder_of_variants(run, variants, tmp_path, format) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "newdir"
    result = run("export", str(variants), "--format", format, "-o", f"{out}/")
    assert result.exit_code == 0, result.output
    assert out.is_dir()
    assert len(list(out.iterdir())) == 2


def test_o_file_joins_a_class_into_one_typst_document(run, variants, tmp_path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "class.typ"
    result = run("export", str(variants), "--format", "typ", "-o", str(out))
    assert result.exit_code == 0, result.output
    assert out.is_file()


def test_o_dir_slash_for_slides_is_a_folder_even_named_like_a_picture(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "one.svg"
    result = run("export", "cats-chase-mice", "-f", "svg", "--step", "weights", "-o", f"{out}/")
    assert result.exit_code == 0, result.output
    assert out.is_dir() and len(list(out.glob("*.svg"))) == 1


def test_o_dir_slash_for_one_document_is_refused_not_written_as_a_file(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "newdir"
    for format in ("md", "typ", "sheet"):
        result = run("export", "cats-chase-mice", "-f", format, "-o", f"{out}/")
        assert result.exit_code == 2, result.output
        assert "names a folder" in result.stderr
        assert not out.exists()


def test_o_dir_slash_for_code_and_new_writes_their_file_into_the_folder(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """``code`` and ``new`` write one file with a name of their own: ``-o DIR/`` (made if missing)
    gets that file inside it, not a file named DIR."""
    progs, lessons = tmp_path / "progs", tmp_path / "lessons"
    result = run("code", "cats-chase-mice", "-o", f"{progs}/")
    assert result.exit_code == 0, result.output
    assert progs.is_dir() and "W_Q = np.array" in (progs / "cats-chase-mice.py").read_text()
    again = run("code", "cats-chase-mice", "-o", f"{progs}/")  # the same file, not replaced
    assert again.exit_code == 1 and "progs/cats-chase-mice.py already exists" in again.stderr
    bare = run("code", "cats-chase-mice", "-o", str(progs))  # a folder without its slash
    assert bare.exit_code == 1 and "is a folder; give a file name" in bare.stderr
    made = run("new", "mine", "--tokens", "a b c", "--seed", "1", "-o", f"{lessons}/")
    assert made.exit_code == 0, made.output
    assert lessons.is_dir() and (lessons / "mine.yaml").is_file()
    assert run("check", str(lessons / "mine.yaml")).exit_code == 0


def test_o_dir_slash_for_the_grade_report_is_refused_not_written_as_a_file(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    sheet = tmp_path / "sheet.yaml"
    sheet.write_text(run("export", "cats-chase-mice", "--format", "sheet").stdout)
    for out in (tmp_path / "reports", tmp_path / "report.html"):
        result = run("grade", "cats-chase-mice", str(sheet), "--report", "-o", f"{out}/")
        assert result.exit_code == 2, result.output
        assert f"--output {out}/ names a folder; the report is one file" in result.stderr
        assert not out.exists()


SECRET = "root:$y$SECRETHASH:19000:0:99999:7:::\ndaemon:*:19000:0:99999:7:::\n"


def test_a_class_folder_follows_links_only_inside_itself_and_quotes_nothing(  # type: ignore[no-untyped-def]
    run, variants, tmp_path
) -> None:
    import os

    sheets = tmp_path / "sheets"
    assert run("export", str(variants), "-f", "sheet", "-o", f"{sheets}/").exit_code == 0
    outside = tmp_path / "shadow"
    outside.write_text(SECRET)
    (sheets / "aa-inside.yaml").symlink_to(sheets / "variant-01-sheet.yaml")  # followed
    (sheets / "bb-outside.yaml").symlink_to(outside)
    (sheets / "cc-dangling.yaml").symlink_to(tmp_path / "nothing")
    (sheets / "dd-loop.yaml").symlink_to(sheets / "dd-loop.yaml")
    (sheets / "ee-device.yaml").symlink_to("/dev/zero")
    os.mkfifo(sheets / "ff-fifo.yaml")
    (sheets / "gg-copy.yaml").write_text(SECRET)  # a file that is no sheet, in the folder
    (sheets / "hh-text.yaml").write_text("SECRETHASH all on one line\n")
    result = run("grade", str(variants), str(sheets))
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    assert "SECRETHASH" not in result.output and "daemon" not in result.output
    said = " ".join(result.output.split())
    assert "bb-outside.yaml: skipped: a link to a file outside the class folder" in said
    assert "cc-dangling.yaml: skipped: a link to nothing" in said
    assert "dd-loop.yaml: skipped: a loop of links" in said
    assert "ee-device.yaml: skipped:" in said
    assert "ff-fifo.yaml: skipped: a device or pipe" in said
    assert "gg-copy.yaml:1:1: not an answer sheet" in said
    assert "hh-text.yaml:1:1: not an answer sheet" in said
    assert "aa-inside.yaml" in said  # the link inside the folder is graded (given twice: noted)
