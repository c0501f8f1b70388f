"""Checking a student's own NumPy attention against the lesson, step by step.

The student writes ``attention(X, W_Q, W_K, W_V, mask=None)`` returning Z, or ``(Z, steps)``, or
a dict of steps (any of ``Q``, ``K``, ``V``, ``scores``, ``scaled``, ``weights``, ``Z``). ``mask``
is None, or (for ``mask: causal``) an N × N array of booleans, True where a token may look.
Each step returned is compared with the lesson's exact values (as float64); the first that
differs is reported: the cell, both values, and the classic slip that explains it when one does
(forgot √d_k, divided by d_k, softmax over the wrong axis, K instead of Kᵀ, mask after softmax,
no mask). A lesson with several heads calls the function once per head. A lesson with its own
``scale:`` also passes ``scale=``, the number its scores are divided by (1 for ``none``), and
one with biases ``b_Q=``, ``b_K=``, ``b_V=`` (1-D arrays, the head's).

Pure: values in, a ``CodeReport`` out. Running the student's file is ``run_student``'s job (a
separate process, with a time limit); ``check_function`` here calls a function in-process.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from tutor.core import kinds
from tutor.core.engine import Derivation, Step
from tutor.core.errors import TutorError
from tutor.core.spec import BIASES

if TYPE_CHECKING:
    from tutor.assess.walls import Walls

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
    # keywords passed besides mask, only for a lesson that has them (issue 41): ``scale``, the
    # number the scores are divided by, for a lesson with its own ``scale:``, and the head's
    # biases ``b_Q``, ``b_K``, ``b_V`` (each a 1-D array), for a lesson that gives them
    extra: dict[str, object] = field(default_factory=dict)


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
        if "scaled" not in truth:  # scale: none: the scaled scores are the scores
            truth["scaled"] = truth["scores"]
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
        extra: dict[str, object] = {}
        if d.lesson.scale != "sqrt_d_k":  # the lesson's own scale, as a number to divide by
            extra["scale"] = scale_number(d.lesson.divisor(len(inputs["W_K"][0])))  # type: ignore[index]
        head = d.lesson.heads[(h or 1) - 1]  # (a grouped head carries its group's b_K, b_V)
        for key in BIASES:
            row = getattr(head, key)
            if row is not None:
                extra[key] = np.array([p / q for p, q in row], dtype=np.float64)
        out.append(Call(h, inputs, truth, unmasked, extra))
    return out


def scale_number(divisor: int | tuple[int, int] | None) -> float:
    """What the scores are divided by, as a float: √n, p/q, or 1 (no scaling)."""
    if divisor is None:
        return 1.0
    if isinstance(divisor, tuple):
        return divisor[0] / divisor[1]
    return float(np.sqrt(divisor))


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
    "usual-scale": "the scores are divided by √d_k; this lesson divides them by `scale`",
    "forgot-bias": "the bias is not added: Q = X @ W_Q + b_Q (and likewise K and V)",
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

    s = call.extra.get("scale", np.sqrt(d_k))  # what the lesson divides the scores by
    if s != 1:
        after("not-scaled", scores, scores, _softmax(_masked(scores, mask)))
    if "scale" in call.extra:  # the lesson's own scale: dividing by √d_k is the slip
        if s != np.sqrt(d_k):
            usual = scores / np.sqrt(d_k)
            after("usual-scale", scores, usual, _softmax(_masked(usual, mask)))
    else:
        after("divided-by-dk", scores, scores / d_k, _softmax(_masked(scores / d_k, mask)))
    scaled = scores / s
    after("softmax-column", scores, scaled, _softmax(_masked(scaled, mask), axis=0))
    if Q.shape == K.T.shape:  # Q @ K has the scores' shape only here
        wrong = Q @ K
        after("k-not-transposed", wrong, wrong / s, _softmax(_masked(wrong / s, mask)))
    kq = K @ Q.T
    after("key-query", kq, kq / s, _softmax(_masked(kq / s, mask)))
    if any(key in call.extra for key in BIASES):  # X @ W alone, no bias added (issue 41)
        X = call.inputs["X"]
        Qb, Kb, Vb = (X @ call.inputs[w] for w in BIASES.values())  # type: ignore[operator]
        bare = Qb @ Kb.T
        weights_ = _softmax(_masked(bare / s, mask))
        out["forgot-bias"] = {
            "Q": Qb, "K": Kb, "V": Vb, "scores": bare, "scaled": bare / s,
            "weights": weights_, "Z": weights_ @ Vb,
        }  # fmt: skip
    if mask is not None:
        after("mask-after-softmax", scores, scaled, np.where(mask, _softmax(scaled), 0.0))
        after("forgot-mask", scores, scaled, _softmax(scaled))
    return out


def _close(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and bool(
        np.all((a == b) | np.isclose(a, b, rtol=RTOL, atol=ATOL))  # −∞ == −∞ where masked
    )


def describe(err: BaseException, bare: bool = False) -> str:
    """An exception as ``Kind: message``, without trusting it: a ``__str__`` that raises or
    returns no text gives a safe description, and a long message is cut. ``bare``: the message
    alone (the tutor's own errors)."""
    try:
        kind = str(type(err).__name__)
    except BaseException:
        kind = "an exception"
    try:
        text = str(err)
        if not isinstance(text, str):
            raise TypeError
    except BaseException:
        text = "(its message cannot be shown: its __str__ fails)"
    if len(text) > MESSAGE_CAP:
        text = f"{text[:MESSAGE_CAP]}… ({len(text) - MESSAGE_CAP:,} more characters)"
    if bare:
        return text
    return f"{kind}: {text}" if text else kind


MESSAGE_CAP = 500  # characters of an exception's message shown


def as_array(name: str, value: object) -> np.ndarray:
    """One returned step as a float64 matrix; a ``TutorError`` naming what it is otherwise
    (complex, text or objects, ragged rows, not two dimensions)."""
    import warnings

    what = f"the function's {name}"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            raw = np.asarray(value)
    except Exception as err:
        if isinstance(value, list | tuple):
            raise TutorError(f"{what} is ragged: its rows have different lengths") from None
        raise TutorError(f"{what} is not an array of numbers ({describe(err)})") from None
    if raw.dtype.kind == "c":
        raise TutorError(
            f"{what} holds complex numbers (dtype {raw.dtype}); attention's values are real"
        )
    if raw.dtype.kind not in "biuf":
        numbers = raw.dtype.kind == "O" and all(
            isinstance(x, int | float) and not isinstance(x, bool) for x in raw.flat
        )  # Python numbers in an object array are numbers after all
        if not numbers or raw.size == 0:
            first = next(iter(raw.flat), None) if raw.dtype.kind == "O" else None
            kind = {"U": "text", "S": "bytes", "M": "dates", "m": "durations"}.get(
                raw.dtype.kind, f"{type(first).__name__} objects"
            )
            raise TutorError(f"{what} is not an array of numbers: it holds {kind}")
    arr = raw.astype(np.float64)
    if arr.ndim != 2:
        raise TutorError(f"{what} has {arr.ndim} dimensions; expected 2")
    return arr


def steps_of(result: object) -> dict[str, np.ndarray]:
    """The steps a function returned: Z, (Z, steps) or a dict of steps; raise ``TutorError``."""
    steps: dict[str, object]
    if isinstance(result, dict):
        steps = dict(result)
    elif isinstance(result, tuple | list) and len(result) == 2 and isinstance(result[1], dict):
        steps = {**result[1], "Z": result[0]}
    else:
        steps = {"Z": result}
    out = {}
    for name, value in steps.items():
        if not isinstance(name, str) or name not in ORDER:
            continue  # other keys are the student's own
        out[name] = as_array(name, value)
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
                **call.extra,
            )
            results.append(steps_of(value))
        except TutorError as err:
            return CodeReport(d.lesson.name, problem=str(err))
        except Exception as err:  # the student's code: whatever it raises is theirs to see
            return CodeReport(d.lesson.name, problem=f"the function raised {describe(err)}")
    return compare(d, results)


