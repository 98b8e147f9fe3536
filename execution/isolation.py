"""Device state isolation: undo the settings a page changed before the next page runs.

On a phone, ``am force-stop`` (or even ``pm clear``) does not undo a changed
system setting: after a page turns dark mode on, the next page of the same
query finds it already on, and its verdict depends on what ran before it. So
before each page the runner records the device's settings and after the page
puts back every value that changed, and deletes every key the page added::

    before = device.snapshot_settings()
    ...run the page...
    report = device.restore_settings(before)

On Android this is ``settings list system|secure|global`` before and
``settings put NS KEY VALUE`` / ``settings delete NS KEY`` after
(:func:`snapshot_over_shell`, :func:`restore_over_shell`). The snapshot stays
inside the runner: it is not written to any record, so no feature or judge
can read what a page changed.
"""

from __future__ import annotations

import logging
import shlex
from dataclasses import dataclass, field
from typing import Callable, Iterable

__all__ = [
    "NAMESPACES", "SettingsSnapshot", "RestoreReport", "parse_settings_list", "diff_settings",
    "snapshot_over_shell", "restore_over_shell",
]

log = logging.getLogger(__name__)

NAMESPACES = ("system", "secure", "global")

#: runs one shell command on the device: (exit status, output)
Shell = Callable[[str], "tuple[int, str]"]


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


def parse_settings_list(text: str) -> dict[str, str]:
    """``settings list`` output (``key=value`` lines) as a dict.

    A value may contain ``=`` (split on the first one) or even a newline: a
    line without ``=`` continues the previous value.
    """
    values: dict[str, str] = {}
    last = None
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep and key and " " not in key:
            values[key] = value
            last = key
        elif last is not None:
            values[last] += "\n" + line
    return values


def diff_settings(
    before: SettingsSnapshot, after: SettingsSnapshot, ignore: Iterable[str] = ()
) -> tuple[list[tuple[str, str, str]], list[tuple[str, str]]]:
    """(``(ns, key, old value)`` to put back, ``(ns, key)`` to delete) to go from ``after`` to ``before``.

    ``ignore`` holds ``NS/KEY`` names that are never touched (values the
    system changes on its own).
    """
    skip = set(ignore)
    puts: list[tuple[str, str, str]] = []
    deletes: list[tuple[str, str]] = []
    for ns in sorted(set(before.values) | set(after.values)):
        old, new = before.values.get(ns, {}), after.values.get(ns, {})
        for key, value in old.items():
            if new.get(key) != value and f"{ns}/{key}" not in skip:
                puts.append((ns, key, value))
        for key in new:
            if key not in old and f"{ns}/{key}" not in skip:
                deletes.append((ns, key))
    return puts, deletes


def snapshot_over_shell(shell: Shell, namespaces: Iterable[str] = NAMESPACES) -> SettingsSnapshot:
    """``settings list NS`` for each namespace; raises whatever ``shell`` raises on transport errors."""
    values: dict[str, dict[str, str]] = {}
    for ns in namespaces:
        status, output = shell(f"settings list {ns}")
        if status != 0:
            log.warning("`settings list %s` exited %s: %s", ns, status, output.strip()[:200])
            continue  # a namespace we cannot read is one we cannot restore either
        values[ns] = parse_settings_list(output)
    return SettingsSnapshot(values)


def restore_over_shell(shell: Shell, before: SettingsSnapshot, ignore: Iterable[str] = ()) -> RestoreReport:
    """Put back what changed since ``before`` with ``settings put``/``settings delete``.

    A key the device refuses (a protected setting) is reported in ``failed``
    and logged; it does not stop the other keys.
    """
    after = snapshot_over_shell(shell, before.values)
    puts, deletes = diff_settings(before, after, ignore)
    report = RestoreReport()
    for ns, key, value in puts:
        status, output = shell(f"settings put {ns} {shlex.quote(key)} {shlex.quote(value)}")
        (report.restored if status == 0 else report.failed).append(f"{ns}/{key}")
        if status != 0:
            log.warning("cannot restore %s/%s: %s", ns, key, output.strip()[:200])
    for ns, key in deletes:
        status, output = shell(f"settings delete {ns} {shlex.quote(key)}")
        (report.deleted if status == 0 else report.failed).append(f"{ns}/{key}")
        if status != 0:
            log.warning("cannot delete %s/%s: %s", ns, key, output.strip()[:200])
    return report
