"""Checking a student's own NumPy attention against the lesson, step by step.

The student writes ``attention(X, W_Q, W_K, W_V, mask=None)`` returning Z, or ``(Z, steps)``, or
a dict of steps (any of ``Q``, ``K``, ``V``, ``scores``, ``scaled``, ``weights``, ``Z``). ``mask``
is None, or (for ``mask: causal``) an N × N array of booleans, True where a token may look.
Each step returned is compared with the lesson's exact values (as float64); the first that
differs is reported: the cell, both values, and the classic slip that explains it when one does
(forgot √d_k, divided by d_k, softmax over the wrong axis, K instead of Kᵀ, mask after softmax,
no mask). A lesson with several heads calls the function once per head.

Pure: values in, a ``CodeReport`` out. Running the student's file is ``run_student``'s job (a
separate process, with a time limit); ``check_function`` here calls a function in-process.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from tutor.core import kinds
from tutor.core.engine import Derivation, Step
from tutor.core.errors import TutorError

ORDER = kinds.CODE_STEPS  # the steps a student's function returns
RTOL, ATOL = 1e-6, 1e-9  # float64 work against exact values: far inside any real slip


def refusal(d: Derivation) -> str | None:
    """Why this lesson cannot be checked through ``attention(X, W_Q, W_K, W_V, mask)``."""
    lesson = d.lesson
    if lesson.positions == "rope":
        return "its queries and keys are rotated (RoPE)"
    if lesson.source is not None:
        return "its keys and values come from a second sentence (cross-attention)"
    if lesson.qkv:
        return "it gives Q, K and V, not X and the W's that make them"
    return None


def floats(step: Step) -> np.ndarray:
    """A step's exact values as float64 (−inf where masked)."""
    return np.array([[float(c.approx) for c in row] for row in step.cells], dtype=np.float64)


@dataclass(frozen=True)
class Call:
    """One call of the student's function: its inputs (float64) and the lesson's steps."""

    head: int | None
    inputs: dict[str, np.ndarray | None]  # X, W_Q, W_K, W_V, mask
    truth: dict[str, np.ndarray]  # step name -> its exact values
    unmasked: str | None = None  # the step the mask is put on (returned with its −∞, or not)


def calls(d: Derivation) -> list[Call]:
    """The calls that check a lesson: one, or one per head."""
    why = refusal(d)
    if why is not None:
        raise TutorError(
            f"attn-tutor check-code checks attention(X, W_Q, W_K, W_V, mask); lesson "
            f"{d.lesson.name} cannot be worked that way: {why}. `attn-tutor code "
            f"{d.lesson.name}` prints a program for it"
        )
    heads = [None] if not d.lesson.multi_head else list(range(1, d.head_count + 1))
    X = floats(d.step("X"))
    n = len(X)
    mask = np.tril(np.ones((n, n), dtype=bool)) if d.lesson.mask == "causal" else None
    out = []
    for h in heads:
        truth = {name: floats(d.step(name, h)) for name in ORDER if d.has(name, h)}
        unmasked = None
        if d.has("masked", h):  # scaled may be returned with the mask's −∞ in it
            masked = d.step("masked", h)
            truth[masked.name] = floats(masked)
            unmasked = masked.args[0].name
        for name in ORDER:  # grouped heads: a later head of a group reads the group's K, V
            if name in kinds.GROUPED and name not in truth:
                owner = d.lesson.group_heads(d.lesson.group_of(h or 1))[0]
                truth[name] = floats(d.step(name, owner))
        inputs: dict[str, np.ndarray | None] = {"X": X, "mask": mask}
        for w in kinds.WEIGHTS:
            owner = h
            if not d.has(w, h):
                owner = d.lesson.group_heads(d.lesson.group_of(h or 1))[0]
            inputs[w] = floats(d.step(w, owner))
        out.append(Call(h, inputs, truth, unmasked))
    return out


@dataclass(frozen=True)
class Difference:
    step: str
    head: int | None
    row: str
    col: str
    got: float
    expected: float
    slip: str | None  # a slip id, e.g. "not-scaled"
    why: str | None  # what the slip is, said to the student


@dataclass
class CodeReport:
    """How the student's function fared: the steps that match, the first that differs."""

    lesson: str
    checked: list[tuple[int | None, str]] = field(default_factory=list)  # (head, step) right
    difference: Difference | None = None
    problem: str | None = None  # the function raised, returned nothing usable, …

    @property
    def ok(self) -> bool:
        return self.difference is None and self.problem is None and bool(self.checked)


def _softmax(x: np.ndarray, axis: int = 1) -> np.ndarray:
    with np.errstate(invalid="ignore", over="ignore"):
        e = np.exp(x - np.max(x, axis=axis, keepdims=True))
        return e / e.sum(axis=axis, keepdims=True)


