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
    # one decoding step (the KV cache): the new row keeps the colour of the matrix it extends
    "x_new": "yellow",
    "q_new": "dodger_blue1",
    "k_new": "green3",
    "K_cache": "green3",
    "v_new": "orchid",
    "V_cache": "orchid",
    "scores_new": "cyan",
    "scaled_new": "cyan",
    "weights_new": "dark_orange",
    "z_new": "bright_white",
    "concat_new": "bright_white",
    "output_new": "gold3",
}
