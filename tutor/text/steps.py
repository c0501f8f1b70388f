"""Every kind of step's words, once: its headings, why it is there, the formula a quiz shows,
its TeX title, its colour and its family of slips, keyed by the step's name (as
``tutor.core.kinds``, which says where each step goes).

A step has its base words and, where a lesson tells it differently, *forms* that replace some
of them: ``given`` (Q, K and V a lesson gives: it starts at the scores), ``columns`` (the column
layout, each product read the other way round), ``source`` (cross-attention: keys and values
from the source sentence), ``rope`` (scores of the turned queries and keys), ``added`` (X worked
as E + P) and ``several`` (``next:`` as a list: the decoding steps have a row per new token).
``say`` picks the words for a step of a lesson; the walk, the quiz, the sheets, the
Markdown/TeX/typst keys and the explorer all read
them through it, and tests/test_step_kinds.py walks every kind through every consumer.

Pure data: no Rich, no sympy.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field, replace
from typing import TYPE_CHECKING

from tutor.core.kinds import NEXT_STEP_NAMES
from tutor.core.records import record
from tutor.text import theme
from tutor.text.theme import PALETTE

if TYPE_CHECKING:
    from tutor.core.engine import Step
    from tutor.core.lesson import Lesson


@record
class Words:
    """What is said of a step (None: the base words, or nothing)."""

    title: str | None = None  # the heading: what it is, with its formula
    why: str | None = None  # why the step is there, in a sentence or two
    quiz: str | None = None  # the formula a question's cell follows, above its inputs
    tex: str | None = None  # the heading in LaTeX
    note: str | None = None  # a bold line under the heading ({a}, {b}: the first two tokens)
    short: str | None = None  # the explorer's heading: what it is made of, in symbols
    origin: str | None = None  # which sentence its rows come from (cross-attention)


@record
class StepWords:
    colour: str  # the step's colour wherever it is named (theme.PALETTE's families)
    words: Words
    forms: Mapping[str, Words] = field(default_factory=dict)
    slips: str | None = None  # the family of slips the judge knows for it (catalogue.SLIP_RULES)
    # what each slip its rule declares (``Step.slips``) says to a student, by the slip's id
    slips_said: Mapping[str, str] = field(default_factory=dict)


W, S = Words, StepWords
# a lesson's own ``scale:`` (issue 41): the scaled step's words when it is not √d_k
SCALE_FORMS = {
    "d_model": W(
        title="scaled = scores / √d_model",
        why=(
            "Dot products grow with the length of the vectors, and large inputs make softmax give "
            "nearly everything to one token. This lesson divides by √d_model, the root of the "
            "model's width, as the material it was posed from does (√d_k is the usual choice)."
        ),
        quiz="scaled = scores / √d_model (this lesson's scale)",
        tex=r"$\mathrm{scaled} = \mathrm{scores} / \sqrt{d_{\mathrm{model}}}$",
    ),
    "number": W(
        title="scaled = scores / s",
        why=(
            "Dot products grow with the length of the vectors, and large inputs make softmax give "
            "nearly everything to one token. This lesson divides every score by its own number "
            "s, as the material it was posed from does (√d_k is the usual choice)."
        ),
        quiz="scaled = scores / s (this lesson's scale)",
        tex=r"$\mathrm{scaled} = \mathrm{scores} / s$",
    ),
}
# a product with a bias (issue 41): its words with the term added
BIASED = {
    "Q": W(
        title="Q = X · W_Q + b_Q, the queries",
        quiz="Q = X · W_Q + b_Q: a row of X times a column of W_Q, plus b_Q's entry",
        tex="$Q = X W_Q + b_Q$, the queries",
    ),
    "K": W(
        title="K = X · W_K + b_K, the keys",
        quiz="K = X · W_K + b_K: a row of X times a column of W_K, plus b_K's entry",
        tex="$K = X W_K + b_K$, the keys",
    ),
    "V": W(
        title="V = X · W_V + b_V, the values",
        quiz="V = X · W_V + b_V: a row of X times a column of W_V, plus b_V's entry",
        tex="$V = X W_V + b_V$, the values",
    ),
    "output": W(
        title="output = concat · W_O + b_O",
        quiz="output = concat · W_O + b_O: a row of concat times a column of W_O, plus b_O's entry",
        tex="$\\mathrm{output} = \\mathrm{concat} \\cdot W_O + b_O$",
    ),
}
STEPS: dict[str, StepWords] = {
    "E": S(
        PALETTE["tokens"],
        W(
            title="E, the token embeddings",
            why=(
                "Each row is a token's embedding: the same vector wherever the word stands. "
                "Attention alone cannot tell word order, so a position vector is added to each "
                "row."
            ),
            tex="$E$, the token embeddings",
        ),
    ),
    "P": S(
        PALETTE["tokens"],
        W(
            title="P, the positions",
            why=(
                "Row i is the position vector of the i-th place in the sentence (counting from "
                "0), whatever word stands there."
            ),
            tex="$P$, the positions",
        ),
    ),
    "X": S(
        PALETTE["tokens"],
        W(
            title="X, the tokens",
            why=(
                "Each row describes one token before attention: the same vector whatever "
                "sentence the word sits in. Attention will turn these plain rows into "
                "context-aware ones."
            ),
            quiz="X = E + P: the token's embedding plus the row of its position",
            tex="$X$, the tokens",
        ),
        {
            "columns": W(
                note=(
                    "Layout columns: each token is a column of X (d_model × N). Cells keep their "
                    "names from the rows layout: X[{a}, 2] is row 2 of the {a} column here."
                ),
                why=(
                    "Each column describes one token before attention: the same vector whatever "
                    "sentence the word sits in. Attention will turn these plain columns into "
                    "context-aware ones."
                ),
            ),
            "added": W(
                title="X = E + P, each token with its position",
                why=(
                    "Each token's embedding plus the position vector of its place: the same word "
                    "at two places now has two different rows, so attention can tell them apart."
                ),
                tex="$X = E + P$, each token with its position",
            ),
            "source": W(
                origin=(
                    "X holds the target sentence: its tokens ask the questions (the queries "
                    "come from here)"
                )
            ),
        },
    ),
    "X_src": S(
        PALETTE["tokens"],
        W(
            title="X_src, the source sentence's tokens",
            why=(
                "The second sentence, the one attended to: its tokens make the keys and values, "
                "while the queries still come from X."
            ),
            tex=r"$X_{\mathrm{src}}$, the source sentence's tokens",
        ),
        {
            "source": W(
                origin=(
                    "X_src holds the source sentence: its tokens answer (the keys and values "
                    "come from here)"
                )
            )
        },
    ),
    "W_Q": S(
        PALETTE["query"],
        W(
            title="W_Q, learned query weights",
            why=(
                "Learned in training. Multiplying a token's row by W_Q gives its query: what "
                "this token is looking for."
            ),
            tex="$W_Q$, learned query weights",
        ),
        {
            "columns": W(
                why=(
                    "Learned in training. W_Q times a token's column gives its query: what this "
                    "token is looking for."
                )
            )
        },
    ),
    "W_K": S(
        PALETTE["key"],
        W(
            title="W_K, learned key weights",
            why=(
                "Learned in training. A token's row times W_K gives its key: how it advertises "
                "itself to the other tokens' queries."
            ),
            tex="$W_K$, learned key weights",
        ),
        {
            "columns": W(
                why=(
                    "Learned in training. W_K times a token's column gives its key: how it "
                    "advertises itself to the other tokens' queries."
                )
            )
        },
    ),
    "W_V": S(
        PALETTE["value"],
        W(
            title="W_V, learned value weights",
            why=(
                "Learned in training. A token's row times W_V gives its value: what it hands "
                "over when someone attends to it."
            ),
            tex="$W_V$, learned value weights",
        ),
        {
            "columns": W(
                why=(
                    "Learned in training. W_V times a token's column gives its value: what it "
                    "hands over when someone attends to it."
                )
            )
        },
    ),
    "b_Q": S(
        PALETTE["query"],
        W(
            title="b_Q, the query bias",
            why="A row the layer learned, added to every row of X · W_Q: Q = X · W_Q + b_Q.",
            tex="$b_Q$, the query bias",
        ),
    ),
    "b_K": S(
        PALETTE["key"],
        W(
            title="b_K, the key bias",
            why="A row the layer learned, added to every row of X · W_K: K = X · W_K + b_K.",
            tex="$b_K$, the key bias",
        ),
    ),
    "b_V": S(
        PALETTE["value"],
        W(
            title="b_V, the value bias",
            why="A row the layer learned, added to every row of X · W_V: V = X · W_V + b_V.",
            tex="$b_V$, the value bias",
        ),
    ),
    "Q": S(
        PALETTE["query"],
        W(
            title="Q = X · W_Q, the queries",
            why=(
                "Each entry is a row of X dotted with a column of W_Q. One multiplication makes "
                "the queries of every token at once."
            ),
            quiz="Q = X · W_Q: a row of X times a column of W_Q",
            tex="$Q = X W_Q$, the queries",
            short="X·W_Q",
        ),
        {
            "given": W(
                title="Q, the given queries",
                why=(
                    "The problem gives the queries as they are: one row per token, the question "
                    "each token asks. (In a model they are X · W_Q; here that step is already "
                    "done.)"
                ),
                tex="$Q$, the queries",
            ),
            "columns": W(
                title="Q = W_Q · X, the queries",
                quiz="Q = W_Q · X: a row of W_Q times a column of X",
                why=(
                    "Each entry is a row of W_Q dotted with a column of X. One multiplication "
                    "makes the queries of every token at once, one column per token."
                ),
                tex=r"$Q = W_Q X$, the queries",
            ),
            "source": W(origin="from the target sentence: Q = X · W_Q, one row per target token"),
        },
        slips="projection",
    ),
    "K": S(
        PALETTE["key"],
        W(
            title="K = X · W_K, the keys",
            why="Same recipe as Q, with W_K: a row of X dotted with a column of W_K.",
            quiz="K = X · W_K: a row of X times a column of W_K",
            tex="$K = X W_K$, the keys",
            short="X·W_K",
        ),
        {
            "given": W(
                title="K, the given keys",
                why=(
                    "The keys are given too, one row per token: what each token offers to be found "
                    "by."
                ),
                tex="$K$, the keys",
            ),
            "columns": W(
                title="K = W_K · X, the keys",
                quiz="K = W_K · X: a row of W_K times a column of X",
                why=("Same recipe as Q, with W_K: a row of W_K dotted with a column of X."),
                tex=r"$K = W_K X$, the keys",
            ),
            "source": W(
                why=(
                    "Same recipe as Q, but from the other sentence: a row of X_src dotted with a "
                    "column of W_K. Every source token advertises itself to the target's queries."
                ),
                quiz="K = X_src · W_K: a row of X_src (the source sentence) times a column of W_K",
                origin="from the source sentence: K = X_src · W_K, one row per source token",
                short="X_src·W_K",
                title="K = X_src · W_K, the source sentence's keys",
                tex=r"$K = X_{\mathrm{src}} W_K$, the source sentence's keys",
            ),
        },
        slips="projection",
    ),
    "V": S(
        PALETTE["value"],
        W(
            title="V = X · W_V, the values",
            why=(
                "Same recipe again, with W_V. Values may have a different width (d_v) from "
                "queries and keys (d_k)."
            ),
            quiz="V = X · W_V: a row of X times a column of W_V",
            tex="$V = X W_V$, the values",
            short="X·W_V",
        ),
        {
            "given": W(
                title="V, the given values",
                why=(
                    "And the values, one row per token: what each token hands over once it is "
                    "attended to."
                ),
                tex="$V$, the values",
            ),
            "columns": W(
                title="V = W_V · X, the values",
                quiz="V = W_V · X: a row of W_V times a column of X",
                why=(
                    "Same recipe again, with W_V. Values may have a different height (d_v) from "
                    "queries and keys (d_k)."
                ),
                tex=r"$V = W_V X$, the values",
            ),
            "source": W(
                why=(
                    "Same recipe again, with W_V and the rows of X_src: what each source token "
                    "hands over to the target token that attends to it."
                ),
                quiz="V = X_src · W_V: a row of X_src (the source sentence) times a column of W_V",
                origin="from the source sentence: V = X_src · W_V, one row per source token",
                short="X_src·W_V",
                title="V = X_src · W_V, the source sentence's values",
                tex=r"$V = X_{\mathrm{src}} W_V$, the source sentence's values",
            ),
        },
        slips="projection",
    ),
    "Q_rot": S(
        PALETTE["query"],
        W(
            title="Q_rot, the queries turned by position",
            why=(
                "Each pair of columns of a query is turned by an angle that grows with the "
                "token's position (position × θ of the pair), so a query knows where its token "
                "stands."
            ),
            quiz=(
                "Q_rot: each pair (a, b) of a query turned by position × θ: (a·cos − b·sin, "
                "a·sin + b·cos)"
            ),
            tex=r"$Q_{\mathrm{rot}}$, the queries turned by position",
        ),
    ),
    "K_rot": S(
        PALETTE["key"],
        W(
            title="K_rot, the keys turned by position",
            why=(
                "The keys are turned the same way. A score of a turned query and a turned key "
                "depends on how far apart the two tokens are, not on where they both are."
            ),
            quiz=(
                "K_rot: each pair (a, b) of a key turned by position × θ: (a·cos − b·sin, a·sin "
                "+ b·cos)"
            ),
            tex=r"$K_{\mathrm{rot}}$, the keys turned by position",
        ),
    ),
    "scores": S(
        PALETTE["scores"],
        W(
            title="scores = Q · Kᵀ",
            why=(
                "Row i, column j is token i's query dotted with token j's key: large when they "
                "point the same way. Multiplying by Kᵀ does every pair in one go."
            ),
            quiz="scores = Q · Kᵀ: the query of the row token · the key of the column token",
            tex=r"$\mathrm{scores} = Q K^\top$",
            short="Q·Kᵀ",
        ),
        {
            "columns": W(
                title="scores = Kᵀ · Q",
                quiz="scores = Kᵀ · Q: the key of the row token · the query of the column token",
                note=(
                    "Layout columns: column j holds token j's query against every key, row i is "
                    "token i's key; scores[{a}, {b}] (the query of {a}, the key of {b}) sits in "
                    "column {a}, row {b}."
                ),
                why=(
                    "Column i, row j is token i's query dotted with token j's key: large when they "
                    "point the same way. Multiplying Kᵀ by Q does every pair in one go."
                ),
                tex=r"$\mathrm{scores} = K^\top Q$",
            ),
            "source": W(
                why=(
                    "Row i, column j is target token i's query dotted with source token j's key: "
                    "one row per target token, one column per source token, so the table need "
                    "not be square."
                ),
                quiz="scores = Q · Kᵀ: the query of the target token · the key of the source token",
                origin="rows: target tokens (queries); columns: source tokens (keys)",
            ),
            "rope": W(
                title="scores = Q_rot · K_rotᵀ",
                quiz="scores = Q_rot · K_rotᵀ: the turned query of the row token · the turned key",
            ),
        },
        slips="scores",
    ),
    "scaled": S(
        PALETTE["scores"],
        W(
            title="scaled = scores / √d_k",
            why=(
                "Dot products grow with the length of the vectors, and large inputs make softmax "
                "give nearly everything to one token. Dividing by √d_k keeps them in a calm "
                "range."
            ),
            quiz="scaled = scores / √d_k",
            tex=r"$\mathrm{scaled} = \mathrm{scores} / \sqrt{d_k}$",
        ),
        {
            "source": W(origin="rows: target tokens (queries); columns: source tokens (keys)"),
            **SCALE_FORMS,
        },
        slips="scale",
    ),
    "tempered": S(  # the explorer's: the scaled scores times a factor t (a temperature of 1/t)
        theme.PLAIN,
        W(
            title="tempered = scaled × t",
            why=(
                "Each scaled score times the factor t: above 1 the weights sharpen towards the "
                "largest score, below 1 they spread out evenly."
            ),
            tex=r"$\mathrm{tempered} = \mathrm{scaled} \times t$",
        ),
    ),
    "masked": S(
        PALETTE["scores"],
        W(
            title="masked: the causal mask",
            why=(
                "A decoder writes left to right, so while predicting a token it must not peek at "
                "the ones after it. Scores above the diagonal become −∞, whose e^x is exactly 0."
            ),
            tex="masked: the causal mask",
            short="−∞ above the diagonal",
        ),
    ),
    "weights": S(
        PALETTE["weights"],
        W(
            title="weights = softmax of each row",
            why=(
                "Softmax turns each row into positive weights that add up to 1: take e^x of each "
                "entry and divide by the row's total. The biggest score gets the biggest share."
            ),
            quiz="weights = softmax of each row: e^x / (the row's total of e^x)",
            tex=r"$\mathrm{weights} = \mathrm{softmax}$ of each row",
            short="softmax of each row",
        ),
        {
            "columns": W(
                title="weights = softmax down each column",
                why=(
                    "Softmax turns each column into positive weights that add up to 1: take e^x "
                    "of each entry and divide by the column's total. The biggest score gets the "
                    "biggest share."
                ),
                quiz="weights = softmax down each column: e^x / (the column's total of e^x)",
                tex=r"$\mathrm{weights} = \mathrm{softmax}$ down each column",
            ),
            "source": W(origin="rows: target tokens (queries); columns: source tokens (keys)"),
            "raw": W(
                why=(
                    "Softmax turns each row into positive weights that add up to 1: take e^x of "
                    "each entry and divide by the row's total. This lesson does not scale the "
                    "scores (scale: none), as the material it was posed from does not: softmax "
                    "takes the raw scores."
                ),
            ),
        },
        slips="softmax",
    ),
    "Z": S(
        PALETTE["blend"],
        W(
            title="Z = weights · V",
            why=(
                "Each token's new vector is a blend of every token's value, mixed in the "
                "proportions of its row of weights."
            ),
            quiz="Z = weights · V: the row's weights blend a column of V",
            tex=r"$Z = \mathrm{weights} \cdot V$",
            short="weights·V",
        ),
        {
            "columns": W(
                title="Z = V · weights",
                quiz="Z = V · weights: a row of V blended by the column's weights",
                note=(
                    "Layout columns: each column of Z is one token's new vector, a blend of the "
                    "columns of V."
                ),
                why=(
                    "Each token's new vector (its column) is a blend of every token's value, mixed "
                    "in the proportions of its column of weights."
                ),
                tex=r"$Z = V \cdot \mathrm{weights}$",
            ),
            "source": W(origin="one row per target token, blended from the source tokens' values"),
        },
        slips="blend",
    ),
    "concat": S(
        PALETTE["blend"],
        W(
            title="concat: the heads side by side",
            why=(
                "Each head attended in its own way; their outputs are placed side by side, so "
                "each token's vector gets h × d_v columns (8 heads of 4 columns would give 32)."
            ),
            tex="concat: the heads side by side",
            short="heads side by side",
        ),
    ),
    "W_O": S(
        PALETTE["output"],
        W(
            title="W_O, the output projection",
            why=(
                "Learned in training: it mixes the concatenated heads back into one vector "
                "per token."
            ),
            tex="$W_O$, the output projection",
        ),
    ),
    "b_O": S(
        PALETTE["output"],
        W(
            title="b_O, the output bias",
            why="A row the layer learned, added to every row of concat · W_O.",
            tex="$b_O$, the output bias",
        ),
    ),
    "output": S(
        PALETTE["output"],
        W(
            title="output = concat · W_O",
            why=(
                "The concatenation times W_O: every head's findings blended into one row per token."
            ),
            quiz="output = concat · W_O: a row of concat times a column of W_O",
            tex=r"$\mathrm{output} = \mathrm{concat} \cdot W_O$",
            short="concat·W_O",
        ),
        {
            "columns": W(
                title="output = W_O · concat",
                quiz="output = W_O · concat: a row of W_O times a column of concat",
                tex=r"$\mathrm{output} = W_O \cdot \mathrm{concat}$",
            )
        },
    ),
    "x_new": S(
        PALETTE["tokens"],
        W(
            title="x_new, the next token",
            why=(
                "A decoder writes one token at a time. The next token arrives with its own row; "
                "everything about the earlier tokens was worked already."
            ),
            tex=r"$x_{\mathrm{new}}$, the next token",
        ),
        {
            "several": W(
                title="x_new, the next tokens",
                why=(
                    "A decoder writes one token at a time. These tokens arrive one after "
                    "another, each with its own row; everything about the earlier tokens was "
                    "worked already."
                ),
                tex=r"$x_{\mathrm{new}}$, the next tokens",
            )
        },
    ),
    "q_new": S(
        PALETTE["query"],
        W(
            title="q_new = x_new · W_Q, its query",
            why=(
                "Only the new token needs a query: the earlier tokens' queries were used when "
                "they arrived and are never needed again."
            ),
            quiz="q_new = x_new · W_Q: the new token's row times a column of W_Q",
            tex=r"$q_{\mathrm{new}} = x_{\mathrm{new}} W_Q$, its query",
        ),
    ),
    "k_new": S(
        PALETTE["key"],
        W(
            title="k_new = x_new · W_K, its key",
            why=(
                "The new token's key, made once and kept: later tokens will read it from the cache."
            ),
            quiz="k_new = x_new · W_K: the new token's row times a column of W_K",
            tex=r"$k_{\mathrm{new}} = x_{\mathrm{new}} W_K$, its key",
        ),
    ),
    "v_new": S(
        PALETTE["value"],
        W(
            title="v_new = x_new · W_V, its value",
            why="The new token's value, kept in the cache beside its key.",
            quiz="v_new = x_new · W_V: the new token's row times a column of W_V",
            tex=r"$v_{\mathrm{new}} = x_{\mathrm{new}} W_V$, its value",
        ),
    ),
    "K_cache": S(
        PALETTE["key"],
        W(
            title="K_cache: the cached keys, with k_new below",
            why=(
                "The keys of the earlier tokens are read from the cache, not worked again; the "
                "new key goes below them."
            ),
            tex=r"$K_{\mathrm{cache}}$: the cached keys, with $k_{\mathrm{new}}$ below",
        ),
    ),
    "V_cache": S(
        PALETTE["value"],
        W(
            title="V_cache: the cached values, with v_new below",
            why="The same for values: the earlier rows come from the cache, the last row is new.",
            tex=r"$V_{\mathrm{cache}}$: the cached values, with $v_{\mathrm{new}}$ below",
        ),
        {
            "several": W(
                why=(
                    "The same for values: the earlier rows come from the cache, the new "
                    "tokens' rows go below them, one per step."
                )
            )
        },
    ),
    "scores_new": S(
        PALETTE["scores"],
        W(
            title="scores_new = q_new · K_cacheᵀ, one row",
            why=(
                "One row of scores: the new query against every cached key and its own. Nothing "
                "is masked: every key in the cache comes before the new token."
            ),
            quiz="scores_new = q_new · K_cacheᵀ: the new query · a cached key (or its own)",
            tex=(
                r"$\mathrm{scores}_{\mathrm{new}} = q_{\mathrm{new}} K_{\mathrm{cache}}^\top$, "
                r"one row"
            ),
        ),
        {
            "several": W(
                title="scores_new = q_new · K_cacheᵀ, a row per new token",
                why=(
                    "A row of scores per new token: its query against every cached key, and "
                    "against the new keys up to its own."
                ),
                quiz="scores_new = q_new · K_cacheᵀ: a new query · a cached key (or a new one)",
                tex=(
                    r"$\mathrm{scores}_{\mathrm{new}} = q_{\mathrm{new}} K_{\mathrm{cache}}^\top$, "
                    "a row per new token"
                ),
            )
        },
    ),
    "scaled_new": S(
        PALETTE["scores"],
        W(
            title="scaled_new = scores_new / √d_k",
            why="Divided by √d_k, as in the lesson's own scores.",
            quiz="scaled_new = scores_new / √d_k",
            tex=r"$\mathrm{scaled}_{\mathrm{new}} = \mathrm{scores}_{\mathrm{new}} / \sqrt{d_k}$",
        ),
        {
            "d_model": W(
                title="scaled_new = scores_new / √d_model",
                why="Divided by √d_model, as in the lesson's own scores.",
                quiz="scaled_new = scores_new / √d_model (this lesson's scale)",
                tex=r"$\mathrm{scaled}_{\mathrm{new}} = \mathrm{scores}_{\mathrm{new}} / "
                r"\sqrt{d_{\mathrm{model}}}$",
            ),
            "number": W(
                title="scaled_new = scores_new / s",
                why="Divided by the lesson's own number s, as in the lesson's own scores.",
                quiz="scaled_new = scores_new / s (this lesson's scale)",
                tex=r"$\mathrm{scaled}_{\mathrm{new}} = \mathrm{scores}_{\mathrm{new}} / s$",
            ),
        },
    ),
    "masked_new": S(
        PALETTE["scores"],
        W(
            title="masked_new: each new token sees only what came before it",
            why=(
                "The new tokens arrive one after another, so while one is worked the ones after "
                "it do not exist yet: every cached key is seen, and of the new keys only those "
                "up to its own; the rest become −∞."
            ),
            tex=r"$\mathrm{masked}_{\mathrm{new}}$: each new token sees only what came before it",
            short="−∞ right of the shifted diagonal",
        ),
    ),
    "weights_new": S(
        PALETTE["weights"],
        W(
            title="weights_new = softmax of the one row",
            why="Softmax of the one row: the new token's weights over everything so far.",
            quiz="weights_new = softmax of the one row: e^x / (the row's total of e^x)",
            tex=r"$\mathrm{weights}_{\mathrm{new}} = \mathrm{softmax}$ of the one row",
        ),
        {
            "several": W(
                title="weights_new = softmax of each new row",
                why=(
                    "Softmax of each new row: each new token's weights over everything up to "
                    "itself."
                ),
                quiz="weights_new = softmax of each new row: e^x / (the row's total of e^x)",
                tex=r"$\mathrm{weights}_{\mathrm{new}} = \mathrm{softmax}$ of each new row",
            )
        },
    ),
    "z_new": S(
        PALETTE["blend"],
        W(
            title="z_new = weights_new · V_cache",
            why="The new token's output: a blend of the cached values and its own.",
            quiz="z_new = weights_new · V_cache: the weights blend a column of the cached values",
            tex=r"$z_{\mathrm{new}} = \mathrm{weights}_{\mathrm{new}} \cdot V_{\mathrm{cache}}$",
        ),
    ),
    "concat_new": S(
        PALETTE["blend"],
        W(
            title="concat_new: the heads' z_new side by side",
            why="The heads' new rows side by side.",
            tex=r"$\mathrm{concat}_{\mathrm{new}}$: the heads' $z_{\mathrm{new}}$ side by side",
        ),
    ),
    "output_new": S(
        PALETTE["output"],
        W(
            title="output_new = concat_new · W_O",
            why="The new row of the concatenation times W_O.",
            tex=r"$\mathrm{output}_{\mathrm{new}} = \mathrm{concat}_{\mathrm{new}} \cdot W_O$",
        ),
    ),
}
for _name, _words in BIASED.items():  # the biased form beside each product's own forms
    STEPS[_name] = replace(STEPS[_name], forms={**STEPS[_name].forms, "biased": _words})
del W, S, _name, _words
# the order in which a form's words win
FORMS = (
    *("given", "columns", "source", "rope", "added", "several"),
    *("d_model", "number", "raw", "biased"),
)
COLOURS = {name: s.colour for name, s in STEPS.items()}


def forms(step: Step, lesson: Lesson | None = None, turned: bool = False) -> tuple[str, ...]:
    """The forms that tell ``step`` (of ``lesson``, shown ``turned`` in the column layout)."""
    # (a step's engine is loaded: steps stays import-light)
    from tutor.core.engine import Product, Scale, Softmax, Sum

    out = []
    if step.given and step.name in ("Q", "K", "V") and (lesson is None or lesson.qkv):
        out.append("given")  # a lesson that starts at the scores
    if turned:
        out.append("columns")
    if (lesson is not None and lesson.source is not None) or (
        step.args and step.args[0].name == "X_src"  # keys and values made from the source
    ):
        out.append("source")
    if step.name == "scores" and step.args and step.args[0].name == "Q_rot":
        out.append("rope")
    if isinstance(step, Sum):  # X worked as E + P
        out.append("added")
    if lesson is not None and len(lesson.decoding) > 1 and step.name in NEXT_STEP_NAMES:
        out.append("several")  # next: as a list: its steps have a row per new token
    if isinstance(step, Scale) and (step.of == "d_model" or step.by is not None):
        out.append("d_model" if step.of == "d_model" else "number")  # the lesson's scale:
    if isinstance(step, Softmax) and step.args[0].name.startswith("scores"):
        out.append("raw")  # scale: none, and no mask between
    if isinstance(step, Product) and step.bias is not None:
        out.append("biased")  # X · W + b (issue 41)
    return tuple(out)


def say(step: Step, what: str, lesson: Lesson | None = None, turned: bool = False) -> str:
    """The words ``what`` (a field of ``Words``) for ``step``: its forms' first, then its own;
    "" when the step has none."""
    return said(step.name, what, forms(step, lesson, turned))


def said(name: str, what: str, forms: tuple[str, ...] = ()) -> str:
    """``say`` by the step's name and the forms that tell it."""
    entry = STEPS[name]
    for form in forms:
        words = entry.forms.get(form)
        if words is not None and getattr(words, what) is not None:
            return getattr(words, what)  # type: ignore[no-any-return]
    return getattr(entry.words, what) or ""


def slip_said(name: str, slip: str) -> str:
    """What a slip the rule of step ``name`` declares says to a student (its id when the
    words table has no words for it)."""
    entry = STEPS.get(name)
    return entry.slips_said.get(slip, slip) if entry is not None else slip


def colour(name: str) -> str:
    """A step's colour; grey for a name no step has."""
    return COLOURS.get(name, theme.PLAIN)
