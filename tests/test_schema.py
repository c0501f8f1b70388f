"""The JSON Schema agrees with the loader on every fixture it can judge.

The fixtures are read with ``yaml.safe_load``, as a YAML 1.1 editor would: ``yes`` becomes true and
``1:30`` becomes 90. That is deliberate; the schema is checked against what such a tool sees.
"""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml

from tests.conftest import FIXTURES, ROOT, bundled_lessons
from tests.lessongen import lesson_text
from tutor.author.schema import SCHEMA
from tutor.core.lessonfile import load_lesson
from tutor.core.spec import GIVEN_HEAD_KEYS, HEAD_KEYS, QUIZ_KEYS, TOP_KEYS

GOOD = sorted((FIXTURES / "lessons" / "good").glob("*.yaml"))
BAD = FIXTURES / "lessons" / "bad"

# Bad fixtures whose mistake JSON Schema can express: a missing or unknown key, a wrong type,
# an entry that is not a number, a value out of range.
SCHEMA_DETECTABLE = {
    "empty",  # not a mapping at all (null)
    "focus-unreadable",  # not a token and not STEP[ROW, COL]
    "fraction-zero",  # "1/0": the entry pattern refuses a zero denominator
    "missing-key",
    "not-a-number",
    "not-mapping",
    "null-entry",
    "precision",
    "repeated-empty-token",
    "unknown-key",
    "unknown-note",
    "yaml-bool",  # yes is true in YAML 1.1 and a non-number string in YAML 1.2: both refused
    "bool-entry",
    "head-missing-wv",
    "head-name-list",
    "head-unknown-key",
    "heads-and-top-level",  # oneOf: W_Q/W_K/W_V or heads, never both
    "heads-empty",
    "heads-not-mapping",
    "mask-unknown",
    "nested-entry",
    "title-empty",
    "title-control",  # an escape sequence in the title: the text pattern refuses it
    "kv-groups-zero",
    "kv-groups-word",
    "kv-groups-top-level-wq",  # with kv_groups, W_Q lives under heads
    "kv-groups-without-kv-heads",
    "kv-heads-without-groups",
    "kv-query-head-wk",  # with kv_groups a query head has no W_K
    "next-missing-x",
    "next-token-comma",
    "next-x-matrix",
    "layout-unknown",
}
# Bad fixtures only `attn-tutor check` can see, and why.
SCHEMA_BLIND = {
    "focus-unknown-token": "a focus's token must be one of the lesson's tokens",
    "focus-unknown-column": "a focus's column token must be one of the lesson's tokens",
    "focus-column-range": "a focus's column number depends on the widths of W_Q, W_V",
    "focus-w-matrix": "which steps have a row per token is the loader's knowledge",
    "focus-head-token": "a head's focus must name one of the lesson's tokens",
    "alias": "anchors and aliases are resolved before a schema sees the data",
    "bad-yaml": "not YAML at all, so there is no data to validate",
    "duplicate-key": "YAML keeps the last of two equal keys; the data has only one",
    "ragged-row": "rows of equal length cannot be said in JSON Schema",
    "sexagesimal": "YAML 1.1 reads 1:30 as the number 90 (a YAML 1.2 editor would refuse it)",
    "token-count": "one token per row of X relates two lengths",
    "wk-cols": "W_K's columns must equal W_Q's: relates two lengths",
    "wq-rows": "W_Q's rows must equal X's columns: relates two lengths",
    "head-wk-cols": "a head's W_K columns must equal its W_Q's: relates two lengths",
    "head-wq-rows": "a head's W_Q rows must equal X's columns: relates two lengths",
    "wo-height": "W_O's rows must equal heads × d_v: relates lengths",
    "wo-unequal-dv": "every head's W_V must have the same width: relates lengths",
    "wo-without-heads": "W_O needs heads: a dependency the loader explains better",
    "alias-bomb": "aliases are expanded by YAML before a schema sees the data",
    "python-tag": "a YAML tag: safe loaders refuse it before there is data",
    "inf-entry": "YAML reads .inf as a float, which JSON Schema's number type accepts",
    "nan-entry": "YAML reads .nan as a float, which JSON Schema's number type accepts",
    "huge-literal": "caps on digits are the loader's, not the schema's",
    "huge-exponent": "caps on exponents are the loader's, not the schema's",
    "kv-heads-count": "one kv head per group relates a length to a number",
    "kv-groups-uneven": "heads a multiple of kv_groups relates a length to a number",
    "kv-head-wk-rows": "a kv head's W_K rows must equal X's columns: relates two lengths",
    "kv-head-dk": "a head's W_Q columns must equal its group's W_K's: relates two lengths",
    "next-x-width": "the next row's length must equal X's columns: relates two lengths",
}