def _shown(x: float) -> str:
    """A value for the report: NaN and the infinities named, as the student may not know them."""
    if x != x:
        return "NaN (not a number)"
    if x in (float("inf"), float("-inf")):
        return f"{'−' if x < 0 else ''}inf (infinite)"
    return f"{x:.6g}"


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
                f"✗ {where}{head}: your code gives {_shown(diff.got)}; the lesson's is "
                f"{_shown(diff.expected)}"
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
PRINT_CAP = 4000  # bytes of what the student's code prints that are kept and shown


def check_file(  # type: ignore[no-untyped-def]
    d: Derivation,
    path: str,
    function: str = "attention",
    limit: float = TIME_LIMIT,
    walls: Walls | None = None,
    cancel: threading.Event | None = None,
):
    """Run the student's file in a separate process (a time limit, their prints kept apart)
    and compare what their function returns. Returns (report, what their code printed).

    The answer comes back on a pipe of its own, framed with a nonce and its length, so nothing
    the student's code prints or forges is taken for it; their prints are read as they come and
    kept up to ``PRINT_CAP`` bytes; their process starts a session of its own, and its whole
    group is ended when the answer is in, the time is up, or the command is interrupted.

    With ``walls`` (a class folder), the file runs behind them (``tutor.assess.walls``): limits
    on memory, CPU time and file size, a fresh empty working folder (deleted after), a scrubbed
    environment, its own namespaces and Landlock rules where the machine allows; its folder is
    not put on ``sys.path`` (the files beside it are other students'). ``cancel`` set: it is
    ended at once (Ctrl-C while a class is checked)."""
    import json
    import os
    import secrets
    import sys
    import tempfile

    todo = calls(d)
    biggest = max(t.size for c in todo for t in c.truth.values())
    job = {
        "nonce": secrets.token_hex(16),
        "limit": biggest,  # a step larger than any of the lesson's comes back as its shape
        "calls": [
            {k: (None if v is None else v.tolist()) for k, v in call.inputs.items()}
            | {
                "extra": {
                    k: v.tolist() if isinstance(v, np.ndarray) else v for k, v in call.extra.items()
                }
            }
            for call in todo
        ],
    }
    cap = 4096 + 40 * biggest * len(ORDER) * len(todo)  # the answer's bytes, at most
    here = os.path.dirname(os.path.abspath(path))
    if walls is None:
        # the tutor first (a student's own numpy.py or tutor/ must not shadow it), their folder
        # last
        boot = (
            "import sys; sys.path[:] = [p for p in sys.path if p not in ('', '.')]; "
            f"sys.path.insert(0, {ROOT!r}); sys.path.append({here!r}); "
            "from tutor.assess.run_student import main; main()"
        )
        argv = [sys.executable, "-c", boot, os.path.abspath(path), function]
        run = _run_child(argv, json.dumps(job).encode(), here, limit, job["nonce"], cap)
    else:
        cwd = tempfile.mkdtemp(prefix="attn-tutor-check-")
        try:
            argv = _walled_argv(walls, cwd, os.path.abspath(path), function)
            run = _run_child(
                argv, json.dumps(job).encode(), cwd, limit, job["nonce"], cap,
                env=_scrubbed(cwd), cancel=cancel,
            )  # fmt: skip
        finally:
            _reap(cwd)
            _remove(cwd)
    printed = run.printed.decode(errors="replace")
    if run.cut:
        printed += f"\n… and {run.cut:,} more bytes it printed, not shown"
    name = d.lesson.name
    if run.timed_out:
        why = f"your code did not finish within {limit:g} s (a loop that never ends?)"
        return CodeReport(name, problem=why), printed
    if run.answer is None and walls is not None and run.signal in WALL_SIGNALS:
        return CodeReport(name, problem=f"your code {WALL_SIGNALS[run.signal]}"), printed
    if run.answer is None:
        why = f"your code ended before answering{run.why}"
        return CodeReport(name, problem=why), printed
    try:
        doc = json.loads(run.answer)
        if isinstance(doc, dict) and isinstance(doc.get("problem"), str):
            return CodeReport(name, problem=doc["problem"][: 4 * MESSAGE_CAP]), printed
        results = _results(doc, len(todo))
    except (ValueError, TypeError, KeyError, AttributeError, RecursionError):
        why = "the answer of your code's process could not be read (did your code change json?)"
        return CodeReport(name, problem=why), printed
    return compare(d, results), printed


