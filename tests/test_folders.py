"""Lesson folders: bundled, ./lessons/, ATTN_TUTOR_LESSONS, --lessons-dir; first found wins."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from tests.conftest import LESSONS, ROOT
from tutor.core.catalog import find_lesson, iter_lessons, lesson_dirs, resolve_lesson
from tutor.core.errors import LessonError, UsageError


def lesson(folder: Path, name: str, title: str) -> Path:
    """A minimal valid lesson file named ``name`` in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.yaml"
    path.write_text(
        f"title: {title}\ntokens: [a, b]\nX: [[1, 0], [0, 1]]\n"
        "W_Q: [[1], [0]]\nW_K: [[1], [1]]\nW_V: [[1], [2]]\n"
    )
    return path


@pytest.fixture
def folders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """A current folder with ./lessons/, two env folders and one --lessons-dir folder."""
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    dirs = {
        "cwd": work / "lessons",
        "env1": tmp_path / "env1",
        "env2": tmp_path / "env2",
        "cli": tmp_path / "cli",
    }
    for d in dirs.values():
        d.mkdir()
    monkeypatch.setenv(
        "ATTN_TUTOR_LESSONS", os.pathsep.join([str(dirs["env1"]), str(dirs["env2"])])
    )
    return dirs


def test_the_order_is_nearest_first(folders: dict[str, Path]) -> None:
    origins = [o for o, _ in lesson_dirs([folders["cli"]])]
    assert origins == ["--lessons-dir", "env 1", "env 2", "./lessons",
                       "bundled"]  # fmt: skip


def test_nearest_wins_in_every_pairing(folders: dict[str, Path]) -> None:
    for key in ("cli", "env1", "env2", "cwd"):
        lesson(folders[key], "dup", f"from {key}")
    assert find_lesson("dup", [folders["cli"]]) == folders["cli"] / "dup.yaml"
    assert find_lesson("dup") == folders["env1"] / "dup.yaml"
    (folders["env1"] / "dup.yaml").unlink()
    assert find_lesson("dup") == folders["env2"] / "dup.yaml"
    (folders["env2"] / "dup.yaml").unlink()
    assert find_lesson("dup").resolve() == folders["cwd"] / "dup.yaml"


def test_your_lesson_wins_over_a_bundled_one(folders: dict[str, Path]) -> None:
    lesson(folders["cwd"], "cats-chase-mice", "an edited copy")
    found = resolve_lesson("cats-chase-mice")
    assert found.path.resolve() == folders["cwd"] / "cats-chase-mice.yaml"
    assert found.shadows == (("bundled", LESSONS / "cats-chase-mice.yaml"),)
    assert found.note == (
        f".{os.sep}lessons{os.sep}cats-chase-mice.yaml (it shadows the bundled cats-chase-mice)"
    ).join(["using ", ""])


@pytest.mark.parametrize(
    "command",
    [
        ["walk", "the-cake", "--step", "Q"],
        ["export", "the-cake", "--format", "md"],
        ["export", "the-cake", "--format", "sheet"],
        ["quiz", "the-cake", "--count", "1", "--seed", "1"],
        ["explain", "the-cake", "Q[I, 1]"],
        ["check", "the-cake"],
    ],
)
def test_every_command_uses_the_edited_copy_and_says_so(  # type: ignore[no-untyped-def]
    run, folders: dict[str, Path], command: list[str]
) -> None:
    text = (LESSONS / "the-cake.yaml").read_text().replace("title:", "title: Edited -", 1)
    (folders["cwd"] / "the-cake.yaml").write_text(text)
    result = run(*command, input="skip\n" * 3)
    assert result.exit_code == 0, result.stderr
    note = f"note: using .{os.sep}lessons{os.sep}the-cake.yaml (it shadows the bundled the-cake)"
    assert result.stderr.splitlines() == [note]
    if command[0] in ("walk", "export", "quiz"):
        assert "Edited -" in result.stdout


def test_grade_uses_the_edited_copy_and_says_so(run, folders: dict[str, Path]) -> None:  # type: ignore[no-untyped-def]
    text = (LESSONS / "cats-chase-mice.yaml").read_text().replace("[1, 0, 1, 0]", "[2, 0, 1, 0]")
    (folders["cwd"] / "cats-chase-mice.yaml").write_text(text)
    sheet = run("export", "cats-chase-mice", "--format", "sheet").stdout
    (folders["cwd"].parent / "s.yaml").write_text(sheet)
    result = run("grade", "cats-chase-mice", "s.yaml", "--json")
    assert result.exit_code == 0, result.stderr
    assert result.stderr.startswith("note: using ")
    cells = json.loads(result.stdout)["cells"]
    q = next(c for c in cells if (c["step"], c["row"], c["col"]) == ("Q", "cats", "1"))
    assert q["expected"] == "3"  # the edited X row: [2, 0, 1, 0] · W_Q's first column