def _masked(x: np.ndarray, mask: np.ndarray | None) -> np.ndarray:
    return x if mask is None else np.where(mask, x, -np.inf)


SLIPS = {
    "not-scaled": "the scores are not divided by √d_k",
    "divided-by-dk": "the scores are divided by d_k, not by √d_k",
    "softmax-column": "softmax runs down each column (axis=0); it runs along each row (axis=-1)",
    "k-not-transposed": "the scores multiply by K, not Kᵀ: a score is a query's row · a key's row",
    "mask-after-softmax": "the mask is applied after the softmax: mask the scores first",
    "forgot-mask": "the causal mask is not applied: the scores above the diagonal must be −∞",
    "key-query": "the scores are K · Qᵀ: the rows are the queries (Q · Kᵀ)",
}


def alternatives(call: Call) -> dict[str, dict[str, np.ndarray]]:
    """Each classic slip's steps, worked in float64 from the true inputs."""
    t, mask = call.truth, call.inputs["mask"]
    Q, K, V, scores = t["Q"], t["K"], t["V"], t["scores"]
    d_k = Q.shape[1]
    out: dict[str, dict[str, np.ndarray]] = {}

    def after(name: str, scores_: np.ndarray, scaled_: np.ndarray, weights_: np.ndarray) -> None:
        out[name] = {"scores": scores_, "scaled": scaled_, "weights": weights_, "Z": weights_ @ V}

    after("not-scaled", scores, scores, _softmax(_masked(scores, mask)))
    after("divided-by-dk", scores, scores / d_k, _softmax(_masked(scores / d_k, mask)))
    scaled = scores / np.sqrt(d_k)
    after("softmax-column", scores, scaled, _softmax(_masked(scaled, mask), axis=0))
    if Q.shape == K.T.shape:  # Q @ K has the scores' shape only here
        wrong = Q @ K
        after("k-not-transposed", wrong, wrong / np.sqrt(d_k),
              _softmax(_masked(wrong / np.sqrt(d_k), mask)))  # fmt: skip
    kq = K @ Q.T
    after("key-query", kq, kq / np.sqrt(d_k), _softmax(_masked(kq / np.sqrt(d_k), mask)))
    if mask is not None:
        after("mask-after-softmax", scores, scaled, np.where(mask, _softmax(scaled), 0.0))
        after("forgot-mask", scores, scaled, _softmax(scaled))
    return out


