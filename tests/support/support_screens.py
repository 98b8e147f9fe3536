"""Small uiautomator screens and a scripted stub device for agent tests.

``settings_xml(title, rows)`` writes a dump shaped like a stock Android
settings page (toolbar title, a RecyclerView of clickable rows with a title,
an optional summary and an optional Switch). ``ScriptedScreenDevice`` is a
*stub* Device over such screens: taps hit the rows by bounds and run the
row's scripted effect. It exists for proxy/agent paths that the simulator
cannot provoke on purpose (a row that ignores taps on its centre, a device
that dies mid-episode); everything else is tested on SimDevice worlds.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional
from xml.sax.saxutils import quoteattr

from verirank_core.device import AppInfo, Device, DeviceInfo
from verirank_core.errors import DeviceError

PKG = "com.android.settings"
W, H = 1080, 2400
ROW_H = 200
TOP = 300


def _node(cls: str, bounds, text: str = "", rid: str = "", desc: str = "", **flags) -> str:
    attrs = {
        "index": "0", "text": text, "resource-id": rid, "class": cls, "package": PKG,
        "content-desc": desc, "checkable": "false", "checked": "false", "clickable": "false",
        "enabled": "true", "focusable": "false", "focused": "false", "scrollable": "false",
        "long-clickable": "false", "password": "false", "selected": "false",
    }
    for k, v in flags.items():
        attrs[k.replace("_", "-")] = "true" if v is True else "false" if v is False else str(v)
    x1, y1, x2, y2 = bounds
    attrs["bounds"] = f"[{x1},{y1}][{x2},{y2}]"
    return "<node " + " ".join(f"{k}={quoteattr(v)}" for k, v in attrs.items()) + ">"


def row_bounds(i: int) -> tuple[int, int, int, int]:
    return (0, TOP + i * ROW_H, W, TOP + (i + 1) * ROW_H)


def settings_xml(title: str, rows: list[dict], offset: int = 0) -> str:
    """rows: {"title", "summary"?, "switch"? (bool state), "edit"? (text), "enabled"?}."""
    parts = ["<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\">",
             _node("android.widget.FrameLayout", (0, 0, W, H)),
             _node("android.widget.LinearLayout", (0, 60, W, 260), rid=f"{PKG}:id/action_bar"),
             _node("android.widget.TextView", (40, 120, 800, 200), text=title) + "</node>",
             "</node>",
             _node("androidx.recyclerview.widget.RecyclerView", (0, TOP, W, H), rid=f"{PKG}:id/recycler_view",
                   scrollable=True, focusable=True)]
    for i, row in enumerate(rows):
        y1 = TOP + (i + offset) * ROW_H
        b = (0, y1, W, y1 + ROW_H)
        if b[3] <= TOP or b[1] >= H:
            continue
        if "edit" in row:
            parts.append(_node("android.widget.EditText", (40, y1 + 20, 1040, y1 + 180), text=row["edit"],
                               rid=f"{PKG}:id/{row['title'].lower().replace(' ', '_')}", clickable=True,
                               focusable=True, focused=row.get("focused", False)) + "</node>")
            continue
        parts.append(_node("android.widget.LinearLayout", b, clickable=True, focusable=True,
                           enabled=row.get("enabled", True)))
        parts.append(_node("android.widget.TextView", (60, y1 + 30, 800, y1 + 100), text=row["title"],
                           rid="android:id/title") + "</node>")
        if row.get("summary"):
            parts.append(_node("android.widget.TextView", (60, y1 + 100, 800, y1 + 170), text=row["summary"],
                               rid="android:id/summary") + "</node>")
        if "switch" in row:
            parts.append(_node("android.widget.Switch", (900, y1 + 60, 1040, y1 + 140),
                               rid="android:id/switch_widget", checkable=True, checked=bool(row["switch"]))
                         + "</node>")
        parts.append("</node>")
    parts.append("</node></node></hierarchy>")
    return "".join(parts)


@dataclass
class Screen:
    title: str
    rows: list[dict]
    #: row title -> effect(device) run when the row is tapped (at a point the row accepts)
    on_tap: dict[str, Callable[["ScriptedScreenDevice"], None]] = field(default_factory=dict)
    #: row titles that ignore taps at their centre and react only on their text (a flaky row)
    text_only: set[str] = field(default_factory=set)
    offset: int = 0


class ScriptedScreenDevice(Device):
    """A stub phone over scripted settings screens; records every call."""

    def __init__(self, screens: dict[str, Screen], start: str, fail_after: Optional[int] = None):
        self.spec = "stub:scripted"
        self.screens = screens
        self.start = start
        self.stack = [start]
        self.calls: list[tuple] = []
        self.typed: list[str] = []
        self.fail_after = fail_after

    # --- helpers
    @property
    def screen(self) -> Screen:
        return self.screens[self.stack[-1]]

    def _log(self, *call) -> None:
        self.calls.append(call)
        if self.fail_after is not None and len(self.calls) > self.fail_after:
            raise DeviceError("stub device: connection lost")

    def _row_at(self, x: int, y: int) -> Optional[tuple[int, dict]]:
        s = self.screen
        for i, row in enumerate(s.rows):
            x1, y1, x2, y2 = row_bounds(i + s.offset)
            if x1 <= x < x2 and y1 <= y < y2 and y1 >= TOP:
                return i, row
        return None

    # --- Device
    def dump_xml(self) -> str:
        self._log("dump")
        return settings_xml(self.screen.title, self.screen.rows, self.screen.offset)

    def screenshot_png(self) -> bytes:
        self._log("screenshot")
        return b"\x89PNG\r\n\x1a\n" + b"stub"

    def screen_size(self) -> tuple[int, int]:
        return (W, H)

    def tap(self, x: int, y: int) -> None:
        self._log("tap", x, y)
        hit = self._row_at(x, y)
        if hit is None:
            return
        i, row = hit
        title = row["title"]
        if title in self.screen.text_only:
            _, y1, _, _ = row_bounds(i + self.screen.offset)
            if not (60 <= x < 800 and y1 + 30 <= y < y1 + 100):
                return
        if "switch" in row and title not in self.screen.on_tap:
            row["switch"] = not row["switch"]
        effect = self.screen.on_tap.get(title)
        if effect is not None:
            effect(self)

    def long_press(self, x: int, y: int, duration_ms: int = 800) -> None:
        self._log("long_press", x, y)

    def swipe(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int = 300) -> None:
        self._log("swipe", x1, y1, x2, y2)
        s = self.screen
        visible = (H - TOP) // ROW_H
        if y2 < y1 and len(s.rows) + s.offset > visible:
            s.offset -= 1
        elif y2 > y1 and s.offset < 0:
            s.offset += 1

    def input_text(self, text: str) -> None:
        self._log("input", text)
        self.typed.append(text)
        for row in self.screen.rows:
            if "edit" in row:
                row["edit"] = row["edit"] + text
                break

    def key(self, key) -> None:
        self._log("key", key)
        if key == "back" and len(self.stack) > 1:
            self.stack.pop()

    def launch(self, package: str, activity: Optional[str] = None) -> None:
        self._log("launch", package)

    def current_app(self) -> AppInfo:
        return AppInfo(PKG, ".Settings")

    def info(self, packages: tuple[str, ...] = ()) -> DeviceInfo:
        return DeviceInfo(serial="stub", os_version="13", app_versions={p: "1" for p in packages})

    def reset(self, package: Optional[str] = None) -> None:
        self._log("reset", package)
        self.stack = [self.start]

    def go(self, screen: str) -> None:
        self.stack.append(screen)