def validator() -> jsonschema.Draft202012Validator:
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    return jsonschema.Draft202012Validator(SCHEMA)


def errors_of(data: object) -> list[str]:
    return [e.message for e in validator().iter_errors(data)]


def test_the_schema_is_a_valid_draft_2020_12_schema() -> None:
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    assert SCHEMA["$schema"] == "https://json-schema.org/draft/2020-12/schema"


def test_the_schema_and_the_loader_know_the_same_keys() -> None:
    assert set(SCHEMA["properties"]) == set(TOP_KEYS)
    # a head gives W_Q, W_K, W_V, or (issue 28) its Q, K, V
    head_keys = set(HEAD_KEYS) | set(GIVEN_HEAD_KEYS)
    assert set(SCHEMA["properties"]["heads"]["items"]["properties"]) == head_keys
    assert set(SCHEMA["properties"]["quiz"]["properties"]) == set(QUIZ_KEYS)


@pytest.mark.parametrize("path", bundled_lessons() + GOOD, ids=lambda p: p.stem)
def test_every_valid_lesson_validates(path: Path) -> None:
    load_lesson(path)  # valid for the loader...
    assert errors_of(yaml.safe_load(path.read_text())) == []  # ...and for the schema


def test_random_valid_lessons_validate() -> None:
    rng = random.Random(6)
    for _ in range(100):
        heads = rng.choice([0, 0, 2, 3])
        text = lesson_text(
            rng, rng.randint(1, 5), rng.randint(1, 4), rng.randint(1, 3), rng.randint(1, 3),
            heads=heads, causal=rng.random() < 0.5, w_o=heads > 0 and rng.random() < 0.5,
        )  # fmt: skip
        assert errors_of(yaml.safe_load(text)) == [], text


def test_every_bad_fixture_is_classified() -> None:
    names = {p.stem for p in BAD.glob("*.yaml")}
    assert SCHEMA_DETECTABLE | set(SCHEMA_BLIND) == names
    assert not SCHEMA_DETECTABLE & set(SCHEMA_BLIND)


@pytest.mark.parametrize("name", sorted(SCHEMA_DETECTABLE))
def test_structurally_wrong_fixtures_are_rejected(name: str) -> None:
    assert errors_of(yaml.safe_load((BAD / f"{name}.yaml").read_text()))


@pytest.mark.parametrize(
    "name", sorted(set(SCHEMA_BLIND) - {"bad-yaml", "alias", "alias-bomb", "python-tag"})
)
def test_blind_fixtures_really_pass_the_schema(name: str) -> None:
    """If one of these starts failing, the schema learned something: move it to DETECTABLE."""
    assert errors_of(yaml.safe_load((BAD / f"{name}.yaml").read_text())) == []


BASE = {"title": "t", "tokens": ["a"], "X": [[1]], "W_Q": [[1]], "W_K": [[1]], "W_V": [[1]]}


@pytest.mark.parametrize(
    "change",
    [
        {"W_Q": [["2/7"]], "W_K": [["-0.5"]], "W_V": [[0.25]], "X": [[" 1 / 3 "]]},
        {"W_Q": [["1e1"]], "W_K": [[".5"]], "W_V": [["\u22123"]], "X": [[-3]]},
        {"version": 1},
        {"version": "1"},
        {"mask": "causal"},
        {"precision": 0},
        {"precision": "10"},
        {"tokens": ["New York"]},
        {"tokens": [2024]},
        {"notes": {"scores": "hi", "Z": 3}},
        {"description": "two\nlines,\ta tab", "notes": {"Q": "é [/] :smile:"}},
        {"title": " a\ttitle ending in a line break\n"},
        {"quiz": {"steps": ["Q", "weights"], "count": 5}},
        {"focus": "a"},
        {"focus": "weights[a, a]"},
        {"focus": " Q [ a , 1 ] "},
    ],
)
def test_the_schema_accepts_what_the_loader_accepts(change: dict, tmp_path: Path) -> None:
    data = {**BASE, **change}
    path = tmp_path / "x.yaml"
    path.write_text(json.dumps(data))  # JSON is YAML
    load_lesson(path)
    assert errors_of(data) == []


