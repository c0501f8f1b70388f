"""The JSON Schema (draft 2020-12) of the lesson format, for editors that validate YAML.

A static dict: printing it needs neither sympy nor numpy. It says what JSON Schema can say
(keys, types, entries, ranges); what it cannot (W_Q needs as many rows as X has columns, rows of
equal length, one token per row of X) only ``attn-tutor check`` finds.
"""

from __future__ import annotations

import json

from tutor.core.spec import (
    CONTROL_CHARS,
    FILLED_NEXT_STEPS,
    FILLED_STEPS,
    GIVEN_KEYS,
    KV_HEAD_KEYS,
    LAYOUTS,
    MASKS,
    MAX_DIM,
    MAX_HEADS,
    MAX_LAYERS,
    MAX_STEP_POINTS,
    MAX_TOKEN_CHARS,
    MAX_TOKENS,
    NOT_WITH_GIVEN,
    POSITIONS,
    SCALES,
    STEP_NAMES,
    THETA_UNITS,
    VARIANT_KEYS,
    WEIGHT_KEYS,
)

# the written forms tutor.core.numbers.parse_entry reads: 3, -0.25, 1e1, .5, "2/7" (never "1/0")
ENTRY_PATTERN = (
    r"^\s*[+\-\u2212]?(?:"
    r"\d+\s*/\s*0*[1-9]\d*"  # a fraction
    r"|\d+(?:\.\d*)?(?:[eE][+\-]?\d+)?"  # an integer or a decimal
    r"|\.\d+(?:[eE][+\-]?\d+)?"  # .5
    r")\s*$"
)
# an angle of theta with its unit (tutor.core.lessonfile._ANGLE): 1 rad, 0.5 radians, 57.5°
ANGLE_PATTERN = ENTRY_PATTERN.removesuffix(r"\s*$") + r"\s*(?:rad|radians?|deg|degrees?|°)\s*$"
# a token: no [ ] , # or control characters, 1 to 40 characters once trimmed
_T = r"[^\s\[\],#\x00-\x1f\x7f]"  # a character a token may start or end with
TOKEN_PATTERN = rf"^\s*{_T}(?:[^\[\],#\x00-\x1f\x7f]{{0,{MAX_TOKEN_CHARS - 2}}}{_T})?\s*$"

# focus: a token, or a cell whose row is a token: weights[it, cake], Q[it, 2]
FOCUS = {
    "description": "The cell the walk works by default: a token (its row), or a cell like "
    "weights[it, cake] (row a token; column a token for scores, scaled, masked and weights, "
    "else a column number). Without it the walk picks the most decisive row.",
    "type": ["string", "number", "boolean"],
    "pattern": r"^\s*(?:[A-Za-z_]\w*\s*\[[^\[\],]+,[^\[\],]+\]|[^\[\],]+)\s*$",
}

# YAML reads `title: 2024` or `name: yes` as a number or a boolean; the loader takes the text
SCALAR = {"type": ["string", "number", "boolean"]}
# a lesson's words (description, notes): no control characters but \t and \n
NO_CONTROL = f"^[^{CONTROL_CHARS}]*$"
TEXT = {**SCALAR, "pattern": NO_CONTROL}
# a title or a head's name: the same, on one line (blanks around it are dropped)
ONE_LINE = rf"^[ \t\n]*[^{CONTROL_CHARS}\n\u2028\u2029]*[ \t\n]*$"


def _row(description: str | None = None) -> dict:
    """One row of numbers (a bias, issue 41; a matrix's row without a description)."""
    row = {"type": "array", "minItems": 1, "maxItems": MAX_DIM, "items": {"$ref": "#/$defs/entry"}}
    return row if description is None else {"description": description, **row}


# biases (issue 41): one row each, added to every row of a product
_BIASES = {
    "b_Q": _row("1 × d_k: the query bias, added to every row of X · W_Q (Q = X · W_Q + b_Q)."),
    "b_K": _row("1 × d_k: the key bias, added to every row of X · W_K."),
    "b_V": _row("1 × d_v: the value bias, added to every row of X · W_V."),
}


def _matrix(description: str, max_rows: int = MAX_DIM) -> dict:
    return {
        "description": description,
        "type": "array",
        "minItems": 1,
        "maxItems": max_rows,
        "items": _row(),
    }


