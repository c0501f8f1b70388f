"""Lessons made from arrays: an ``.npz`` file, NumPy arrays in a notebook, or a real layer's
weights (``torch.nn.MultiheadAttention``), every entry written as an exact decimal.

The arrays are named as a lesson names them (the naming table is in the docs, how-to
"Make a lesson from arrays"):

- ``X``, or ``E`` with an optional ``P`` (the positions added to E): N × d_model;
- ``W_Q``, ``W_K``, ``W_V`` (d_model × d_k, d_k, d_v) for one head; for heads, ``W_Q.1``,
  ``W_K.1``, ``W_V.1``, ``W_Q.2``, …; fewer ``W_K.g``/``W_V.g`` than ``W_Q.h`` (a divisor of
  them) makes grouped heads (``kv_groups``);
- ``W_O`` ((heads × d_v) × d_model), optional;
- ``b_Q``, ``b_K``, ``b_V`` (one row each; ``b_Q.1`` … per head) and ``b_O``, optional;
- ``tokens``, optional: an array of strings.

Each entry is rounded to ``places`` decimals, half away from zero (``tutor.core.rounding``), from
its exact binary value; the lesson's exact output is then compared with the float attention of
the arrays as given, so an instructor knows how far the rounding moved it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

from tutor.core.errors import TutorError, UsageError
from tutor.core.lesson import Entry, Head, Lesson, Matrix
from tutor.core.rounding import round_decimal
from tutor.core.spec import (
    BIASES,
    MAX_DIM,
    MAX_FILE_BYTES,
    MAX_HEADS,
    MAX_PRECISION,
    MAX_TOKENS,
    WEIGHT_KEYS,
)

BIAS_KEYS = tuple(BIASES)  # b_Q, b_K, b_V
KNOWN = re.compile(r"(X|E|P|W_O|b_O|tokens)|(W_Q|W_K|W_V|b_Q|b_K|b_V)(?:\.([1-9]\d?))?")
FIRST_NOTES = {"Z": "Made from arrays."}  # the read-back before any arithmetic (notes_of derives)
MAX_SIZE = 1e12  # an entry's size: a layer's weights are near 1; 30 digits fit a lesson
MAX_NPZ_BYTES = 8 * MAX_FILE_BYTES  # arrays as stored, unpacked: a lesson's are a few KB


class ArraysError(TutorError):
    """Arrays that cannot make a lesson: the file (or ``<arrays>``), the array, what was wrong."""


@dataclass(frozen=True)
class HeadArrays:
    W_Q: Any
    W_K: Any
    W_V: Any
    b_Q: Any = None
    b_K: Any = None
    b_V: Any = None


@dataclass(frozen=True)
class Arrays:
    """Validated float64 arrays, named as the lesson names them."""

    X: Any  # X, or E when P is given
    heads: tuple[HeadArrays, ...]
    P: Any = None
    W_O: Any = None
    b_O: Any = None
    kv_groups: int | None = None
    tokens: tuple[str, ...] | None = None
    named_heads: bool = False  # given as W_Q.1, …: written under heads:

    @property
    def biased(self) -> bool:
        return self.b_O is not None or any(
            getattr(h, b) is not None for h in self.heads for b in BIAS_KEYS
        )


@dataclass(frozen=True)
class Made:
    """A lesson made from arrays: its YAML text, the lesson as read back from that text, and
    how far rounding moved the output."""

    yaml: str
    lesson: Lesson
    moved: float  # max |output of the rounded lesson − output of the arrays as given|
    step: str  # "Z" or "output"
    places: int


# ---------------------------------------------------------------------------------------------
# reading and checking


def read_npz(path: Path) -> dict[str, Any]:
    """The arrays of an ``.npz`` file, loaded without pickles (an .npz can carry pickles, which
    run code when loaded): refused with the file's name for anything else."""
    import zipfile

    import numpy as np

    where = str(path)
    try:
        if not path.is_file():
            raise ArraysError(f"{where}: no such file")
        if not zipfile.is_zipfile(path):
            raise ArraysError(
                f"{where}: not an .npz file (a zip of .npy arrays); save one with "
                "numpy.savez(path, X=X, W_Q=W_Q, …)"
            )
        with zipfile.ZipFile(path) as z:
            unpacked = sum(i.file_size for i in z.infolist())
        if unpacked > MAX_NPZ_BYTES:
            raise ArraysError(
                f"{where}: {unpacked:,} bytes of arrays; a lesson's arrays are a few KB "
                f"(at most {MAX_TOKENS} tokens, {MAX_DIM} features, {MAX_HEADS} heads)"
            )
        out: dict[str, Any] = {}
        with np.load(path, allow_pickle=False) as npz:
            for name in npz.files:
                try:
                    out[name] = npz[name]
                except ValueError as err:
                    if "allow_pickle" in str(err) or "Object arrays" in str(err):
                        raise ArraysError(
                            f"{where}: array {name} holds Python objects (dtype object), which "
                            "are not loaded (they could run code); save numbers as float and "
                            "tokens as numpy.array(tokens, dtype=str)"
                        ) from None
                    raise ArraysError(f"{where}: array {name} cannot be read: {err}") from None
        return out
    except ArraysError:
        raise
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as err:
        raise ArraysError(f"{where}: not a readable .npz file ({err})") from None


