"""One colour per kind of matrix, shared by every view that names a step (walk, explain):
Q, K and V keep their colour wherever they appear, and so does the W that makes each."""

COLOURS = {
    "X": "yellow",
    "W_Q": "dodger_blue1",
    "Q": "dodger_blue1",
    "W_K": "green3",
    "K": "green3",
    "W_V": "orchid",
    "V": "orchid",
    "scores": "cyan",
    "scaled": "cyan",
    "masked": "cyan",
    "weights": "dark_orange",
    "Z": "bright_white",
    "concat": "bright_white",
    "W_O": "gold3",
    "output": "gold3",
}