_WEIGHTS = {
    "W_Q": _matrix("d_model × d_k: turns each token's features into its query."),
    "W_K": _matrix("d_model × d_k: turns each token's features into its key."),
    "W_V": _matrix("d_model × d_v: turns each token's features into its value."),
}


def _tokens(description: str) -> dict:
    """A list of tokens (a sentence's labels): text, or a number or boolean YAML reads as one."""
    return {
        "description": description,
        "type": "array",
        "minItems": 1,
        "maxItems": MAX_TOKENS,
        "items": {
            "anyOf": [
                {"type": "string", "pattern": TOKEN_PATTERN},
                {"type": ["number", "boolean"]},
            ]
        },
    }


SCHEMA: dict = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "attn-tutor lesson (format version 1)",
    "description": "A lesson for attn-tutor. Check one with: attn-tutor check FILE",
    "type": "object",
    "required": ["title", "tokens"],
    "additionalProperties": False,
    "properties": {
        "version": {"description": "The lesson format: 1.", "enum": [1, "1"]},
        "title": {
            "type": ["string", "number", "boolean"],
            "minLength": 1,
            "allOf": [{"pattern": "\\S"}, {"pattern": ONE_LINE}],
            "description": "Shown at the top of the walk.",
        },
        "description": {**TEXT, "description": "A sentence or two under the title."},
        "tokens": _tokens("One label per row of X; repeats are shown as the#1, the#2."),
        "X": _matrix("N × d_model: one row of features per token.", MAX_TOKENS),
        "E": _matrix(
            "N × d_model: token embeddings, instead of X; the walk starts with X = E + P.",
            MAX_TOKENS,
        ),
        "P": _matrix(
            "N × d_model: each position's vector, added to E (positions: given).", MAX_TOKENS
        ),
        "positions": {
            "description": "given (P), sinusoidal (the sin/cos table, added to E), or rope "
            "(Q and K turned by position × theta).",
            "enum": list(POSITIONS),
        },
        "theta": {
            "description": "positions: rope: the angle per position of each pair of columns "
            "of Q and K, in degrees (multiples of 30° or 45° are worked exactly by hand), or in "
            "radians when written '1 rad' or with theta_unit: radians.",
            "type": "array",
            "minItems": 1,
            "maxItems": MAX_DIM,
            "items": {
                "anyOf": [
                    {"$ref": "#/$defs/entry"},
                    {"type": "string", "pattern": ANGLE_PATTERN},
                ]
            },
        },
        "theta_unit": {
            "description": "How theta's entries without a unit of their own are read "
            "(degrees unless radians).",
            "enum": list(THETA_UNITS),
        },
        "source": _tokens("Cross-attention: the source sentence's tokens, one per row of X_src."),
        "X_src": _matrix(
            "N_src × d_model: the source sentence's rows; keys and values come from here.",
            MAX_TOKENS,
        ),
        **_WEIGHTS,
        **_BIASES,
        "heads": {
            "description": "Several heads instead of a top-level W_Q, W_K, W_V.",
            "type": "array",
            "minItems": 1,
            "maxItems": MAX_HEADS,
            "items": {
                "type": "object",
                "required": list(WEIGHT_KEYS),
                "additionalProperties": False,
                "properties": {
                    "name": {**SCALAR, "pattern": ONE_LINE, "description": "The head's name."},
                    **_WEIGHTS,
                    **_BIASES,
                    "focus": {
                        **FOCUS,
                        "description": "This head's worked cell (the rows it links).",
                    },
                },
            },
        },
        "W_O": _matrix("(heads × d_v) × d_out: projects the heads' concatenation."),
        "b_O": _row("1 × d_out: the output bias, added to every row of concat · W_O; needs W_O."),
        "mask": {
            "description": "causal: a token sees only itself and the tokens before it.",
            "enum": list(MASKS),
        },
        "scale": {
            "description": "What the scores are divided by before the softmax: sqrt_d_k (the "
            "default), none (softmax of the raw scores: no scaled step), sqrt_d_model, or a "
            "positive number (8, 2.5, 5/2).",
            "anyOf": [
                {"enum": list(SCALES)},
                {"type": "number", "exclusiveMinimum": 0},
                {"type": "string", "pattern": ENTRY_PATTERN, "not": {"pattern": r"^\s*[\-\u2212]"}},
            ],
        },
        "precision": {
            "description": "Decimals shown, 0 to 10 (default 2).",
            "anyOf": [
                {"type": "integer", "minimum": 0, "maximum": 10},
                {"type": "string", "pattern": r"^0*(?:[0-9]|10)$"},
            ],
        },
        "notes": {
            "description": "The instructor's words, by step name.",
            "type": "object",
            "propertyNames": {"enum": list(STEP_NAMES)},
            "additionalProperties": TEXT,
        },
        "focus": FOCUS,
        "quiz": {
            "description": "Quiz defaults.",
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "steps": {"type": "array", "items": {"enum": list(STEP_NAMES)}},
                "count": {
                    "anyOf": [
                        {"type": "integer", "minimum": 1, "maximum": 200},
                        {"type": "string", "pattern": r"^0*(?:[1-9]\d?|1\d\d|200)$"},
                    ]
                },
            },
        },
        "points": {
            "description": "Points per step a student fills (default: one per cell), "
            "e.g. weights: 6. Shared evenly by the step's cells.",
            "type": "object",
            "propertyNames": {"enum": [*FILLED_STEPS, *FILLED_NEXT_STEPS]},
            "additionalProperties": {
                "anyOf": [
                    {"type": "integer", "minimum": 0, "maximum": MAX_STEP_POINTS},
                    {"type": "string", "pattern": r"^0*(?:\d{1,3}|1000)$"},
                ]
            },
        },
        "variant": {
            "description": "Written by attn-tutor variants: the variant's id, the lesson it "
            "was made from, and its student; answer sheets copy it.",
            "type": "object",
            "required": ["id"],
            "additionalProperties": False,
            "properties": {k: {**SCALAR, "pattern": ONE_LINE} for k in VARIANT_KEYS},
        },
    },
    # X, or E with its positions (issue 17); a source sentence comes with its X_src
    "allOf": [
        {
            "oneOf": [
                {"required": ["X"], "not": {"required": ["E"]}},
                {"required": ["E"], "not": {"required": ["X"]}},
            ]
        },
        {"dependentRequired": {"P": ["E"], "source": ["X_src"], "X_src": ["source"]}},
        {"dependentRequired": {"theta": ["positions"]}},
    ],
    # one head (W_Q, W_K, W_V at the top) or several (heads), never both
    "oneOf": [
        {"required": list(WEIGHT_KEYS), "not": {"required": ["heads"]}},
        {
            "required": ["heads"],
            "not": {"anyOf": [{"required": [k]} for k in WEIGHT_KEYS]},
        },
    ],
    "$defs": {
        "entry": {
            "description": 'An integer, a decimal, or a fraction in quotes ("1/3").',
            "anyOf": [
                {"type": "number"},
                {"type": "string", "pattern": ENTRY_PATTERN},
            ],
        }
    },
}


