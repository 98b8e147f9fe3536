"""Gestures and app names the predictors share: tap a control, swipe a list, launch a known app."""

from __future__ import annotations

import re
from typing import Optional

from execution.distill import Control
from execution.uicontext import UIContext
from verirank_core.execution_records import Action, ActionType

__all__ = ["KNOWN_APPS", "control_action", "slide_action", "main_scrollable", "swipe_action", "in_shade", "on_launcher",
           "in_drawer", "shade_swipe", "drawer_swipe"]

#: app names a page may use -> Android package (used for "Open X" when X has no icon on screen)
KNOWN_APPS = {
    "settings": "com.android.settings",
    # LG's name for it in the Menu key's list ("From any Home screen, tap the Menu key. Tap System settings.")
    "system settings": "com.android.settings",
    "chrome": "com.android.chrome",
    "google chrome": "com.android.chrome",
    "maps": "com.google.android.apps.maps",
    "google maps": "com.google.android.apps.maps",
    "youtube": "com.google.android.youtube",
    "gmail": "com.google.android.gm",
    "photos": "com.google.android.apps.photos",
    "google photos": "com.google.android.apps.photos",
    "play store": "com.android.vending",
    "google play store": "com.android.vending",
    "phone": "com.google.android.dialer",
    "messages": "com.google.android.apps.messaging",
    "clock": "com.google.android.deskclock",
    "calendar": "com.google.android.calendar",
    "camera": "com.android.camera2",
    "contacts": "com.google.android.contacts",
    "files": "com.google.android.apps.nbu.files",
}


def control_action(kind: ActionType, c: Control, why: str) -> Action:
    x, y = c.center
    return Action(
        type=kind, x=x, y=y, target_label=c.label, target_resource_id=c.resource_id or None,
        target_bounds=list(c.bounds), rationale=why,
    )


def main_scrollable(ui: UIContext) -> Optional[Control]:
    """The largest scrollable container on screen."""
    best, area = None, 0
    for c in ui.controls:
        if "swipe_down" in c.actions:
            x1, y1, x2, y2 = c.bounds
            a = (x2 - x1) * (y2 - y1)
            if a > area:
                best, area = c, a
    return best


def swipe_action(ui: UIContext, direction: str, why: str, container: Optional[Control] = None) -> Action:
    """A swipe that scrolls ``container`` (or the screen) so content moves ``direction``.

    "down" shows what is further down the list: the finger moves up.
    """
    if container is not None:
        x1, y1, x2, y2 = container.bounds
    else:
        x1, y1, x2, y2 = 0, 0, ui.width, ui.height
    x = (x1 + x2) // 2
    h = y2 - y1
    lo, hi = y1 + int(h * 0.25), y1 + int(h * 0.75)
    start, end = (hi, lo) if direction == "down" else (lo, hi)
    return Action(
        type=ActionType.SWIPE, x=x, y=start, x2=x, y2=end,
        target_label=container.label if container else None,
        target_bounds=list(container.bounds) if container else None,
        text=direction, rationale=why,
    )


# --- the phone's own UI: the home screen, the app drawer, the notification shade ----------------

#: the package of the notification shade and its quick settings on every Android
SYSTEMUI = "com.android.systemui"
#: launchers by package: Launcher3 and its forks (Pixel, OnePlus, Samsung, Huawei...), MIUI's "home"
_LAUNCHER_RE = re.compile(r"launcher|\.home$|trebuchet", re.IGNORECASE)
#: what only a Launcher3 app drawer shows: its list and its search box
_DRAWER_IDS = ("apps_list_view", "apps_view", "search_box_input", "all_apps_header")


def in_shade(ui: UIContext) -> bool:
    """The notification shade (with quick settings) is pulled down over the screen."""
    return ui.package == SYSTEMUI or any(c.resource_id.startswith(SYSTEMUI + ":") for c in ui.controls
                                         if c.resource_id)


def on_launcher(ui: UIContext) -> bool:
    """The home screen or the app drawer is in front (the shade is not over it)."""
    return bool(ui.package) and bool(_LAUNCHER_RE.search(ui.package)) and not in_shade(ui)


def in_drawer(ui: UIContext) -> bool:
    """The launcher shows its app drawer (every app) rather than a home screen."""
    return on_launcher(ui) and any(c.resource_id and c.resource_id.rsplit("/", 1)[-1] in _DRAWER_IDS
                                   for c in ui.controls)


def shade_swipe(ui: UIContext, why: str) -> Action:
    """A swipe down from the top edge: it pulls down the notification shade on any screen."""
    x = ui.width // 2
    return Action(type=ActionType.SWIPE, x=x, y=0, x2=x, y2=int(ui.height * 0.6),
                  target_label="notification shade", text="shade", rationale=why)


def drawer_swipe(ui: UIContext, why: str) -> Action:
    """A swipe up on the home screen: it opens the app drawer (Pixel, OnePlus, Samsung's default)."""
    x = ui.width // 2
    return Action(type=ActionType.SWIPE, x=x, y=int(ui.height * 0.75), x2=x, y2=int(ui.height * 0.25),
                  target_label="app drawer", text="drawer", rationale=why)


#: where along a slider a tap lands, and what it does: lower, higher, or (the page names no level)
#: a visible change
_SLIDE: dict[Optional[str], tuple[float, str]] = {"down": (0.05, "lower"), "up": (0.95, "higher"),
                                                   None: (0.75, "to a new level")}


def slide_action(c: Control, direction: Optional[str], name: str) -> Action:
    """Set slider ``c`` by a tap along it ("down": near its low end, "up": near its high end).

    A slider takes the value under the finger, as a drag that ends there does.
    """
    x1, y1, x2, y2 = c.bounds
    at, does = _SLIDE[direction]
    act = control_action(ActionType.CLICK, c, f"set the {c.label!r} slider ({name!r}) {does}")
    act.x, act.y = int(x1 + at * (x2 - x1)), (y1 + y2) // 2
    return act
