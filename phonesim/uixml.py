"""Serialise a laid-out window exactly like ``uiautomator dump`` does.

The form was checked against real dumps (``shared/fixtures/uiautomator``):
one line, the XML declaration with ``standalone='yes' ?>``, a ``hierarchy``
root with ``rotation``, and ``node`` elements whose 17 attributes always come
in the same order; leaves close with `` />``; ``& < > "`` are escaped and a
newline inside an attribute becomes ``&#10;``; other text is raw UTF-8.

Like uiautomator, a clickable, enabled node with no text or description
anywhere in its subtree is flagged "not accessibility friendly" with a
leading ``NAF="true"`` attribute (list/grid containers excepted).
"""

from __future__ import annotations

from phonesim.layout import UINode

__all__ = ["dump", "ATTRIBUTE_ORDER", "escape_attr"]

#: the attribute order of every <node> in a real dump
ATTRIBUTE_ORDER = (
    "index", "text", "resource-id", "class", "package", "content-desc", "checkable", "checked",
    "clickable", "enabled", "focusable", "focused", "scrollable", "long-clickable", "password",
    "selected", "bounds",
)

_HEADER = "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>"
_ESCAPES = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "\n": "&#10;", "\r": "&#13;", "\t": "&#9;"}


def escape_attr(value: str) -> str:
    """Escape like Android's XmlSerializer; other control characters (invalid in XML) are dropped."""
    if not any(c in _ESCAPES or c < " " for c in value):
        return value
    out = []
    for c in value:
        if c in _ESCAPES:
            out.append(_ESCAPES[c])
        elif c >= " ":
            out.append(c)
    return "".join(out)


#: containers uiautomator never flags NAF
_NAF_EXCLUDED = {"android.widget.GridView", "android.widget.GridLayout", "android.widget.ListView",
                 "android.widget.TableLayout"}


def _has_words(node: UINode) -> bool:
    return bool(node.text or node.content_desc) or any(_has_words(c) for c in node.children)


def _is_naf(node: UINode) -> bool:
    return (node.clickable and node.enabled and node.cls not in _NAF_EXCLUDED
            and not _has_words(node))


def _b(flag: bool) -> str:
    return "true" if flag else "false"


def _write(node: UINode, index: int, out: list[str]) -> None:
    x1, y1, x2, y2 = node.bounds
    naf = 'NAF="true" ' if _is_naf(node) else ""
    out.append(
        f'<node {naf}index="{index}" text="{escape_attr(node.text)}" resource-id="{escape_attr(node.resource_id)}" '
        f'class="{node.cls}" package="{node.package}" content-desc="{escape_attr(node.content_desc)}" '
        f'checkable="{_b(node.checkable)}" checked="{_b(node.checked)}" clickable="{_b(node.clickable)}" '
        f'enabled="{_b(node.enabled)}" focusable="{_b(node.focusable)}" focused="{_b(node.focused)}" '
        f'scrollable="{_b(node.scrollable)}" long-clickable="{_b(node.long_clickable)}" '
        f'password="{_b(node.password)}" selected="{_b(node.selected)}" bounds="[{x1},{y1}][{x2},{y2}]"'
    )
    if not node.children:
        out.append(" />")
        return
    out.append(">")
    for i, child in enumerate(node.children):
        _write(child, i, out)
    out.append("</node>")


def dump(root: UINode, rotation: int = 0) -> str:
    """The XML text of one window, as ``uiautomator dump`` writes it."""
    out = [_HEADER, f'<hierarchy rotation="{rotation}">']
    _write(root, 0, out)
    out.append("</hierarchy>")
    return "".join(out)
