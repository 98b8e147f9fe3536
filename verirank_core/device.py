"""The one device interface every executor drives.

A :class:`Device` is a phone as the agent sees it: a uiautomator dump, a
screenshot, and input events. This module imports no adb or simulator code;
``AdbDevice`` (``execution/adb_device.py``) and ``SimDevice``
(``phonesim/device.py``) implement it, and ``execution.devices.open_device(spec)``
picks one from a spec string (``adb:SERIAL`` or ``sim:WORLD``). It lives in the
core so that the simulator can implement it without depending on stage 2.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Literal, Optional, Protocol

#: ``menu`` is the hardware Menu key (KEYCODE_MENU: the overflow menu of the screen)
Key = Literal["back", "home", "enter", "menu"]


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


@dataclass(frozen=True)
class SettingsSnapshot:
    """Every setting of a device at one moment: namespace -> key -> value text."""

    values: dict[str, dict[str, str]]


@dataclass
class RestoreReport:
    """What a restore did; ``failed`` names the keys the device refused to restore."""

    restored: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)

    @property
    def changed(self) -> int:
        return len(self.restored) + len(self.deleted)


class SimulatedWorld(Protocol):
    """The world a simulator plays, as code outside the simulator may read it (``phonesim.world.World``).

    Its screens, app and device are read for UI maps and knowledge cards; its goals never.
    """

    name: str
    #: the world file it was loaded from ("" or ``<...>`` when built in memory)
    source: str


class Device(ABC):
    """A phone, real or simulated. Methods raise ``DeviceError`` on failure."""

    #: the spec this device was opened with, e.g. ``sim:android13-settings``
    spec: str = ""
    #: the world of a simulator, None on a phone: how a simulator is recognised (no probing)
    world: Optional[SimulatedWorld] = None

    @property
    def kind(self) -> str:
        """``sim`` (a simulator) or ``adb`` (a phone or emulator over adb): the spec's part before ``:``."""
        return self.spec.partition(":")[0]

    @property
    def target(self) -> str:
        """Which one of its kind: the world of a ``sim:`` device, the serial of an ``adb:`` one."""
        return self.spec.partition(":")[2]

    @abstractmethod
    def dump_xml(self) -> str:
        """The current screen as ``uiautomator dump`` XML."""

    @abstractmethod
    def screenshot_png(self) -> bytes:
        """The current screen as PNG bytes."""

    def screenshot_png_scaled(self, scale: float = 1.0) -> Optional[bytes]:
        """The screen as PNG scaled by ``scale``, for a device that can draw it scaled itself.

        None (the default) means the caller scales :meth:`screenshot_png`
        (``verirank_core.screens.scaled_screenshot``). Coordinates stay in device pixels.
        """
        return None

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

    def snapshot_settings(self) -> Optional[SettingsSnapshot]:
        """The device's settings before a page (see ``verirank_core/isolation.py``).

        None means the device has nothing a page could leave behind; the
        default, for devices that reset everything in ``reset()``.
        """
        return None

    def restore_settings(self, snapshot: SettingsSnapshot, ignore: tuple[str, ...] = ()) -> RestoreReport:
        """Put back every setting that changed since ``snapshot``; ``ignore`` lists ``NS/KEY`` to leave."""
        return RestoreReport()

    def close(self) -> None:
        """Release connections; the default does nothing."""

    def __enter__(self) -> "Device":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