def _results(doc: object, count: int) -> list[dict[str, np.ndarray]]:
    """The steps of each call from the child's answer; ValueError when it is not one."""
    if not isinstance(doc, dict) or not isinstance(doc.get("results"), list):
        raise ValueError("no results")
    if len(doc["results"]) != count:
        raise ValueError("a result per call")
    out = []
    for r in doc["results"]:
        steps = {}
        for k, v in r.items():
            if k not in ORDER:
                raise ValueError(k)
            shape = tuple(v["shape"])
            if len(shape) != 2 or not all(type(n) is int and n >= 0 for n in shape):
                raise ValueError("shape")
            if v["values"] is None:  # larger than any step of the lesson: its shape is enough
                steps[k] = np.broadcast_to(np.float64(np.nan), shape)
                continue
            arr = np.array(v["values"], dtype=np.float64).reshape(shape)
            steps[k] = arr
        if not steps:
            raise ValueError("no steps")
        out.append(steps)
    return out


WALL_SIGNALS = {  # how a walled child ended, said to the student
    int(signal.SIGXCPU): "used up its CPU time (a loop that never ends?)",
    int(signal.SIGXFSZ): "wrote a file larger than the cap on file size",
    int(signal.SIGKILL): "was killed (by the system: out of memory?)",
}


