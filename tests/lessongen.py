"""Random lesson files for tests and benchmarks (seeded, so every run sees the same ones)."""

from __future__ import annotations

import random

WORDS = ["the", "cat", "sat", "on", "mat", "dog", "saw", "a", "bird", "it", "ran", "far"]


# entries at the limits: the extremes of magnitude, and fractions whose denominators have 15
# digits (two per lesson, so a matrix's common denominator stays within its 40 digits)
EXTREMES = ("1e30", "-1e30", "1e-30", "-1e-30")
LONG_DENOMINATORS = (100000000000031, 999999999999989)


def entry(rng: random.Random, kinds: str = "idf") -> str:
    """An integer, a decimal or a quoted fraction, as YAML text; ``h``: an extreme (1e30,
    1e-30), ``l``: a fraction of a 15-digit denominator."""
    kind = rng.choice(kinds)
    if kind == "h":
        return rng.choice(EXTREMES)
    if kind == "l":
        return f'"{rng.randint(-(10**12), 10**12)}/{rng.choice(LONG_DENOMINATORS)}"'
    if kind == "i":
        return str(rng.randint(-3, 3))
    if kind == "d":
        return f"{rng.randint(-30, 30) / 10:.1f}"
    den = rng.randint(1, 7)
    return f'"{rng.randint(-6, 6)}/{den}"'


def matrix(rng: random.Random, rows: int, cols: int, kinds: str = "idf") -> str:
    return (
        "["
        + ", ".join(
            "[" + ", ".join(entry(rng, kinds) for _ in range(cols)) + "]" for _ in range(rows)
        )
        + "]"
    )


