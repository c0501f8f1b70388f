"""Issue 37: a step is its rule. Each rule of the arithmetic is one class (``tutor.core.engine``
and the two beside it), every consumer asks the rule, and no consumer keeps a copy of one."""

from __future__ import annotations

import ast
import functools
import importlib
import pkgutil
import random
import re
from pathlib import Path

import pytest

import tutor
from tests import lessongen
from tutor.core import decode, engine, positions
from tutor.core.engine import Exact, Step, derive
from tutor.core.lessonfile import load_lesson

TUTOR = Path(tutor.__file__).parent


def rules() -> list[type[Step]]:
    """Every concrete rule: the subclasses of Step, however deep."""
    found, todo = [], list(Step.__subclasses__())
    while todo:
        cls = todo.pop()
        found.append(cls)
        todo += cls.__subclasses__()
    return sorted(found, key=lambda c: c.__name__)


RULES = rules()


def modules() -> list[str]:
    return sorted(
        m.name
        for m in pkgutil.walk_packages([str(TUTOR)], "tutor.")
        if not m.name.endswith("__main__")
    )


def consumers() -> list[tuple[str, functools._SingleDispatchCallable]]:  # type: ignore[name-defined]
    """Every consumer that dispatches on the rule (a ``functools.singledispatch`` over Step)."""
    out = []
    for name in modules():
        module = importlib.import_module(name)
        for attr, fn in sorted(vars(module).items()):
            registry = getattr(fn, "registry", None)
            if registry is None or getattr(fn, "__module__", None) != name:
                continue
            if any(isinstance(k, type) and issubclass(k, Step) for k in registry):
                out.append((f"{name}.{attr}", fn))
    return out


def test_the_rules_are_the_ones_the_engine_makes() -> None:
    names = {c.__name__ for c in RULES}
    assert {"Given", "Product", "Sum", "Scale", "Times", "Mask", "Softmax", "Concat"} <= names
    assert {"Rotate", "Append"} <= names
    assert positions.Rotate in RULES and decode.Append in RULES


@pytest.mark.parametrize("rule", RULES, ids=lambda c: c.__name__)
def test_every_rule_says_how_a_cell_is_made(rule) -> None:  # type: ignore[no-untyped-def]
    """Each rule defines its own sources, combine and NumPy line (not the base's, which fail
    loudly), so a new rule cannot be half made."""
    for method in ("sources", "combine", "numpy"):
        assert getattr(rule, method) is not getattr(Step, method), (rule.__name__, method)


def test_every_consumer_has_a_generic_path() -> None:
    """A consumer that dispatches on the rule handles a rule it has never heard of by asking
    the rule (its sources, ``how``, ``written``, ``numpy``, ``slips``…): its base is a generic
    path, not a refusal, and registrations are kept only where a rule renders differently.
    tests/test_new_rule.py runs a toy rule through every consumer."""
    import inspect

    found = consumers()
    assert found, "no consumer dispatches on the rule"
    refusing = [
        name
        for name, fn in found
        if "raise NotImplementedError" in inspect.getsource(fn.registry[object])
    ]
    assert refusing == []


def registrations() -> int:
    """The registrations a new rule would need: one per consumer that refuses a rule it has
    no registration for (0: a new rule is its class, its kinds entry and its words entry)."""
    import inspect

    return sum(
        "raise NotImplementedError" in inspect.getsource(fn.registry[object])
        for _, fn in consumers()
    )


def test_a_new_rule_needs_no_registration() -> None:
    assert registrations() == 0


def test_no_module_reads_an_op_string() -> None:
    """The ``op`` string is gone: nothing reads ``.op`` of a step (ast's own ``.op`` of an
    operator node, in the number reader, is another thing)."""
    assert not hasattr(Step, "op")
    offenders = []
    for path in TUTOR.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute) and node.attr == "op":
                base = ast.unparse(node.value)
                if not re.fullmatch(r"(body|node|n|expr)", base):
                    offenders.append(f"{path.relative_to(TUTOR)}:{node.lineno} {base}.op")
    assert offenders == []


# the tables: the kinds of step (where each appears), their words, and the lesson file's keys
# (W_Q, Q, … as a lesson writes them); every other module reads names from these
TABLES = ("core/kinds.py", "text/steps.py", "core/spec.py")
ASKING = tuple(
    sorted(
        str(p.relative_to(TUTOR))
        for p in TUTOR.rglob("*.py")
        if str(p.relative_to(TUTOR)) not in TABLES
    )
)
# genuine look-ups of a step by its name (none yet: ``d.step("scaled", h)`` is no comparison)
LOOK_UPS: set[str] = set()