@pytest.mark.parametrize(
    "change",
    [
        {"X": [["1/0"]]},
        {"X": [["one"]]},
        {"X": [[True]]},
        {"X": [[]]},
        {"X": []},
        {"version": 2},
        {"mask": "future"},
        {"precision": 11},
        {"tokens": ["a,b"]},
        {"tokens": ["#1"]},
        {"tokens": ["x" * 41]},
        {"tokens": ["  "]},
        {"notes": {"score": "typo"}},
        {"title": "\x1b[31mred"},
        {"title": "two\nlines"},
        {"title": "two\u2028lines"},
        {"description": "\x07"},
        {"notes": {"Q": "a\x9bb"}},
        {"quiz": {"count": 0}},
        {"heads": [{"W_Q": [[1]], "W_K": [[1]], "W_V": [[1]]}]},  # and W_Q at the top too
        {"W_q": [[1]]},
    ],
)
def test_the_schema_rejects_what_the_loader_rejects(change: dict, tmp_path: Path) -> None:
    data = {**BASE, **change}
    path = tmp_path / "x.yaml"
    path.write_text(json.dumps(data))
    with pytest.raises(Exception, match=r"x\.yaml"):
        load_lesson(path)
    assert errors_of(data)


def test_schema_command_prints_the_schema_as_json(run) -> None:  # type: ignore[no-untyped-def]
    result = run("schema")
    assert result.exit_code == 0
    assert json.loads(result.stdout) == SCHEMA


def test_schema_and_list_do_not_import_sympy_or_numpy() -> None:
    code = (
        "import sys\n"
        "from tutor.cli import app\n"
        "for args in (['schema'], ['list'], ['--help']):\n"
        "    try:\n"
        "        app(args)\n"
        "    except SystemExit:\n"
        "        pass\n"
        "print(sorted(m for m in ('sympy', 'numpy', 'tutor.core.engine') if m in sys.modules))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    assert out.strip().splitlines()[-1] == "[]"


def test_the_docs_lesson_examples_are_valid_lessons(tmp_path: Path) -> None:
    readme = (ROOT / "docs" / "how-to" / "write-a-lesson.md").read_text()
    examples = [e for e in re.findall(r"```yaml\n(.*?)```", readme, re.DOTALL) if "W_Q" in e]
    single, multi = examples[0], examples[1]
    multi = "title: t\ntokens: [a, b, c]\nX: [[1, 0, 1, 0], [0, 2, 0, 1], [1, 1, 0, 0]]\n" + multi
    for i, text in enumerate((single, multi)):
        path = tmp_path / f"example{i}.yaml"
        path.write_text(text)
        load_lesson(path)
        assert errors_of(yaml.safe_load(text)) == []


def test_lessons_with_q_k_v_given_validate_and_mixtures_do_not() -> None:
    from tests.lessongen import qkv_lesson_text

    rng = random.Random(28)
    for _ in range(40):
        heads = rng.choice([0, 2, 3])
        text = qkv_lesson_text(
            rng, rng.randint(1, 5), rng.randint(1, 4), rng.randint(1, 3), heads=heads,
            causal=rng.random() < 0.5, w_o=heads > 0 and rng.random() < 0.5,
        )  # fmt: skip
        data = yaml.safe_load(text)
        assert errors_of(data) == [], text
        assert errors_of({**data, "X": [[1]]}) != []  # given Q, K, V and an X
        if heads:
            data["heads"][0]["W_Q"] = [[1]]
            assert errors_of(data) != []  # a head with Q, K, V and a W_Q
