"""The one device interface every executor drives.

A :class:`Device` is a phone as the agent sees it: a uiautomator dump, a
screenshot, and input events. This module imports no adb or simulator code;
``AdbDevice`` (``execution/adb_device.py``) and ``SimDevice``
(``execution/sim/device.py``) implement it, and ``open_device(spec)`` picks
one from a spec string (``adb:SERIAL`` or ``sim:WORLD``).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, Optional

if TYPE_CHECKING:
    from execution.isolation import RestoreReport, SettingsSnapshot

Key = Literal["back", "home", "enter"]


@dataclass(frozen=True)
class AppInfo:
    package: str
    activity: Optional[str] = None


@dataclass(frozen=True)
class DeviceInfo:
    """What the device reports about itself and (optionally) one app."""

    serial: str
    model: str = ""
    manufacturer: str = ""
    os_version: str = ""  # e.g. "13"
    sdk: str = ""  # e.g. "33"
    app_versions: dict[str, str] = field(default_factory=dict)


class Device(ABC):
    """A phone, real or simulated. Methods raise ``DeviceError`` on failure."""

    #: the spec this device was opened with, e.g. ``sim:android13-settings``
    spec: str = ""

    @abstractmethod
    def dump_xml(self) -> str:
        """The current screen as ``uiautomator dump`` XML."""

    @abstractmethod
    def screenshot_png(self) -> bytes:
        """The current screen as PNG bytes."""

    def screenshot_png_scaled(self, scale: float = 1.0) -> bytes:
        """The screen as PNG scaled by ``scale`` (storage copies); coordinates stay in device pixels."""
        from execution.screens import downscale_png

        return downscale_png(self.screenshot_png(), scale)

    @abstractmethod
    def screen_size(self) -> tuple[int, int]:
        """(width, height) in pixels."""

    @abstractmethod
    def tap(self, x: int, y: int) -> None: ...

    @abstractmethod
    def long_press(self, x: int, y: int, duration_ms: int = 800) -> None: ...

    @abstractmethod
    def swipe(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int = 300) -> None: ...

    @abstractmethod
    def input_text(self, text: str) -> None:
        """Type into the focused field."""

    @abstractmethod
    def key(self, key: Key) -> None: ...

    @abstractmethod
    def launch(self, package: str, activity: Optional[str] = None) -> None: ...

    @abstractmethod
    def current_app(self) -> AppInfo: ...

    @abstractmethod
    def info(self, packages: tuple[str, ...] = ()) -> DeviceInfo:
        """Device and OS versions, plus the versions of ``packages``."""

    @abstractmethod
    def reset(self, package: Optional[str] = None) -> None:
        """Return to a clean start state (app data cleared, home screen or app start)."""

    def snapshot_settings(self) -> "Optional[SettingsSnapshot]":
        """The device's settings before a page (see ``execution/isolation.py``).

        None means the device has nothing a page could leave behind; the
        default, for devices that reset everything in ``reset()``.
        """
        return None

    def restore_settings(self, snapshot: "SettingsSnapshot", ignore: tuple[str, ...] = ()) -> "RestoreReport":
        """Put back every setting that changed since ``snapshot``; ``ignore`` lists ``NS/KEY`` to leave."""
        from execution.isolation import RestoreReport

        return RestoreReport()

    def close(self) -> None:
        """Release connections; the default does nothing."""

    def __enter__(self) -> "Device":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_device(spec: str, **options: object) -> Device:
    """Open ``adb:SERIAL`` or ``sim:WORLD`` (a bundled world name or a world file)."""
    from verirank.errors import DeviceError

    kind, _, target = spec.partition(":")
    if not target:
        raise DeviceError(f"device spec {spec!r} must look like sim:WORLD or adb:SERIAL")
    if kind == "sim":
        from execution.sim.device import SimDevice

        return SimDevice.open(target, **options)
    if kind == "adb":
        from execution.adb_device import AdbDevice

        return AdbDevice(target, **options)
    raise DeviceError(f"unknown device kind {kind!r} in {spec!r}; use sim:WORLD or adb:SERIAL")
