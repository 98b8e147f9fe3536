"""The tiny, safe expression language of world files, and text templates.

Expressions decide visibility (``visible_if``) and goals. They are parsed by
hand into Python closures; nothing is ever passed to ``eval``.

Grammar (lowest precedence first)::

    expr  := and ("or" and)*
    and   := not ("and" not)*
    not   := "not" not | cmp
    cmp   := atom [("==" | "!=" | "<" | "<=" | ">" | ">=" | "contains") atom]
    atom  := "true" | "false" | INT | 'text' | "text" | NAME | "(" expr ")"

A bare ``NAME`` is its value's truth (``dark_theme`` means ``dark_theme ==
true``). ``a contains 'x'`` is a case-insensitive substring test on text.

Templates are display strings such as ``"After {screen_timeout} of
inactivity"``, ``"{battery_saver?On:Off}"`` (picks one of two words by the
value's truth) or ``"{home_address|Set location}"`` (the value, or a fallback
when it is empty/false).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Mapping, Optional, Protocol, Union

__all__ = ["ExprError", "Expr", "Template", "compile_expr", "compile_template"]

#: the value of a state variable (bool, int, choice or text)
Value = Union[bool, int, str]
State = Mapping[str, Value]
#: a compiled (sub)expression
Evaluator = Callable[[State], Value]
#: ("lit", value), ("op", symbol) or ("name", variable)
Token = tuple[str, Value]


class VarInfo(Protocol):
    """What the checker reads of a state variable (a :class:`phonesim.world.VarSpec`)."""

    @property
    def type(self) -> str: ...

    @property
    def options(self) -> list[str]: ...


class ExprError(ValueError):
    """A bad expression or template; the world loader adds file and path."""


@dataclass(frozen=True)
class Expr:
    """A compiled expression: call ``evaluate(state)``; ``names`` are the variables read."""

    source: str
    names: frozenset[str]
    _fn: Evaluator

    def evaluate(self, state: State) -> bool:
        return bool(self._fn(state))


_TOKEN = re.compile(
    r"""\s*(?:
        (?P<num>-?\d+)
      | (?P<str>'[^']*'|"[^"]*")
      | (?P<op>==|!=|<=|>=|<|>|\(|\))
      | (?P<word>[A-Za-z_][A-Za-z0-9_]*)
    )""",
    re.VERBOSE,
)
_KEYWORDS = {"and", "or", "not", "true", "false", "contains"}
_COMPARE = {"==", "!=", "<", "<=", ">", ">=", "contains"}


def _tokenize(src: str) -> list[Token]:
    tokens: list[Token] = []
    pos = 0
    while pos < len(src):
        if src[pos:].strip() == "":
            break
        m = _TOKEN.match(src, pos)
        if not m or m.end() == pos:
            raise ExprError(f"unexpected character {src[pos:].strip()[:1]!r} at position {pos}")
        pos = m.end()
        if m.group("num") is not None:
            tokens.append(("lit", int(m.group("num"))))
        elif m.group("str") is not None:
            tokens.append(("lit", m.group("str")[1:-1]))
        elif m.group("op") is not None:
            tokens.append(("op", m.group("op")))
        else:
            word = m.group("word")
            if word in ("true", "false"):
                tokens.append(("lit", word == "true"))
            elif word in _KEYWORDS:
                tokens.append(("op", word))
            else:
                tokens.append(("name", word))
    return tokens


class _Parser:
    """Recursive descent over the token list; returns (closure, static type, names)."""

    def __init__(self, src: str, variables: Optional[Mapping[str, VarInfo]]):
        self.src = src
        self.tokens = _tokenize(src)
        self.i = 0
        self.variables = variables
        self.names: set[str] = set()

    def peek(self) -> Optional[Token]:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def take(self) -> Token:
        tok = self.peek()
        if tok is None:
            raise ExprError("unexpected end of expression")
        self.i += 1
        return tok

    def parse(self) -> Evaluator:
        if not self.tokens:
            raise ExprError("empty expression")
        fn = self.parse_or()
        if self.peek() is not None:
            raise ExprError(f"unexpected {self.peek()[1]!r} after a complete expression")
        return fn

    def parse_or(self) -> Evaluator:
        left = self.parse_and()
        while self.peek() == ("op", "or"):
            self.take()
            right = self.parse_and()
            left = (lambda a, b: lambda s: bool(a(s)) or bool(b(s)))(left, right)
        return left

    def parse_and(self) -> Evaluator:
        left = self.parse_not()
        while self.peek() == ("op", "and"):
            self.take()
            right = self.parse_not()
            left = (lambda a, b: lambda s: bool(a(s)) and bool(b(s)))(left, right)
        return left

    def parse_not(self) -> Evaluator:
        if self.peek() == ("op", "not"):
            self.take()
            inner = self.parse_not()
            return lambda s: not inner(s)
        return self.parse_cmp()

    def parse_cmp(self) -> Evaluator:
        left, left_info = self.parse_atom()
        tok = self.peek()
        if tok is None or tok[0] != "op" or tok[1] not in _COMPARE:
            return left
        op = self.take()[1]
        right, right_info = self.parse_atom()
        self.check_types(op, left_info, right_info)
        if op == "==":
            return lambda s: left(s) == right(s)
        if op == "!=":
            return lambda s: left(s) != right(s)
        if op == "contains":
            return lambda s: str(right(s)).lower() in str(left(s)).lower()
        compare = {"<": lambda a, b: a < b, "<=": lambda a, b: a <= b,
                   ">": lambda a, b: a > b, ">=": lambda a, b: a >= b}[op]
        return lambda s: compare(left(s), right(s))

    def parse_atom(self) -> tuple[Evaluator, tuple]:
        kind, value = self.take()
        if kind == "lit":
            return (lambda s: value), ("lit", value)
        if kind == "name":
            if self.variables is not None and value not in self.variables:
                known = ", ".join(sorted(self.variables)) or "none"
                raise ExprError(f"unknown variable {value!r} (state variables: {known})")
            self.names.add(value)
            return (lambda s: s[value]), ("var", value)
        if value == "(":
            inner = self.parse_or()
            if self.take() != ("op", ")"):
                raise ExprError("missing ')'")
            return inner, ("expr", None)
        raise ExprError(f"unexpected {value!r}")

    def check_types(self, op: str, left: tuple, right: tuple) -> None:
        """Catch typos early: a choice compared with a value it cannot take, wrong types."""
        if self.variables is None:
            return
        for var_side, lit_side in ((left, right), (right, left)):
            if var_side[0] != "var" or lit_side[0] != "lit":
                continue
            spec = self.variables[var_side[1]]
            lit = lit_side[1]
            vtype = getattr(spec, "type", None)
            if vtype == "choice" and op in ("==", "!=") and lit not in spec.options:
                raise ExprError(
                    f"{lit!r} is not an option of {var_side[1]} (options: {', '.join(spec.options)})"
                )
            expected = {"bool": bool, "choice": str, "text": str, "int": int}.get(vtype)
            if expected is not None and op != "contains" and type(lit) is not expected:
                raise ExprError(f"{var_side[1]} is a {vtype} variable, compared with {lit!r}")
            if op in ("<", "<=", ">", ">=") and vtype != "int":
                raise ExprError(f"{op} needs an int variable, {var_side[1]} is {vtype}")
            if op == "contains" and vtype != "text":
                raise ExprError(f"contains needs a text variable, {var_side[1]} is {vtype}")


def compile_expr(src: str, variables: Optional[Mapping[str, VarInfo]] = None) -> Expr:
    """Parse ``src``; with ``variables`` (name -> VarSpec) also check names and literal types."""
    if not isinstance(src, str):
        raise ExprError(f"an expression must be a string, got {src!r}")
    parser = _Parser(src, variables)
    fn = parser.parse()
    return Expr(source=src, names=frozenset(parser.names), _fn=fn)


# ---------------------------------------------------------------- templates

_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)(?:\?([^:{}]*):([^{}]*)|\|([^{}]*))?\}")


@dataclass(frozen=True)
class Template:
    """A display string with ``{var}`` / ``{var?yes:no}`` / ``{var|fallback}`` placeholders."""

    source: str
    names: frozenset[str]
    _parts: tuple  # str pieces and (name, yes, no, fallback) tuples

    def render(self, state: State) -> str:
        if not self.names:
            return self.source
        out = []
        for part in self._parts:
            if isinstance(part, str):
                out.append(part)
                continue
            name, yes, no, fallback = part
            value = state[name]
            if yes is not None:
                out.append(yes if value else no)
            elif fallback is not None:
                out.append(str(value) if value else fallback)
            elif isinstance(value, bool):
                out.append("On" if value else "Off")
            else:
                out.append(str(value))
        return "".join(out)


def compile_template(src: str, variables: Optional[Mapping[str, VarInfo]] = None) -> Template:
    """Split ``src`` into literal text and placeholders; check names against ``variables``."""
    if "{" not in src and "}" not in src:
        return Template(source=src, names=frozenset(), _parts=(src,) if src else ())  # plain text: most texts
    parts: list = []
    names: set[str] = set()
    pos = 0
    for m in _PLACEHOLDER.finditer(src):
        parts.append(src[pos:m.start()])
        name = m.group(1)
        if variables is not None and name not in variables:
            known = ", ".join(sorted(variables)) or "none"
            raise ExprError(f"unknown variable {name!r} in text {src!r} (state variables: {known})")
        names.add(name)
        parts.append((name, m.group(2), m.group(3), m.group(4)))
        pos = m.end()
    parts.append(src[pos:])
    rest = _PLACEHOLDER.sub("", src)
    if "{" in rest or "}" in rest:
        raise ExprError(f"malformed placeholder in text {src!r}: use {{var}}, {{var?yes:no}} or {{var|fallback}}")
    return Template(source=src, names=frozenset(names), _parts=tuple(p for p in parts if p != ""))
