"""Writing a lesson file: commented YAML that ``tutor.core.lessonfile`` reads back the same.

The one writer of lesson files from a ``Lesson`` (``new``, ``variants`` and the explorer's
fallback all call ``lesson_yaml``), and of one entry as a lesson writes it (``entry_text``).
"""

from __future__ import annotations

import json
import re
import textwrap
from collections.abc import Mapping

from tutor.core.lesson import Entry, Head, Lesson, Matrix, unique_labels
from tutor.core.numbers import MAX_DIGITS, MAX_EXPONENT
from tutor.core.spec import BIASES
from tutor.text.format import decimal_places

PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_'. -]*")  # safe to write unquoted in YAML
YAML11_WORDS = {"yes", "no", "on", "off", "true", "false", "y", "n", "null"}
COMMENT_COLUMN = 32


def yaml_text(text: str) -> str:
    """A string as a YAML scalar: plain when that is safe, else double-quoted (JSON is YAML)."""
    if PLAIN.fullmatch(text) and not text.endswith(" ") and text.lower() not in YAML11_WORDS:
        return text
    return json.dumps(text, ensure_ascii=False)


def _commented(code: str, comment: str) -> str:
    if not comment:
        return code
    return f"{code.ljust(COMMENT_COLUMN - 1)} # {comment}"


def entry_text(entry: Entry) -> str:
    """An exact entry as a lesson writes it: ``2``, ``0.5``, or ``"1/3"`` in quotes; a number
    too long for the loader's digit limit in powers of ten (``1e-30``, ``1.5e30``), or as the
    fraction when no power of ten fits (a denominator of 2^32), so every entry the loader
    accepts is written back so that it accepts it again."""
    p, q = entry
    places = decimal_places(q)
    if places is None:
        return f'"{p}/{q}"'
    plain = _decimal(p, q, places)
    if _fits(plain):
        return plain
    scientific = _scientific(p, q, places)
    fraction = f"{p}/{q}"  # 4294969/4294967296: 17 digits, but 33 as a decimal
    if scientific is None and _fits(fraction):
        return f'"{fraction}"'
    return scientific or plain  # none fits: the loader says why


def _row(row: tuple[Entry, ...]) -> str:
    return "[" + ", ".join(entry_text(e) for e in row) + "]"


def _biases(head: Head, indent: str, keys: tuple[str, ...] = tuple(BIASES)) -> list[str]:
    """A head's biases (issue 41), each one row added to every row of its product; ``keys``:
    the ones written here (grouped heads write b_Q in the head, b_K and b_V in kv_heads)."""
    return [
        _commented(f"{indent}{key}: {_row(row)}", f"added to every row of X · W_{key[-1]}")
        for key in keys
        if (row := getattr(head, key)) is not None
    ]


def scale_text(lesson: Lesson) -> str:
    """The lesson's ``scale:`` as written: ``none``, ``sqrt_d_model``, or its exact number."""
    return entry_text(lesson.scale_by) if lesson.scale_by is not None else lesson.scale


