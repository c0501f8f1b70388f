"""Lessons from arrays and from a real layer (issue 41, item 3): ``new NAME --from FILE.npz``,
``tutor.lesson_from_arrays`` and ``tutor.lesson_from_torch``.

The lesson's walk is checked against an attention computed here with NumPy from the arrays
rounded here (``decimal``'s ROUND_HALF_UP, ties away from zero), and the movement it reports
against the same computation on the arrays as given.
"""

from __future__ import annotations

import json
import re
import sys
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import sympy

import tutor


def rounded(a: np.ndarray, places: int) -> np.ndarray:
    """Every entry of ``a`` at ``places`` decimals, half away from zero, from its exact value."""
    unit = Decimal(1).scaleb(-places)
    out = [float(Decimal(float(v)).quantize(unit, rounding=ROUND_HALF_UP)) for v in a.ravel()]
    return np.array(out).reshape(a.shape)


def exact_rounded(a: np.ndarray, places: int) -> list[list[sympy.Rational]]:
    unit = Decimal(1).scaleb(-places)
    return [
        [sympy.Rational(str(Decimal(float(v)).quantize(unit, rounding=ROUND_HALF_UP))) for v in r]
        for r in a
    ]


def softmax_rows(s: np.ndarray) -> np.ndarray:
    e = np.exp(s - s.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def reference(arrays: dict[str, np.ndarray], causal: bool = False) -> np.ndarray:
    """Attention of named arrays, written out here: Z for one head, else concat · W_O (+ b_O)."""
    X = arrays["E"] + arrays["P"] if "E" in arrays else arrays["X"]
    n = len(X)
    suffixes = [""] if "W_Q" in arrays else [f".{h}" for h in range(1, 5) if f"W_Q.{h}" in arrays]
    groups = [s for s in suffixes if f"W_K{s}" in arrays]
    per = len(suffixes) // len(groups)
    Zs = []
    for h, s in enumerate(suffixes):
        g = groups[h // per]
        Q = X @ arrays[f"W_Q{s}"] + arrays.get(f"b_Q{s}", 0)
        K = X @ arrays[f"W_K{g}"] + arrays.get(f"b_K{g}", 0)
        V = X @ arrays[f"W_V{g}"] + arrays.get(f"b_V{g}", 0)
        scores = Q @ K.T / np.sqrt(Q.shape[1])
        if causal:
            scores = np.where(np.triu(np.ones((n, n), bool), 1), -np.inf, scores)
        Zs.append(softmax_rows(scores) @ V)
    if "W_O" not in arrays:
        return Zs[0]
    return np.concatenate(Zs, axis=1) @ arrays["W_O"] + arrays.get("b_O", 0)


def draw(kind: str, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    n, d, k = 4, 4, 2

    def m(rows: int, cols: int) -> np.ndarray:
        return rng.normal(size=(rows, cols))

    if kind in ("one-head", "causal"):
        return {"X": m(n, d), "W_Q": m(d, k), "W_K": m(d, k), "W_V": m(d, 3)}
    if kind == "one-head-W_O":
        return {"X": m(n, d), "W_Q": m(d, k), "W_K": m(d, k), "W_V": m(d, k), "W_O": m(k, d)}
    if kind == "E-and-P":
        return {"E": m(n, d), "P": m(n, d), "W_Q": m(d, k), "W_K": m(d, k), "W_V": m(d, k)}
    heads = {"two-heads": (2, 2), "three-heads": (3, 3), "grouped": (4, 2)}[kind]
    out = {"X": m(n, d), "W_O": m(heads[0] * k, d)}
    for h in range(1, heads[0] + 1):
        out[f"W_Q.{h}"] = m(d, k)
    for g in range(1, heads[1] + 1):
        out[f"W_K.{g}"], out[f"W_V.{g}"] = m(d, k), m(d, k)
    return out


KINDS = ["one-head", "one-head-W_O", "two-heads", "three-heads", "grouped", "E-and-P", "causal"]


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def moved_of(text: str) -> tuple[str, float]:
    found = re.search(r"moves (Z|output) by at most ([0-9.]+)", text)
    assert found, text
    return found[1], float(found[2])


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("places", [1, 3])
def test_an_npz_becomes_a_lesson_whose_walk_is_the_attention_of_its_rounded_arrays(
    run, here: Path, kind: str, places: int
) -> None:
    arrays = draw(kind, seed=places)
    np.savez(here / "layer.npz", **arrays)
    causal = ["--causal"] if kind == "causal" else []
    made = run("new", "layer", "--from", "layer.npz", "--places", str(places), *causal)
    assert made.exit_code == 0, made.output
    text = (here / "layer.yaml").read_text()

    # every entry an exact decimal of at most `places` places: no float was written
    numbers = re.findall(r"(?<![\w.])-?\d[\d.eE+-]*", text.split("notes:")[0])
    assert all(re.fullmatch(rf"-?\d+(\.\d{{1,{places}}})?", n) for n in numbers), numbers

    walked = run("walk", "layer.yaml", "--json")
    assert walked.exit_code == 0, walked.output
    steps = json.loads(walked.stdout)["steps"]
    last = steps[-1]
    want = reference({k: rounded(v, places) for k, v in arrays.items()}, bool(causal))
    assert last["name"] == ("Z" if "W_O" not in arrays else "output")
    np.testing.assert_allclose(np.array(last["value"]), want, rtol=0, atol=1e-12)

    # the lesson holds the rounded entries exactly (read back, as sympy numbers)
    lesson = tutor.lesson(here / "layer.yaml")
    first = "W_Q" if "W_Q" in arrays else "W_Q.1"
    key = "W_Q" if not lesson.core.multi_head else lesson.derive().steps[1]
    assert lesson.derive()[key].exact.tolist() == exact_rounded(arrays[first], places)

    # the movement reported: the rounded lesson's output against the arrays' as given
    step, reported = moved_of(made.output)
    assert step == last["name"]
    moved = float(np.abs(want - reference(arrays, bool(causal))).max())
    assert abs(reported - moved) <= moved * 0.05 + 1e-15  # said to two significant digits


def test_the_tokens_come_from_the_option_the_file_or_are_numbered(run, here: Path) -> None:
    arrays = draw("one-head")
    np.savez("plain.npz", **arrays)
    np.savez("named.npz", **arrays, tokens=np.array(["the", "cat", "sat", "down"]))
    for file, extra, want in (
        ("plain.npz", [], ["t1", "t2", "t3", "t4"]),
        ("named.npz", [], ["the", "cat", "sat", "down"]),
        ("named.npz", ["--tokens", "a,b,c,d"], ["a", "b", "c", "d"]),
        ("plain.npz", ["--tokens", "w x u v"], ["w", "x", "u", "v"]),
    ):
        made = run("new", "t", "--from", file, *extra, "-o", "-")
        assert made.exit_code == 0, made.output
        assert f"tokens: [{', '.join(want)}]" in made.stdout


def test_the_other_options_of_new_still_draw_a_lesson_and_tokens_is_needed_there(run) -> None:
    drawn = run("new", "x", "--tokens", "a b", "--seed", "3", "-o", "-")
    assert drawn.exit_code == 0 and "tokens: [a, b]" in drawn.stdout
    missing = run("new", "x", "--seed", "3", "-o", "-")
    assert missing.exit_code == 2 and "--tokens is needed" in missing.output


@pytest.mark.parametrize(
    ("tokens", "fragment"),
    [
        ("a,b,c", "3 tokens given, but a.npz's X has 4 rows"),
        ("a,b,c,d,e", "5 tokens given, but a.npz's X has 4 rows"),
        ("a,b,c,#d", "token 4 "),
    ],
)
def test_tokens_that_do_not_fit_the_arrays_are_a_usage_error(
    run, here: Path, tokens: str, fragment: str
) -> None:
    np.savez("a.npz", **draw("one-head"))
    got = run("new", "x", "--from", "a.npz", "--tokens", tokens)
    assert got.exit_code == 2 and fragment in got.output, got.output
    assert not (here / "x.yaml").exists()


def test_new_from_refuses_the_options_that_draw_a_lesson(run, here: Path) -> None:
    np.savez("a.npz", **draw("one-head"))
    got = run("new", "x", "--from", "a.npz", "--d-k", "3")
    assert got.exit_code == 2
    assert "with --from the shapes and numbers come from the arrays" in got.output


class Opens:
    """A pickle that, if it were ever loaded, would create the file ``path``."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self) -> tuple[Any, ...]:
        return (open, (self.path, "w"))


def _bad_files(tmp: Path) -> dict[str, tuple[dict[str, Any] | str, str]]:
    """name → (the arrays, or "text", "npy", "missing"; a fragment of the refusal)."""
    ok = draw("one-head")
    X, W = ok["X"], ok["W_Q"]
    nan = X.copy()
    nan[1, 2] = np.nan
    two = draw("two-heads")
    return {
        "missing W_K": ({k: v for k, v in ok.items() if k != "W_K"}, "no array W_K"),
        "missing X": ({k: v for k, v in ok.items() if k != "X"}, "no array X (or E)"),
        "W_Q of the wrong height": (
            {**ok, "W_Q": np.ones((5, 2))},
            "W_Q has shape (5, 2); expected (4, …)",
        ),
        "W_K of the wrong width": (
            {**ok, "W_K": np.ones((4, 3))},
            "W_K has shape (4, 3); expected (4, 2)",
        ),
        "X with a NaN": ({**ok, "X": nan}, "X[1, 2] is nan; expected finite numbers"),
        "W_V with inf": ({**ok, "W_V": np.full((4, 3), np.inf)}, "W_V[0, 0] is inf"),
        "a huge entry": ({**ok, "X": X * 1e13}, "expected numbers below 10^12"),
        "X as text": ({**ok, "X": X.astype(str)}, "X has dtype <U"),
        "W_Q as booleans": ({**ok, "W_Q": W > 0}, "W_Q has dtype bool; expected numbers"),
        "complex W_Q": ({**ok, "W_Q": W + 1j}, "W_Q has dtype complex128"),
        "a 3-D X": ({**ok, "X": np.ones((2, 4, 4))}, "X has shape (2, 4, 4); expected a matrix"),
        "33 tokens": (
            {**ok, "X": np.ones((33, 4))},
            "X has shape (33, 4); a lesson has at most 32 tokens",
        ),
        "17 features": (
            {**ok, "X": np.ones((4, 17)), "W_Q": np.ones((17, 2))},
            "at most 32 tokens and 16 features",
        ),
        "five heads": (
            {
                "X": X,
                "W_O": np.ones((10, 4)),
                **{f"{w}.{h}": W for w in ("W_Q", "W_K", "W_V") for h in range(1, 6)},
            },
            "5 heads; a lesson has at most 4",
        ),
        "heads without W_O": (
            {k: v for k, v in two.items() if k != "W_O"},
            "2 heads but no array W_O",
        ),
        "W_O of the wrong height": ({**two, "W_O": np.ones((3, 4))}, "W_O has shape (3, 4)"),
        "heads numbered 1 and 3": (
            {"X": X, "W_O": two["W_O"], **{k.replace(".2", ".3"): v for k, v in two.items()}},
            "heads are numbered [1, 3]",
        ),
        "three W_K for two W_Q": (
            {**two, "W_K.3": W, "W_V.3": W, "W_Q.3": W, "W_Q.4": W, "W_O": np.ones((8, 4))},
            "W_K/W_V are given for heads ['1', '2', '3'] of 4",
        ),
        "X and E": ({**ok, "E": X}, "both X and E are given"),
        "P with X": ({**ok, "P": X}, "P is given with X; expected E"),
        "P of the wrong shape": (
            {**{k: v for k, v in ok.items() if k != "X"}, "E": X, "P": np.ones((3, 4))},
            "P has shape (3, 4); expected (4, 4)",
        ),
        "b_O without W_O": ({**ok, "b_O": np.ones(4)}, "b_O is given without W_O"),
        "one head and numbered heads": ({**two, "W_Q": W}, "both W_Q and numbered heads"),
        "a head without W_Q": (
            {k: v for k, v in two.items() if k != "W_Q.2"},
            "no array W_Q.2; expected d_model × d_k queries",
        ),
        "an unknown array": ({**ok, "W_q": W}, "array 'W_q' is not a lesson's"),
        "tokens that do not fit X": (
            {**ok, "tokens": np.array(["a", "b"])},
            "tokens has 2 strings, but X has 4 rows",
        ),
        "tokens as numbers": ({**ok, "tokens": np.arange(4)}, "tokens has dtype int64"),
        "b_Q of the wrong length": ({**ok, "b_Q": np.ones(3)}, "b_Q has shape (3,); expected (2,)"),
        "an object array (a pickle)": (
            {**ok, "W_V": np.array([Opens(str(tmp / "pwned")), 1], dtype=object)},
            "array W_V holds Python objects (dtype object), which are not loaded",
        ),
        "a text file": ("text", "not an .npz file"),
        "a .npy file": ("npy", "not an .npz file"),
        "no such file": ("missing", "no such file"),
    }


BAD = list(_bad_files(Path("/tmp")))


@pytest.mark.parametrize("case", BAD)
def test_each_bad_file_is_refused_with_its_name_the_array_and_what_was_expected(
    run, here: Path, case: str
) -> None:
    arrays, fragment = _bad_files(here)[case]
    path = here / "bad.npz"
    if arrays == "text":
        path.write_text("X = [[1, 2]]\n")
    elif arrays == "npy":
        np.save(here / "bad.npy", np.ones((2, 2)))
        (here / "bad.npy").rename(path)
    elif isinstance(arrays, dict):
        np.savez(path, **arrays, allow_pickle=True)
    got = run("new", "bad", "--from", str(path))
    assert got.exit_code == 1, got.output
    assert f"error: {path}: " in got.output and fragment in got.output, got.output
    assert "Traceback" not in got.output and got.output.count("\n") == 1
    assert not (here / "bad.yaml").exists()
    assert not (here / "pwned").exists()  # the pickle was never loaded


def test_an_object_array_is_never_unpickled(here: Path) -> None:
    """The file really holds the pickle (numpy would load it with allow_pickle=True)."""
    marker = here / "pwned"
    np.savez(here / "evil.npz", X=np.array([Opens(str(marker))], dtype=object))
    with pytest.raises(tutor.TutorError, match="dtype object"):
        from tutor.author.fromarrays import read_npz

        read_npz(here / "evil.npz")
    assert not marker.exists()
    with np.load(here / "evil.npz", allow_pickle=True) as npz:
        npz["X"]
    assert marker.exists()


# ---------------------------------------------------------------------------------------------
# biases: written through the lesson writer from the lesson's own bias rows, read back, walked


def test_biases_are_written_as_rows_at_the_top_and_in_each_head(run, here: Path) -> None:
    one = {**draw("one-head"), "b_Q": np.array([0.123, -1.0]), "b_V": np.array([1.0, 2, 3])}
    np.savez("one.npz", **one)
    made = run("new", "one", "--from", "one.npz", "--places", "2", "-o", "-")
    assert made.exit_code == 0, made.output
    assert re.search(r"^b_Q: \[0\.12, -1\] +# added to every row of X · W_Q$", made.stdout, re.M)
    assert re.search(r"^b_V: \[1, 2, 3\]", made.stdout, re.M)
    two = {**draw("two-heads"), "b_K.2": np.array([0.5, 0.25]), "b_O": np.arange(4.0)}
    np.savez("two.npz", **two)
    made = run("new", "two", "--from", "two.npz", "--places", "2", "-o", "-")
    head2 = made.stdout.split("name: head 2")[1]
    assert re.search(r"^    b_K: \[0\.5, 0\.25\]", head2, re.M)
    assert re.search(r"^b_O: \[0, 1, 2, 3\]", made.stdout, re.M)
    step, reported = moved_of(made.output)
    moved = np.abs(reference({k: rounded(v, 2) for k, v in two.items()}) - reference(two)).max()
    assert step == "output" and abs(reported - moved) <= moved * 0.05


@pytest.mark.parametrize("kind", ["one-head", "one-head-W_O", "two-heads", "grouped", "causal"])
def test_a_lesson_with_biases_walks_to_the_attention_of_its_rounded_arrays(
    run, here: Path, kind: str
) -> None:
    arrays = draw("two-heads" if kind == "causal" else kind, seed=7)
    rng = np.random.default_rng(8)
    for key in list(arrays):
        if key.startswith("W_") and key != "W_O":  # b_K.g, b_V.g of a group: under kv_heads
            arrays["b_" + key[2:]] = rng.normal(size=arrays[key].shape[1])
    if "W_O" in arrays:
        arrays["b_O"] = rng.normal(size=arrays["W_O"].shape[1])
    causal = ["--causal"] if kind == "causal" else []
    np.savez("b.npz", **arrays)
    made = run("new", "b", "--from", "b.npz", "--places", "3", *causal)
    assert made.exit_code == 0, made.output
    checked = run("check", "b.yaml")
    assert checked.exit_code == 0, checked.output
    walked = run("walk", "b.yaml", "--json")
    assert walked.exit_code == 0, walked.output
    got = np.array(json.loads(walked.stdout)["steps"][-1]["value"])
    want = reference({k: rounded(v, 3) for k, v in arrays.items()}, bool(causal))
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
    _, reported = moved_of(made.output)
    moved = float(np.abs(want - reference(arrays, bool(causal))).max())
    assert abs(reported - moved) <= moved * 0.05 + 1e-15


def test_ties_are_rounded_half_away_from_zero_and_whole_arrays_move_nothing() -> None:
    X = np.array([[1, 0, 1, 0], [0, 2, 0, 1], [1, 1, 0, 0]], dtype=float)
    W = np.eye(4)[:, :2]
    whole = tutor.lesson_from_arrays(X, W, W, W, tokens="cats chase mice", places=2)
    assert whole.moved < 1e-15 and whole.core.X[1] == ((0, 1), (2, 1), (0, 1), (1, 1))
    tied = tutor.lesson_from_arrays(X, W, W, W * 0.3333, b_Q=[0.125, -0.125], places=2)
    assert tied.core.heads[0].b_Q == ((13, 100), (-13, 100))  # 0.125 → 0.13, −0.125 → −0.13
    assert tied.core.heads[0].W_V[0][0] == (33, 100)
    assert 0 < tied.moved < 0.02  # the rounded V moves Z by about a hundredth at most
    assert "b_Q: [0.13, -0.13]" in tied.yaml


# ---------------------------------------------------------------------------------------------
# in Python


def test_lesson_from_arrays_makes_the_lesson_new_from_makes(run, here: Path) -> None:
    arrays = draw("two-heads", seed=5)
    arrays |= {"b_Q.1": np.array([0.5, -0.25]), "b_Q.2": np.array([1.0, 2.0])}
    arrays |= {"b_V.2": np.array([0.125, 0.75]), "b_O": np.arange(4.0) / 3}
    np.savez("l.npz", **arrays)
    assert run("new", "l", "--from", "l.npz", "--places", "3").exit_code == 0
    made = tutor.lesson_from_arrays(
        arrays["X"],
        [arrays["W_Q.1"], arrays["W_Q.2"]],
        np.stack([arrays["W_K.1"], arrays["W_K.2"]]),  # a 3-D array: one per head
        [arrays["W_V.1"], arrays["W_V.2"]],
        W_O=arrays["W_O"],
        b_Q=[arrays["b_Q.1"], arrays["b_Q.2"]],  # a row per head, as the weights
        b_V=[None, arrays["b_V.2"]],  # (None: head 1 has no b_V)
        b_O=arrays["b_O"],
        places=3,
        name="l",
    )
    assert made.core.heads[0].b_V is None and made.core.heads[1].b_V == ((1, 8), (3, 4))
    assert isinstance(made, tutor.Lesson)
    file = tutor.lesson(here / "l.yaml")
    assert made.derive()["output"].exact == file.derive()["output"].exact
    want = reference({k: rounded(v, 3) for k, v in arrays.items()})
    assert made.moved == pytest.approx(np.abs(want - reference(arrays)).max(), rel=1e-9)
    assert made.moved_text.startswith("rounding every entry to 3 places moves output by at most")
    after = "\ntokens:"  # the same file but its first lines (the command, where from)
    assert made.yaml.split(after)[1] == (here / "l.yaml").read_text().split(after)[1]
    made.save(here / "again.yaml")
    assert (
        tutor.lesson(here / "again.yaml").derive()["output"].exact == file.derive()["output"].exact
    )
    with pytest.raises(tutor.TutorError, match="already exists"):
        made.save(here / "again.yaml")


@pytest.mark.parametrize(
    ("call", "fragment"),
    [
        (lambda: tutor.lesson_from_arrays(np.eye(2)), "no array W_Q"),
        (
            lambda: tutor.lesson_from_arrays(np.eye(2), np.eye(3), np.eye(2), np.eye(2)),
            "<arrays>: W_Q has shape (3, 3); expected (2, …)",
        ),
        (
            lambda: tutor.lesson_from_arrays(np.eye(2), *[np.eye(2)] * 3, places=11),
            "places is 11; expected a whole number of decimals, 0 to 10",
        ),
        (
            lambda: tutor.lesson_from_arrays(np.eye(2), *[np.eye(2)] * 3, tokens=["a"]),
            "1 tokens given, but <arrays>'s X has 2 rows",
        ),
        (
            lambda: tutor.lesson_from_arrays(np.eye(2), *[np.eye(2)] * 3, name="a b"),
            "NAME 'a b'",
        ),
        (
            lambda: tutor.lesson_from_arrays([[1, "x"]], *[np.eye(2)] * 3),
            "X has dtype <U",
        ),
    ],
)
def test_lesson_from_arrays_refuses_with_a_tutor_error(call: Any, fragment: str) -> None:
    with pytest.raises(tutor.TutorError) as caught:
        call()
    assert fragment in str(caught.value)


def test_lesson_from_torch_says_so_when_torch_is_not_installed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "torch", None)  # import torch raises ImportError
    with pytest.raises(tutor.TutorError, match=r"needs PyTorch.*attn-tutor\[torch\]"):
        tutor.lesson_from_torch(object(), np.eye(2))


def test_torch_is_imported_only_by_lesson_from_torch(here: Path) -> None:
    import subprocess

    code = (
        "import sys, numpy as np, tutor\n"
        "tutor.lesson_from_arrays(np.eye(2), *[np.eye(2)] * 3)\n"
        "print('torch' in sys.modules)\n"
    )
    root = Path(__file__).parent.parent
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=root, check=True
    )
    assert out.stdout.strip() == "False"


def _torch() -> Any:
    return pytest.importorskip(
        "torch", reason="PyTorch is not installed (pip install 'attn-tutor[torch]')"
    )


@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize(
    ("batch_first", "shape"),
    [(True, (1, 3, 4)), (False, (3, 1, 4)), (True, (3, 4)), (False, (3, 4))],
)
def test_a_lesson_from_torch_reproduces_the_modules_output(
    batch_first: bool, shape: tuple[int, ...], bias: bool
) -> None:
    """torch.nn.MultiheadAttention's packed in-projection, √head_dim scaling and (with bias)
    in_proj_bias and out_proj.bias, against the lesson's exact output at 6 places."""
    torch = _torch()
    torch.manual_seed(41)
    module = torch.nn.MultiheadAttention(4, 2, bias=bias, batch_first=batch_first)
    if bias:  # (they start at zero: a bias that is 0 would check nothing)
        with torch.no_grad():
            module.in_proj_bias.normal_()
            module.out_proj.bias.normal_()
    x = torch.randn(*shape)
    batched = x if len(shape) == 3 else x.unsqueeze(0 if batch_first else 1)
    with torch.no_grad():
        out, _ = module(batched, batched, batched)
    before = module.in_proj_weight.detach().clone()
    made = tutor.lesson_from_torch(module, x, ["the", "cat", "sat"], places=6)
    assert torch.equal(module.in_proj_weight, before)  # the caller's module is left as it was
    assert all((h.b_Q is not None) == bias for h in made.core.heads)
    assert (made.core.b_O is not None) == bias
    got = made.derive()["output"].numpy()
    want = out.double().numpy().reshape(3, 4)
    np.testing.assert_allclose(got, want, rtol=0, atol=0.5e-4)  # equal to 4 places
    assert made.moved < 0.5e-4 and made.tokens == ("the", "cat", "sat")


def test_lesson_from_torch_refuses_what_is_not_a_plain_multihead_attention() -> None:
    torch = _torch()
    with pytest.raises(tutor.UsageError, match=r"expected a torch\.nn\.MultiheadAttention"):
        tutor.lesson_from_torch(torch.nn.Linear(4, 4), np.eye(4))
    kv = torch.nn.MultiheadAttention(4, 2, bias=False, add_bias_kv=True)
    with pytest.raises(tutor.UsageError, match="add_bias_kv"):
        tutor.lesson_from_torch(kv, np.eye(4))
    wide = torch.nn.MultiheadAttention(32, 2, bias=False)
    with pytest.raises(tutor.TutorError, match="at most 32 tokens and 16 features"):
        tutor.lesson_from_torch(wide, np.ones((3, 32)))
    seq_first = torch.nn.MultiheadAttention(4, 2)  # (1, 3, 4): one token, a batch of three
    with pytest.raises(tutor.TutorError, match=r"a batch of 3 \(batch_first=False\)"):
        tutor.lesson_from_torch(seq_first, torch.randn(1, 3, 4))