def _close(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and bool(
        np.all((a == b) | np.isclose(a, b, rtol=RTOL, atol=ATOL))  # −∞ == −∞ where masked
    )


def steps_of(result: object) -> dict[str, np.ndarray]:
    """The steps a function returned: Z, (Z, steps) or a dict of steps; raise ``TutorError``."""
    steps: dict[str, object]
    if isinstance(result, dict):
        steps = dict(result)
    elif isinstance(result, tuple) and len(result) == 2 and isinstance(result[1], dict):
        steps = {**result[1], "Z": result[0]}
    else:
        steps = {"Z": result}
    out = {}
    for name, value in steps.items():
        if name not in ORDER:
            continue  # other keys are the student's own
        try:
            arr = np.asarray(value, dtype=np.float64)
        except (TypeError, ValueError):
            raise TutorError(f"the function's {name} is not an array of numbers") from None
        if arr.ndim != 2:
            raise TutorError(f"the function's {name} has {arr.ndim} dimensions; expected 2")
        out[name] = arr
    if not out:
        raise TutorError(
            "the function returned none of Q, K, V, scores, scaled, weights or Z; return Z, "
            "(Z, {'scores': …}) or a dict of steps"
        )
    return out


def compare(d: Derivation, results: list[dict[str, np.ndarray]]) -> CodeReport:
    """Every returned step of every call against the lesson, in the order of the computation."""
    report = CodeReport(d.lesson.name)
    for call, got in zip(calls(d), results, strict=True):
        for name in ORDER:
            if name not in got:
                continue
            mine, true = got[name], call.truth[name]
            mask = call.inputs["mask"]
            hidden = name == call.unmasked and mask is not None and mine.shape == mask.shape
            if hidden and np.all(np.isneginf(mine[~mask])):  # scaled with the mask's −∞ in it
                true = call.truth["masked"]
            if _close(mine, true):
                report.checked.append((call.head, name))
                continue
            report.difference = _difference(d, call, name, mine, true)
            return report
    return report


def _difference(d: Derivation, call: Call, name: str, mine: np.ndarray, true: np.ndarray):  # type: ignore[no-untyped-def]
    step = d.step(name, call.head) if d.has(name, call.head) else None
    rows = step.rows if step else tuple(str(i + 1) for i in range(len(true)))
    cols = step.cols if step else tuple(str(j + 1) for j in range(true.shape[1]))
    if mine.shape != true.shape:
        shapes = f"{name} has shape {mine.shape}; the lesson's is {true.shape}"
        return Difference(name, call.head, "", "", float("nan"), float("nan"), None, shapes)
    where = np.argwhere(~((mine == true) | np.isclose(mine, true, rtol=RTOL, atol=ATOL)))
    i, j = (int(x) for x in where[0])
    mask = call.inputs["mask"]

    def fits(alt: dict[str, np.ndarray]) -> bool:
        if name not in alt:
            return False
        theirs = alt[name]
        masked = name == call.unmasked and _close(mine, _masked(theirs, mask))
        return _close(mine, theirs) or masked

    slip = next((s for s, alt in alternatives(call).items() if fits(alt)), None)
    return Difference(
        name, call.head, rows[i], cols[j], float(mine[i, j]), float(true[i, j]), slip,
        SLIPS.get(slip) if slip else None,
    )  # fmt: skip


def check_function(d: Derivation, fn: Callable[..., object]) -> CodeReport:
    """Call ``fn`` in this process (a notebook's own function) and compare what it returns."""
    results = []
    for call in calls(d):
        inputs = call.inputs
        try:
            value = fn(
                inputs["X"].copy(),  # type: ignore[union-attr]
                inputs["W_Q"].copy(),  # type: ignore[union-attr]
                inputs["W_K"].copy(),  # type: ignore[union-attr]
                inputs["W_V"].copy(),  # type: ignore[union-attr]
                mask=None if inputs["mask"] is None else inputs["mask"].copy(),
            )
            results.append(steps_of(value))
        except TutorError as err:
            return CodeReport(d.lesson.name, problem=str(err))
        except Exception as err:  # the student's code: whatever it raises is theirs to see
            return CodeReport(
                d.lesson.name, problem=f"the function raised {type(err).__name__}: {err}"
            )
    return compare(d, results)


def report_text(r: CodeReport) -> list[str]:
    """The report as lines for a person."""
    if r.problem:
        return [f"✗ {r.problem}"]
    lines = []
    for head, name in r.checked:
        lines.append(f"✓ {name}" + (f" (head {head})" if head else "") + " matches the lesson")
    diff = r.difference
    if diff is not None:
        where = f"{diff.step}[{diff.row}, {diff.col}]" if diff.row else diff.step
        head = f" (head {diff.head})" if diff.head else ""
        if diff.row:
            lines.append(
                f"✗ {where}{head}: your code gives {diff.got:.6g}; the lesson's is "
                f"{diff.expected:.6g}"
            )
        else:
            lines.append(f"✗ {where}{head}: {diff.why}")
        if diff.slip:
            lines.append(f"  {diff.why} ({diff.slip})")
    elif r.ok:
        lines.append("Every step your function returns matches the lesson.")
    return lines


ROOT = str(__import__("pathlib").Path(__file__).resolve().parents[2])  # the folder holding tutor/
TIME_LIMIT = 20  # seconds for the student's file to import and answer every call


def check_file(d: Derivation, path: str, function: str = "attention", limit: float = TIME_LIMIT):  # type: ignore[no-untyped-def]
    """Run the student's file in a separate process (a time limit, their prints kept apart)
    and compare what their function returns. Returns (report, what their code printed)."""
    import json
    import os
    import subprocess
    import sys

    payload = [
        {k: (None if v is None else v.tolist()) for k, v in call.inputs.items()}
        for call in calls(d)
    ]
    here = os.path.dirname(os.path.abspath(path))
    # the tutor first (a student's own numpy.py or tutor/ must not shadow it), their folder last
    boot = (
        "import sys; sys.path[:] = [p for p in sys.path if p not in ('', '.')]; "
        f"sys.path.insert(0, {ROOT!r}); sys.path.append({here!r}); "
        "from tutor.assess.run_student import main; main()"
    )
    try:
        done = subprocess.run(
            [sys.executable, "-c", boot, os.path.abspath(path), function],
            input=json.dumps(payload),
            capture_output=True,
            text=True,
            timeout=limit,
            cwd=here,
        )
    except subprocess.TimeoutExpired as err:
        printed = err.stderr.decode(errors="replace") if isinstance(err.stderr, bytes) else ""
        return CodeReport(
            d.lesson.name,
            problem=f"your code did not finish within {limit:g} s (a loop that never ends?)",
        ), printed
    printed = done.stderr
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    try:
        doc = json.loads(lines[-1])
    except (IndexError, ValueError):
        return CodeReport(
            d.lesson.name, problem=f"your code ended before answering (exit {done.returncode})"
        ), printed
    if "problem" in doc:
        return CodeReport(d.lesson.name, problem=doc["problem"]), printed
    results = [{k: np.array(v, dtype=np.float64) for k, v in r.items()} for r in doc["results"]]
    return compare(d, results), printed
