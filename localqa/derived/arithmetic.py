"""A small arithmetic grammar for derived figures: parsed here, computed exactly, never `eval`ed.

An expression combines numbers and operand names (`revenue_fy2022`) with `+ - * /` (also written
as the minus, multiplication and division signs), `^` for powers (a CAGR's root), parentheses,
and `average(a, b, ...)`:

    expression := sum
    sum        := product (("+" | "-") product)*
    product    := unary (("*" | "/") unary)*
    unary      := "-" unary | power
    power      := atom ("^" unary)?
    atom       := NUMBER | NAME | "(" sum ")" | "average" "(" sum ("," sum)* ")"

Whatever wrote the expression (a model under a JSON schema, the glossary, a question's own
definition), code parses it into a tree and computes it with `decimal` from the operands' values:
no name outside the operands, no function but `average`, no attribute, call or literal of any
other kind can appear, so nothing in an expression can run code. Work is bounded: an expression is
at most `MAX_LENGTH` characters and `MAX_DEPTH` levels deep, and a power's exponent is at most
`MAX_EXPONENT` in size. A result is computed with `PRECISION` significant digits; one that needs more
digits at the decimals asked for is refused (`rounded`), never rounded silently.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Context, Decimal, DecimalException

MAX_LENGTH = 500
MAX_DEPTH = 24
MAX_EXPONENT = 100
# 28 significant digits (decimal's default), exponents bounded so that nothing overflows slowly.
PRECISION = 28
TOO_MANY_DIGITS = f"the figure has more digits than the {PRECISION} localqa computes with"
_CONTEXT = Context(prec=PRECISION, Emax=10**6, Emin=-(10**6))

_TOKEN = re.compile(
    r"\s*(?:(?P<number>\d+(?:,\d{3})*(?:\.\d+)?|\.\d+)|(?P<name>[A-Za-z_][A-Za-z0-9_]*)|(?P<op>[-+*/^(),\u2212\u00d7\u00f7]))"
)
_SAME = {"\u2212": "-", "\u00d7": "*", "\u00f7": "/"}
FUNCTIONS = ("average",)


class ExpressionError(ValueError):
    """An expression that does not parse, names an unknown operand, or cannot be computed
    (division by zero, a root of a negative number). The message says which."""


@dataclass(frozen=True)
class Number:
    value: Decimal


@dataclass(frozen=True)
class Name:
    name: str


@dataclass(frozen=True)
class Negate:
    operand: Node


@dataclass(frozen=True)
class Binary:
    op: str  # + - * / ^
    left: Node
    right: Node


@dataclass(frozen=True)
class Average:
    items: tuple[Node, ...]


Node = Number | Name | Negate | Binary | Average


@dataclass(frozen=True)
class Expression:
    """A parsed expression: its tree and the text it was parsed from."""

    text: str
    tree: Node

    def names(self) -> list[str]:
        """The operand names it uses, in order of first use."""
        found: dict[str, None] = {}
        _walk_names(self.tree, found)
        return list(found)

    def numbers(self) -> list[Decimal]:
        """The numbers written in it (constants such as 100 or 365), in order."""
        found: list[Decimal] = []
        _walk_numbers(self.tree, found)
        return found

    def evaluate(self, values: Mapping[str, Decimal]) -> Decimal:
        """The exact value with `values` for the names; ExpressionError when a name has no value
        or the arithmetic is undefined."""
        try:
            return _evaluate(self.tree, values)
        except DecimalException as error:
            raise ExpressionError(f"{self.text!r} cannot be computed: {_why(error)}") from None

    def render(self, shown: Mapping[str, str]) -> str:
        """The expression written out with each name replaced by `shown[name]` (an operand's value
        as the document writes it): `(1,800 - 1,600) / 1,600`, in the minus and multiplication
        signs a reader writes."""
        return _render(self.tree, shown, 0)


def parse(text: str) -> Expression:
    """Parse `text` by the grammar of the module docstring; ExpressionError saying where it
    fails otherwise."""
    if len(text) > MAX_LENGTH:
        raise ExpressionError(f"an expression is at most {MAX_LENGTH} characters")
    parser = _Parser(_tokens(text))
    tree = parser.sum(0)
    if parser.peek() is not None:
        raise ExpressionError(f"unexpected {parser.peek()!r} in {text!r}")
    return Expression(text, tree)


def rounded(number: Decimal, decimals: int) -> Decimal:
    """`number` rounded half up to `decimals` places; ExpressionError when that takes more than
    `PRECISION` digits (net sales ^ 10): such a figure cannot be computed exactly, so none is shown."""
    try:
        return number.quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_UP, context=_CONTEXT)
    except DecimalException:
        raise ExpressionError(
            f"the figure has more digits than the {PRECISION} localqa computes with"
        ) from None


def _tokens(text: str) -> list[tuple[str, str]]:
    tokens: list[tuple[str, str]] = []
    position = 0
    stripped = text.rstrip()
    while position < len(stripped):
        match = _TOKEN.match(stripped, position)
        if match is None or match.end() == position:
            raise ExpressionError(f"unexpected {stripped[position : position + 10]!r} in {text!r}")
        kind = match.lastgroup
        assert kind is not None
        value = match.group(kind)
        tokens.append((kind, _SAME.get(value, value)))
        position = match.end()
    return tokens


class _Parser:
    def __init__(self, tokens: list[tuple[str, str]]) -> None:
        self.tokens = tokens
        self.at = 0

    def peek(self) -> str | None:
        return self.tokens[self.at][1] if self.at < len(self.tokens) else None

    def take(self) -> tuple[str, str]:
        if self.at >= len(self.tokens):
            raise ExpressionError("the expression ends too early")
        token = self.tokens[self.at]
        self.at += 1
        return token

    def expect(self, op: str) -> None:
        kind, value = self.take()
        if (kind, value) != ("op", op):
            raise ExpressionError(f"expected {op!r}, found {value!r}")

    def sum(self, depth: int) -> Node:
        node = self.product(_deeper(depth))
        while self.peek() in ("+", "-"):
            op = self.take()[1]
            node = Binary(op, node, self.product(_deeper(depth)))
        return node

    def product(self, depth: int) -> Node:
        node = self.unary(_deeper(depth))
        while self.peek() in ("*", "/"):
            op = self.take()[1]
            node = Binary(op, node, self.unary(_deeper(depth)))
        return node

    def unary(self, depth: int) -> Node:
        if self.peek() == "-":
            self.take()
            return Negate(self.unary(_deeper(depth)))
        return self.power(_deeper(depth))

    def power(self, depth: int) -> Node:
        node = self.atom(_deeper(depth))
        if self.peek() == "^":
            self.take()
            node = Binary("^", node, self.unary(_deeper(depth)))
        return node

    def atom(self, depth: int) -> Node:
        kind, value = self.take()
        if kind == "number":
            return Number(Decimal(value.replace(",", "")))
        if kind == "name" and value.lower() in FUNCTIONS and self.peek() == "(":
            self.take()
            items = [self.sum(_deeper(depth))]
            while self.peek() == ",":
                self.take()
                items.append(self.sum(_deeper(depth)))
            self.expect(")")
            return Average(tuple(items))
        if kind == "name":
            return Name(value)
        if value == "(":
            node = self.sum(_deeper(depth))
            self.expect(")")
            return node
        raise ExpressionError(f"unexpected {value!r}")


def _deeper(depth: int) -> int:
    if depth >= MAX_DEPTH * 6:  # six grammar levels per nesting level
        raise ExpressionError(f"an expression nests at most {MAX_DEPTH} levels deep")
    return depth + 1


def _walk_names(node: Node, found: dict[str, None]) -> None:
    if isinstance(node, Name):
        found.setdefault(node.name, None)
    elif isinstance(node, Negate):
        _walk_names(node.operand, found)
    elif isinstance(node, Binary):
        _walk_names(node.left, found)
        _walk_names(node.right, found)
    elif isinstance(node, Average):
        for item in node.items:
            _walk_names(item, found)


def _walk_numbers(node: Node, found: list[Decimal]) -> None:
    if isinstance(node, Number):
        found.append(node.value)
    elif isinstance(node, Negate):
        _walk_numbers(node.operand, found)
    elif isinstance(node, Binary):
        _walk_numbers(node.left, found)
        _walk_numbers(node.right, found)
    elif isinstance(node, Average):
        for item in node.items:
            _walk_numbers(item, found)


def _evaluate(node: Node, values: Mapping[str, Decimal]) -> Decimal:
    if isinstance(node, Number):
        return node.value
    if isinstance(node, Name):
        if node.name not in values:
            raise ExpressionError(f"{node.name!r} is not one of the operands")
        return values[node.name]
    if isinstance(node, Negate):
        return _CONTEXT.minus(_evaluate(node.operand, values))
    if isinstance(node, Average):
        items = [_evaluate(item, values) for item in node.items]
        total = Decimal(0)
        for item in items:
            total = _CONTEXT.add(total, item)
        return _CONTEXT.divide(total, Decimal(len(items)))
    left, right = _evaluate(node.left, values), _evaluate(node.right, values)
    if node.op == "+":
        return _CONTEXT.add(left, right)
    if node.op == "-":
        return _CONTEXT.subtract(left, right)
    if node.op == "*":
        return _CONTEXT.multiply(left, right)
    if node.op == "/":
        return _CONTEXT.divide(left, right)
    if abs(right) > MAX_EXPONENT:
        raise ExpressionError(f"an exponent is at most {MAX_EXPONENT} in size")
    return _CONTEXT.power(left, right)


def _why(error: DecimalException) -> str:
    name = type(error).__name__
    return {
        "DivisionByZero": "division by zero",
        "DivisionUndefined": "division by zero",
        "InvalidOperation": "the operation is undefined (a root of a negative number, 0/0)",
        "Overflow": "the result is too large",
    }.get(name, name)


_PRECEDENCE = {"+": 1, "-": 1, "*": 2, "/": 2, "^": 3}
_SHOWN = {"+": "+", "-": "\u2212", "*": "\u00d7", "/": "/", "^": "^"}


def _render(node: Node, shown: Mapping[str, str], outer: int, first: bool = True) -> str:
    """`node` written out inside an operator of precedence `outer`; `first` when it is written first
    in its term, where a negative operand ("-800") needs no parentheses: "-800 / 8,000", but
    "200 \u2212 (-800)" and "(-2)^2"."""
    if isinstance(node, Number):
        return format(node.value, "f")
    if isinstance(node, Name):
        text = shown.get(node.name, node.name)
        negative = text.startswith(("-", "\u2212"))
        return f"({text})" if negative and (not first or outer > _PRECEDENCE["*"]) else text
    if isinstance(node, Negate):
        return f"\u2212{_render(node.operand, shown, 4, first=False)}"
    if isinstance(node, Average):
        return f"average({', '.join(_render(item, shown, 0) for item in node.items)})"
    precedence = _PRECEDENCE[node.op]
    bracketed = precedence < outer
    # The right side of - and / (and the left of ^) binds tighter, so equal precedence there
    # keeps its parentheses: a - (b - c), a / (b * c).
    left = _render(node.left, shown, precedence + (node.op == "^"), first or bracketed)
    right = _render(node.right, shown, precedence + (node.op in "-/"), first=False)
    text = f"{left}{_SHOWN[node.op]}{right}" if node.op == "^" else f"{left} {_SHOWN[node.op]} {right}"
    return f"({text})" if bracketed else text
