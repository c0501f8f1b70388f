"""Which lesson keys combine (issue 24, bullet 4; issue 31's crashes): one table,
``spec.REFUSED_COMBINATIONS``. Every pair of features either works (the engine agrees with numpy,
and walk, export and check run without an internal error) or is refused by the loader at the
later key's file:line:col, and the command line's --next-token/--x by the same rule."""

from __future__ import annotations

import itertools
import json
import random
from pathlib import Path

import numpy as np
import pytest

from tests import lessongen, reference
from tests.test_engine import assert_matches_numpy
from tutor.core.engine import derive
from tutor.core.errors import LessonError
from tutor.core.lessonfile import load_lesson
from tutor.core.spec import FEATURES, REFUSED_COMBINATIONS, refused

# what a feature needs as well: RoPE is a kind of positions, W_O and grouped heads need heads
IMPLIES = {"rope": {"positions"}, "W_O": {"heads"}, "grouped": {"heads"}}


def with_implied(features: set[str]) -> set[str]:
    out = set(features)
    for f in features:
        out |= IMPLIES.get(f, set())
    return out


def combo_text(features: set[str], seed: int, n: int = 3, source: int = 2) -> str:
    """A lesson with exactly ``features`` (after ``IMPLIES``); ``source``: its length."""
    rng = random.Random(seed)
    f = with_implied(features)
    positions = "none"
    if "rope" in f:
        positions = "rope"
    elif "positions" in f:
        positions = rng.choice(["given", "sinusoidal"])
    d_model, d_k, d_v = 2, 2, 2
    if "qkv" in f:  # Q, K, V given (issue 28); a refused partner is added as its key alone
        text = lessongen.qkv_lesson_text(
            rng,
            n,
            d_k,
            d_v,
            heads=2 if f & {"heads", "grouped"} else 0,
            causal="causal" in f,
            w_o="W_O" in f,
        )
        extra = {
            "positions": f"positions: {positions}\n",
            "source": "source: [le, chat]\n",
            "next": lessongen.next_entry(rng, d_model),
            "grouped": "kv_groups: 1\n",
            "columns": "layout: columns\n",
            "bias": "b_Q: [1, 0]\n",
        }
        return text + "".join(
            extra[k] for k in sorted(f) if k in extra and (k != "positions" or positions != "none")
        )
    return lessongen.features_text(
        rng,
        f,
        n,
        2,
        2,
        2,
        heads=2,
        groups=1,
        positions=positions,
        source=source if "source" in f else 0,
    )


PAIRS = [set(p) for p in itertools.combinations(sorted(FEATURES), 2)]
LEGAL = [p for p in PAIRS if not refused(with_implied(p))]
ILLEGAL = [p for p in PAIRS if refused(with_implied(p))]


def write(tmp_path: Path, text: str, name: str = "combo.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def next_row_reference(lesson) -> dict[tuple[str, int | None], np.ndarray]:  # type: ignore[no-untyped-def]
    """The decoding row in numpy, from the lesson's own K and V and the new x."""
    ref = reference.attention(lesson)
    x = np.array([[p / q for p, q in lesson.next.x]])
    out, zs = {}, []
    for n, head in enumerate(lesson.heads, 1):
        h = n if lesson.multi_head else None
        group = lesson.group_heads(lesson.group_of(n))[0] if lesson.kv_groups else n
        g = group if lesson.multi_head else None
        kv = lesson.heads[group - 1]
        q = x @ reference.as_array(head.W_Q) + reference.bias(head.b_Q)
        K = np.vstack([ref[("K", g)], x @ reference.as_array(kv.W_K) + reference.bias(kv.b_K)])
        V = np.vstack([ref[("V", g)], x @ reference.as_array(kv.W_V) + reference.bias(kv.b_V)])
        scores = q @ K.T
        e = np.exp(scores / np.sqrt(K.shape[1]) - (scores / np.sqrt(K.shape[1])).max())
        weights = e / e.sum()
        out[("weights_new", h)] = weights
        out[("z_new", h)] = weights @ V
        zs.append(weights @ V)
    if lesson.multi_head and lesson.W_O is not None:
        out[("output_new", None)] = np.concatenate(zs, axis=1) @ reference.as_array(
            lesson.W_O
        ) + reference.bias(lesson.b_O)
    return out


def test_every_refused_pair_names_known_features() -> None:
    for a, b in REFUSED_COMBINATIONS:
        assert a in FEATURES and b in FEATURES


@pytest.mark.parametrize("pair", LEGAL, ids=lambda p: "+".join(sorted(p)))
def test_a_legal_pair_agrees_with_numpy(tmp_path: Path, pair: set[str]) -> None:
    for seed in range(3):
        lesson = load_lesson(write(tmp_path, combo_text(pair, seed)))
        assert with_implied(pair) <= lesson.features
        assert_matches_numpy(lesson)
        if lesson.next is not None:
            d = derive(lesson)
            for (name, h), expected in next_row_reference(lesson).items():
                got = np.array([[c.value for c in d.step(name, h).cells[0]]])
                np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-12, err_msg=name)


