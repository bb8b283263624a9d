"""A safe arithmetic evaluator: parses with `ast` and walks a whitelist of nodes.

No names, calls, attributes or subscripts: only numbers, + - * / // % ** and unary signs,
with caps on the expression length, exponent size and result magnitude.
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable

MAX_EXPRESSION_CHARS = 300
MAX_EXPONENT = 64
MAX_MAGNITUDE = 1e30

_BINARY: dict[type[ast.operator], Callable[[float, float], float]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_UNARY: dict[type[ast.unaryop], Callable[[float], float]] = {
    ast.UAdd: operator.pos,
    ast.USub: operator.neg,
}
_ALIASES = {"×": "*", "·": "*", "÷": "/", "−": "-", "^": "**", "x": "*"}


class CalcError(ValueError):
    """The expression is not allowed or cannot be evaluated; the message says why."""


def normalize(expression: str) -> str:
    text = expression.strip().rstrip("=").strip()
    for alias, op in _ALIASES.items():
        text = text.replace(alias, op)
    return text.replace(",", "")


def _eval(node: ast.AST) -> float:
    if isinstance(node, ast.Expression):
        return _eval(node.body)
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return node.value
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_eval(node.operand))
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _eval(node.left), _eval(node.right)
        if isinstance(node.op, ast.Pow) and abs(right) > MAX_EXPONENT:
            raise CalcError(f"exponent {right:g} is too large (max {MAX_EXPONENT})")
        try:
            value = _BINARY[type(node.op)](left, right)
        except ZeroDivisionError:
            raise CalcError("division by zero") from None
        if isinstance(value, complex):
            raise CalcError("the result is not a real number")
        if abs(value) > MAX_MAGNITUDE:
            raise CalcError("the result is too large")
        return value
    raise CalcError(f"'{ast.unparse(node)}' is not allowed: use numbers and + - * / // % ** ( )")


def evaluate(expression: str) -> float:
    """Evaluate an arithmetic expression safely. Raises CalcError with a clear message."""
    text = normalize(expression)
    if not text:
        raise CalcError("empty expression")
    if len(text) > MAX_EXPRESSION_CHARS:
        raise CalcError(f"expression longer than {MAX_EXPRESSION_CHARS} characters")
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError:
        raise CalcError(f"cannot parse '{expression}'") from None
    value = _eval(tree)
    if isinstance(value, float) and not math.isfinite(value):
        raise CalcError("the result is not finite")
    return value


def format_number(value: float) -> str:
    """Integers without a decimal point; other values with up to 10 significant digits."""
    if isinstance(value, int) or (isinstance(value, float) and value.is_integer()):
        return str(int(value))
    return f"{value:.10g}"


def parse_number(text: str) -> float | None:
    """A number from an answer such as '42', ' 42.0 ', '1,000' or '= 7'; None if not one."""
    cleaned = normalize(str(text)).strip().rstrip(".")
    try:
        return float(cleaned)
    except ValueError:
        return None
