"""What a downloaded body is: HTML/text or binary, and in which encoding.

Pure functions on bytes, used by the fetcher and by later stages
(:func:`decode_body` turns a stored body into text and never raises).
"""

from __future__ import annotations

import codecs
import re
from typing import Optional

__all__ = ["ACCEPTED_MEDIA_TYPES", "SNIFF_BYTES", "binary_reason", "detect_encoding", "decode_body",
           "strip_control_bytes"]

ACCEPTED_MEDIA_TYPES = frozenset({"text/html", "application/xhtml+xml", "text/plain"})

_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"%PDF-", "a PDF document"),
    (b"\x89PNG\r\n\x1a\n", "a PNG image"),
    (b"GIF87a", "a GIF image"),
    (b"GIF89a", "a GIF image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"PK\x03\x04", "a ZIP archive (or an office document)"),
    (b"\x1f\x8b", "gzip data"),
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "an old Microsoft Office document"),
    (b"Rar!\x1a\x07", "a RAR archive"),
    (b"7z\xbc\xaf\x27\x1c", "a 7z archive"),
    (b"\x7fELF", "an ELF executable"),
    (b"OggS", "Ogg media"),
    (b"ID3", "an MP3 file"),
    (b"wOFF", "a web font"),
    (b"wOF2", "a web font"),
    (b"RIFF", "RIFF media (WebP, WAV or AVI)"),
)
_TEXT_BOMS = (codecs.BOM_UTF8, codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)
#: control bytes that real text documents contain (ESC: ISO-2022 encodings)
_TEXT_CONTROLS = frozenset(b"\t\n\r\x0c\x1b")
#: share of binary bytes (NUL and other control bytes) above which a body is
#: judged binary; below it they are stray bytes, removed by strip_control_bytes
_MAX_CONTROL_RATIO = 0.10
_STRAY_CONTROLS = bytes(b for b in range(32) if b not in _TEXT_CONTROLS) + b"\x7f"
SNIFF_BYTES = 1024


def binary_reason(head: bytes) -> Optional[str]:
    """Why the first bytes of a body look binary (not HTML/text), or None."""
    if not head or head.startswith(_TEXT_BOMS):
        return None
    for magic, what in _MAGIC:
        if head.startswith(magic):
            return f"the body is {what}, not HTML"
    if len(head) >= 12 and head[4:8] == b"ftyp":
        return "the body is MP4/MOV media, not HTML"
    # browsers render pages with a few stray NUL/control bytes; only a mostly binary body is not text
    controls = sum(1 for b in head if b < 0x20 and b not in _TEXT_CONTROLS)
    if controls / len(head) > _MAX_CONTROL_RATIO:
        return (f"{controls} of the first {len(head)} bytes are NUL or control bytes "
                "(binary data), not HTML")
    return None


def strip_control_bytes(body: bytes, encoding: str) -> tuple[bytes, int]:
    """``body`` without stray NUL/control bytes, and how many were removed.

    Only for encodings where such a byte is always a character of its own
    (UTF-8 and single-byte or ASCII-compatible multi-byte codecs); UTF-16/32
    and ISO-2022 bodies are returned unchanged.
    """
    codec = (_normalise_charset(encoding) or "utf-8").replace("_", "-")
    if codec.startswith(("utf-16", "utf-32", "iso2022", "iso-2022")):
        return body, 0
    kept = body.translate(None, _STRAY_CONTROLS)
    return kept, len(body) - len(kept)


_META_CHARSET = re.compile(rb"""<meta[^>]+?charset\s*=\s*["']?\s*([A-Za-z0-9._:\-]+)""", re.I)
_HEADER_CHARSET = re.compile(r"""charset\s*=\s*["']?\s*([A-Za-z0-9._:\-]+)""", re.I)


def _normalise_charset(name: Optional[str]) -> Optional[str]:
    """A Python codec name for ``name``, or None if unknown.

    Like browsers (WHATWG Encoding Standard), latin-1 and ASCII labels mean
    windows-1252, so "smart quotes" in such pages decode correctly.
    """
    if not name:
        return None
    try:
        codec = codecs.lookup(name.strip().strip("'\"")).name
    except LookupError:
        return None
    if codec in {"iso8859-1", "latin-1", "ascii"}:
        return "cp1252"
    return codec


def _charset_from_content_type(content_type: Optional[str]) -> Optional[str]:
    match = _HEADER_CHARSET.search(content_type or "")
    return _normalise_charset(match.group(1)) if match else None


def detect_encoding(body: bytes, content_type: Optional[str] = None) -> str:
    """The encoding of an HTML/text body.

    Order: byte-order mark, ``charset`` of the Content-Type header,
    ``<meta charset>`` or ``http-equiv`` in the first 4 KB, valid UTF-8,
    then charset_normalizer's guess; ``utf-8`` when nothing is known.
    """
    if body.startswith(codecs.BOM_UTF8):
        return "utf-8"
    if body.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return "utf-16"
    declared = _charset_from_content_type(content_type)
    if declared:
        return declared
    match = _META_CHARSET.search(body[:4096])
    if match:
        meta = _normalise_charset(match.group(1).decode("ascii", "ignore"))
        if meta:
            # a document readable as ASCII cannot really be UTF-16 (HTML spec)
            return "utf-8" if meta.startswith("utf-16") else meta
    sample = body[:65536]
    try:
        codecs.getincrementaldecoder("utf-8")().decode(sample, final=len(body) <= len(sample))
        return "utf-8"
    except UnicodeDecodeError:
        pass
    return _guess_legacy_encoding(sample) or "utf-8"


def _guess_legacy_encoding(sample: bytes) -> Optional[str]:
    """charset_normalizer's guess; ties go to windows-1252, the commonest legacy web encoding.

    Western European text is equally plausible in cp1250/cp1252/cp1257 by
    byte statistics alone, and the library's first pick among equals is arbitrary.
    """
    from charset_normalizer import from_bytes

    matches = list(from_bytes(sample))
    if not matches:
        return None
    best = matches[0]
    tied = [m for m in matches if m.chaos <= best.chaos and m.coherence >= best.coherence]
    if any(_normalise_charset(m.encoding) == "cp1252" for m in tied):
        return "cp1252"
    return _normalise_charset(best.encoding)


def decode_body(body: bytes, encoding: Optional[str] = None) -> str:
    """Decode a page body to text; never raises (bad bytes become U+FFFD).

    ``encoding`` is usually ``Page.encoding``; when it is None or unknown the
    encoding is detected from the body.
    """
    codec = _normalise_charset(encoding) or detect_encoding(body)
    if codec == "utf-8" and body.startswith(codecs.BOM_UTF8):
        codec = "utf-8-sig"
    return body.decode(codec, errors="replace")
