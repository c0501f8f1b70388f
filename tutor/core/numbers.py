"""Text to exact numbers, without eval.

Two readers live here:

* ``parse_entry`` reads a lesson entry (integer, decimal or fraction) into an exact
  ``(numerator, denominator)`` pair of ints. It needs no sympy, so commands that only list
  lessons stay fast.
* ``parse_answer`` reads what a student types (also ``sqrt(2)``, ``e^1.41/(1+e^2)``...) into an
  exact sympy expression by walking a whitelisted Python ``ast``; nothing is ever evaluated by
  Python itself, and sizes are capped before anything is built.
"""

from __future__ import annotations

import ast
import math
import re
from typing import TYPE_CHECKING

from tutor.core.errors import AnswerError
from tutor.core.records import record

if TYPE_CHECKING:
    import sympy

MAX_DIGITS = 30  # digits in one literal
MAX_EXPONENT = 30  # |n| in 1e-n style literals
MAX_ANSWER_CHARS = 200
MAX_ANSWER_NODES = 80
MAX_LOG10 = 60  # no intermediate value may exceed 1e60 in size
MAX_POWER_DIGITS = 2000  # |exponent| × digits in the base: the size of an exact power
MAX_WORKING = 120  # digits sympy may work to before a value that cancels is given up on
UNCHECKABLE = (
    f"it is not a number I can check (its value cannot be told apart from 0 to {MAX_WORKING} "
    "digits; write it more simply)"
)

_ENTRY = re.compile(
    r"""^(?P<sign>[+-])?
    (?:
        (?P<num>\d+)\s*/\s*(?P<den>\d+)                       # fraction 3/4
      | (?P<int>\d+)(?:\.(?P<frac>\d*))?(?:[eE](?P<exp>[+-]?\d+))?   # 12, 1.5, 2e3
      | \.(?P<frac2>\d+)(?:[eE](?P<exp2>[+-]?\d+))?             # .5
    )$""",
    re.VERBOSE,
)

EXPECTED_NUMBER = 'a number: an integer (3), a decimal (0.25) or a fraction in quotes ("1/3")'
# on a command line a fraction needs no quotes (quotes are YAML advice for lesson files)
EXPECTED_ARGUMENT = "a number: an integer (3), a decimal (0.25) or a fraction (1/3)"


def parse_entry(text: str, expected: str = EXPECTED_NUMBER) -> tuple[int, int]:
    """Read an integer, decimal or fraction exactly: ``"0.1"`` gives ``(1, 10)``.

    Raises ``AnswerError`` with a message saying what was found and ``expected``.
    """
    s = text.strip().replace("\u2212", "-")
    m = _ENTRY.match(s)
    if not m:
        raise AnswerError(f"found {text!r}, expected {expected}")
    digits = sum(ch.isdigit() for ch in s)
    if digits > MAX_DIGITS:
        raise AnswerError(f"found a number with {digits} digits; at most {MAX_DIGITS} are allowed")
    sign = -1 if m["sign"] == "-" else 1
    if m["num"] is not None:
        p, q = int(m["num"]), int(m["den"])
        if q == 0:
            raise AnswerError(f"found {text!r}, a division by zero; expected a number")
    else:
        whole = m["int"] or ""
        frac = m["frac"] if m["int"] is not None else m["frac2"]
        frac = frac or ""
        exp_text = m["exp"] if m["int"] is not None else m["exp2"]
        exp = int(exp_text) if exp_text else 0
        if abs(exp) > MAX_EXPONENT:
            raise AnswerError(f"found exponent {exp} in {text!r}; at most ±{MAX_EXPONENT} allowed")
        p, q = int(whole + frac or "0"), 10 ** len(frac)
        if exp >= 0:
            p *= 10**exp
        else:
            q *= 10**-exp
    g = math.gcd(p, q)
    return sign * p // g, q // g


