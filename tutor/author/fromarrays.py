"""Lessons from arrays and from a real layer (issue 41, item 3): a framework's weights written as
a lesson, every entry an exact decimal at ``places``, with how far the rounding moves the output.

Arrays are named as a lesson names them: ``X``, ``W_Q``, ``W_K``, ``W_V`` (one head) or
``W_Q.1``, ``W_K.1``, ``W_V.1``, ``W_Q.2``, … (heads), optional ``b_Q``, ``b_K``, ``b_V`` (or
``b_Q.1``, …), ``W_O`` and ``b_O``. ``lesson_from_torch`` reads a ``torch.nn.MultiheadAttention``
(torch is imported by nothing else of the tutor).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tutor.core.errors import TutorError
from tutor.core.lesson import Entry, Head, Lesson
from tutor.core.spec import BIASES, GIVEN_KEYS, MAX_DIM, MAX_HEADS, MAX_TOKENS, WEIGHT_KEYS

MAX_PLACES = 8  # entries of more places are no longer worked by hand, and the loader's sums grow


@dataclass(frozen=True)
class FromArrays:
    """A lesson made from arrays: its YAML, the lesson, and how far rounding its entries to
    ``places`` moves the output (the largest difference from the unrounded arrays' output)."""

    text: str
    lesson: Lesson
    places: int
    drift: float  # max |output of the rounded lesson − output of the arrays as given|


def _entry(x: float, places: int) -> Entry:
    """x rounded to ``places`` decimals (half away from zero, from its exact binary value)."""
    import math

    import sympy

    from tutor.core.rounding import scaled_half_up

    if not math.isfinite(x):
        raise TutorError(f"an array holds {x}; a lesson's entries are finite numbers")
    n = scaled_half_up(sympy.Rational(x), places)
    q = 10**places
    g = math.gcd(n, q)
    return n // g, q // g


def _matrix(a: Any, name: str, places: int) -> tuple[tuple[Entry, ...], ...]:
    import numpy as np

    m = np.asarray(a, dtype=np.float64)
    if m.ndim == 1 and name.startswith("b_"):
        m = m[None, :]
    if m.ndim != 2 or not m.size:
        raise TutorError(f"{name} has shape {m.shape}; expected a matrix (a bias: one row)")
    if max(m.shape) > max(MAX_DIM, MAX_TOKENS):
        raise TutorError(f"{name} has shape {m.shape}; a lesson's matrices are small")
    return tuple(tuple(_entry(float(x), places) for x in row) for row in m)


def _heads_of(arrays: Mapping[str, Any]) -> list[str]:
    """The head suffixes: [""] for one head given as W_Q, W_K, W_V; [".1", ".2", …] else."""
    if "W_Q" in arrays:
        return [""]
    found = sorted(
        int(k.split(".", 1)[1]) for k in arrays if k.startswith("W_Q.") and k[4:].isdigit()
    )
    if not found:
        raise TutorError(
            "no W_Q among the arrays; name them X, W_Q, W_K, W_V (one head) or W_Q.1, W_K.1, "
            "W_V.1, W_Q.2, … (heads), with optional b_Q, b_K, b_V, W_O and b_O"
        )
    if found != list(range(1, len(found) + 1)) or len(found) > MAX_HEADS:
        raise TutorError(f"the heads are numbered {found}; expected 1 to at most {MAX_HEADS}")
    return [f".{h}" for h in found]


def lesson_from_arrays(
    arrays: Mapping[str, Any],
    tokens: Sequence[str],
    places: int = 4,
    name: str = "from-arrays",
    title: str | None = None,
    mask: str = "none",
) -> FromArrays:
    """A lesson from named arrays (see the module's words), each entry rounded to ``places``
    decimals; ``drift`` says how far that moves the output from the arrays' own (numpy,
    float64). Raises ``TutorError`` naming a missing or misshapen array."""
    import numpy as np

    from tutor.core.engine import derive
    from tutor.core.lessonfile import load_lesson_text
    from tutor.text.lessonyaml import lesson_yaml

    if not 0 <= places <= MAX_PLACES:
        raise TutorError(f"places is {places}; expected 0 to {MAX_PLACES}")
    if "X" not in arrays:
        raise TutorError("no X among the arrays; give the tokens' rows as X (N × d_model)")
    suffixes = _heads_of(arrays)
    heads = []
    for s in suffixes:
        missing = [k for k in WEIGHT_KEYS if k + s not in arrays]
        if missing:
            raise TutorError(f"{missing[0]}{s} is missing; every head needs W_Q, W_K and W_V")
        mats = {k: _matrix(arrays[k + s], k + s, places) for k in WEIGHT_KEYS}
        rows = {k: _matrix(arrays[k + s], k + s, places)[0] for k in BIASES if k + s in arrays}
        heads.append(Head(None, mats["W_Q"], mats["W_K"], mats["W_V"], **rows))
    several = suffixes != [""] or "W_O" in arrays
    lesson = Lesson(
        name=name,
        path=f"{name}.yaml",
        title=title or f"{name}: a layer's weights at {places} places",
        description=f"Made from arrays, every entry rounded to {places} decimal places.",
        tokens=tuple(tokens),
        X=_matrix(arrays["X"], "X", places),
        heads=tuple(heads),
        multi_head=several,
        W_O=_matrix(arrays["W_O"], "W_O", places) if "W_O" in arrays else None,
        b_O=_matrix(arrays["b_O"], "b_O", places)[0] if "b_O" in arrays else None,
        mask=mask,
        precision=places,
    )
    text = lesson_yaml(lesson, "tutor.lesson_from_arrays(...)", lesson.path, notes={})
    text = text.replace("notes:", "notes: {}", 1)  # (none: the mapping stays a mapping)
    made = load_lesson_text(text, lesson.path, name)  # the file as it will be read
    d = derive(made)
    last = d.steps[-1] if not made.multi_head else d.step("output" if made.W_O else "concat")
    got = np.array([[c.value for c in row] for row in last.cells])
    drift = float(np.max(np.abs(got - _reference(arrays, suffixes, mask))))
    return FromArrays(text, made, places, drift)


def _reference(arrays: Mapping[str, Any], suffixes: list[str], mask: str) -> Any:
    """The arrays' own output in float64, unrounded (what the rounded lesson is compared to)."""
    import numpy as np

    X = np.asarray(arrays["X"], dtype=np.float64)
    zs = []
    for s in suffixes:
        Q, K, V = (
            X @ np.asarray(arrays[w + s], dtype=np.float64)
            + np.asarray(arrays.get(b + s, 0.0), dtype=np.float64)
            for b, w in BIASES.items()
        )
        scaled = Q @ K.T / np.sqrt(K.shape[1])
        if mask == "causal":
            scaled = np.where(np.triu(np.ones_like(scaled, dtype=bool), k=1), -np.inf, scaled)
        e = np.exp(scaled - scaled.max(axis=1, keepdims=True))
        zs.append(e / e.sum(axis=1, keepdims=True) @ V)
    out = np.concatenate(zs, axis=1)
    if "W_O" in arrays:
        out = out @ np.asarray(arrays["W_O"], dtype=np.float64)
        out = out + np.asarray(arrays.get("b_O", 0.0), dtype=np.float64)
    return out


def lesson_from_torch(
    module: Any, x: Any, tokens: Sequence[str], places: int = 4, name: str = "from-torch"
) -> FromArrays:
    """A lesson from a ``torch.nn.MultiheadAttention`` (self-attention of ``x``: N × E, or with
    a batch of one, ``batch_first`` either way), with or without bias; ``drift`` is measured
    against the module's own output."""
    import numpy as np
    import torch  # (only here: an optional extra)

    if not isinstance(module, torch.nn.MultiheadAttention):
        raise TutorError(f"expected a torch.nn.MultiheadAttention, found {type(module).__name__}")
    if not module._qkv_same_embed_dim:
        raise TutorError("the module has separate kdim/vdim projections; self-attention only")
    E, H = module.embed_dim, module.num_heads
    d = E // H
    with torch.no_grad():
        t = torch.as_tensor(x, dtype=torch.float64)
        rows = t.reshape(-1, E) if t.dim() == 3 else t
        if rows.dim() != 2 or (t.dim() == 3 and 1 not in t.shape[:2]):
            raise TutorError(f"x has shape {tuple(t.shape)}; expected N × E or a batch of one")
        W = module.in_proj_weight.detach().double().numpy()
        b = None if module.in_proj_bias is None else module.in_proj_bias.detach().double().numpy()
        arrays: dict[str, Any] = {"X": rows.numpy()}
        for h in range(H):
            cols = slice(h * d, (h + 1) * d)
            for k, key in enumerate(GIVEN_KEYS):
                arrays[f"W_{key}.{h + 1}"] = W[k * E : (k + 1) * E].T[:, cols]
                if b is not None:
                    arrays[f"b_{key}.{h + 1}"] = b[k * E : (k + 1) * E][cols]
        arrays["W_O"] = module.out_proj.weight.detach().double().numpy().T
        if module.out_proj.bias is not None:
            arrays["b_O"] = module.out_proj.bias.detach().double().numpy()
        batched = rows[:, None, :] if not module.batch_first else rows[None]
        layer = copy.deepcopy(module).double()  # (the caller's module is left as it was)
        out, _ = layer(batched, batched, batched, need_weights=False)
        theirs = out[:, 0, :] if not module.batch_first else out[0]
    from tutor.core.engine import derive

    made = lesson_from_arrays(arrays, tokens, places, name)
    got = np.array([[c.value for c in row] for row in derive(made.lesson).step("output").cells])
    drift = float(np.max(np.abs(got - theirs.numpy())))
    return FromArrays(made.text, made.lesson, places, drift)


def lesson_from_npz(path: Any, tokens: Sequence[str] | None, places: int, name: str) -> FromArrays:
    """``attn-tutor new NAME --from FILE.npz``: the file's arrays (never pickled objects), rows
    named by ``tokens`` (default t1, t2, …)."""
    import zipfile

    import numpy as np

    try:
        with np.load(path, allow_pickle=False) as npz:
            arrays = {k: npz[k] for k in npz.files}
    except OSError as err:
        raise TutorError(f"cannot read {path}: {err.strerror or err}") from None
    except (ValueError, zipfile.BadZipFile):
        raise TutorError(
            f"cannot read {path}: it is not a NumPy .npz of plain arrays (numpy.savez makes one)"
        ) from None
    if "X" not in arrays:
        raise TutorError(
            f"{path} has no array X; its arrays: {', '.join(sorted(arrays)) or 'none'}"
        )
    n = len(arrays["X"])
    names = list(tokens) if tokens is not None else [f"t{i}" for i in range(1, n + 1)]
    if len(names) != n:
        raise TutorError(f"--tokens gives {len(names)} words, but X in {path} has {n} rows")
    return lesson_from_arrays(arrays, names, places, name)