def _decoding(schema: dict) -> None:
    """Grouped heads, the next token and the layout (issue 17): with ``kv_groups`` a head gives
    only W_Q and ``kv_heads`` gives W_K, W_V per group; without it every head gives all three."""
    props = schema["properties"]
    props["heads"]["items"]["required"] = ["W_Q"]
    props["kv_groups"] = {
        "description": "Grouped heads: how many key/value heads the query heads share "
        "(1 is multi-query attention); needs kv_heads.",
        "anyOf": [
            {"type": "integer", "minimum": 1, "maximum": MAX_HEADS},
            {"type": "string", "pattern": rf"^0*[1-{MAX_HEADS}]$"},
        ],
    }
    props["layers"] = {
        "description": "With heads: how many layers the attention stands for; the header's "
        "MHA/GQA/MQA table multiplies its K/V weights and KV cache by it.",
        "anyOf": [
            {"type": "integer", "minimum": 1, "maximum": MAX_LAYERS},
            {"type": "string", "pattern": r"^\d+$"},
        ],
    }
    props["kv_heads"] = {
        "description": "With kv_groups: one W_K, W_V per group; query head h reads group "
        "(h − 1) // (heads / kv_groups) + 1.",
        "type": "array",
        "minItems": 1,
        "maxItems": MAX_HEADS,
        "items": {
            "type": "object",
            "required": list(WEIGHT_KEYS[1:]),  # W_K, W_V; b_K, b_V optional
            "additionalProperties": False,
            "properties": {k: (_WEIGHTS | _BIASES)[k] for k in KV_HEAD_KEYS},
        },
    }
    one_next = {
        "description": "One decoding step after the lesson (the KV cache): the next token and "
        "its row of X.",
        "type": "object",
        "required": ["token", "x"],
        "additionalProperties": False,
        "properties": {
            "token": props["tokens"]["items"],
            "x": {
                "type": "array",
                "minItems": 1,
                "maxItems": MAX_DIM,
                "items": {"$ref": "#/$defs/entry"},
            },
        },
    }
    props["next"] = {
        "description": "Decoding after the lesson (the KV cache): one {token, x} mapping, or a "
        "list of them worked one after another, the cache growing by a row each.",
        "oneOf": [
            one_next,
            {"type": "array", "minItems": 1, "maxItems": MAX_TOKENS, "items": one_next},
        ],
    }
    props["layout"] = {
        "description": "rows (tokens as rows, the default) or columns (tokens as columns, "
        "Kᵀ·Q, softmax down each column).",
        "enum": list(LAYOUTS),
    }
    grouped_head = {"properties": {"W_K": False, "W_V": False}}
    full_head = {"required": list(WEIGHT_KEYS)}
    schema.setdefault("allOf", []).append(  # beside the X-or-E rules, not in their place
        {
            "if": {"required": ["kv_groups"]},
            "then": {
                "required": ["heads", "kv_heads"],
                "properties": {"heads": {"items": grouped_head}},
            },
            "else": {
                "not": {"required": ["kv_heads"]},
                "properties": {"heads": {"items": full_head}},
            },
        }
    )