def read_typed(text: str, expected: str = EXPECTED_ARGUMENT) -> tuple[int, int] | sympy.Expr:
    """A number a person typed anywhere (``softmax``, ``--times``, ``--x``, the explorer's edit),
    read as the quiz reads an answer: a plain number or fraction exactly as ``(p, q)``; anything
    else (``4/sqrt(2)``, ``2/√2``, ``e^1.41``) through the answer reader (never eval), as
    ``(p, q)`` when it is rational and as an exact sympy expression when it is not. The error
    for text that is no number at all is the plain reader's (it says what was expected)."""
    try:
        return parse_entry(text, expected)
    except AnswerError as plain:
        if len(text) > MAX_ANSWER_CHARS or not re.search(r"[\d√π]|\be\b", text):
            raise
        first = plain
    try:
        value = parse_answer(text)
    except AnswerError as err:  # an expression gets the answer reader's reason; a word, ours
        written = re.search(r"sqrt|exp|√|\^|\*|\(", text)
        raise (err if written else first) from None
    if value.is_Rational:
        return int(value.p), int(value.q)
    return value


LESSON_NUMBERS = "a lesson's given numbers are exact fractions, such as 1/3 or 0.25"


def read_rational(text: str, expected: str, why: str) -> tuple[int, int]:
    """``read_typed`` where only an exact fraction can go (a lesson's given numbers): an
    irrational value is refused, saying ``why``."""
    value = read_typed(text, expected)
    if isinstance(value, tuple):
        return value
    raise AnswerError(f"found {text!r}, which is not a fraction; {why}")


# ---------------------------------------------------------------------------------------------
# answers


def _tidy(text: str) -> str:
    """Accept the symbols students type: ^ for power, × and · for times, √, unicode minus."""
    s = text.strip()
    for a, b in (("\u2212", "-"), ("×", "*"), ("·", "*"), ("÷", "/"), ("^", "**")):
        s = s.replace(a, b)
    s = re.sub(r"√\s*(\d+(?:\.\d+)?)", r"sqrt(\1)", s)
    s = s.replace("√(", "sqrt(")
    # products written as the walk prints them: 2√2, 2e^√2, 3(1 + e), (1 + e)(2): a number or
    # a closing bracket before a name, a function or a bracket (not 2e5 or 2e-3: exponents)
    s = re.sub(r"(\d|\))\s*(?=(?:sqrt|exp|ln|log|pi)\b|π|\(|e(?![\d+\-\w]))", r"\1*", s)
    # 010 means ten, as in lesson files (Python's grammar would refuse the leading zero)
    s = re.sub(r"(?<![\w.])0+(?=\d)", "", s)
    return s


@record(slots=True)
class Answer:
    """A typed answer, read: its exact value and how it was written."""

    text: str  # as typed, stripped
    value: sympy.Expr  # exact
    exact_form: bool  # no decimal literal (``2``, ``1/3``, ``2/sqrt(2)``), so judged exactly
    plain: bool  # a lone number (``0.16``, ``-2``), not an expression


NEG_INF_SPELLINGS = ("-inf", "-oo", "-∞")  # after the unicode minus becomes "-"


# a lone decimal as Python reads one (ASCII digits only, no leading zeros, no exponent, no
# underscores): ``read_answer``'s shortcut
_PLAIN_DECIMAL = re.compile(
    r"\s*(?P<sign>[-+]?)(?P<number>(?:0|[1-9][0-9]*)(?:\.[0-9]*)?|\.[0-9]+)\s*"
)


def read_answer(text: str) -> Answer:
    """``parse_answer`` plus how the answer was written (for judging and for echoing it).

    Minus infinity, as the walk shows a masked score, is read from ``-inf``, ``-oo``, ``−∞``
    or ``-∞`` (compared as text: these spellings only, nothing is evaluated)."""
    if re.sub(r"\s+", "", text).replace("\u2212", "-").lower() in NEG_INF_SPELLINGS:
        import sympy

        return Answer(text.strip(), -sympy.oo, True, True)
    if (plain := _PLAIN_DECIMAL.fullmatch(text)) is not None and len(text) <= MAX_ANSWER_CHARS:
        # a lone decimal (nearly every entry of a sheet): what the tree below gives for it,
        # without building the tree (one literal, its sign, at most MAX_DIGITS digits)
        import sympy

        try:
            p, q = parse_entry(plain["number"])
        except AnswerError:  # too many digits: said as the tree below says it
            pass
        else:
            value = sympy.Rational(-p if plain["sign"] == "-" else p, q)
            return Answer(text.strip(), value, "." not in plain["number"], True)
    value, src, tree = _parse(text)
    decimals = any(
        re.search(r"[.eE]", ast.get_source_segment(src, node) or "")
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
    )
    body = tree.body
    if isinstance(body, ast.UnaryOp) and isinstance(body.op, ast.USub | ast.UAdd):
        body = body.operand
    return Answer(text.strip(), value, not decimals, isinstance(body, ast.Constant))