def _walled_argv(walls: Walls, cwd: str, path: str, function: str) -> list[str]:
    """The command that starts a student's file behind the walls: isolated Python (no user
    site, no PYTHON* variables), the walls entered before anything else is imported."""
    import sys

    from tutor.assess.walls import UNSHARE

    boot = (
        f"import sys; sys.path[:] = [p for p in sys.path if p not in ('', '.')]; "
        f"sys.path.insert(0, {ROOT!r}); "
        "from tutor.assess.walls import enter; "
        f"enter({walls.memory}, {walls.cpu}, {walls.fsize}, {cwd!r}, {walls.landlock}, "
        f"{walls.space}, {walls.no_fork!r}); "
        "from tutor.assess.run_student import main; main()"
    )
    argv = [sys.executable, "-I", "-c", boot, path, function]
    return [*UNSHARE, *argv] if walls.unshare else argv


def _scrubbed(cwd: str) -> dict[str, str]:
    """The child's whole environment: no HOME of the instructor's, no tokens, no PYTHONPATH;
    one thread for NumPy's BLAS (a thread pool per file would overrun the memory cap)."""
    import os

    env = {"PATH": os.defpath, "LANG": "C.UTF-8", "HOME": cwd, "TMPDIR": cwd}
    for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        env[name] = "1"
    return env


def _reap(cwd: str) -> None:
    """End what a walled child left behind outside its process group (without namespaces, a
    process that called setsid survives the group's end): every process whose command line or
    environment names the child's own working folder, which no other process has a reason to."""
    import os
    import signal
    import time

    mark = cwd.encode()
    quiet = 0  # rounds in a row that found nothing: a process mid-fork may show up late
    for _ in range(40):  # what one round ends may have forked in the meantime (at most ~1 s)
        found = []
        for pid in os.listdir("/proc") if os.path.isdir("/proc") else []:
            if not pid.isdigit() or int(pid) == os.getpid():
                continue
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    named = mark in f.read()
                if not named:
                    with open(f"/proc/{pid}/environ", "rb") as f:
                        named = b"HOME=" + mark + b"\0" in f.read()
            except OSError:
                continue
            if named:
                found.append(int(pid))
        quiet = 0 if found else quiet + 1
        if quiet == 2:
            return
        for pid in found:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.025)


def _remove(folder: str) -> None:
    """Remove a child's working folder, folders it made unwritable or unreadable included."""
    import os
    import shutil

    for root, dirs, _ in os.walk(folder):  # top down: each folder opened before it is entered
        for name in dirs:
            with contextlib.suppress(OSError):
                os.chmod(os.path.join(root, name), 0o700, follow_symlinks=False)
    shutil.rmtree(folder, ignore_errors=True)