def test_no_note_when_nothing_is_shadowed(run, folders: dict[str, Path]) -> None:  # type: ignore[no-untyped-def]
    lesson(folders["cwd"], "mine", "Mine")
    for args in (["walk", "mine", "--step", "Q"], ["walk", "cats-chase-mice", "--step", "Q"]):
        result = run(*args)
        assert result.exit_code == 0
        assert result.stderr == ""


def test_a_note_names_every_lesson_shadowed(folders: dict[str, Path]) -> None:
    lesson(folders["env1"], "the-cake", "env")
    lesson(folders["cli"], "the-cake", "cli")
    note = resolve_lesson("the-cake", [folders["cli"]]).note
    assert note == (
        f"using {folders['cli'] / 'the-cake.yaml'} (it shadows "
        f"{folders['env1'] / 'the-cake.yaml'} (env 1) and the bundled the-cake)"
    )


def test_walk_finds_each_origin_by_name(run, folders: dict[str, Path]) -> None:  # type: ignore[no-untyped-def]
    lesson(folders["cwd"], "here", "Here")
    lesson(folders["env2"], "there", "There")
    lesson(folders["cli"], "given", "Given")
    env = {"ATTN_TUTOR_LESSONS": os.environ["ATTN_TUTOR_LESSONS"]}
    for name, title in (("here", "Here"), ("there", "There")):
        result = run("walk", name, "--step", "Z", env=env)
        assert result.exit_code == 0, result.stderr
        assert title in result.stdout
    result = run("walk", "given", "--lessons-dir", str(folders["cli"]), env=env)
    assert result.exit_code == 0, result.stderr
    assert run("walk", "given", env=env).exit_code == 1  # only for the command that names it


def test_list_shows_origin_and_what_is_shadowed(run, folders: dict[str, Path]) -> None:  # type: ignore[no-untyped-def]
    lesson(folders["cwd"], "dup", "Local dup")
    lesson(folders["env1"], "dup", "Env dup")
    lesson(folders["cwd"], "cats-chase-mice", "Impostor")
    env = {"ATTN_TUTOR_LESSONS": os.environ["ATTN_TUTOR_LESSONS"], "COLUMNS": "250"}
    out = run("list", env=env).stdout
    lines = {line for line in out.splitlines() if "dup" in line or "cats-chase-mice" in line}
    assert any("env 1" in x and "Env dup" in x and "shadowed" not in x for x in lines)
    assert any("./lessons" in x and "Local dup" in x and "(shadowed by env 1)" in x for x in lines)
    assert any("Impostor" in x and "./lessons" in x and "shadowed" not in x for x in lines)
    assert any("Cats chase mice" in x and "(shadowed by ./lessons)" in x for x in lines)
    names = [x.split()[0] for x in out.splitlines() if x.startswith(("dup ", "cats-chase-mice "))]
    assert names == [
        "dup",
        "cats-chase-mice",
        "dup",
        "cats-chase-mice",
    ]  # env 1, ./lessons, bundled
    legend = out.split("Folders, searched in this order")[1]
    env1 = re.escape(f"{folders['env1']} (ATTN_TUTOR_LESSONS)")
    assert re.search(rf"^env 1 +{env1}\s*$", legend, re.MULTILINE)
    assert re.search(r"^\./lessons +lessons\s*$", legend, re.MULTILINE)


def test_the_checkout_lessons_folder_is_not_listed_twice(
    run,
    monkeypatch: pytest.MonkeyPatch,  # type: ignore[no-untyped-def]
) -> None:
    monkeypatch.chdir(ROOT)  # here ./lessons/ is the bundled folder itself
    assert [o for o, _ in lesson_dirs()] == ["bundled"]
    names = [n for n, _, _ in iter_lessons()]
    assert len(names) == len(set(names))
    out = run("list", env={"COLUMNS": "250"}).stdout
    assert "shadowed" not in out
    assert out.split("The learning path")[0].count("cats-chase-mice") == 1


def test_the_same_folder_given_twice_is_listed_once(folders: dict[str, Path]) -> None:
    lesson(folders["env1"], "once", "Once")
    names = [n for n, _, _ in iter_lessons([folders["env1"]])]
    assert names.count("once") == 1