def _decimal(p: int, q: int, places: int) -> str:
    """p/q (q a divisor of 10^places) written out exactly, with ``places`` decimals."""
    digits = str(abs(p) * 10**places // q).rjust(places + 1, "0")
    text = f"{digits[:-places]}.{digits[-places:]}" if places else digits
    return ("-" if p < 0 else "") + text


def _fits(text: str) -> bool:
    return sum(ch.isdigit() for ch in text) <= MAX_DIGITS


def _scientific(p: int, q: int, places: int) -> str | None:
    """p/q as ``m e E`` with |E| within the loader's limit and the fewest characters."""
    n, e = abs(p) * 10**places // q, -places  # |p/q| = n × 10^e
    while n and n % 10 == 0:
        n, e = n // 10, e + 1
    sign = "-" if p < 0 else ""
    best = None
    for exp in range(-MAX_EXPONENT, MAX_EXPONENT + 1):
        shift = e - exp  # the mantissa is n × 10^shift
        mantissa = f"{n}{'0' * shift}" if shift >= 0 else _decimal(n, 10**-shift, -shift)
        text = f"{sign}{mantissa}e{exp}"
        if _fits(text) and (best is None or len(text) < len(best)):
            best = text
    return best


def _rows(m: Matrix, indent: str, labels: tuple[str, ...] | None = None) -> list[str]:
    cells = [[entry_text(e) for e in row] for row in m]
    width = max(len(c) for row in cells for c in row)
    out = []
    for i, row in enumerate(cells):
        code = f"{indent}- [{', '.join(c.rjust(width) for c in row)}]"
        out.append(_commented(code, labels[i] if labels else ""))
    return out


def lesson_yaml(
    lesson: Lesson,
    command: str,
    file: str,
    header: tuple[str, ...] = (),
    notes: Mapping[str, str] | None = None,
) -> str:
    """The lesson as commented YAML (format version 1); ``header`` replaces the first comment
    line (what the file is); ``notes``: the notes to write (default: the lesson's own). Biases
    and ``scale:`` are written from the lesson's own fields."""
    d_model, d_k, d_v = lesson.d_model, lesson.d_k, lesson.d_v
    n = lesson.n
    lines = [
        *(header or [f"# {lesson.name}: a lesson for attn-tutor (format version 1)."]),
        f"# Made with: {command}",
        f"# Change any word or number, then check it: attn-tutor check {file}",
        '# Entries may be integers, decimals (0.5) or fractions in quotes ("1/3").',
        _commented("version: 1", "the lesson format"),
        _commented(f"title: {yaml_text(lesson.title)}", "shown at the top of the walk"),
        _commented("description: >-", "a sentence or two under the title"),
        *(f"  {line}" for line in textwrap.wrap(lesson.description, 88)),
        _commented(
            f"tokens: [{', '.join(yaml_text(t) for t in lesson.tokens)}]",
            "one label per row of X",
        ),
    ]
    if lesson.positions == "given" and lesson.P is not None:
        lines += [
            _commented("E:", f"{n} × {d_model} (N × d_model): each token's embedding"),
            *_rows(lesson.X, "  ", unique_labels(lesson.tokens)),
            _commented("P:", f"{n} × {d_model}: each position's vector, X = E + P"),
            *_rows(lesson.P, "  "),
        ]
    else:
        lines += [
            _commented("X:", f"{n} × {d_model} (N × d_model): each token's features"),
            *_rows(lesson.X, "  ", unique_labels(lesson.tokens)),
        ]
    what = {
        "W_Q": ("d_k", d_k, "queries, what a token looks for"),
        "W_K": ("d_k", d_k, "keys, what a token offers"),
        "W_V": ("d_v", d_v, "values, what a token passes on"),
    }
    if not lesson.multi_head:
        head = lesson.heads[0]
        for key, m in (("W_Q", head.W_Q), ("W_K", head.W_K), ("W_V", head.W_V)):
            dim, size, why = what[key]
            lines.append(_commented(f"{key}:", f"{d_model} × {size} (d_model × {dim}): {why}"))
            lines += _rows(m, "  ")
        lines += _biases(head, "")
    else:
        groups = lesson.kv_groups
        per = len(lesson.heads) // groups if groups else 1
        if groups:
            lines.append(_commented(f"kv_groups: {groups}", "query heads share W_K, W_V"))
        lines.append(_commented("heads:", "several heads, each with its own W_Q, W_K, W_V"))
        for head in lesson.heads:
            if head.name is not None:
                lines.append(_commented(f"  - name: {yaml_text(head.name)}", "optional"))
            mats = (("W_Q", head.W_Q), ("W_K", head.W_K), ("W_V", head.W_V))
            for key, m in mats[:1] if groups else mats:
                dim, size, why = what[key]
                start = "  - " if head.name is None and key == "W_Q" else "    "
                lines.append(
                    _commented(f"{start}{key}:", f"{d_model} × {size} (d_model × {dim}): {why}")
                )
                lines += _rows(m, "      ")
            lines += _biases(head, "    ", tuple(BIASES)[:1] if groups else tuple(BIASES))
        if groups:
            lines.append(_commented("kv_heads:", "one W_K, W_V per group"))
            for g in range(groups):
                head = lesson.heads[g * per]
                for key, m in (("W_K", head.W_K), ("W_V", head.W_V)):
                    dim, size, why = what[key]
                    start = "  - " if key == "W_K" else "    "
                    lines.append(
                        _commented(f"{start}{key}:", f"{d_model} × {size} (d_model × {dim}): {why}")
                    )
                    lines += _rows(m, "      ")
                lines += _biases(head, "    ", tuple(BIASES)[1:])  # b_K, b_V
        assert lesson.W_O is not None
        h = len(lesson.heads)
        lines.append(
            _commented("W_O:", f"{h * d_v} × {d_model} ((heads × d_v) × d_model): mixes the heads")
        )
        lines += _rows(lesson.W_O, "  ")
        if lesson.b_O is not None:  # issue 41
            lines.append(_commented(f"b_O: {_row(lesson.b_O)}", "added to every row of the output"))
    mask_why = (
        "a token sees only itself and earlier tokens"
        if lesson.mask == "causal"
        else "or causal: a token sees only itself and earlier ones"
    )
    lines += [
        _commented(f"mask: {lesson.mask}", mask_why),
        *(
            [_commented(f"scale: {scale_text(lesson)}", "what the scores are divided by")]
            if lesson.scale != "sqrt_d_k"
            else []
        ),
        _commented(f"precision: {lesson.precision}", "decimals shown in the walk, 0 to 10"),
        *(
            [_commented("layout: columns", "tokens as columns, as on AI by Hand sheets")]
            if lesson.layout == "columns"
            else []
        ),
        _commented("notes:", "your words, shown at a step: Q, K, V, scores, weights, Z, …"),
    ]
    lines += [
        f"  {step}: {json.dumps(text, ensure_ascii=False)}"
        for step, text in (lesson.notes if notes is None else notes).items()
    ]
    return "\n".join(lines) + "\n"