@dataclass
class _Run:
    answer: bytes | None = None  # the answer record's body, when one came
    printed: bytes = b""  # the first PRINT_CAP bytes the student's code printed
    cut: int = 0  # how many more bytes it printed
    timed_out: bool = False
    why: str = ""  # why no answer came: the exit status, a wrong record
    signal: int | None = None  # the signal that ended it, when one did before its answer


def _run_child(
    argv: list[str],
    job: bytes,
    cwd: str,
    limit: float,
    nonce: str,
    cap: int,
    env: dict[str, str] | None = None,
    cancel: threading.Event | None = None,
) -> _Run:
    """Run the child until its answer record is in (or it ends, or the time is up, or
    ``cancel`` is set), reading its prints as they come; then end its whole process group."""
    import os
    import selectors
    import signal
    import subprocess
    import threading
    import time

    run = _Run()
    answer_r, answer_w = os.pipe()
    try:
        proc = subprocess.Popen(
            [*argv, str(answer_w)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,  # fd 1 and 2 alike: the student's output, nothing more
            pass_fds=(answer_w,),
            start_new_session=True,  # its own group: ended whole, and Ctrl-C reaches the tutor
            cwd=cwd,
            env=env,
        )
    finally:
        os.close(answer_w)
    assert proc.stdin is not None and proc.stdout is not None

    def feed() -> None:
        try:
            proc.stdin.write(job)  # type: ignore[union-attr]
            proc.stdin.close()  # type: ignore[union-attr]
        except OSError:
            pass  # the child ended without reading: its exit says why

    threading.Thread(target=feed, daemon=True).start()
    out_fd = proc.stdout.fileno()
    record = bytearray()
    header = None
    sel = selectors.DefaultSelector()
    for fd in (out_fd, answer_r):
        os.set_blocking(fd, False)
        sel.register(fd, selectors.EVENT_READ)

    def printed(chunk: bytes) -> None:
        room = max(0, PRINT_CAP - len(run.printed))
        run.printed += chunk[:room]
        run.cut += len(chunk) - min(room, len(chunk))

    def drain(fd: int) -> bool:
        """Read what is there; False at the end of the stream."""
        nonlocal header
        while True:
            try:
                chunk = os.read(fd, 1 << 16)
            except BlockingIOError:
                return True
            if not chunk:
                return False
            if fd == out_fd:
                printed(chunk)
                continue
            record.extend(chunk)
            if header is None and b"\n" in record[:200]:
                line, _, rest = bytes(record).partition(b"\n")
                parts = line.split(b" ")
                ok = len(parts) == 3 and parts[0] == b"ATTN-TUTOR" and parts[2].isdigit()
                if not ok or parts[1] != nonce.encode() or int(parts[2]) > cap:
                    run.why = " (its answer was not the tutor's record)"
                    return False
                header = int(parts[2])
                record[:] = rest
            elif header is None and len(record) >= 200:
                run.why = " (its answer was not the tutor's record)"
                return False
            if header is not None and len(record) >= header:
                run.answer = bytes(record[:header])
                return False

    deadline = time.monotonic() + limit
    try:
        open_fds = {out_fd, answer_r}
        while run.answer is None and not run.why and answer_r in open_fds:
            left = deadline - time.monotonic()
            if left <= 0:
                run.timed_out = True
                break
            if cancel is not None and cancel.is_set():
                break
            for key, _ in sel.select(timeout=min(left, 0.1)):
                if not drain(key.fd):  # type: ignore[arg-type]
                    sel.unregister(key.fd)
                    open_fds.discard(key.fd)  # type: ignore[arg-type]
            if proc.poll() is not None and answer_r in open_fds:  # ended: what is left is all
                if drain(answer_r):  # still open: a child it forked holds the pipe
                    break
                open_fds.discard(answer_r)
        if out_fd in open_fds:
            drain(out_fd)  # what it printed before its answer is already in the pipe
    finally:
        ended = proc.poll()  # before the kill: whether it ended on its own
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)  # the child, its threads and what it forked
        proc.wait()
        sel.close()
        os.close(answer_r)
        proc.stdout.close()
    if run.answer is None and not run.timed_out and not run.why and ended is not None:
        run.why = f" (exit {ended})" if ended >= 0 else f" (ended by signal {-ended})"
        run.signal = -ended if ended < 0 else None
    return run
