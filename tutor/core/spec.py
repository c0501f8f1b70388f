"""The lesson format's names and limits, in one import-free module.

``attn-tutor schema`` builds the JSON Schema from these without loading YAML or sympy.
"""

from tutor.core import kinds

MAX_FILE_BYTES = 1024 * 1024
# A lesson is worked by hand: a long sentence of tokens, vectors short enough to dot by hand, a
# few heads. Every command on the largest such lesson runs in seconds (bench/bench.py --limits).
MAX_TOKENS = 32
MAX_DIM = 16  # d_model, d_k, d_v, W_O's width, and W_O's height (heads × d_v)
MAX_HEADS = 4
# values (numbers, words, lists, keys) in one file: the largest legal lesson has about 4,000.
# Counted as the file is read, so a megabyte of entries is refused before it is all parsed.
MAX_VALUES = 20_000
# digits of the common denominator of one matrix's entries: twelfths and 30 decimal places fit;
# a dozen different 15-digit denominators made every product thousands of digits long
MAX_DENOMINATOR_DIGITS = 40
MAX_ERRORS = 50  # errors reported per lesson file; then "stopped after 50 errors"
MAX_DEPTH = 16
MAX_TOKEN_CHARS = 40
MAX_PRECISION = 10  # decimals shown: a lesson's precision, walk --precision, a cell's places
# control characters a lesson's words may not contain (a regex class body): C0 but tab and line
# feed, DEL and C1. An escape sequence in a title would reach the terminal, or an SVG, raw.
CONTROL_CHARS = r"\x00-\x08\x0b-\x1f\x7f-\x9f"

# every step a lesson can have, and the decoding step's (next:; tutor.core.decode): tutor.core.kinds
STEP_NAMES, NEXT_STEP_NAMES = kinds.STEP_NAMES, kinds.NEXT_STEP_NAMES
# the steps a quiz (and a course's stage) can ask about, in the order they are computed
QUIZ_STEPS = kinds.QUIZ_STEPS
TOP_KEYS = (
    "version",
    "title",
    "description",
    "tokens",
    "X",
    "E",
    "P",
    "positions",
    "theta",
    "theta_unit",
    "source",
    "X_src",
    "W_Q",
    "W_K",
    "W_V",
    "Q",
    "K",
    "V",
    "heads",
    "W_O",
    "b_Q",
    "b_K",
    "b_V",
    "b_O",
    "mask",
    "scale",
    "precision",
    "notes",
    "quiz",
    "focus",
    "kv_groups",
    "kv_heads",
    "layers",
    "next",
    "layout",
    "points",
    "variant",
)
# a head's learned matrices, and the three a lesson gives instead (tutor.core.givenqkv)
WEIGHT_KEYS = ("W_Q", "W_K", "W_V")
GIVEN_KEYS = ("Q", "K", "V")
# keys of the X-and-W lesson that a lesson with Q, K, V given has no use for
NOT_WITH_GIVEN = ("X", "E", "P", *WEIGHT_KEYS, "theta", "theta_unit", "X_src", "kv_heads")
# biases (issue 41): one row each, added to every row of the product of X and the W it names
BIASES = {"b_Q": "W_Q", "b_K": "W_K", "b_V": "W_V"}
HEAD_KEYS = ("name", *WEIGHT_KEYS, "focus", *BIASES)
# a head of a lesson that gives Q, K and V (tutor.core.givenqkv) instead of X and the W's
GIVEN_HEAD_KEYS = ("name", *GIVEN_KEYS, "focus")
# the steps a student fills on a sheet, and so the steps ``points:`` may name; the decoding
# step's (next:) too: x_new is given and the caches are read, not worked (tutor.core.kinds)
FILLED_STEPS, FILLED_NEXT_STEPS = kinds.FILLED_STEPS, kinds.FILLED_NEXT_STEPS
MAX_STEP_POINTS = 1000
VARIANT_KEYS = ("id", "of", "student", "student_id")
QUIZ_KEYS = ("steps", "count")
# grouped heads: with kv_groups, each entry of heads gives only name, W_Q (and its own focus),
# and kv_heads gives one W_K, W_V per group; query head h reads group
# (h − 1) // (heads / kv_groups) + 1
QUERY_HEAD_KEYS = ("name", "W_Q", "b_Q", "focus")
KV_HEAD_KEYS = ("W_K", "W_V", "b_K", "b_V")
# layers: how many layers the lesson's attention stands for, to count K/V weights and the KV
# cache of a whole model (a 2024 model has about 30 to 130); the arithmetic itself is one layer
MAX_LAYERS = 1000
NEXT_KEYS = ("token", "x")  # one decoding step: the next token and its row of X
LAYOUTS = ("rows", "columns")  # how matrices are shown: tokens as rows, or as columns
MASKS = ("none", "causal")
# what the scores are divided by before the softmax (issue 41): √d_k (the default), nothing (the
# softmax of the raw scores), √d_model, or a positive number the lesson gives (``scale: 8``)
SCALES = ("sqrt_d_k", "none", "sqrt_d_model")
# how token order enters (issue 17): not at all, added to the embeddings E (given P or the
# sin/cos table), or by rotating Q and K (RoPE)
POSITIONS = ("none", "given", "sinusoidal", "rope")
# RoPE angles a student can work exactly: cos and sin of multiples of these (degrees) are
# 0, ±1/2, ±√2/2, ±√3/2, ±1
FRIENDLY_DEGREES = (30, 45)
# how RoPE's theta entries are read when they carry no unit of their own ("1 rad", "60°")
THETA_UNITS = ("degrees", "radians")

