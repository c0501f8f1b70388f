"""The lesson format's names and limits, in one import-free module.

``attn-tutor schema`` builds the JSON Schema from these without loading YAML or sympy.
"""

MAX_FILE_BYTES = 1024 * 1024
MAX_TOKENS = 128
MAX_DIM = 512
MAX_HEADS = 16
MAX_DEPTH = 16
MAX_TOKEN_CHARS = 40

STEP_NAMES = (
    "X",
    "W_Q",
    "W_K",
    "W_V",
    "Q",
    "K",
    "V",
    "scores",
    "scaled",
    "masked",
    "weights",
    "Z",
    "concat",
    "W_O",
    "output",
)
TOP_KEYS = (
    "version",
    "title",
    "description",
    "tokens",
    "X",
    "W_Q",
    "W_K",
    "W_V",
    "heads",
    "W_O",
    "mask",
    "precision",
    "notes",
    "quiz",
)
HEAD_KEYS = ("name", "W_Q", "W_K", "W_V")
QUIZ_KEYS = ("steps", "count")
MASKS = ("none", "causal")