def _float_matrix(where: str, name: str, value: Any, ndim: int = 2) -> Any:
    import numpy as np

    try:
        a = np.asarray(value)
    except Exception as err:  # anything a caller hands in
        raise ArraysError(f"{where}: {name} is not an array ({err})") from None
    if a.dtype == object:
        raise ArraysError(f"{where}: {name} holds Python objects (dtype object); expected numbers")
    if a.dtype == bool or not (
        np.issubdtype(a.dtype, np.integer) or np.issubdtype(a.dtype, np.floating)
    ):
        raise ArraysError(
            f"{where}: {name} has dtype {a.dtype}; expected numbers (integers or floats)"
        )
    if a.ndim == ndim + 1 and a.shape[0] == 1:  # a batch of one, as a framework keeps it
        a = a[0]
    if a.ndim != ndim:
        what = "a matrix (2-D)" if ndim == 2 else "a row (1-D)"
        raise ArraysError(f"{where}: {name} has shape {a.shape}; expected {what}")
    if a.size == 0:
        raise ArraysError(f"{where}: {name} has shape {a.shape}; expected no empty side")
    a = a.astype(np.float64)
    if not np.isfinite(a).all():
        bad = tuple(int(i) for i in np.argwhere(~np.isfinite(a))[0])
        raise ArraysError(
            f"{where}: {name}{list(bad)} is {a[bad]}; expected finite numbers (no NaN or inf)"
        )
    if (np.abs(a) >= MAX_SIZE).any():
        bad = tuple(int(i) for i in np.argwhere(np.abs(a) >= MAX_SIZE)[0])
        raise ArraysError(
            f"{where}: {name}{list(bad)} is {a[bad]:.3g}; expected numbers below 10^12 in size"
        )
    return a


def _tokens(where: str, value: Any) -> tuple[str, ...]:
    import numpy as np

    a = np.asarray(value)
    if a.dtype.kind not in "U" or a.ndim != 1:
        raise ArraysError(
            f"{where}: tokens has dtype {a.dtype} and shape {a.shape}; expected a row of "
            "strings, numpy.array(['the', 'cat'], dtype=str)"
        )
    return tuple(str(t) for t in a)


