"""What the agent knows about one screen: the parsed uiautomator tree and its controls.

``parse_hierarchy(xml)`` (``execution/uitree.py``, re-exported here) turns a ``uiautomator dump`` into a tree of
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
import threading
from collections import OrderedDict
from dataclasses import dataclass, replace
from typing import Any, Optional

from execution.distill import Control, distill_controls
from execution.uitree import Bounds, UINode, clean_text, parse_bounds, parse_hierarchy

__all__ = ["UINode", "UIContext", "parse_hierarchy", "parse_bounds", "clean_text", "GLOBAL_ACTIONS"]

#: actions that need no control; every screen offers them
GLOBAL_ACTIONS = ("back", "home", "menu", "shade", "drawer", "launch", "enter")


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
        parsed = _parse_cached(xml, screen_size)
        return replace(parsed, package=parsed.package if package is None else package, activity=activity)

    @classmethod
    def _parse(cls, xml: str | bytes, screen_size: Optional[tuple[int, int]]) -> "UIContext":
        roots = parse_hierarchy(xml)
        nodes = [n for r in roots for n in r.iter()]
        if screen_size is None:
            w = max((r.bounds[2] for r in roots), default=0)
            h = max((r.bounds[3] for r in roots), default=0)
            screen_size = (w, h)
        width, height = screen_size
        return cls(
            width=width,
            height=height,
            package=roots[0].package if roots else "",
            activity=None,
            roots=roots,
            nodes=nodes,
            controls=distill_controls(roots, width, height),
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


#: parsed screens by (dump, size): a verification job sees the same screens over and over
#: (every page starts on the same home screen), and parsing is most of an agent step's cost.
#: The parsed tree is shared, so nothing may change a cached node or control.
_PARSED: "OrderedDict[tuple[str | bytes, Optional[tuple[int, int]]], UIContext]" = OrderedDict()
_PARSED_MAX = 128
_parsed_lock = threading.Lock()


def clear_parse_cache() -> None:
    """Forget every parsed screen (benchmarks: start as a new process would)."""
    with _parsed_lock:
        _PARSED.clear()


def _parse_cached(xml: str | bytes, screen_size: Optional[tuple[int, int]]) -> UIContext:
    """The parsed screen for ``xml``; callers copy it (``dataclasses.replace``), never change it."""
    key = (xml, screen_size)
    with _parsed_lock:
        hit = _PARSED.get(key)
        if hit is not None:
            _PARSED.move_to_end(key)
            return hit
    parsed = UIContext._parse(xml, screen_size)
    with _parsed_lock:
        _PARSED[key] = parsed
        while len(_PARSED) > _PARSED_MAX:
            _PARSED.popitem(last=False)
    return parsed


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
