"""Open a device from a spec string: ``adb:SERIAL`` or ``sim:WORLD``.

The registry of :class:`~verirank_core.device.Device` implementations, kept out of
the interface module so that the interface imports no implementation.
"""

from __future__ import annotations

from verirank_core.device import Device
from verirank_core.errors import DeviceError
from verirank_core.registry import Registry


def _open_sim(target: str, **options: object) -> Device:
    from phonesim.device import SimDevice

    return SimDevice.open(target, **options)


def _open_adb(target: str, **options: object) -> Device:
    from execution.adb_device import AdbDevice

    return AdbDevice(target, **options)


#: device kind -> opener; ``open_device`` picks one by the part of the spec before ``:``
DEVICE_KINDS: Registry = Registry("device kind", {"sim": _open_sim, "adb": _open_adb})


def open_device(spec: str, **options: object) -> Device:
    """Open ``adb:SERIAL`` or ``sim:WORLD`` (a bundled world name or a world file)."""
    kind, _, target = spec.partition(":")
    if not target:
        raise DeviceError(f"device spec {spec!r} must look like sim:WORLD or adb:SERIAL")
    if kind not in DEVICE_KINDS:
        raise DeviceError(f"unknown device kind {kind!r} in {spec!r}; use sim:WORLD or adb:SERIAL")
    return DEVICE_KINDS[kind](target, **options)