def check_arrays(named: Mapping[str, Any], where: str) -> Arrays:
    """The arrays checked against each other (names, shapes, numbers, the lesson's limits)."""
    unknown = [n for n in named if not KNOWN.fullmatch(n)]
    if unknown:
        raise ArraysError(
            f"{where}: array {unknown[0]!r} is not a lesson's; expected X or E (and P), W_Q, "
            "W_K, W_V (or W_Q.1, W_K.1, … per head), W_O, b_Q, b_K, b_V, b_O, tokens"
        )
    if "X" in named and "E" in named:
        raise ArraysError(f"{where}: both X and E are given; expected one of them")
    xkey = "E" if "E" in named else "X"
    if xkey not in named:
        raise ArraysError(f"{where}: no array X (or E); expected the tokens' vectors, N × d_model")
    if "P" in named and xkey != "E":
        raise ArraysError(f"{where}: P is given with X; expected E (embeddings) with P")
    X = _float_matrix(where, xkey, named[xkey])
    n, d_model = X.shape
    if n > MAX_TOKENS or d_model > MAX_DIM:
        raise ArraysError(
            f"{where}: {xkey} has shape {X.shape}; a lesson has at most {MAX_TOKENS} tokens "
            f"and {MAX_DIM} features (d_model)"
        )

    def matrix(name: str, rows: int, what: str, cols: int | None = None) -> Any:
        m = _float_matrix(where, name, named[name])
        if m.shape[0] != rows or (cols is not None and m.shape[1] != cols):
            want = f"({rows}, {cols})" if cols is not None else f"({rows}, …)"
            raise ArraysError(f"{where}: {name} has shape {m.shape}; expected {want}: {what}")
        if m.shape[1] > MAX_DIM:
            raise ArraysError(
                f"{where}: {name} has shape {m.shape}; a lesson's widths are at most {MAX_DIM}"
            )
        return m

    def row(name: str, size: int, what: str) -> Any:
        b = _float_matrix(where, name, named[name], ndim=1)
        if b.shape != (size,):
            raise ArraysError(f"{where}: {name} has shape {b.shape}; expected ({size},): {what}")
        return b

    P = matrix("P", n, f"one row per row of {xkey}", d_model) if "P" in named else None
    numbered = sorted({int(m[3]) for k in named if (m := KNOWN.fullmatch(k)) and m[3] is not None})
    plain = [k for k in (*WEIGHT_KEYS, *BIAS_KEYS) if k in named]
    if numbered and plain:
        raise ArraysError(
            f"{where}: both {plain[0]} and numbered heads ({plain[0]}.1, …) are given; "
            "expected one head's arrays, or each head's numbered from 1"
        )
    suffixes = [f".{h}" for h in numbered] if numbered else [""]
    if numbered and numbered != list(range(1, len(numbered) + 1)):
        raise ArraysError(f"{where}: heads are numbered {numbered}; expected 1, 2, … in turn")
    if len(suffixes) > MAX_HEADS:
        raise ArraysError(f"{where}: {len(suffixes)} heads; a lesson has at most {MAX_HEADS}")
    queries = [s for s in suffixes if f"W_Q{s}" in named]
    kvs = [s for s in suffixes if f"W_K{s}" in named or f"W_V{s}" in named]
    if len(queries) != len(suffixes):
        missing = next(s for s in suffixes if s not in queries)
        raise ArraysError(f"{where}: no array W_Q{missing}; expected d_model × d_k queries")
    groups = len(kvs)
    if kvs != suffixes[:groups] or groups == 0 or len(queries) % groups:
        raise ArraysError(
            f"{where}: W_K/W_V are given for heads {[s[1:] or '1' for s in kvs]} of "
            f"{len(queries)}; expected them for every head, or for the first G heads where G "
            "divides the number of heads (grouped heads)"
        )
    per = len(queries) // groups
    heads = []
    d_k = d_v = None
    for h, s in enumerate(suffixes):
        g = suffixes[h // per]
        for key in WEIGHT_KEYS[1:]:  # W_K, W_V: the group's
            if f"{key}{g}" not in named:
                raise ArraysError(f"{where}: no array {key}{g}; expected d_model × d_k")
        W_Q = matrix(f"W_Q{s}", d_model, f"d_model rows, as {xkey} has {d_model} columns")
        d_k = d_k or W_Q.shape[1]
        W_Q = matrix(f"W_Q{s}", d_model, "every head's d_k is the same", d_k)
        W_K = matrix(f"W_K{g}", d_model, "d_model × d_k, as W_Q", d_k)
        W_V = matrix(f"W_V{g}", d_model, f"d_model rows, as {xkey} has {d_model} columns")
        d_v = d_v or W_V.shape[1]
        W_V = matrix(f"W_V{g}", d_model, "every head's d_v is the same", d_v)
        # each bias is one row of its weight's width, from the head (b_Q) or its group
        source = dict(zip(WEIGHT_KEYS, ((s, d_k), (g, d_k), (g, d_v)), strict=True))
        biases = {
            b: row(f"{b}{source[w][0]}", source[w][1], f"one number per column of {w}")
            for b, w in BIASES.items()
            if f"{b}{source[w][0]}" in named
        }
        heads.append(HeadArrays(W_Q, W_K, W_V, **biases))
    assert d_v is not None
    W_O = b_O = None
    if "W_O" in named:
        W_O = matrix("W_O", len(heads) * d_v, "(heads × d_v) rows, one per column of concat")
    elif len(heads) > 1:
        raise ArraysError(
            f"{where}: {len(heads)} heads but no array W_O; expected W_O, "
            f"({len(heads)} × {d_v}) × d_model, to mix the heads"
        )
    if "b_O" in named:
        if W_O is None:
            raise ArraysError(f"{where}: b_O is given without W_O; expected W_O with it")
        b_O = row("b_O", W_O.shape[1], "one number per column of W_O")
    tokens = _tokens(where, named["tokens"]) if "tokens" in named else None
    if tokens is not None and len(tokens) != n:
        raise ArraysError(
            f"{where}: tokens has {len(tokens)} strings, but {xkey} has {n} rows; "
            "expected one token per row"
        )
    return Arrays(
        X, tuple(heads), P, W_O, b_O,
        groups if groups < len(heads) else None, tokens, bool(numbered),
    )  # fmt: skip


# ---------------------------------------------------------------------------------------------
# exact entries, the lesson, and how far rounding moved it


def exact_entry(x: float, places: int) -> Entry:
    """A float's exact binary value rounded to ``places`` decimals, half away from zero."""
    d = round_decimal(Decimal(x), places)
    p, q = d.as_integer_ratio()
    return (int(p), int(q))


def exact(m: Any, places: int) -> Matrix:
    return tuple(tuple(exact_entry(float(v), places) for v in row) for row in m)


def exact_row(b: Any, places: int) -> tuple[Entry, ...] | None:
    """A bias row at ``places`` decimals (None: no bias)."""
    return None if b is None else exact([b], places)[0]


def attention(a: Arrays, causal: bool = False) -> tuple[Any, str]:
    """The float64 attention of the arrays (numpy): Z for one head, else the output."""
    import numpy as np

    hidden = np.triu(np.ones((len(a.X), len(a.X)), dtype=bool), 1) if causal else None
    X = a.X if a.P is None else a.X + a.P  # (N, d_model)
    Zs = []
    for h in a.heads:
        Q = X @ h.W_Q + (0 if h.b_Q is None else h.b_Q)  # (N, d_k)
        K = X @ h.W_K + (0 if h.b_K is None else h.b_K)  # (N, d_k)
        V = X @ h.W_V + (0 if h.b_V is None else h.b_V)  # (N, d_v)
        scaled = Q @ K.T / np.sqrt(Q.shape[1])  # (N, N)
        if hidden is not None:
            scaled = np.where(hidden, -np.inf, scaled)
        e = np.exp(scaled - scaled.max(axis=1, keepdims=True))
        Zs.append(e / e.sum(axis=1, keepdims=True) @ V)  # (N, d_v)
    if a.W_O is None:
        return Zs[0], "Z"
    return np.concatenate(Zs, axis=1) @ a.W_O + (0 if a.b_O is None else a.b_O), "output"


def core_lesson(
    a: Arrays, name: str, tokens: tuple[str, ...], places: int, where: str, causal: bool
) -> Lesson:
    """The lesson the arrays make: every entry, biases too, at ``places`` decimals."""
    heads = tuple(
        Head(
            f"head {i}" if len(a.heads) > 1 else None,
            exact(h.W_Q, places),
            exact(h.W_K, places),
            exact(h.W_V, places),
            **{k: exact_row(getattr(h, k), places) for k in BIAS_KEYS},
        )
        for i, h in enumerate(a.heads, 1)
    )
    n, d_model = a.X.shape
    shape = f"{n} tokens, d_model {d_model}, d_k {a.heads[0].W_Q.shape[1]}"
    if len(a.heads) > 1:
        shape += f", {len(a.heads)} heads"
    return Lesson(
        name=name,
        path=f"{name}.yaml",
        title=f"{name}: attention from arrays",
        description=(
            f"Made from {where}: {shape}, every entry rounded to {places} decimal places "
            "(half away from zero)."
        ),
        tokens=tokens,
        X=exact(a.X, places),
        heads=heads,
        multi_head=len(a.heads) > 1 or a.W_O is not None,
        W_O=None if a.W_O is None else exact(a.W_O, places),
        b_O=exact_row(a.b_O, places),
        mask="causal" if causal else "none",
        precision=min(places, MAX_PRECISION),
        positions="given" if a.P is not None else "none",
        P=None if a.P is None else exact(a.P, places),
        kv_groups=a.kv_groups,
    )


def check_places(places: Any) -> int:
    if isinstance(places, bool) or not isinstance(places, int) or not 0 <= places <= 10:
        raise UsageError(f"places is {places!r}; expected a whole number of decimals, 0 to 10")
    return places


def token_labels(given: Any, arrays: Arrays, where: str) -> tuple[str, ...]:
    """The tokens: as given (a list, or ``a,b,c``), else the file's ``tokens``, else t1…tN."""
    from tutor.core.lessonfile import token_problem

    n = arrays.X.shape[0]
    if given is None:
        tokens = arrays.tokens or tuple(f"t{i}" for i in range(1, n + 1))
    elif isinstance(given, str):
        tokens = tuple(t for t in re.split(r"[,\s]+", given) if t)
    elif isinstance(given, list | tuple) and all(isinstance(t, str) for t in given):
        tokens = tuple(given)
    else:
        raise UsageError(f"tokens is a {type(given).__name__}; expected a list of strings")
    if len(tokens) != n:
        raise UsageError(f"{len(tokens)} tokens given, but {where}'s X has {n} rows")
    for i, word in enumerate(tokens, 1):
        problem = token_problem(word)
        if problem is not None:
            raise UsageError(f"token {i} {problem}")
    return tokens


def make(
    named: Mapping[str, Any],
    name: str,
    places: int,
    tokens: Any = None,
    where: str = "<arrays>",
    command: str | None = None,
    causal: bool = False,
) -> Made:
    """The lesson made from named arrays, written, read back, and measured."""
    from tutor.author.new import check_name, notes_of
    from tutor.core.engine import derive
    from tutor.core.errors import LessonError
    from tutor.core.lessonfile import load_lesson_text
    from tutor.text.lessonyaml import lesson_yaml

    check_name(name)
    places = check_places(places)
    arrays = check_arrays(named, where)
    labels = token_labels(tokens, arrays, where)
    lesson = core_lesson(arrays, name, labels, places, where, causal)
    command = command or f"tutor.lesson_from_arrays(..., places={places})"
    file = f"{name}.yaml"
    try:  # read back by the loader (every limit of a lesson) before any arithmetic
        load_lesson_text(lesson_yaml(lesson, command, file, notes=FIRST_NOTES), file, name)
        text = lesson_yaml(lesson, command, file, notes=notes_of(lesson))
        loaded = load_lesson_text(text, file, name)
    except LessonError as err:
        raise ArraysError(f"{where}: the lesson made from it is not valid: {err}") from None
    import numpy as np

    given, step = attention(arrays, causal)
    cells = derive(loaded).step(step).cells  # (Z and output have no masked cells)
    got = np.array([[float(c.approx) for c in row] for row in cells], dtype=np.float64)
    return Made(text, loaded, float(np.max(np.abs(got - given))), step, places)


def moved_text(made: Made) -> str:
    """ "rounding every entry to 2 places moves Z by at most 0.013" (two significant digits)."""
    if made.moved == 0:
        size = "0 (the arrays were already at those places)"
    else:
        d = Decimal(made.moved)
        size = str(round_decimal(d, max(0, 1 - d.adjusted())))
        if "E" in size:
            size = f"{Decimal(size):f}"
    places = "place" if made.places == 1 else "places"
    return f"rounding every entry to {made.places} {places} moves {made.step} by at most {size}"


def from_torch(module: Any, x: Any) -> dict[str, Any]:
    """A ``torch.nn.MultiheadAttention`` and its input as named arrays (X·W: transposed)."""
    try:
        import torch
    except ImportError:
        raise TutorError(
            "lesson_from_torch needs PyTorch, which is not installed; install the extra: "
            "pip install 'attn-tutor[torch]'"
        ) from None
    if not isinstance(module, torch.nn.MultiheadAttention):
        raise UsageError(
            f"module is a {type(module).__name__}; expected a torch.nn.MultiheadAttention"
        )
    if module.bias_k is not None or module.add_zero_attn or not module._qkv_same_embed_dim:
        raise UsageError(
            "module has add_bias_kv, add_zero_attn or its own kdim/vdim; a lesson has "
            "self-attention with one packed in-projection only"
        )
    E, h = module.embed_dim, module.num_heads
    hd = E // h
    with torch.no_grad():
        W = module.in_proj_weight.detach().double().cpu().numpy()  # (3E, E), used as x @ W.T
        b = module.in_proj_bias
        b = None if b is None else b.detach().double().cpu().numpy()
        W_O = module.out_proj.weight.detach().double().cpu().numpy().T  # (E, E)
        b_O = module.out_proj.bias
        b_O = None if b_O is None else b_O.detach().double().cpu().numpy()
        if isinstance(x, torch.Tensor):
            x = x.detach().double().cpu().numpy()
    import numpy as np

    X = x
    try:
        depth = np.ndim(x)
    except Exception:  # anything a caller hands in; _float_matrix says why
        depth = None
    if depth == 3:  # a batch: (B, N, d) with batch_first, else (N, B, d), as the module reads it
        a = np.asarray(x)
        batch = 0 if module.batch_first else 1
        if a.shape[batch] != 1:
            raise ArraysError(
                f"<module>: x has shape {a.shape}, a batch of {a.shape[batch]} (batch_first="
                f"{module.batch_first}); expected one sequence: (N, d), or a batch of one"
            )
        X = a[0] if module.batch_first else a[:, 0]
    named: dict[str, Any] = {"X": X, "W_O": W_O}
    for i in range(h):
        cols = slice(i * hd, (i + 1) * hd)
        for k, key in enumerate(WEIGHT_KEYS):
            named[f"{key}.{i + 1}"] = W[k * E : (k + 1) * E].T[:, cols]  # (E, head_dim)
            if b is not None:
                named[f"b_{key[2]}.{i + 1}"] = b[k * E : (k + 1) * E][cols]
    if b_O is not None:
        named["b_O"] = b_O
    return named