def _sentence(
    rng: random.Random,
    n: int,
    d_model: int,
    d_k: int,
    kinds: str,
    positions: str = "none",
    source: int = 0,
    causal: bool = False,
) -> list[str]:
    """A lesson's lines before its weights: title, tokens, X (or E and P), positions, a source
    sentence and the mask."""
    tokens = [rng.choice(WORDS) for _ in range(n)]
    x_key = "E" if positions in ("given", "sinusoidal") else "X"
    lines = [
        "title: Random lesson",
        f"tokens: [{', '.join(tokens)}]",
        f"{x_key}: {matrix(rng, n, d_model, kinds)}",
    ]
    if positions == "given":
        lines.append(f"P: {matrix(rng, n, d_model, kinds)}")
    elif positions == "sinusoidal":
        lines.append("positions: sinusoidal")
    elif positions == "rope":
        lines.append("positions: rope")
        if rng.random() < 0.7:  # else the original angles, 10000^(-2i/d_k) radians
            angles = [
                rng.choice(["90", "60", "30", "45", "120", "-60", "22.5"]) for _ in range(d_k // 2)
            ]
            lines.append(f"theta: [{', '.join(angles)}]")
    if source:
        words = [rng.choice(WORDS) for _ in range(source)]
        lines.append(f"source: [{', '.join(words)}]")
        lines.append(f"X_src: {matrix(rng, source, d_model, kinds)}")
    if causal:
        lines.append("mask: causal")
    return lines


def lesson_text(
    rng: random.Random,
    n: int,
    d_model: int,
    d_k: int,
    d_v: int,
    kinds: str = "idf",
    heads: int = 0,
    causal: bool = False,
    w_o: bool = False,
    d_out: int | None = None,
    positions: str = "none",
    source: int = 0,
    bias: bool = False,
) -> str:
    """A valid lesson; ``heads`` > 0 gives a multi-head lesson (``d_out``: W_O's width, else
    1 to 3). ``positions`` (given, sinusoidal, rope: d_k must then be even) and ``source``
    (the length of a source sentence, for cross-attention) add issue 17's keys."""
    lines = _sentence(rng, n, d_model, d_k, kinds, positions, source, causal)
    shapes = {"W_Q": (d_model, d_k), "W_K": (d_model, d_k), "W_V": (d_model, d_v)}
    lines += _three(rng, shapes, heads, kinds, bias)
    if heads and w_o:
        width = d_out if d_out is not None else rng.randint(1, 3)
        lines.append(f"W_O: {matrix(rng, heads * d_v, width, kinds)}")
        if bias:
            lines.append(f"b_O: {row(rng, width, kinds)}")
    return "\n".join(lines) + "\n"


def row(rng: random.Random, cols: int, kinds: str = "idf") -> str:
    """One row of numbers (a bias)."""
    return "[" + ", ".join(entry(rng, kinds) for _ in range(cols)) + "]"


def _three(
    rng: random.Random,
    shapes: dict[str, tuple[int, int]],
    heads: int,
    kinds: str,
    bias: bool = False,
) -> list[str]:
    """W_Q, W_K, W_V (or Q, K, V) of the given shapes: at the top level, or once per head;
    with ``bias``, b_Q, b_K, b_V after them (issue 41)."""
    biases = {"b_" + key[-1]: c for key, (_, c) in shapes.items()} if bias else {}
    if not heads:
        lines = [f"{key}: {matrix(rng, r, c, kinds)}" for key, (r, c) in shapes.items()]
        return lines + [f"{key}: {row(rng, c, kinds)}" for key, c in biases.items()]
    lines = ["heads:"]
    for _ in range(heads):
        lines += [
            f"{'    ' if k else '  - '}{key}: {matrix(rng, r, c, kinds)}"
            for k, (key, (r, c)) in enumerate(shapes.items())
        ]
        lines += [f"    {key}: {row(rng, c, kinds)}" for key, c in biases.items()]
    return lines


def grouped_lesson_text(
    rng: random.Random,
    n: int,
    d_model: int,
    d_k: int,
    d_v: int,
    heads: int,
    groups: int,
    kinds: str = "idf",
    causal: bool = False,
    w_o: bool = False,
    positions: str = "none",
    source: int = 0,
    bias: bool = False,
) -> str:
    """A valid lesson with grouped heads: ``heads`` query heads (W_Q only) sharing ``groups``
    key/value heads (W_K, W_V); ``positions`` and ``source`` as for ``lesson_text``."""
    lines = _sentence(rng, n, d_model, d_k, kinds, positions, source, causal)
    lines += [
        f"kv_groups: {groups}",
        "heads:",
        *(
            f"  - W_Q: {matrix(rng, d_model, d_k, kinds)}"
            + (f"\n    b_Q: {row(rng, d_k, kinds)}" if bias else "")
            for _ in range(heads)
        ),
        "kv_heads:",
    ]
    for _ in range(groups):
        lines += [
            f"  - W_K: {matrix(rng, d_model, d_k, kinds)}",
            f"    W_V: {matrix(rng, d_model, d_v, kinds)}",
        ]
        if bias:
            lines += [f"    b_K: {row(rng, d_k, kinds)}", f"    b_V: {row(rng, d_v, kinds)}"]
    if w_o:
        width = rng.randint(1, 3)
        lines.append(f"W_O: {matrix(rng, heads * d_v, width, kinds)}")
        if bias:
            lines.append(f"b_O: {row(rng, width, kinds)}")
    return "\n".join(lines) + "\n"


def qkv_lesson_text(
    rng: random.Random,
    n: int,
    d_k: int,
    d_v: int,
    kinds: str = "idf",
    heads: int = 0,
    causal: bool = False,
    w_o: bool = False,
) -> str:
    """A valid lesson that gives Q, K and V (issue 28): at the top level, or per head."""
    tokens = [rng.choice(WORDS) for _ in range(n)]
    lines = ["title: Random lesson, Q, K, V given", f"tokens: [{', '.join(tokens)}]"]
    if causal:
        lines.append("mask: causal")
    lines += _three(rng, {"Q": (n, d_k), "K": (n, d_k), "V": (n, d_v)}, heads, kinds)
    if heads and w_o:
        lines.append(f"W_O: {matrix(rng, heads * d_v, rng.randint(1, 3), kinds)}")
    return "\n".join(lines) + "\n"


def next_entry(rng: random.Random, d_model: int, kinds: str = "idf") -> str:
    """A ``next:`` entry: one more token and its row of X."""
    return f"next: {{token: {rng.choice(WORDS)}, x: {matrix(rng, 1, d_model, kinds)[1:-1]}}}\n"


def next_list(rng: random.Random, d_model: int, count: int, kinds: str = "idf") -> str:
    """``next:`` as a list: ``count`` new tokens, each with its row of X."""
    items = [
        f"  - {{token: {rng.choice(WORDS)}, x: {matrix(rng, 1, d_model, kinds)[1:-1]}}}\n"
        for _ in range(count)
    ]
    return "next:\n" + "".join(items)


def features_text(
    rng: random.Random,
    features: set[str],
    n: int,
    d_model: int,
    d_k: int,
    d_v: int,
    heads: int,
    groups: int,
    kinds: str = "idf",
    positions: str = "none",
    source: int = 0,
    d_out: int | None = None,
) -> str:
    """A valid lesson with ``features`` (``spec.FEATURES`` names, their implied ones included:
    W_O and grouped need heads): ``heads`` heads when it has heads, in ``groups`` key/value
    groups when grouped; ``positions`` and ``source`` as for ``lesson_text``."""
    common = dict(
        kinds=kinds,
        causal="causal" in features,
        w_o="W_O" in features,
        positions=positions,
        source=source,
        bias="bias" in features,
    )
    if "grouped" in features:
        text = grouped_lesson_text(rng, n, d_model, d_k, d_v, heads, groups, **common)  # type: ignore[arg-type]
    else:
        text = lesson_text(
            rng,
            n,
            d_model,
            d_k,
            d_v,
            heads=heads if "heads" in features else 0,
            d_out=d_out,
            **common,  # type: ignore[arg-type]
        )
    if "next" in features:
        text += next_entry(rng, d_model, kinds)
    if "columns" in features:
        text += "layout: columns\n"
    return text


KINDS = (
    *("single", "causal", "heads", "given", "sinusoidal", "rope"),
    *("cross", "grouped", "next", "columns", "bias"),
)


def kind_text(rng: random.Random, kind: str, precision: int = 2) -> str:
    """A random valid lesson of one kind (``KINDS``), at ``precision`` places."""
    n = rng.randint(2, 3)
    d_model = rng.randint(2, 3)
    d_k = 2 if kind == "rope" else rng.randint(1, 3)
    d_v = rng.randint(1, 2)
    kinds = rng.choice(("i", "id", "idf"))
    if kind == "grouped":
        text = grouped_lesson_text(rng, n, d_model, d_k, d_v, 4, 2, kinds, w_o=True)
    else:
        text = lesson_text(
            rng,
            n,
            d_model,
            d_k,
            d_v,
            kinds,
            heads=2 if kind in ("heads", "bias") else 0,
            causal=kind in ("causal", "heads") or (kind == "next" and rng.random() < 0.5),
            w_o=kind in ("heads", "bias"),
            positions=kind if kind in ("given", "sinusoidal", "rope") else "none",
            source=rng.randint(2, 3) if kind == "cross" else 0,
            bias=kind == "bias",
        )
        if kind == "next":
            text += next_entry(rng, d_model, kinds)
        if kind == "columns":
            text += "layout: columns\n"
    return text + f"precision: {precision}\n"