def step_name_lists(text: str) -> list[tuple[int, str]]:
    """Where code compares a step's name with literal step names (``step.name == "Z"``,
    ``name in ("K", "V")``) or lists two or more of them (a tuple, list or set literal)."""
    from tutor.core.kinds import KINDS

    names = {k.name for k in KINDS}

    def named(n: ast.AST) -> bool:
        return (isinstance(n, ast.Name) and n.id in ("name", "step_name")) or (
            isinstance(n, ast.Attribute) and n.attr == "name"
        )

    def literal(n: ast.AST) -> list[str]:
        items = n.elts if isinstance(n, (ast.Tuple, ast.List, ast.Set)) else [n]
        return [e.value for e in items if isinstance(e, ast.Constant) and e.value in names]

    found = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(named(x) for x in sides) and any(literal(x) for x in sides):
                found.add((node.lineno, ast.unparse(node)))
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)) and len(literal(node)) >= 2:
            found.add((node.lineno, ast.unparse(node)))
    return sorted(found)


def test_the_scanner_sees_a_list_of_step_names() -> None:
    text = 'if step.name in ("Q", "K"):\n    pass\nok = name == "Z"\nd.step("scaled", h)\n'
    assert [n for n, _ in step_name_lists(text)] == [1, 1, 3]


def test_no_module_but_the_tables_lists_step_names() -> None:
    """A step is asked what it is (kinds' flags, the words table, its rule), never named in a
    list or compared by name, anywhere in the package but the tables: a new kind of step
    needs its kinds and words entries only."""
    assert len(ASKING) > 100 and "assess/judge.py" in ASKING
    offenders = [
        f"{path}:{n}: {code}"
        for path in ASKING
        for n, code in step_name_lists((TUTOR / path).read_text())
        if f"{path}:{n}" not in LOOK_UPS
    ]
    assert offenders == []


DIAGONAL = re.compile(r"\b([ijk]|row|col)\s*(<=|>=|<|>)\s*([ijk]|row|col)\b(\s*\+\s*\w+)?")


def test_no_module_compares_a_cell_against_the_diagonal_but_the_mask() -> None:
    """The causal mask is one rule (``Mask.hides``): no other module compares a cell's column
    with its row. (A test that fails when someone writes the mask again.)"""
    offenders = []
    for path in TUTOR.rglob("*.py"):
        for n, line in enumerate(path.read_text().splitlines(), 1):
            code = line.split("#", 1)[0]
            m = DIAGONAL.search(code)
            if m and m.group(1) != m.group(3) and {m.group(1), m.group(3)} <= {"i", "j"}:
                offenders.append(f"{path.relative_to(TUTOR)}:{n}: {line.strip()}")
    home = [o for o in offenders if o.startswith("core/engine.py")]
    assert len(home) == 1, home  # Mask.hides itself
    assert [o for o in offenders if not o.startswith("core/engine.py")] == []


@pytest.mark.parametrize("kind", lessongen.KINDS)
def test_every_rule_combines_its_sources_into_its_cells(tmp_path, kind) -> None:  # type: ignore[no-untyped-def]
    """The rule as a student applies it (``combine`` over ``sources``, exact) gives every cell
    the engine computed by its faster routes, on random lessons of every kind."""
    kit = Exact()
    seen = set()
    for seed in range(2):
        path = tmp_path / f"{kind}{seed}.yaml"
        path.write_text(lessongen.kind_text(random.Random(seed), kind))
        d = derive(load_lesson(path))
        for step in d.steps:
            seen.add(type(step))
            n, m = step.shape
            for i in range(n):
                for j in range(m):
                    cell = step.cells[i][j]

                    def value(r: engine.Ref) -> object:
                        return r.step.cells[r.i][r.j].exact

                    got = step.combine(i, j, value, kit)
                    if cell.masked:
                        assert got == kit.hidden, (step.key, i, j)
                    else:
                        assert abs(float(got) - float(cell.approx)) < 1e-9, (step.key, i, j)
    assert engine.Given in seen


def test_the_mask_rule_hides_what_the_derivation_fills() -> None:
    """A causal lesson's masked cells, decoding rows included: the Mask's ``hides`` decides
    what is −∞ in the scores and 0 in the weights, and ``Derivation.fill`` says so."""
    rng = random.Random(3)
    text = lessongen.lesson_text(rng, 3, 3, 2, 2, "i", causal=True)
    text += lessongen.next_list(rng, 3, 2, "i")
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "m.yaml"
        path.write_text(text)
        d = derive(load_lesson(path))
    for mask in (s for s in d.steps if isinstance(s, engine.Mask)):
        scaled = mask.args[0]
        weights = next(s for s in d.steps if s.args == (mask,))
        shift = 0 if mask.name == "masked" else 3
        assert mask.shift == shift
        for i in range(len(mask.rows)):
            for j in range(len(mask.cols)):
                hidden = j > i + shift
                assert mask.hides(i, j) == hidden == mask.cells[i][j].masked
                assert d.mask_fills(scaled, i, j) == hidden == d.mask_fills(weights, i, j)
                filled = d.fill(scaled, i, j)
                assert (filled is not None and filled.masked) == hidden
                zero = d.fill(weights, i, j)
                assert (zero is not None and zero.q == 0) == hidden
