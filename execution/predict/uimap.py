"""The UI map as agent knowledge (UICompass-style): how to reach a target a page skipped.

A how-to page often leaves out a screen ("Settings > Dark mode" when Dark mode
lives under Display), hides a row behind "Advanced", or names a row that is
below the fold. When the heuristic predictor cannot see a step's target, it
asks a :class:`MapNavigator` built over the app's :class:`~phonesim.worlds.UIMap`:

1. **locate**: which map screen is on the phone? (title and visible labels
   against each map screen's title and element titles);
2. **plan**: the shortest forward route from there to a screen that shows
   the target (``UIMap.route_to``); when there is none from here but there
   is one from the app's home, go *back* first;
3. **next move**: tap the route's next row (tap "Advanced" first when the row
   is in a collapsed section; scroll down when the row is below the fold).

The navigator plans again after every action, so it recovers from a tap
that led somewhere unexpected. Every move it suggests is a *deviation* from
the page's literal steps and carries the rationale
``ui-map route: Display > Advanced > Dark mode``; the count of deviations
(``ExecutionResult.n_deviations``) becomes the ranking feature
``n_deviations_norm``, so a page that needed repair ranks below one that
worked as written.

Where the map comes from (:func:`ui_map_for_device`): the configured
``execution.agent.ui_map`` (a world file/name or an apktool-decoded APK
folder; the only source for ``adb:`` devices), else the world a ``sim:``
device simulates. A map holds what a user can see and tap, never goals.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from execution.distill import Control
from execution.predict.match import lexical_score, normalise
from execution.uicontext import UIContext
from phonesim.worlds.sources import build_ui_map
from phonesim.worlds.uimap import Hop, UIMap
from verirank_core.device import Device

__all__ = ["MapMove", "MapNavigator", "load_ui_map", "ui_map_for_device", "EXPAND_LABEL"]

#: the row AndroidX shows for a collapsed section
EXPAND_LABEL = "Advanced"
#: a visible label must spell a map title this well to count as "the same row"
_SAME_LABEL = 0.9
#: locating needs at least this score (title match 1 + share of visible labels the screen explains)
_MIN_LOCATE = 0.5


@dataclass
class MapMove:
    """One map-guided action: what to do, and the route it serves."""

    #: "tap" (``control``), "scroll" (down, to bring the route's next row into view), "back"
    kind: str
    why: str
    control: Optional[Control] = None
    #: the route from the located screen (empty for "back")
    route: tuple[Hop, ...] = ()


class MapNavigator:
    """Route planning over one app's UI map for the screens an agent observes."""

    def __init__(self, uimap: UIMap):
        self.map = uimap
        # normalised element titles per screen, for locating
        self._titles: dict[str, set[str]] = {
            sid: {normalise(e.title) for e in screen.elements if e.title}
            for sid, screen in uimap.screens.items()
        }
        self._screen_titles = {sid: normalise(s.title) for sid, s in uimap.screens.items()}

    def __repr__(self) -> str:
        return f"MapNavigator(app={self.map.app!r}, screens={len(self.map.screens)})"

    # --- where are we? ------------------------------------------------------------------

    def locate(self, ui: UIContext) -> Optional[str]:
        """The map screen ``ui`` shows, or None when it is another app or no screen fits."""
        if ui.package and self.map.app and ui.package != self.map.app:
            return None
        visible = {normalise(c.label) for c in ui.controls if c.label and c.role != "scrollable"}
        visible.discard("")
        title = normalise(ui.title or "")
        best, best_score = None, 0.0
        for sid, titles in self._titles.items():
            common = len(visible & titles)
            # the share of what is visible that the screen explains, then (for near-twins)
            # the share of the screen that is visible
            score = common / len(visible) + 0.25 * common / len(titles) if visible and titles else 0.0
            if title and self._screen_titles[sid] == title:
                score += 1.0
            if score > best_score or (score == best_score and best is not None and sid == self.map.home):
                best, best_score = sid, score
        return best if best_score >= _MIN_LOCATE else None

    # --- what next? -----------------------------------------------------------------------

    def next_move(self, target: str, ui: UIContext) -> Optional[MapMove]:
        """The next action toward a screen that shows ``target``; None when the map cannot help.

        None means: the map does not know the target, the screen cannot be
        located, or the target is on this very screen (then a plain scroll
        search finds it).
        """
        here = self.locate(ui)
        if here is None or not self.map.find(target):
            return None
        route = self.map.route_to(target, start=here)
        if route is None:
            if here != self.map.home and self.map.route_to(target) is not None:
                path = self.describe(self.map.route_to(target) or [], target)
                return MapMove("back", f"ui-map route: {path} (starts at "
                               f"{self.map.screens[self.map.home].title!r}; going back from "
                               f"{self.map.screens[here].title!r})")
            return None
        if not route:
            return self._expand_here(target, here, ui)
        hop = route[0]
        path = self.describe(route, target)
        row = self._visible(hop.tap, ui)
        if row is not None:
            return MapMove("tap", f"ui-map route: {path} (tap {row.label!r})", row, tuple(route))
        if hop.expand:
            advanced = self._visible(EXPAND_LABEL, ui)
            if advanced is not None:
                return MapMove("tap", f"ui-map route: {path} ({hop.tap!r} is hidden: tap {advanced.label!r})",
                               advanced, tuple(route))
        return MapMove("scroll", f"ui-map route: {path} (scroll down to {hop.tap!r})", None, tuple(route))

    def _expand_here(self, target: str, here: str, ui: UIContext) -> Optional[MapMove]:
        """The target is on this screen: only a collapsed section needs a tap (scrolling is the caller's)."""
        found = [el for sid, el in self.map.find(target) if sid == here]
        if found and all(el.collapsed for el in found):
            advanced = self._visible(EXPAND_LABEL, ui)
            if advanced is not None:
                path = self.describe([], target, expand=True)
                return MapMove("tap", f"ui-map route: {path} ({target!r} is hidden: tap {advanced.label!r})",
                               advanced)
        return None

    def describe(self, route: list[Hop] | tuple[Hop, ...], target: str, expand: bool = False) -> str:
        """``Display > Advanced > Dark mode``: the taps of a route, ending with the target."""
        parts = [str(h) for h in route]
        title = next((el.title for _, el in self.map.find(target) if el.title), target)
        return " > ".join([*parts, (EXPAND_LABEL + " > " if expand else "") + title])

    @staticmethod
    def _visible(label: str, ui: UIContext) -> Optional[Control]:
        """The on-screen control that spells ``label`` (the best one at or above 0.9)."""
        best, score = None, _SAME_LABEL
        for c in ui.controls:
            if not c.label or c.role == "scrollable":
                continue
            s = lexical_score(label, c.label)
            if s >= score:
                best, score = c, s
        return best


