"""What the agent knows about one screen: the parsed uiautomator tree and its controls.

``parse_hierarchy(xml)`` turns a ``uiautomator dump`` into a tree of
:class:`UINode` (one per ``<node>``, with its flags and bounds). Then
``UIContext.from_xml(xml, ...)`` adds the screen size, the foreground app,
the distilled controls (see ``execution/distill.py``) and a screen
signature, and ``UIContext.to_json()`` is what the predictor and the
trajectory see.

Malformed XML raises :class:`DeviceError` (the device handed us something
that is not a screen), never an lxml exception.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterator, Optional

from lxml import etree

from verirank_core.errors import DeviceError

if TYPE_CHECKING:  # distill imports this module; only the type is needed here
    from execution.distill import Control

__all__ = ["UINode", "UIContext", "parse_hierarchy", "parse_bounds", "clean_text", "GLOBAL_ACTIONS"]

Bounds = tuple[int, int, int, int]

#: actions that need no control; every screen offers them
GLOBAL_ACTIONS = ("back", "home", "enter")

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


def _guess_title(nodes: list[UINode], height: int) -> str:
    """The screen's title: a toolbar/app-bar text, else the first plain text near the top."""
    top_band = max(1, height) * 0.2
    fallback = ""
    for node in nodes:
        if not node.text or node.clickable or node.area == 0 or node.bounds[1] > top_band:
            continue
        anc = node.parent
        while anc is not None:
            marker = (anc.short_id + " " + anc.short_class).lower()
            if any(k in marker for k in ("toolbar", "action_bar", "actionbar", "app_bar", "appbar", "collapsing")):
                return node.text
            anc = anc.parent
        if not fallback and node.short_id in ("title", "alertTitle", "action_bar_title"):
            fallback = node.text
        if not fallback and "TextView" in node.short_class and node.bounds[1] > 0:
            fallback = node.text
    return fallback


@dataclass(slots=True, eq=False)
class UIContext:
    """One observed screen, ready for a predictor."""

    width: int
    height: int
    package: str
    activity: Optional[str]
    roots: list[UINode]
    #: every node in document order
    nodes: list[UINode]
    controls: list["Control"]
    title: str
    #: hash of what is visible; equal signatures mean "the screen did not change"
    signature: str

    @classmethod
    def from_xml(
        cls,
        xml: str | bytes,
        screen_size: Optional[tuple[int, int]] = None,
        package: Optional[str] = None,
        activity: Optional[str] = None,
    ) -> "UIContext":
        """Parse, distill and summarise one dump.

        ``screen_size`` defaults to the bounds of the largest root; ``package``
        defaults to the package of the first root node.
        """
        from execution.distill import distill_controls

        roots = parse_hierarchy(xml)
        nodes = [n for r in roots for n in r.iter()]
        if screen_size is None:
            w = max((r.bounds[2] for r in roots), default=0)
            h = max((r.bounds[3] for r in roots), default=0)
            screen_size = (w, h)
        width, height = screen_size
        if package is None:
            package = roots[0].package if roots else ""
        controls = distill_controls(roots, width, height)
        return cls(
            width=width,
            height=height,
            package=package,
            activity=activity,
            roots=roots,
            nodes=nodes,
            controls=controls,
            title=_guess_title(nodes, height),
            signature=screen_signature(nodes, width, height),
        )

    def texts(self, limit: int = 200) -> list[str]:
        """Visible texts and descriptions in document order (deduplicated)."""
        seen: dict[str, None] = {}
        for node in self.nodes:
            if node.area == 0 or not _on_screen(node.bounds, self.width, self.height):
                continue
            for t in (node.text, node.content_desc):
                if t and t not in seen:
                    seen[t] = None
                    if len(seen) >= limit:
                        return list(seen)
        return list(seen)

    def control(self, control_id: int) -> Optional["Control"]:
        if 0 <= control_id < len(self.controls):
            return self.controls[control_id]
        return None

    def focused_edit(self) -> Optional["Control"]:
        edits = [c for c in self.controls if c.role == "edit"]
        for c in edits:
            if c.node.focused:
                return c
        return edits[0] if edits else None

    def summary(self) -> dict[str, Any]:
        """The small screen description a trajectory keeps per step."""
        return {
            "package": self.package,
            "activity": self.activity,
            "title": self.title,
            "signature": self.signature,
            "texts": self.texts(limit=60),
        }

    def to_json(self) -> dict[str, Any]:
        """The screen as the predictor sees it (no raw tree)."""
        return {
            "screen": [self.width, self.height],
            "package": self.package,
            "activity": self.activity,
            "title": self.title,
            "controls": [c.to_json() for c in self.controls],
            "global_actions": list(GLOBAL_ACTIONS),
        }


def _on_screen(b: Bounds, width: int, height: int) -> bool:
    x1, y1, x2, y2 = b
    if width <= 0 or height <= 0:
        return x2 > x1 and y2 > y1
    return x2 > max(x1, 0) and y2 > max(y1, 0) and x1 < width and y1 < height


def screen_signature(nodes: list[UINode], width: int, height: int) -> str:
    """A short hash of the visible content: texts, ids, states and positions.

    Positions are part of it so that a scroll which moves the same rows is
    still a change; animations are not a concern for uiautomator dumps.
    """
    h = hashlib.blake2b(digest_size=10)
    for n in nodes:
        if n.area == 0 or not _on_screen(n.bounds, width, height):
            continue
        if not (n.text or n.content_desc or n.resource_id or n.checkable or n.clickable):
            continue
        h.update(
            f"{n.text}\x1f{n.content_desc}\x1f{n.short_id}\x1f{int(n.checked)}{int(n.selected)}"
            f"{int(n.enabled)}\x1f{n.bounds}\x1e".encode("utf-8", "replace")
        )
    return h.hexdigest()
