"""The named slips the judge recognises, in a few words each and with the right method as a
one-line reminder: what ``progress`` shows beside how often each happened."""

from __future__ import annotations

# slip id -> (what happened, the right method)
REMINDERS = {
    "used-W_Q": ("used W_Q in place of another W", "Q uses W_Q, K uses W_K, V uses W_V"),
    "used-W_K": ("used W_K in place of another W", "Q uses W_Q, K uses W_K, V uses W_V"),
    "used-W_V": ("used W_V in place of another W", "Q uses W_Q, K uses W_K, V uses W_V"),
    "row-of-W": ("a row of W, not a column", "a row of X · a column of W"),
    "query-query": ("query · query", "a score is a query · a key"),
    "key-key": ("key · key", "a score is a query · a key"),
    "swapped": ("row and column swapped", "the row's query · the column's key"),
    "k-not-transposed": ("times K, not Kᵀ", "a score is a row of Q · a row of K"),
    "not-scaled": ("the raw score, not scaled", "divide each score by √d_k"),
    "divided-by-dk": ("divided by d_k", "divide by √d_k, its square root"),
    "dmodel-for-dk": ("divided by √d_model", "divide by √d_k, the length of a key"),
    "dv-for-dk": ("divided by √d_v", "divide by √d_k, the length of a key"),
    "usual-scale": ("divided by √d_k", "divide by the lesson's own scale"),
    "forgot-bias": ("forgot the bias", "X · W + b: add the bias row to every row"),
    "root-too-early": ("√d_k rounded too early", "carry √d_k to the lesson's places or more"),
    "typed-scaled": ("the score written already scaled", "a score is the query · the key"),
    "no-exp": ("x / Σx, without e^", "softmax is e^x over the row's total of e^x"),
    "softmax-column": ("softmax down a column", "softmax runs along each row"),
    "unnormalised": ("e^x alone", "divide e^x by the row's total of e^x"),
    "softmax-of-raw-scores": ("softmax of the raw scores", "take softmax of the scaled scores"),
    "inf-as-zero": ("−∞ taken as 0", "e^−∞ is 0: a hidden score adds nothing"),
    "forgot-mask": ("forgot the causal mask", "scores above the diagonal are −∞"),
    "mask-after-softmax": ("masked after the softmax", "mask first, then softmax"),
    "wrong-V-column": ("the wrong column of V", "Z[row, c] blends column c of V"),
    "weights-column": ("a column of the weights", "blend with the row's weights"),
    "truncated": ("cut off, not rounded", "round the last digit half up"),
    # grouped heads and the KV cache
    "other-group-K": ("read another group's K", "a query head reads its own group's K"),
    "other-group-V": ("read another group's V", "a query head reads its own group's V"),
    "old-query": ("the last cached token's query", "the new row's query is q_new"),
    "left-out-itself": ("left the new token out", "the new token attends to itself too"),
    # positions and cross-attention
    "forgot-position": ("left out the position", "X = E + P: add the position's row"),
    "wrong-position": ("another token's position", "add the position of the token's own place"),
    "rotated-wrong-position": ("rotated by another position", "rotate by the token's own place"),
    "not-rotated": ("did not rotate", "rotate Q and K before the scores"),
    "rotated-backwards": (
        "rotated the wrong way",
        "(x, y) → (x cos θ − y sin θ, x sin θ + y cos θ)",
    ),
    "target-keys": ("keys from the target sentence", "keys and values come from the source"),
    "target-values": ("values from the target sentence", "keys and values come from the source"),
}


def reminder(slip: str, count: int) -> str:
    """``3 times: softmax down a column; softmax runs along each row``; a tie of slips that
    explain one answer equally (``a|b``, one slip): ``once: perhaps … or …``."""
    times = "once" if count == 1 else "twice" if count == 2 else f"{count} times"
    if "|" in slip:
        options = [REMINDERS.get(s, (s, ""))[0] for s in slip.split("|")]
        return f"{times}: perhaps {' or '.join(options)}"
    what, right = REMINDERS.get(slip, (slip, ""))
    return f"{times}: {what}" + (f"; {right}" if right else "")