_decoding(SCHEMA)

_GIVEN = GIVEN_KEYS
# keys a lesson with Q, K, V given has no use for (tutor.core.givenqkv and the refused pairs)
_NOT_WITH_GIVEN = (*NOT_WITH_GIVEN, *("kv_groups", "positions", "source", "next", "layers"))


def _given(schema: dict) -> None:
    """Q, K and V given (issue 28), at the top level or in every head, instead of X and the
    W's: the X-or-E and W's-or-heads rules then give way to their own."""
    props = schema["properties"]
    given = {
        "Q": _matrix("N × d_k: the queries, given (then no X and no W's).", MAX_TOKENS),
        "K": _matrix("N × d_k: the keys, given with Q and V.", MAX_TOKENS),
        "V": _matrix("N × d_v: the values, given with Q and K.", MAX_TOKENS),
    }
    props.update(given)
    head = props["heads"]["items"]
    head["properties"].update(given)
    head.pop("required")  # which three a head needs depends on the lesson's kind, below
    any_given = [{"required": [k]} for k in _GIVEN]
    if_given = {
        "anyOf": [
            *any_given,
            {"required": ["heads"], "properties": {"heads": {"contains": {"anyOf": any_given}}}},
        ]
    }
    then = {
        "not": {"anyOf": [{"required": [k]} for k in _NOT_WITH_GIVEN]},
        "oneOf": [
            {"required": list(_GIVEN), "not": {"required": ["heads"]}},
            {"required": ["heads"], "not": {"anyOf": any_given}},
        ],
        "properties": {
            "heads": {
                "items": {
                    "required": list(_GIVEN),
                    "properties": {"W_Q": False, "W_K": False, "W_V": False},
                }
            }
        },
    }
    x_or_e = schema["allOf"].pop(0)
    kv_rule = schema["allOf"].pop()
    w_or_heads = {"oneOf": schema.pop("oneOf")}
    wq = {"properties": {"heads": {"items": {"required": ["W_Q"]}}}}
    schema["allOf"].append(
        {"if": if_given, "then": then, "else": {"allOf": [x_or_e, w_or_heads, kv_rule, wq]}}
    )


_given(SCHEMA)


def schema_text() -> str:
    """The schema as pretty JSON text."""
    return json.dumps(SCHEMA, indent=2, ensure_ascii=False) + "\n"