COMMANDS = [
    ["check"],
    ["walk"],
    ["walk", "--json", "--exact"],
    ["export", "--format", "md", "-o", "-"],
    ["export", "--format", "tex", "-o", "-"],
    ["export", "--format", "sheet", "-o", "-"],
]


@pytest.mark.parametrize("pair", LEGAL, ids=lambda p: "+".join(sorted(p)))
def test_a_legal_pair_goes_through_every_command(run, tmp_path: Path, pair: set[str]) -> None:  # type: ignore[no-untyped-def]
    path = str(write(tmp_path, combo_text(pair, 7)))
    for command in COMMANDS:
        result = run(command[0], path, *command[1:])
        assert result.exit_code == 0, (command, result.output)
        assert "Traceback" not in result.output
        if command[0] == "check" and "add mask: causal" in result.output:
            # check's advice is something the loader accepts
            load_lesson(write(tmp_path, combo_text(pair, 7) + "mask: causal\n", "advised.yaml"))


@pytest.mark.parametrize("pair", ILLEGAL, ids=lambda p: "+".join(sorted(p)))
def test_a_refused_pair_is_refused_at_the_later_key(run, tmp_path: Path, pair: set[str]) -> None:  # type: ignore[no-untyped-def]
    text = combo_text(pair, 3)
    path = write(tmp_path, text)
    with pytest.raises(LessonError) as err:
        load_lesson(path)
    (_, later, why), *_ = refused(with_implied(pair))
    problem = next(p for p in err.value.problems if p.message == why)
    key = FEATURES[later]
    if f"\n{key}:" not in text:  # positions given by P alone: refused at P
        key = "P"
    line = next(k for k, row in enumerate(text.splitlines(), 1) if row.startswith(f"{key}:"))
    assert problem.line == line
    assert problem.col == len(key) + 3  # the key's value, after "key: "
    result = run("check", str(path))
    assert result.exit_code == 1
    assert f"{path}:{problem.line}:{problem.col}: {why}" in result.output


def test_the_bundled_next_token_lesson_exports_to_latex(run) -> None:  # type: ignore[no-untyped-def]
    result = run("export", "the-cake-next-token", "--format", "tex", "-o", "-")
    assert result.exit_code == 0, result.output
    assert r"\paragraph{$q_{\mathrm{new}} = x_{\mathrm{new}} W_Q$, its query" in result.output
    assert r"{q_{\mathrm{new}}}_{\text{cake}, 1} &=" in result.output  # one subscript each


@pytest.mark.parametrize("n,source", [(3, 2), (2, 3)], ids=["shorter-source", "longer-source"])
def test_two_head_cross_attention_walks(run, tmp_path: Path, n: int, source: int) -> None:  # type: ignore[no-untyped-def]
    """Three target tokens and two source tokens (and the other way round), two heads, W_O."""
    for seed in range(4):
        path = write(tmp_path, combo_text({"source", "W_O"}, seed, n=n, source=source))
        for command in (["walk"], ["check"], ["walk", "--json"]):
            result = run(command[0], str(path), *command[1:])
            assert result.exit_code in (0, 1) and "internal error" not in result.output, (
                command,
                result.output,
            )
        assert run("walk", str(path)).exit_code == 0


def test_check_names_the_source_token_a_one_hot_row_is_on(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    text = (
        "title: one-hot\ntokens: [a, b]\nX: [[1, 0], [0, 1]]\nsource: [p, q, r]\n"
        "X_src: [[9, 0], [0, 9], [0, 0]]\nheads:\n"
        "  - {W_Q: [[1, 0], [0, 1]], W_K: [[1, 0], [0, 1]], W_V: [[1, 0], [0, 1]]}\n"
        "  - {W_Q: [[1, 0], [0, 1]], W_K: [[1, 0], [0, 1]], W_V: [[1, 0], [0, 1]]}\n"
    )
    result = run("check", str(write(tmp_path, text)))
    assert result.exit_code == 0, result.output
    assert "nearly one-hot" in result.output and " on p, as its scaled" in result.output


def test_walk_refuses_a_next_token_on_a_rope_lesson(run) -> None:  # type: ignore[no-untyped-def]
    result = run("walk", "ha-ha-ha-rope", "--next-token", "ha", "--x", "[1, 0]")
    assert result.exit_code == 2
    assert REFUSED_COMBINATIONS[("rope", "next")] in " ".join(result.output.split())


@pytest.mark.parametrize("extra", [[], ["--json"]])
def test_walk_refuses_a_next_token_on_a_cross_attention_lesson(run, extra: list[str]) -> None:  # type: ignore[no-untyped-def]
    result = run("walk", "chat-noir-cross", "--next-token", "x", "--x", "[1,0,0]", *extra)
    assert result.exit_code == 2
    assert "K_cache" not in result.stdout
    assert REFUSED_COMBINATIONS[("source", "next")] in " ".join(result.output.split())


def test_a_next_token_where_it_combines_still_works(run) -> None:  # type: ignore[no-untyped-def]
    result = run("walk", "the-cake", "--next-token", "x", "--x", "[1,0,0,1]", "--json")
    assert result.exit_code == 0, result.output
    steps = {s["name"] for s in json.loads(result.stdout)["steps"]}
    assert "K_cache" in steps
