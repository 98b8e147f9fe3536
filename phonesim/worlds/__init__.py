"""Simulator worlds built from real app structure instead of by hand.

* :mod:`phonesim.worlds.apk_map` — parse an apktool-decoded Settings APK
  (preference XMLs, strings, manifest) into a :class:`UIMap`.
* :mod:`phonesim.worlds.aosp_arrays` / :mod:`phonesim.worlds.aosp_screens` — stock AOSP
  list options, and screens the app builds in code (Default apps, sound pickers, accounts,
  printing, SIM lock, the app list and app info), with their sources.
* :mod:`phonesim.worlds.uimap` — the :class:`UIMap` itself (screens,
  elements, links) with route finding, also buildable from any world.
* :mod:`phonesim.worlds.apk_world` — a UI map -> a simulator world document.
* :mod:`phonesim.worlds.utg` — a DroidBot UI transition graph (DroidTask) ->
  a simulator world, with goals for the tasks it can replay.
* :mod:`phonesim.worlds.coverage` — coverage reports and a tap-by-tap
  reachability search in the simulator.

See ``docs/real-worlds.md``.
"""

from phonesim.worlds.sources import build_ui_map
from phonesim.worlds.uimap import Hop, MapElement, MapScreen, UIMap, Unresolved

__all__ = ["Hop", "MapElement", "MapScreen", "UIMap", "Unresolved", "build_ui_map"]
