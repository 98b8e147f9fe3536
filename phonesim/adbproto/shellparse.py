"""Parse a shell command line the way Android's /system/bin/sh (mksh) would, for
the small subset the simulator supports.

Supported: words with '' and "" quoting and backslash escapes, ``$?``, ``#``
comments, the separators ``;`` ``&&`` ``||`` ``&`` and newlines, pipes ``|``,
and the redirections ``>``, ``>>``, ``<``, ``2>``, ``2>>``, ``2>&1``, ``>&2``.
No variables other than ``$?``, no globbing, no subshells.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from verirank_core.errors import DeviceError

#: placeholder for ``$?`` inside words; replaced when the command runs
STATUS_MARK = "\ue000"

_OPERATORS = ("2>&1", ">&2", "1>&2", "2>>", "2>", "1>>", "1>", "&&", "||", ">>", ";", "&", "|", ">", "<", "\n")
_SEPARATORS = {";", "&", "\n", "&&", "||"}
_REDIRECTS = {"2>&1", ">&2", "1>&2", "2>>", "2>", "1>>", "1>", ">>", ">", "<"}


class ShellSyntaxError(DeviceError):
    """The command line cannot be parsed (e.g. an unterminated quote)."""


@dataclass
class Redirect:
    op: str  # one of _REDIRECTS, normalised: ">", ">>", "2>", "2>>", "2>&1", ">&2", "<"
    target: str = ""


@dataclass
class SimpleCommand:
    argv: list[str] = field(default_factory=list)
    redirects: list[Redirect] = field(default_factory=list)


@dataclass
class Pipeline:
    connector: str  # how it joins the previous one: ";", "&&" or "||"
    commands: list[SimpleCommand]


def tokenize(line: str) -> list[tuple[str, str]]:
    """Split into ("word", text) and ("op", operator) tokens."""
    tokens: list[tuple[str, str]] = []
    word: list[str] = []
    in_word = False
    i, n = 0, len(line)

    def end_word() -> None:
        nonlocal in_word
        if in_word:
            tokens.append(("word", "".join(word)))
            word.clear()
            in_word = False

    while i < n:
        c = line[i]
        if c in " \t\r":
            end_word()
            i += 1
        elif c == "#" and not in_word:
            while i < n and line[i] != "\n":
                i += 1
        elif c == "'":
            close = line.find("'", i + 1)
            if close < 0:
                raise ShellSyntaxError("no closing quote")
            word.append(line[i + 1:close])
            in_word = True
            i = close + 1
        elif c == '"':
            i += 1
            in_word = True
            while True:
                if i >= n:
                    raise ShellSyntaxError("no closing quote")
                c = line[i]
                if c == '"':
                    i += 1
                    break
                if c == "\\" and i + 1 < n and line[i + 1] in '"\\$`\n':
                    word.append(line[i + 1])
                    i += 2
                elif line.startswith("$?", i):
                    word.append(STATUS_MARK)
                    i += 2
                else:
                    word.append(c)
                    i += 1
        elif c == "\\":
            if i + 1 < n and line[i + 1] != "\n":
                word.append(line[i + 1])
                in_word = True
            i += 2
        elif line.startswith("$?", i):
            word.append(STATUS_MARK)
            in_word = True
            i += 2
        else:
            op = _operator_at(line, i, in_word)
            if op:
                end_word()
                tokens.append(("op", op))
                i += len(op)
            else:
                word.append(c)
                in_word = True
                i += 1
    end_word()
    return tokens


def _operator_at(line: str, i: int, in_word: bool) -> str:
    for op in _OPERATORS:
        if line.startswith(op, i):
            # "2>" only means a redirection at the start of a word (echo a2>f writes "a2")
            if op[0] in "12" and in_word:
                continue
            return op
    return ""


def parse(line: str) -> list[Pipeline]:
    """Parse a command line into pipelines joined by ``;``/``&&``/``||``."""
    pipelines: list[Pipeline] = []
    connector = ";"
    commands: list[SimpleCommand] = []
    current = SimpleCommand()
    tokens = tokenize(line)
    i = 0

    def finish_command() -> None:
        nonlocal current
        if current.argv or current.redirects:
            commands.append(current)
        elif commands:  # "a |" or "a | | b"
            raise ShellSyntaxError("syntax error: unexpected '|'")
        current = SimpleCommand()

    while i < len(tokens):
        kind, text = tokens[i]
        if kind == "word":
            current.argv.append(text)
        elif text in _REDIRECTS:
            op = {"1>": ">", "1>>": ">>", "1>&2": ">&2"}.get(text, text)
            if op in ("2>&1", ">&2"):
                current.redirects.append(Redirect(op))
            else:
                if i + 1 >= len(tokens) or tokens[i + 1][0] != "word":
                    raise ShellSyntaxError(f"syntax error: {text!r} unexpected")
                i += 1
                current.redirects.append(Redirect(op, tokens[i][1]))
        elif text == "|":
            if not current.argv:
                raise ShellSyntaxError("syntax error: unexpected '|'")
            finish_command()
        elif text in _SEPARATORS:
            finish_command()
            if commands:
                pipelines.append(Pipeline(connector, commands))
            elif text in ("&&", "||"):
                raise ShellSyntaxError(f"syntax error: unexpected {text!r}")
            commands = []
            connector = ";" if text in (";", "&", "\n") else text
        i += 1
    finish_command()
    if commands:
        pipelines.append(Pipeline(connector, commands))
    elif connector in ("&&", "||"):
        raise ShellSyntaxError(f"syntax error: unexpected end of line after {connector!r}")
    return pipelines
