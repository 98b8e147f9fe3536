"""Build a UI map from whatever describes the app: a decoded APK folder, a world file or name, a World.

Kept apart from ``uimap.py`` (the map itself) because the APK reader builds on
that module: this one imports both, neither imports this one.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Union

from phonesim.world import World, load_world
from phonesim.worlds.apk_map import parse_apk
from phonesim.worlds.uimap import UIMap, map_from_world

__all__ = ["build_ui_map"]


def build_ui_map(source: Union[str, Path, Any]) -> UIMap:
    """A UI map from a decoded APK folder, a world file or bundled world name, or a loaded World."""
    if isinstance(source, World):
        return map_from_world(source)
    path = Path(source)
    if path.is_dir():
        return parse_apk(path)
    return map_from_world(load_world(source))
