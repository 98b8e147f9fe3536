"""The parsed ``uiautomator dump`` tree: :class:`UINode` and ``parse_hierarchy(xml)``.

The bottom layer of the agent's view of a screen: ``execution/distill.py``
distills controls from these nodes and ``execution/uicontext.py`` builds a
:class:`~execution.uicontext.UIContext` from both. Malformed XML raises
:class:`DeviceError`, never an lxml exception.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Iterator, Optional

from lxml import etree

from verirank_core.errors import DeviceError

__all__ = ["Bounds", "UINode", "parse_hierarchy", "parse_bounds", "clean_text"]

Bounds = tuple[int, int, int, int]

_BOUNDS_RE = re.compile(r"\[(-?\d+),(-?\d+)\]\[(-?\d+),(-?\d+)\]")
_SPACES_RE = re.compile(r"\s+")
_FLAGS = (
    ("clickable", "clickable"),
    ("long_clickable", "long-clickable"),
    ("checkable", "checkable"),
    ("checked", "checked"),
    ("scrollable", "scrollable"),
    ("enabled", "enabled"),
    ("focusable", "focusable"),
    ("focused", "focused"),
    ("password", "password"),
    ("selected", "selected"),
)


def clean_text(text: str | None) -> str:
    """Collapse whitespace (including no-break spaces) and strip."""
    if not text:
        return ""
    return _SPACES_RE.sub(" ", text.replace("\xa0", " ")).strip()


def parse_bounds(raw: str | None) -> Bounds:
    """``"[x1,y1][x2,y2]"`` -> ``(x1, y1, x2, y2)``; missing or odd bounds are an empty box."""
    m = _BOUNDS_RE.search(raw or "")
    if not m:
        return (0, 0, 0, 0)
    return tuple(int(v) for v in m.groups())  # type: ignore[return-value]


@dataclass(slots=True, eq=False)
class UINode:
    """One ``<node>`` of a uiautomator dump."""

    cls: str
    text: str
    resource_id: str
    content_desc: str
    package: str
    bounds: Bounds
    clickable: bool = False
    long_clickable: bool = False
    checkable: bool = False
    checked: bool = False
    scrollable: bool = False
    enabled: bool = True
    focusable: bool = False
    focused: bool = False
    password: bool = False
    selected: bool = False
    #: xpath-like position, e.g. ``/hierarchy/node[1]/node[3]`` (1-based among siblings)
    path: str = ""
    #: position in document (= drawing) order
    order: int = 0
    depth: int = 0
    children: list["UINode"] = field(default_factory=list)
    parent: Optional["UINode"] = None

    @property
    def area(self) -> int:
        x1, y1, x2, y2 = self.bounds
        return max(0, x2 - x1) * max(0, y2 - y1)

    @property
    def center(self) -> tuple[int, int]:
        x1, y1, x2, y2 = self.bounds
        return ((x1 + x2) // 2, (y1 + y2) // 2)

    @property
    def short_class(self) -> str:
        return self.cls.rsplit(".", 1)[-1]

    @property
    def short_id(self) -> str:
        """The resource id without its package prefix (``com.x:id/title`` -> ``title``)."""
        return self.resource_id.rsplit("/", 1)[-1]

    @property
    def editable(self) -> bool:
        name = self.short_class
        return "EditText" in name or "AutoCompleteTextView" in name

    def own_text(self) -> str:
        """Visible text, else the accessibility description."""
        return self.text or self.content_desc

    def iter(self) -> Iterator["UINode"]:
        """This node and its descendants in document order."""
        stack = [self]
        while stack:
            node = stack.pop()
            yield node
            stack.extend(reversed(node.children))

    def is_ancestor_of(self, other: "UINode") -> bool:
        node = other.parent
        while node is not None:
            if node is self:
                return True
            node = node.parent
        return False

    def __repr__(self) -> str:
        return f"UINode({self.short_class} {self.own_text()!r} id={self.short_id!r} {self.bounds})"


def _strip_preamble(xml: str | bytes) -> bytes:
    """Cut anything before the XML proper (``adb shell`` sometimes prints a status line first)."""
    data = xml.encode("utf-8") if isinstance(xml, str) else xml
    start = data.find(b"<?xml")
    if start < 0:
        start = data.find(b"<hierarchy")
    if start < 0:
        raise DeviceError("uiautomator dump holds no <hierarchy> element (got %r...)" % data[:80])
    return data[start:]


_PARSER = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=True, remove_comments=True)


def parse_hierarchy(xml: str | bytes) -> list[UINode]:
    """Parse a dump into its top-level nodes (usually one window root).

    Raises DeviceError if the text is not a uiautomator hierarchy.
    """
    try:
        root = etree.fromstring(_strip_preamble(xml), parser=_PARSER)
    except etree.XMLSyntaxError as exc:
        raise DeviceError(f"uiautomator dump is not well-formed XML: {exc}") from exc
    if root.tag != "hierarchy":
        raise DeviceError(f"uiautomator dump has root <{root.tag}>, expected <hierarchy>")
    tops: list[UINode] = []
    counter = 0
    # iterative walk: deep hierarchies must not hit the recursion limit
    stack: list[tuple[Any, Optional[UINode], str, int]] = []
    elems = [c for c in root if c.tag == "node"]
    for i in range(len(elems) - 1, -1, -1):
        stack.append((elems[i], None, f"/hierarchy/node[{i + 1}]", 0))
    while stack:
        elem, parent, path, depth = stack.pop()
        a = elem.attrib
        node = UINode(
            cls=a.get("class", ""),
            text=clean_text(a.get("text")),
            resource_id=a.get("resource-id", ""),
            content_desc=clean_text(a.get("content-desc")),
            package=a.get("package", ""),
            bounds=parse_bounds(a.get("bounds")),
            path=path,
            order=counter,
            depth=depth,
            parent=parent,
        )
        for name, attr in _FLAGS:
            value = a.get(attr)
            if value is not None:
                setattr(node, name, value == "true")
        counter += 1
        if parent is None:
            tops.append(node)
        else:
            parent.children.append(node)
        kids = [c for c in elem if c.tag == "node"]
        for i in range(len(kids) - 1, -1, -1):
            stack.append((kids[i], node, f"{path}/node[{i + 1}]", depth + 1))
    return tops
