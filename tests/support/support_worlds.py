"""Drive a device the way a user would: read the uiautomator dump, find a text, tap its centre."""

from __future__ import annotations

import re
from typing import Optional

from lxml import etree

_BOUNDS = re.compile(r"\[(\d+),(\d+)\]\[(\d+),(\d+)\]")


def nodes(device) -> list[etree._Element]:
    root = etree.fromstring(device.dump_xml().encode("utf-8"))
    return list(root.iter("node"))


def find(device, text: str, attr: str = "text") -> Optional[etree._Element]:
    for node in nodes(device):
        if node.get(attr) == text:
            return node
    return None


def centre(node: etree._Element) -> tuple[int, int]:
    x1, y1, x2, y2 = map(int, _BOUNDS.match(node.get("bounds")).groups())
    return (x1 + x2) // 2, (y1 + y2) // 2


def scroll_down(device) -> bool:
    """Swipe the scrollable list up by half a screen; False when there is no scrollable list."""
    lists = [n for n in nodes(device) if n.get("scrollable") == "true"]
    if not lists:
        return False
    x1, y1, x2, y2 = map(int, _BOUNDS.match(lists[0].get("bounds")).groups())
    x = (x1 + x2) // 2
    device.swipe(x, y2 - 20, x, y2 - 20 - (y2 - y1) // 2, 300)
    return True


def tap_text(device, text: str, attr: str = "text", max_swipes: int = 8) -> None:
    """Tap the node showing ``text``, scrolling down until it appears; AssertionError if it never does."""
    for _ in range(max_swipes + 1):
        node = find(device, text, attr)
        if node is not None:
            device.tap(*centre(node))
            return
        before = device.dump_xml()
        if not scroll_down(device) or device.dump_xml() == before:
            break
    raise AssertionError(f"no node with {attr}={text!r} on screen; texts: "
                         f"{[n.get('text') for n in nodes(device) if n.get('text')]}")


def texts(device) -> list[str]:
    return [n.get("text") for n in nodes(device) if n.get("text")]