# --- where the map comes from ------------------------------------------------------------

_CACHE: dict[str, UIMap] = {}
_CACHE_LOCK = threading.Lock()


def load_ui_map(source: str | Path) -> UIMap:
    """The UI map of a world file/name or an APK folder, built once per process."""
    key = str(Path(source).resolve()) if Path(source).exists() else str(source)
    with _CACHE_LOCK:
        if key not in _CACHE:
            _CACHE[key] = build_ui_map(source)
        return _CACHE[key]


def ui_map_for_device(device: Device, configured: Optional[str] = None) -> tuple[Optional[UIMap], str]:
    """(map, where it came from) for an episode on ``device``.

    ``configured`` (``execution.agent.ui_map``) wins; otherwise a simulated
    device's world is mapped (its screens and links only, never its goals).
    An ``adb:`` device without a configured map gets (None, the reason).
    """
    if configured:
        return load_ui_map(configured), f"ui_map {configured}"
    world = device.world
    if world is not None:
        source = world.source or ""
        key = f"world:{source}:{world.name}" if source and not source.startswith("<") else None
        if key is None:
            return build_ui_map(world), f"world {world.name}"
        with _CACHE_LOCK:
            if key not in _CACHE:
                _CACHE[key] = build_ui_map(world)
            return _CACHE[key], f"world {world.name}"
    spec = device.spec or type(device).__name__
    return None, f"no UI map for {spec}: set execution.agent.ui_map to a world file or an APK folder"
