"""An independent float64 implementation of attention, written with numpy only.

It shares nothing with the engine but the lesson loader's parsed entries, so when the two agree
the exact engine is right (and when they do not, one of them is wrong).
"""

from __future__ import annotations

import numpy as np

from tutor.core.lesson import Lesson


def as_array(m) -> np.ndarray:  # type: ignore[no-untyped-def]
    return np.array([[p / q for p, q in row] for row in m], dtype=np.float64)


def sinusoidal(n: int, d: int) -> np.ndarray:
    """The original Transformer's position table, the textbook way (positions from 0)."""
    pos = np.arange(n, dtype=np.float64)[:, None]
    i = np.arange(d)[None, :] // 2
    angle = pos / np.power(10000.0, 2 * i / d)
    return np.where(np.arange(d)[None, :] % 2 == 0, np.sin(angle), np.cos(angle))


def rope(M: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """Rotary embedding the textbook way: row m's pair (2i, 2i+1) turned by m · θ_i (radians),
    written as complex numbers: (a + bi) · e^(i m θ)."""
    z = M[:, 0::2] + 1j * M[:, 1::2]
    m = np.arange(M.shape[0], dtype=np.float64)[:, None]
    turned = z * np.exp(1j * m * theta[None, :])
    out = np.empty_like(M)
    out[:, 0::2], out[:, 1::2] = turned.real, turned.imag
    return out


def rope_theta(lesson: Lesson, d_k: int) -> np.ndarray:
    """θ per pair in radians: the lesson's degrees, or 10000^(−2i/d_k)."""
    if lesson.theta is None:
        return np.power(10000.0, -2 * np.arange(d_k // 2) / d_k)
    units = lesson.theta_units or ("deg",) * len(lesson.theta)
    per_radian = {"deg": np.pi / 180, "rad": 1.0}
    return np.array([p / q * per_radian[u] for (p, q), u in zip(lesson.theta, units, strict=True)])


def attention(lesson: Lesson) -> dict[tuple[str, int | None], np.ndarray]:
    """Every step, keyed by (name, head); head is None for single-head lessons."""
    X = as_array(lesson.X)
    out: dict[tuple[str, int | None], np.ndarray] = {}
    if lesson.positions in ("given", "sinusoidal"):  # the lesson's X is E: X = E + P
        P = as_array(lesson.P) if lesson.P is not None else sinusoidal(*X.shape)
        out[("E", None)], out[("P", None)] = X, P
        X = X + P
    if not lesson.qkv:  # given Q, K, V (held as the W's, X = I): no X to compare
        out[("X", None)] = X
    S = X  # keys and values read the source sentence in cross-attention
    if lesson.X_src is not None:
        S = out[("X_src", None)] = as_array(lesson.X_src)
    Zs = []
    for n, head in enumerate(lesson.heads, 1):
        h = n if lesson.multi_head else None
        Q, K, V = X @ as_array(head.W_Q), S @ as_array(head.W_K), S @ as_array(head.W_V)
        Q, K, V = Q + bias(head.b_Q), K + bias(head.b_K), V + bias(head.b_V)  # (issue 41)
        if lesson.qkv:  # the lesson gives them: numpy takes them as they are, no X·W
            Q, K, V = as_array(head.W_Q), as_array(head.W_K), as_array(head.W_V)
        if lesson.positions == "rope":
            theta = rope_theta(lesson, Q.shape[1])
            out[("Q_rot", h)], out[("K_rot", h)] = Q, K = rope(Q, theta), rope(K, theta)
        scores = Q @ K.T
        scaled = scores / np.sqrt(K.shape[1])
        logits = scaled
        if lesson.mask == "causal":
            logits = np.where(np.triu(np.ones_like(scaled, dtype=bool), k=1), -np.inf, scaled)
            out[("masked", h)] = logits
        shifted = np.exp(logits - logits.max(axis=1, keepdims=True))
        weights = shifted / shifted.sum(axis=1, keepdims=True)
        Z = weights @ V
        out.update(
            {
                ("Q", h): as_array(head.W_Q)
                if lesson.qkv
                else X @ as_array(head.W_Q) + bias(head.b_Q),
                ("K", h): as_array(head.W_K)
                if lesson.qkv
                else S @ as_array(head.W_K) + bias(head.b_K),
                ("V", h): V,
                ("scores", h): scores,
                ("scaled", h): scaled,
                ("weights", h): weights,
                ("Z", h): Z,
            }
        )
        Zs.append(Z)
        if lesson.kv_groups is not None and (n - 1) % (len(lesson.heads) // lesson.kv_groups):
            del out[("K", h)], out[("V", h)]  # grouped: only a group's first head has K and V
            out.pop(("K_rot", h), None)  # (and its turned keys, with RoPE)
    if lesson.multi_head:
        concat = np.concatenate(Zs, axis=1)
        out[("concat", None)] = concat
        if lesson.W_O is not None:
            out[("output", None)] = concat @ as_array(lesson.W_O) + bias(lesson.b_O)
    return out


def bias(row) -> np.ndarray | float:  # type: ignore[no-untyped-def]
    """A bias row as a (1, d) array to add to every row; 0 when there is none."""
    return 0.0 if row is None else as_array((row,))


def attention_mp(lesson: Lesson, dps: int = 600) -> dict[tuple[str, int | None], list[list]]:  # type: ignore[type-arg]
    """Every step in mpmath at ``dps`` digits (600 by default: the largest legal scores have
    about 250 digits, so their differences keep 350), for lessons whose numbers float64
    cannot hold apart (scores 10^60 + {1, 2, 3}). Masked scores are ``-inf``.

    Independent of the engine too: plain lists and mpmath, the textbook formula with the row's
    largest score subtracted, no exact forms.
    """
    import mpmath

    mp = mpmath.MPContext()
    mp.dps = dps

    def matrix(m) -> list[list]:  # type: ignore[no-untyped-def, type-arg]
        return [[mp.mpf(p) / q for p, q in row] for row in m]

    def transpose(m) -> list[list]:  # type: ignore[no-untyped-def, type-arg]
        return [list(col) for col in zip(*m, strict=True)]

    def mul(a, b) -> list[list]:  # type: ignore[no-untyped-def, type-arg]
        cols = transpose(b)
        return [[mp.fsum(x * y for x, y in zip(r, c, strict=True)) for c in cols] for r in a]

    X = matrix(lesson.X)
    out: dict[tuple[str, int | None], list[list]] = {("X", None): X}  # type: ignore[type-arg]
    Zs = []
    for n, head in enumerate(lesson.heads, 1):
        h = n if lesson.multi_head else None
        Q, K, V = (mul(X, matrix(w)) for w in (head.W_Q, head.W_K, head.W_V))
        scores = mul(Q, transpose(K))
        root = mp.sqrt(len(head.W_K[0]))
        scaled = [[s / root for s in row] for row in scores]
        logits = scaled
        if lesson.mask == "causal":
            logits = [
                [x if j <= i else mp.ninf for j, x in enumerate(r)] for i, r in enumerate(scaled)
            ]
            out[("masked", h)] = logits
        weights = []
        for row in logits:
            top = max(row)
            e = [mp.exp(x - top) for x in row]
            weights.append([v / mp.fsum(e) for v in e])
        Z = mul(weights, V)
        out.update({("Q", h): Q, ("K", h): K, ("V", h): V, ("scores", h): scores})
        out.update({("scaled", h): scaled, ("weights", h): weights, ("Z", h): Z})
        Zs.append(Z)
    if lesson.multi_head:
        concat = [[x for Z in Zs for x in Z[i]] for i in range(len(X))]
        out[("concat", None)] = concat
        if lesson.W_O is not None:
            out[("output", None)] = mul(concat, matrix(lesson.W_O))
    return out


def _numbers(m) -> np.ndarray:  # type: ignore[no-untyped-def]
    """A matrix as YAML's safe_load gives it (ints, "p/q" strings, decimals as text)."""
    from fractions import Fraction  # the test side only: exact text to float64

    return np.array([[float(Fraction(str(x))) for x in row] for row in m], dtype=np.float64)


def grouped_attention(text: str) -> dict[tuple[str, int], np.ndarray]:
    """Grouped-query attention straight from a lesson's YAML text (read with PyYAML, not with
    the tutor's loader): query head h reads key/value head h // (H / G), as
    ``repeat_interleave`` does in PyTorch. Keyed by (name, 1-based head); K and V by group."""
    import yaml

    doc = yaml.safe_load(text)
    X = _numbers(doc["X"])
    H, G = len(doc["heads"]), doc["kv_groups"]
    Ks = [X @ _numbers(kv["W_K"]) for kv in doc["kv_heads"]]
    Vs = [X @ _numbers(kv["W_V"]) for kv in doc["kv_heads"]]
    out: dict[tuple[str, int], np.ndarray] = {}
    Zs = []
    for h, head in enumerate(doc["heads"]):
        g = h // (H // G)
        Q, K, V = X @ _numbers(head["W_Q"]), Ks[g], Vs[g]
        scaled = Q @ K.T / np.sqrt(K.shape[1])
        if doc.get("mask") == "causal":
            scaled = np.where(np.triu(np.ones_like(scaled, dtype=bool), k=1), -np.inf, scaled)
        e = np.exp(scaled - scaled.max(axis=1, keepdims=True))
        weights = e / e.sum(axis=1, keepdims=True)
        out |= {("Q", h + 1): Q, ("weights", h + 1): weights, ("Z", h + 1): weights @ V}
        out |= {("K", g + 1): K, ("V", g + 1): V}
        Zs.append(weights @ V)
    out[("concat", 0)] = np.concatenate(Zs, axis=1)
    if "W_O" in doc:
        out[("output", 0)] = out[("concat", 0)] @ _numbers(doc["W_O"])
    return out
