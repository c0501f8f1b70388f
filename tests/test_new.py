"""new: a valid, hand-friendly, commented lesson; same seed, same lesson; never overwrites."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import jsonschema
import pytest
import yaml

from tutor.author.schema import SCHEMA
from tutor.core.engine import derive
from tutor.core.lessonfile import load_lesson


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


SHAPES = {
    "default": [],
    "two-heads": ["--heads", "2"],
    "three-heads-causal": ["--heads", "3", "--causal", "--d-model", "3"],
    "d_v-not-d_k": ["--d-k", "2", "--d-v", "3"],
    "causal": ["--causal", "--d-model", "3", "--d-k", "3"],
    "whole-root": ["--whole-root"],
    "tiny": ["--d-model", "1", "--d-k", "1"],
    "wide": ["--d-model", "8", "--d-k", "4", "--d-v", "2"],
}
TOKENS = {
    "default": "the cat sat",
    "two-heads": "I saw it",
    "three-heads-causal": "the dog saw the cat",  # a repeated word
    "d_v-not-d_k": "a b",
    "causal": "one two three four",
    "whole-root": "cats chase mice",
    "tiny": "x y z",
    "wide": "the quick brown fox jumps",
}


@pytest.mark.parametrize("shape", list(SHAPES))
def test_new_check_walk_round_trip(run, here: Path, shape: str) -> None:  # type: ignore[no-untyped-def]
    result = run("new", shape, "--tokens", TOKENS[shape], "--seed", "5", *SHAPES[shape])
    assert result.exit_code == 0, result.stderr
    path = here / f"{shape}.yaml"
    assert f"wrote {shape}.yaml" in result.stdout
    check = run("check", str(path))
    assert check.exit_code == 0, check.stdout
    if shape == "tiny":  # one feature of 1 or 2 cannot tell three words apart: says so
        warned = check.stdout.splitlines()[:-1]
        assert warned and all("is the same as" in line for line in warned[:-1])
        assert "every row of V is [0]" in warned[-1]  # seed 5 draws W_V = [[0]]: Z is all 0
    else:
        assert check.stdout == "checked 1 lesson: valid\n"  # and no teaching warnings
    walk = run("walk", str(path))
    assert walk.exit_code == 0, walk.stderr
    assert "What to notice" in walk.stdout
    jsonschema.validate(yaml.safe_load(path.read_text()), SCHEMA)

    lesson = load_lesson(path)
    args = SHAPES[shape]
    option = {a: int(args[i + 1]) for i, a in enumerate(args) if a.startswith("--d")}
    assert lesson.tokens == tuple(TOKENS[shape].split())
    assert lesson.d_model == option.get("--d-model", 4)
    assert lesson.d_v == option.get("--d-v", lesson.d_k)
    assert len(lesson.heads) == (int(args[1]) if "--heads" in args else 1)
    assert lesson.mask == ("causal" if "--causal" in args else "none")
    matrices = [lesson.X] + [m for h in lesson.heads for m in (h.W_Q, h.W_K, h.W_V)]
    matrices += [lesson.W_O] if lesson.W_O else []
    entries = [e for m in matrices for row in m for e in row]
    assert all(q == 1 and abs(p) <= 3 for p, q in entries)  # small integers


def test_one_token(run, here: Path) -> None:  # type: ignore[no-untyped-def]
    new = run("new", "alone", "--tokens", "alone", "--seed", "1")
    assert new.exit_code == 0
    assert "wrote alone.yaml: 1 token, d_model 4" in new.stdout
    assert run("check", "alone.yaml").stdout == "checked 1 lesson: valid\n"
    walk = run("walk", "alone.yaml")
    assert walk.exit_code == 0
    assert "one score to share" in walk.stdout


def test_whole_root_makes_every_scaled_score_a_fraction(run, here: Path) -> None:  # type: ignore[no-untyped-def]
    for d_model, d_k in ((4, 4), (2, 1), (3, 1), (9, 9), (16, 9)):
        name = f"root{d_model}"
        result = run("new", name, "--tokens", "a b c", "--d-model", str(d_model), "--whole-root")
        assert result.exit_code == 0, result.stderr
        lesson = load_lesson(here / f"{name}.yaml")
        assert lesson.d_k == d_k
        assert all(c.q is not None for row in derive(lesson).step("scaled").cells for c in row)
    assert run("new", "r", "--tokens", "a b", "--d-k", "9", "--whole-root").exit_code == 0
    assert load_lesson(here / "r.yaml").d_k == 9


def test_whole_root_refuses_a_d_k_without_a_whole_root(run, here: Path) -> None:  # type: ignore[no-untyped-def]
    result = run("new", "r", "--tokens", "a b", "--d-k", "2", "--whole-root")
    assert result.exit_code == 2
    assert "--d-k 2" in result.stderr
    assert not (here / "r.yaml").exists()


def test_same_seed_same_lesson_and_other_seeds_differ(run, here: Path) -> None:  # type: ignore[no-untyped-def]
    texts = []
    for seed in ("7", "7", "8"):
        assert run("new", "s", "--tokens", "the cat sat", "--seed", seed, "--force").exit_code == 0
        texts.append((here / "s.yaml").read_text())
    assert texts[0] == texts[1]
    assert texts[0] != texts[2]


def test_without_a_seed_the_file_says_how_to_make_it_again(run, here: Path) -> None:  # type: ignore[no-untyped-def]
    assert run("new", "r", "--tokens", "the cat sat", "--causal").exit_code == 0
    first = (here / "r.yaml").read_text()
    made_with = re.search(r"# Made with: attn-tutor (new .*)", first)
    assert made_with and "--seed" in made_with[1] and "--causal" in made_with[1]
    assert run(*shlex.split(made_with[1]), "--force").exit_code == 0
    assert (here / "r.yaml").read_text() == first


def test_every_key_has_a_comment(run, here: Path) -> None:  # type: ignore[no-untyped-def]
    for name, extra in (("one", []), ("many", ["--heads", "2"])):
        assert run("new", name, "--tokens", "a b", "--seed", "2", *extra).exit_code == 0
        text = (here / f"{name}.yaml").read_text()
        top = r"[A-Za-z_]+:|\s+(- )?(name|W_Q|W_K|W_V):"  # top-level keys and keys of heads
        keys = [line for line in text.splitlines() if re.match(top, line)]
        assert keys and all(" # " in k for k in keys), [k for k in keys if " # " not in k]


def test_it_never_overwrites_without_force(run, here: Path) -> None:  # type: ignore[no-untyped-def]
    (here / "mine.yaml").write_text("my own words\n")
    result = run("new", "mine", "--tokens", "a b")
    assert result.exit_code == 1
    assert "mine.yaml already exists" in result.stderr
    assert "--force" in result.stderr
    assert (here / "mine.yaml").read_text() == "my own words\n"
    assert run("new", "mine", "--tokens", "a b", "--force").exit_code == 0
    assert load_lesson(here / "mine.yaml").tokens == ("a", "b")


def test_force_replaces_whole_and_keeps_permissions(run, here: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    (here / "mine.yaml").write_text("my own words\n")
    (here / "mine.yaml").chmod(0o600)
    assert run("new", "mine", "--tokens", "a b", "--force").exit_code == 0
    assert load_lesson(here / "mine.yaml").tokens == ("a", "b")
    assert (here / "mine.yaml").stat().st_mode & 0o777 == 0o600
    assert sorted(p.name for p in here.iterdir() if p.name.startswith(".mine")) == []
    # a failed write (the rename refused) leaves the old lesson as it was, and no temporary file
    import os

    def refuse(*args: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", refuse)
    result = run("new", "mine", "--tokens", "c d", "--force")
    assert result.exit_code == 1
    assert "cannot write" in result.stderr and "No space left" in result.stderr
    assert load_lesson(here / "mine.yaml").tokens == ("a", "b")
    assert [p.name for p in here.iterdir() if p.name.endswith(".tmp")] == []


def test_output_elsewhere_and_to_stdout(run, here: Path) -> None:  # type: ignore[no-untyped-def]
    (here / "sub").mkdir()
    assert run("new", "x", "--tokens", "a b", "--output", "sub/y.yaml").exit_code == 0
    assert load_lesson(here / "sub" / "y.yaml")
    result = run("new", "x", "--tokens", "a b", "--seed", "3", "-o", "-")
    assert result.exit_code == 0
    assert result.stdout.startswith("# x: a lesson for attn-tutor")
    assert not (here / "x.yaml").exists()
    missing = run("new", "x", "--tokens", "a b", "-o", "nowhere/x.yaml")
    assert missing.exit_code == 1
    assert "cannot write nowhere/x.yaml" in missing.stderr
    folder = run("new", "x", "--tokens", "a b", "-o", "sub")
    assert folder.exit_code == 1
    assert "is a folder" in folder.stderr


def test_tokens_that_yaml_would_misread_are_quoted(run, here: Path) -> None:  # type: ignore[no-untyped-def]
    tokens = "yes no null 3 it's on: {x} ~"
    result = run("new", "odd", "--tokens", tokens, "--seed", "1")
    assert result.exit_code == 0, result.stderr
    path = here / "odd.yaml"
    assert load_lesson(path).tokens == tuple(tokens.split())
    assert yaml.safe_load(path.read_text())["tokens"] == tokens.split()  # strings, not True/None


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["bad name", "--tokens", "a"], "NAME 'bad name'"),
        (["x.yaml", "--tokens", "a"], "without .yaml"),
        (["x", "--tokens", "  "], "--tokens is empty"),
        (["x", "--tokens", "a,b c"], "token 1 ('a,b') contains ','"),
        (["x", "--tokens", "a #b"], "token 2 ('#b') contains '#'"),
        (["x", "--tokens", "[a]"], "contains '['"),
        (["x", "--tokens", "x" * 41], "at most 40"),
        (["x", "--tokens", " ".join("a" * 17)], "at most 16"),
        (["x", "--tokens", "a", "--d-model", "0"], "--d-model"),
        (["x", "--tokens", "a", "--d-k", "17"], "--d-k"),
        (["x", "--tokens", "a", "--heads", "5"], "--heads"),
        (["x"], "--tokens"),
    ],
)
def test_bad_options_exit_2_and_say_why(run, here: Path, args: list[str], fragment: str) -> None:  # type: ignore[no-untyped-def]
    result = run("new", *args)
    assert result.exit_code == 2
    assert fragment in result.stderr
    assert "Traceback" not in result.stderr
    assert list(here.iterdir()) == []


@pytest.mark.parametrize("tokens", ["w w", "x x x"])
def test_identical_tokens_get_an_honest_note_on_ties(run, here: Path, tokens: str) -> None:  # type: ignore[no-untyped-def]
    for extra in ([], ["--causal"]):
        result = run("new", "twins", "--tokens", tokens, "--seed", "1", "-o", "-", *extra)
        assert result.exit_code == 0, result.stderr
        note = yaml.safe_load(result.stdout)["notes"]["weights"]
        assert "largest weight" not in note  # uniform weights have no largest one
        assert note.startswith("In every row the scores are equal")


def test_a_tie_for_the_largest_weight_is_not_given_to_one_token(run, here: Path) -> None:  # type: ignore[no-untyped-def]
    result = run("new", "t", "--tokens", "a a b", "--seed", "1", "--causal", "-o", "-")
    note = yaml.safe_load(result.stdout)["notes"]["weights"]
    assert note == "No token puts its largest weight on one token alone: ties share it."


@pytest.mark.parametrize("command", [["new", "x", "--tokens", "a"], ["quiz"]])
def test_seeds_are_zero_or_more_for_new_and_quiz_alike(run, here: Path, command: list[str]) -> None:  # type: ignore[no-untyped-def]
    result = run(*command, "--seed", "-5")
    assert result.exit_code == 2
    assert "--seed" in result.stderr
    assert "x>=0" in result.stderr or "greater than or equal to 0" in result.stderr
    assert "0 or more" in " ".join(run(*command[:1], "--help").stdout.split())


@pytest.mark.parametrize("seed", [54, 1, 2, 3, 4, 5])
def test_new_lessons_are_calm(run, here: Path, seed: int) -> None:  # type: ignore[no-untyped-def]
    # issue 13: seed 54 gave scaled scores up to 55.15 and weights 0.50/0.00/0.00/0.50/0.00
    tokens = "the cat chased the mouse"
    result = run("new", f"v{seed}", "--tokens", tokens, "--seed", str(seed))
    assert result.exit_code == 0, result.stderr
    assert "note:" not in result.stdout  # every constraint was met
    d = derive(load_lesson(here / f"v{seed}.yaml"))
    scaled, weights = d.step("scaled"), d.step("weights")
    for i in range(d.lesson.n):
        row = [weights.cells[i][j].value for j in range(d.lesson.n)]
        assert all(abs(scaled.cells[i][j].value) <= 4 for j in range(d.lesson.n))
        assert max(row) <= 0.9
        assert max(row) - min(row) > 1e-9  # not uniform
        assert sum(w < 0.005 for w in row) <= len(row) // 2  # not mostly 0.00
