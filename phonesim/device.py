"""``SimDevice``: a simulated phone behind the same :class:`Device` interface as a real one.

``SimDevice.open("android13-settings")`` (or a path to a world file) gives a
device whose dumps, screenshots and input behave like a phone's, so the agent,
the runner and the ADB server (``verirank sim serve``) cannot tell it apart
from hardware. Calls are serialised with a lock, because the ADB server may
take a screenshot on one connection while another sends a tap.

``device.simulator`` exposes the ground truth (state, goals) for the
LABELLER ONLY; agents and judges must use the Device methods.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, Optional, Union

from verirank_core.device import AppInfo, Device, DeviceInfo, Key
from verirank_core.isolation import NAMESPACES, RestoreReport, SettingsSnapshot, diff_settings
from phonesim.simulator import Simulator
from phonesim.world import World, load_world
from verirank_core.errors import AppNotInstalled, DeviceError

__all__ = ["SimDevice"]


class SimDevice(Device):
    """A phone simulated from a world file."""

    def __init__(self, world: World, spec: str = "", serial: Optional[str] = None):
        self.world = world
        self.spec = spec or f"sim:{world.name}"
        self.serial = serial or f"sim-{world.name}"
        #: ground truth for labelling (never for agents or judges)
        self.simulator = Simulator(world)
        self._lock = threading.RLock()
        self._closed = False

    @classmethod
    def open(cls, name_or_path: Union[str, Path], **options: Any) -> "SimDevice":
        """Open a bundled world by name or a world file by path. Options: ``serial``."""
        unknown = set(options) - {"serial"}
        if unknown:
            raise DeviceError(f"unknown option(s) for sim:{name_or_path}: {', '.join(sorted(unknown))} "
                              "(SimDevice takes: serial)")
        world = load_world(name_or_path)
        return cls(world, spec=f"sim:{name_or_path}", serial=options.get("serial"))

    def _sim(self) -> Simulator:
        if self._closed:
            raise DeviceError(f"{self.spec}: device is closed")
        return self.simulator

    # -- observation

    def dump_xml(self) -> str:
        with self._lock:
            return self._sim().dump_xml()

    def screenshot_png(self) -> bytes:
        with self._lock:
            return self._sim().screenshot_png()

    def screenshot_png_scaled(self, scale: float = 1.0) -> bytes:
        """Drawn and scaled before encoding: one encode of the small image, not two."""
        with self._lock:
            return self._sim().screenshot_png(scale)

    def screen_size(self) -> tuple[int, int]:
        return self.simulator.screen_size()

    def current_app(self) -> AppInfo:
        with self._lock:
            package, activity = self._sim().current_app()
            return AppInfo(package=package, activity=activity)

    def info(self, packages: tuple[str, ...] = ()) -> DeviceInfo:
        """Device/OS versions from the world; versions of ``packages`` (default: the world's app)."""
        dev = self.world.device
        installed = self.simulator.packages
        wanted = packages or (self.world.app.package,)
        return DeviceInfo(
            serial=self.serial, model=dev.model, manufacturer=dev.manufacturer, os_version=dev.os_version,
            sdk=str(dev.sdk), app_versions={p: installed[p][1] for p in wanted if p in installed},
        )

    # -- input

    def tap(self, x: int, y: int) -> None:
        with self._lock:
            self._sim().tap(int(x), int(y))

    def long_press(self, x: int, y: int, duration_ms: int = 800) -> None:
        with self._lock:
            self._sim().long_press(int(x), int(y))

    def swipe(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int = 300) -> None:
        with self._lock:
            self._sim().swipe(int(x1), int(y1), int(x2), int(y2), int(duration_ms))

    def input_text(self, text: str) -> None:
        with self._lock:
            self._sim().input_text(str(text))

    def key(self, key: Key) -> None:
        with self._lock:
            self._sim().key(key)

    def launch(self, package: str, activity: Optional[str] = None) -> None:
        with self._lock:
            if not self._sim().launch(package, activity):
                raise AppNotInstalled(f"{self.spec}: package {package!r} is not installed "
                                  f"(installed: {', '.join(sorted(self.simulator.packages))})")

    def expand_status_bar(self) -> None:
        """``cmd statusbar expand-settings`` over ADB: the shade with the quick settings tiles."""
        with self._lock:
            self._sim().expand_status_bar()

    def collapse_status_bar(self) -> None:
        """``cmd statusbar collapse`` over ADB."""
        with self._lock:
            self._sim().collapse_status_bar()

    def force_stop(self, package: str) -> None:
        """``am force-stop`` over ADB: the app restarts fresh; its settings stay as they are."""
        with self._lock:
            self._sim().force_stop(package)

    def reset(self, package: Optional[str] = None) -> None:
        """Clear app data and go home; then start ``package`` if given."""
        with self._lock:
            sim = self._sim()
            if package is not None and package not in sim.packages and package != self.world.device.launcher_package:
                raise DeviceError(f"{self.spec}: package {package!r} is not installed")
            sim.reset(package)

    # -- settings (``adb shell settings`` over the ADB server, and isolation in process)

    def settings_list(self, namespace: str) -> dict[str, str]:
        with self._lock:
            return self._sim().settings_list(namespace)

    def settings_put(self, namespace: str, key: str, value: str) -> None:
        with self._lock:
            self._sim().settings_put(namespace, key, value)

    def settings_delete(self, namespace: str, key: str) -> int:
        with self._lock:
            return self._sim().settings_delete(namespace, key)

    def snapshot_settings(self) -> SettingsSnapshot:
        return SettingsSnapshot({ns: self.settings_list(ns) for ns in NAMESPACES})

    def restore_settings(self, snapshot: SettingsSnapshot, ignore: tuple[str, ...] = ()) -> RestoreReport:
        puts, deletes = diff_settings(snapshot, self.snapshot_settings(), ignore)
        report = RestoreReport()
        for ns, key, value in puts:
            self.settings_put(ns, key, value)
            report.restored.append(f"{ns}/{key}")
        for ns, key in deletes:
            self.settings_delete(ns, key)
            report.deleted.append(f"{ns}/{key}")
        return report

    def close(self) -> None:
        self._closed = True

    def __repr__(self) -> str:
        return f"SimDevice({self.spec!r})"