# Which lesson features combine (issue 24): ONE table, read by the loader (which refuses a listed
# pair at the later feature's key), by walk's --next-token/--x (the same rule) and by check (which
# never advises a key this table refuses). Every pair not listed works, and
# tests/test_combinations.py cross-checks each against numpy. A feature, and the key it is at:
FEATURES = {
    "positions": "positions",  # E + P (given or sinusoidal) or RoPE
    "rope": "positions",  # positions: rope
    "source": "source",  # a source sentence: cross-attention
    "causal": "mask",  # mask: causal
    "grouped": "kv_groups",
    "heads": "heads",
    "W_O": "W_O",
    "next": "next",  # one decoding step with the KV cache
    "columns": "layout",  # layout: columns
    "qkv": "Q",  # Q, K and V given: the lesson starts at the scores
    "bias": "b_Q",  # biases (b_Q, b_K, b_V, b_O): X·W + b
}
# (earlier, later): why the two do not combine; reported at the later one's key
REFUSED_COMBINATIONS = {
    ("source", "causal"): (
        "mask: causal hides the tokens after each token of one sentence; with a source sentence "
        "(cross-attention) every target token may see every source token, so remove the mask or "
        "the source"
    ),
    ("source", "positions"): (
        "positions and a source sentence (cross-attention) are not combined in one lesson yet; "
        "keep one of them"
    ),
    ("source", "next"): (
        "next: (one decoding step) and a source sentence (cross-attention) are not combined in "
        "one lesson yet: the new target token would read the source's keys, not a cache of its "
        "own sentence's; keep one of them"
    ),
    ("rope", "next"): (
        "next: (one decoding step) and positions: rope are not combined in one lesson yet: the "
        "new token's query and key would be turned by its position, a step the decoding row "
        "does not have; keep one of them"
    ),
    ("qkv", "positions"): (
        "Q, K and V are given, so there is no X to add positions to, and RoPE would turn the "
        "given Q and K before the scores, a step such a lesson does not have yet; give X and "
        "the W's for positions, or remove positions"
    ),
    ("qkv", "source"): (
        "Q, K and V are given: cross-attention's keys and values come from a source sentence's "
        "X_src, which such a lesson does not have; give K and V for the source tokens as X and "
        "W's instead, or remove source"
    ),
    ("qkv", "next"): (
        "next: (one decoding step) makes the new token's q, k and v from its x and the W's, "
        "which a lesson with Q, K and V given does not have; give X and the W's, or remove next"
    ),
    ("qkv", "bias"): (
        "Q, K and V are given, so there is no X · W for a bias to be added to; add the bias "
        "to the given Q, K or V, or give X and the W's"
    ),
    ("qkv", "grouped"): (
        "kv_groups shares a W_K and W_V between query heads; with Q, K and V given, give each "
        "head its K and V (the same K and V in the heads of a group), and remove kv_groups"
    ),
}


def refused(features: set[str] | frozenset[str]) -> list[tuple[str, str, str]]:
    """The pairs of ``features`` that do not combine: (earlier, later, why), in table order."""
    return [(a, b, why) for (a, b), why in REFUSED_COMBINATIONS.items() if {a, b} <= features]
