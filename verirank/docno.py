"""A reversible encoding of URLs and query ids as TREC tokens (docno and qid columns).

TREC run and qrels files are whitespace-separated, but a URL from a SERP
file may hold anything (spaces, newlines, control characters). The rule:

* a value that is non-empty, holds no whitespace, control or format
  character and does not start with ``pct:`` is written as it is, so
  ordinary URLs (and existing qrels files) keep their docno;
* any other value is written as ``pct:`` followed by the value with ``%``,
  whitespace, control and format characters percent-encoded (UTF-8 bytes).

:func:`decode_docno` undoes it: a token starting with ``pct:`` is
percent-decoded, any other token is the value itself. See docs/ranking.md.
"""

from __future__ import annotations

import unicodedata
from urllib.parse import unquote

__all__ = ["PREFIX", "encode_docno", "decode_docno"]

PREFIX = "pct:"


def _unsafe(char: str) -> bool:
    """Characters that cannot stand in a whitespace-separated token."""
    return char.isspace() or unicodedata.category(char) in ("Cc", "Cf", "Cs")


def _needs_escape(char: str) -> bool:
    return char == "%" or _unsafe(char)


def _escape(char: str) -> str:
    return "".join(f"%{b:02X}" for b in char.encode("utf-8", "surrogatepass"))


def encode_docno(value: str) -> str:
    """``value`` as one whitespace-free token (itself when it already is one)."""
    if value and not value.startswith(PREFIX) and not any(_unsafe(c) for c in value):
        return value
    return PREFIX + "".join(_escape(c) if _needs_escape(c) else c for c in value)


def decode_docno(token: str) -> str:
    """The value :func:`encode_docno` turned into ``token``."""
    if token.startswith(PREFIX):
        return unquote(token[len(PREFIX):], encoding="utf-8", errors="surrogatepass")
    return token