def test_missing_env_folders_are_skipped_but_a_missing_option_is_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ATTN_TUTOR_LESSONS", str(tmp_path / "nowhere"))
    find_lesson("cats-chase-mice")  # no error for the missing env folder
    with pytest.raises(UsageError, match="no such folder"):
        lesson_dirs([tmp_path / "missing"])


def test_a_missing_lessons_dir_exits_2(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    result = run("list", "--lessons-dir", str(tmp_path / "missing"))
    assert result.exit_code == 2
    assert "no such folder" in result.stderr


def test_unknown_name_names_it_and_the_closest_names(folders: dict[str, Path]) -> None:
    lesson(folders["env1"], "self-attention-basics", "Basics")
    with pytest.raises(LessonError) as err:
        find_lesson("self-attention-basic")
    text = str(err.value)
    assert "'self-attention-basic'" in text
    assert "did you mean self-attention-basics" in text


def test_unknown_name_through_the_cli(run, folders: dict[str, Path]) -> None:  # type: ignore[no-untyped-def]
    result = run("walk", "cats-chase-mouse")
    assert result.exit_code == 1
    assert "no lesson named 'cats-chase-mouse'" in result.stderr
    assert "cats-chase-mice" in result.stderr


def test_unknown_name_lists_the_folders_searched_nearest_first(folders: dict[str, Path]) -> None:
    with pytest.raises(LessonError) as err:
        find_lesson("nowhere", [folders["cli"]])
    searched = str(err.value).split("searched, nearest first: ")[1]
    assert searched == "; ".join(
        [
            f"--lessons-dir {folders['cli']}",
            f"env 1 {folders['env1']}",
            f"env 2 {folders['env2']}",
            f"./lessons{os.sep}",
            f"bundled {LESSONS}",
        ]
    )


def test_list_is_aligned_columns_with_the_title_wrapped_under_itself(run) -> None:  # type: ignore[no-untyped-def]
    lines = run("list", env={"COLUMNS": "80"}).stdout.splitlines()
    assert lines[0].split() == ["name", "N", "d_model", "d_k", "d_v", "from", "title"]
    start = lines[0].index("title")
    cats = next(x for x in lines if x.startswith("cats-chase-mice "))
    assert cats.split()[:6] == ["cats-chase-mice", "3", "4", "2", "2", "bundled"]
    assert cats.endswith("  Cats chase mice")
    assert cats.index("Cats") == start
    assert lines[0].index("d_model") + len("d_model") == cats.index("4") + 1  # numbers align right
    cake = lines.index(next(x for x in lines if x.startswith("the-cake-two-heads ")))
    assert lines[cake + 1] == " " * start + "delicious, with two heads"  # the wrapped rest
    assert all(len(x) <= 80 for x in lines)


def test_list_at_a_narrow_width_puts_the_title_under_its_row(run) -> None:  # type: ignore[no-untyped-def]
    lines = run("list", env={"COLUMNS": "50"}).stdout.splitlines()
    row = lines.index(next(x for x in lines if x.startswith("cats-chase-mice ")))
    assert lines[row].split() == ["cats-chase-mice", "3", "4", "2", "2", "bundled"]
    assert lines[row + 1] == "    Cats chase mice"
    assert all(len(x) <= 50 for x in lines)


def test_list_marks_an_invalid_lesson_and_still_lists_the_rest(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    lesson(tmp_path, "good", "Good one")
    (tmp_path / "broken.yaml").write_text("title: [unclosed\n")
    result = run("list", "--lessons-dir", str(tmp_path), env={"COLUMNS": "120"})
    assert result.exit_code == 0
    broken = next(x for x in result.stdout.splitlines() if x.startswith("broken "))
    assert broken.split()[1:] == ["--lessons-dir", "(invalid:", "run", "attn-tutor", "check)"]
    assert any(x.startswith("good ") and x.endswith("Good one") for x in result.stdout.splitlines())


def test_list_too_narrow_for_the_from_column_puts_it_under_the_row(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "cats-chase-mice.yaml").write_text((LESSONS / "cats-chase-mice.yaml").read_text())
    lines = run("list", "--lessons-dir", str(tmp_path), env={"COLUMNS": "72"}).stdout.splitlines()
    assert all(len(x) <= 72 for x in lines)
    row = max(k for k, x in enumerate(lines) if x.startswith("cats-chase-mice "))  # the shadowed
    assert lines[row].split() == ["cats-chase-mice", "3", "4", "2", "2"]
    under = ["    bundled (shadowed by --lessons-dir)", "    Cats chase mice"]
    assert lines[row + 1 : row + 3] == under