def parse_answer(text: str) -> sympy.Expr:
    """Read a typed answer into an exact, real sympy expression.

    Accepts numbers (``0.16``, ``1/3``), ``+ - * / ^ **``, parentheses, ``e``, ``pi`` and the
    functions ``sqrt``, ``exp``, ``ln``/``log``. Raises ``AnswerError`` for anything else, for
    values too large to be a sensible answer, and for non-real results.
    """
    return _parse(text)[0]


def _parse(text: str) -> tuple[sympy.Expr, str, ast.Expression]:
    """The value of a typed answer, with the tidied source and its vetted syntax tree."""
    if len(text) > MAX_ANSWER_CHARS:
        # not the length: a quiz keeps only the start of a very long line (it shows the length)
        raise AnswerError(f"that answer is longer than {MAX_ANSWER_CHARS} characters")
    if re.fullmatch(r"\s*[-+−]?\d+,\d+\s*", text):  # 0,5: a decimal comma
        point = text.strip().replace(",", ".")
        raise AnswerError(
            f"could not read {text.strip()!r} as a number; use a decimal point: {point}"
        )
    src = _tidy(text)
    if not src:
        raise AnswerError("could not read that as a number: the answer is empty")
    if "#" in src:  # Python's tokenizer would drop the rest as a comment: 2#5 read as 2
        raise AnswerError(f"could not read {text.strip()!r} as a number: '#' has no meaning here")
    try:
        tree = ast.parse(src, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        raise AnswerError(f"could not read {text.strip()!r} as a number") from None
    if sum(1 for _ in ast.walk(tree)) > MAX_ANSWER_NODES:
        raise AnswerError("that expression is too long to be an answer")
    try:
        return _Builder(src, text).build(tree.body), src, tree
    except (ValueError, ArithmeticError, TypeError):
        # sympy itself can fail on a legal expression (``sqrt((1e30+138)/(1e30-138))`` raises
        # "is not a prime factor" while it factors): a number it cannot check, not a crash
        raise AnswerError(
            f"{text.strip()!r} is not a number I can check (its exact value is beyond what "
            "the tutor can work out); give a decimal or a simpler form"
        ) from None


class _Builder:
    """Turns a whitelisted ast into sympy objects, checking sizes at every node."""

    def __init__(self, src: str, original: str) -> None:
        import sympy

        self.sp = sympy
        self.src = src
        self.original = original.strip()
        self.names = {"e": sympy.E, "pi": sympy.pi, "π": sympy.pi}
        self.functions = {"sqrt": sympy.sqrt, "exp": sympy.exp, "ln": sympy.log, "log": sympy.log}

    def fail(self, why: str = "") -> AnswerError:
        tail = f": {why}" if why else ""
        return AnswerError(f"could not read {self.original!r} as a number{tail}")

    def build(self, node: ast.AST) -> sympy.Expr:
        value = self._node(node)
        return self.checked(value)

    def checked(self, value: sympy.Expr) -> sympy.Expr:
        sp = self.sp
        if value.has(sp.zoo, sp.nan, sp.oo, -sp.oo):
            raise self.fail("it divides by zero or is undefined")
        approx = self.number(value, sure=False)
        if approx != 0 and abs(approx) > sp.Float(10) ** MAX_LOG10:
            raise self.fail("the number is too large")
        return value

    def number(self, value: sympy.Expr, sure: bool = True) -> sympy.Float:
        """``value`` to 20 significant digits, known to be real, or an ``AnswerError``.

        sympy's strict evaluation raises the working precision (up to ``MAX_WORKING`` digits)
        until the digits are sure. A value that still cannot be told from 0 (an exact 0 not
        written as one: ``sqrt(11+6*sqrt(2))-3-sqrt(2)``) is fine as a term, and is taken as 0
        when not ``sure``; but its sign, and so whether its square root or logarithm is real,
        or whether dividing by it is allowed, is out of reach: not a number we can check.
        Every value is real as built (square roots, logarithms and powers are refused below
        their domains first), so an imaginary part here is a residue of cancellation.
        """
        from sympy.core.evalf import PrecisionExhausted

        try:
            approx = value.evalf(20, strict=True, maxn=MAX_WORKING)
        except PrecisionExhausted:
            if sure:
                raise self.fail(UNCHECKABLE) from None
            return self.sp.Float(0)
        if not approx.is_extended_real:
            raise self.fail(UNCHECKABLE if sure else "it is not a real number")
        return approx

    def _node(self, node: ast.AST) -> sympy.Expr:
        sp = self.sp
        match node:
            case ast.Constant(value=bool()) | ast.Constant(value=complex()):
                raise self.fail()
            case ast.Constant(value=int() | float()):
                seg = ast.get_source_segment(self.src, node) or ""
                try:
                    p, q = parse_entry(seg)
                except AnswerError as err:
                    raise self.fail(str(err)) from None
                return sp.Rational(p, q)
            case ast.Name(id=name) if name in self.names:
                return self.names[name]
            case ast.UnaryOp(op=ast.USub(), operand=x):
                return -self.build(x)
            case ast.UnaryOp(op=ast.UAdd(), operand=x):
                return self.build(x)
            case ast.BinOp(left=a, op=op, right=b):
                return self.binop(self.build(a), op, self.build(b))
            case ast.Call(func=ast.Name(id=name), args=[arg], keywords=[]) if (
                name in self.functions
            ):
                x = self.build(arg)
                if name == "exp" and self.number(x) > 138:
                    raise self.fail("e to that power is too large")
                if name in ("ln", "log") and self.number(x) <= 0:
                    raise self.fail("the logarithm needs a positive number")
                if name == "sqrt" and self.number(x) < 0:
                    raise self.fail("the square root needs a number ≥ 0")
                return self.functions[name](x)
        raise self.fail()

    def binop(self, a: sympy.Expr, op: ast.operator, b: sympy.Expr) -> sympy.Expr:
        match op:
            case ast.Add():
                return self.checked(a + b)
            case ast.Sub():
                return self.checked(a - b)
            case ast.Mult():
                return self.checked(a * b)
            case ast.Div():
                if b == 0 or self.number(b) == 0:
                    raise self.fail("it divides by zero")
                return self.checked(a / b)
            case ast.Pow():
                return self.power(a, b)
        raise self.fail()

    def power(self, a: sympy.Expr, b: sympy.Expr) -> sympy.Expr:
        """a^b, refused before sympy builds it when the value or its exact form is too large.

        The size of a power is judged from log10|a| taken in sympy (a float would underflow to
        0 for a tiny base or round 1 + 1e-30 to 1, and then ``(1 + 1e-30)^1e30`` looks harmless
        while sympy works it out exactly, digit by digit, for ever).
        """
        sp = self.sp
        if a.is_zero:  # sympy knows it is 0 (even when written sqrt(5+2*sqrt(6))-sqrt(2)-sqrt(3))
            if self.number(b) < 0:
                raise self.fail("it divides by zero")
            return self.checked(sp.Pow(sp.Integer(0), b))
        size = abs(self.number(b))
        log10 = sp.log(abs(self.number(a))).evalf(30) / math.log(10)
        if size * abs(log10) > MAX_LOG10:
            raise self.fail("that power is too large")
        digits = sum(len(str(abs(r.p))) + len(str(r.q)) for r in a.atoms(sp.Rational))
        if size * max(digits, 1) > MAX_POWER_DIGITS:
            raise self.fail("that power is too large to work out exactly")
        if self.number(a) < 0 and not b.is_integer:
            raise self.fail("it is not a real number")
        return self.checked(sp.Pow(a, b))
